//! The workspace's shape, read from its sources and manifests:
//!
//! 1. no module of any crate under crates/*/src imports a module that
//!    imports it back, directly or through a longer cycle. An import is a
//!    `crate::` or `super::` path (grouped `use` trees included) outside
//!    comments, string literals and `#[cfg(test)]` items; it imports the
//!    longest prefix of the path that is a module (the crate root when none
//!    is), or, for a name that module re-exports (`pub use`), the module
//!    the name comes from. A parent declaring `mod child;` is not an
//!    import.
//! 2. every `[dependencies]` entry of every crates/*/Cargo.toml is named in
//!    that crate's src, and every `[dev-dependencies]` entry in its src,
//!    tests or benches (as an identifier outside plain comments; doc
//!    comments count, since doc tests use dependencies).
//!
//! 3. docs/architecture.md's table of each crate's strata dependencies is
//!    its Cargo.toml's `[dependencies]`, crate for crate.
//!
//! 4. a database engine's crate (its src declares the registry entry
//!    `pub const ENGINE: EngineEntry`) is a `[dependencies]` entry of the
//!    binary alone, and the binary's code names it on one line: its entry
//!    in the registry, crates/strata/src/engines.rs. A new engine is its
//!    crate and that line.
//! 5. the binary (crates/strata/src) is thin: under 1,500 lines; and no
//!    function outside `#[cfg(test)]` items under crates/*/src is over 80
//!    lines, from its `fn` to its closing brace.
//!
//! The checks read text; they do not run the compiler. The `analyzer_*`
//! tests feed them small made-up crates, so that a check that could never
//! fail shows up here.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

type ModulePath = Vec<String>;

#[test]
fn no_module_imports_a_module_that_imports_it_back() {
    let mut report = String::new();
    for crate_dir in crate_dirs() {
        let modules = read_modules(&crate_dir.join("src"));
        for cycle in module_cycles(&modules) {
            writeln!(report, "{}: {cycle}", crate_name(&crate_dir)).unwrap();
        }
    }
    assert!(report.is_empty(), "modules importing each other:\n{report}");
}

#[test]
fn every_dependency_is_used() {
    let mut report = String::new();
    for crate_dir in crate_dirs() {
        let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
        let sources = |dirs: &[&str]| -> Vec<String> {
            dirs.iter()
                .flat_map(|dir| rust_files(&crate_dir.join(dir)))
                .map(|file| std::fs::read_to_string(file).unwrap())
                .collect()
        };
        let src = sources(&["src"]);
        let dev = sources(&["src", "tests", "benches"]);
        for (kind, name) in unused_dependencies(&manifest, &src, &dev) {
            writeln!(
                report,
                "{}: [{kind}] {name} is named nowhere in {}",
                crate_name(&crate_dir),
                match kind {
                    DependencyKind::Normal => "src",
                    DependencyKind::Dev => "src, tests or benches",
                }
            )
            .unwrap();
        }
    }
    assert!(report.is_empty(), "unused dependencies:\n{report}");
}

#[test]
fn architecture_md_lists_each_crate_s_strata_dependencies() {
    let doc = std::fs::read_to_string(workspace_root().join("docs/architecture.md")).unwrap();
    let mut listed = dependency_table(&doc);
    assert!(
        listed.len() > 10,
        "no dependency table in docs/architecture.md"
    );
    let mut report = String::new();
    for crate_dir in crate_dirs() {
        let name = short_name(&crate_name(&crate_dir));
        let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
        let has: BTreeSet<String> = dependencies(&manifest)
            .into_iter()
            .filter(|(kind, dependency)| {
                *kind == DependencyKind::Normal && dependency.starts_with("strata")
            })
            .map(|(_, dependency)| short_name(&dependency))
            .collect();
        match listed.remove(&name) {
            Some(row) if row == has => {}
            row => writeln!(
                report,
                "{name}: the table lists {row:?}, its Cargo.toml has {has:?}"
            )
            .unwrap(),
        }
    }
    for name in listed.keys() {
        writeln!(report, "{name}: in the table, and no such crate").unwrap();
    }
    assert!(report.is_empty(), "docs/architecture.md:\n{report}");
}

#[test]
fn an_engine_crate_is_named_only_by_its_line_in_the_registry() {
    let engines: Vec<String> = crate_dirs()
        .into_iter()
        .filter(|dir| {
            rust_files(&dir.join("src")).iter().any(|file| {
                let code = strip(&std::fs::read_to_string(file).unwrap(), false, true);
                code.contains("pub const ENGINE: EngineEntry")
            })
        })
        .map(|dir| crate_name(&dir))
        .collect();
    assert_eq!(
        engines,
        ["strata-mariadb", "strata-postgres", "strata-sqlite"]
    );
    let mut report = String::new();
    for dir in crate_dirs() {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let depends = dependencies(&manifest).into_iter();
        let normal = depends.filter(|(kind, _)| *kind == DependencyKind::Normal);
        for (_, name) in normal.filter(|(_, name)| engines.contains(name)) {
            if crate_name(&dir) != "strata" {
                writeln!(report, "{}: depends on {name}", crate_name(&dir)).unwrap();
            }
        }
    }
    let binary = workspace_root().join("crates/strata/src");
    for engine in &engines {
        let identifier = engine.replace('-', "_");
        let naming: Vec<String> = rust_files(&binary)
            .iter()
            .flat_map(|file| {
                let code = strip(&std::fs::read_to_string(file).unwrap(), false, true);
                let file = file.strip_prefix(&binary).unwrap().display().to_string();
                let lines: Vec<String> = code
                    .lines()
                    .filter(|line| names_word(line, &identifier))
                    .map(|line| format!("{file}: {}", line.trim()))
                    .collect();
                lines
            })
            .collect();
        let registry_line = format!("engines.rs: {identifier}::ENGINE,");
        if naming != [registry_line] {
            writeln!(report, "the binary names {engine}: {naming:?}").unwrap();
        }
    }
    assert!(
        report.is_empty(),
        "engines named outside the registry:\n{report}"
    );
}

#[test]
fn the_binary_is_thin_and_every_function_fits_on_a_screen() {
    let binary = workspace_root().join("crates/strata/src");
    let binary_lines: usize = rust_files(&binary)
        .iter()
        .map(|file| std::fs::read_to_string(file).unwrap().lines().count())
        .sum();
    assert!(
        binary_lines < 1_500,
        "crates/strata/src holds {binary_lines} lines: the binary parses and prints, the \
         crates do the work"
    );
    let mut report = String::new();
    for dir in crate_dirs() {
        for file in rust_files(&dir.join("src")) {
            let text = std::fs::read_to_string(&file).unwrap();
            let code = without_test_items(&strip(&text, false, true));
            for (name, lines) in function_lengths(&code) {
                if lines > 80 {
                    let file = file.strip_prefix(workspace_root()).unwrap();
                    writeln!(report, "{}: fn {name}: {lines} lines", file.display()).unwrap();
                }
            }
        }
    }
    assert!(report.is_empty(), "functions over 80 lines:\n{report}");
}

#[test]
fn analyzer_measures_a_function_from_its_fn_to_its_closing_brace() {
    let text = "/// Doc.\nfn short() -> u32 {\n    let text = \"{\n\";\n    1\n}\n\n\
                trait T {\n    fn declared(&self);\n}\n\
                pub(crate) fn longer<'a>(x: &'a str) -> impl Fn() + 'a {\n    \
                /* a comment\n  over lines */\n    move || {\n        x;\n    }\n}\n\
                #[cfg(test)]\nmod tests {\n    fn hidden() {}\n}\n";
    let code = without_test_items(&strip(text, false, true));
    assert_eq!(
        function_lengths(&code),
        [("short".to_string(), 5), ("longer".to_string(), 7)]
    );
}

/// Each function with a body in `code` (comments and literals already
/// blanked, test items out), and its lines from its `fn` to its closing
/// brace; a function inside another counts as the other's lines.
fn function_lengths(code: &str) -> Vec<(String, usize)> {
    let code: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let starts_fn = starts_with(&code, at, "fn ") && (at == 0 || !is_word(code[at - 1]));
        if !starts_fn {
            at += 1;
            continue;
        }
        let name: String = code[at + 3..].iter().take_while(|&&c| is_word(c)).collect();
        let Some(end) = body_end(&code, at) else {
            at += 3;
            continue;
        };
        let lines = code[at..end].iter().filter(|&&c| c == '\n').count() + 1;
        found.push((name, lines));
        at = end;
    }
    found
}

/// Where the body of the `fn` at `at` ends (after its closing brace), or
/// `None` when its signature ends with `;`.
fn body_end(code: &[char], at: usize) -> Option<usize> {
    let mut parens = 0i32;
    let mut braces = 0i32;
    for (index, &c) in code.iter().enumerate().skip(at) {
        match c {
            '(' | '[' => parens += 1,
            ')' | ']' => parens -= 1,
            ';' if parens == 0 && braces == 0 => return None,
            '{' => braces += 1,
            '}' => {
                braces -= 1;
                if braces == 0 {
                    return Some(index + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[test]
fn the_dependency_table_is_read_row_by_row() {
    let doc = "Dependencies point one way.\n\n| crate | deps |\n|---|---|\n\
               | `run` | `core`, `slob` |\n| `core` | none |\n\n| `other` | `table` |\n";
    let table = dependency_table(doc);
    assert_eq!(table.len(), 2, "{table:?}");
    assert_eq!(table["run"], BTreeSet::from(["core".into(), "slob".into()]));
    assert!(table["core"].is_empty());
}

/// "strata-core" → "core"; "strata" stays.
fn short_name(name: &str) -> String {
    name.strip_prefix("strata-").unwrap_or(name).to_string()
}

/// The rows (`| `crate` | `dependency`, … |`, or `none`) of the first table
/// after "Dependencies point one way", up to the blank line that ends it.
fn dependency_table(doc: &str) -> BTreeMap<String, BTreeSet<String>> {
    let after = doc
        .split_once("Dependencies point one way")
        .map_or("", |(_, rest)| rest);
    let rows = after
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'));
    rows.filter_map(|row| {
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        let [name, listed] = cells[..] else {
            return None;
        };
        let name = name.strip_prefix('`')?.strip_suffix('`')?;
        let listed = listed
            .split(',')
            .map(|dependency| dependency.trim().trim_matches('`').to_string())
            .filter(|dependency| dependency != "none")
            .collect();
        Some((name.to_string(), listed))
    })
    .collect()
}

#[test]
fn the_workspace_is_found_and_has_crates() {
    let dirs = crate_dirs();
    assert!(
        dirs.iter().any(|dir| crate_name(dir) == "strata-testkit"),
        "{dirs:?}"
    );
    assert!(dirs.len() > 5, "{dirs:?}");
    assert!(dirs
        .iter()
        .all(|dir| !read_modules(&dir.join("src")).is_empty()));
}

#[test]
fn analyzer_finds_a_direct_cycle_and_names_its_modules() {
    let modules = made_up(&[
        ("", "pub mod a;\npub mod b;\n"),
        ("a", "use crate::b::Thing;\n"),
        ("b", "pub struct Thing;\nuse super::a::other;\n"),
    ]);
    let cycles = module_cycles(&modules);
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert_eq!(cycles[0].modules, ["a", "b"]);
    let shown = cycles[0].to_string();
    assert!(
        shown.contains("a -> b") && shown.contains("b -> a"),
        "{shown}"
    );
}

#[test]
fn analyzer_finds_a_longer_cycle_through_grouped_imports() {
    let modules = made_up(&[
        ("", "mod x;\nmod y;\nmod z;\npub fn helper() {}\n"),
        ("x", "use crate::{y::{self, Y as Why}, helper as h};\n"),
        ("y", "use crate::z::*;\n"),
        ("z", "use crate::{\n    x::X,\n};\n"),
        ("z::inner", "use super::super::helper;\n"),
    ]);
    let cycles = module_cycles(&modules);
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert_eq!(cycles[0].modules, ["x", "y", "z"]);
}

#[test]
fn analyzer_follows_a_re_export_to_the_module_it_comes_from() {
    let modules = made_up(&[
        ("", "mod top;\nmod group;\n"),
        ("top", "fn f() { crate::group::helper(); }\n"),
        ("group", "mod inner;\npub use inner::{helper, Other};\n"),
        ("group::inner", "pub fn helper() {}\nuse crate::top::f;\n"),
    ]);
    let cycles = module_cycles(&modules);
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert_eq!(cycles[0].modules, ["group::inner", "top"]);
}

#[test]
fn analyzer_finds_a_module_and_the_root_importing_each_other() {
    let modules = made_up(&[
        ("", "mod a;\npub use crate::a::A;\npub struct Root;\n"),
        ("a", "pub struct A(crate::Root);\n"),
    ]);
    assert_eq!(module_cycles(&modules)[0].modules, ["a", "crate"]);
}

#[test]
fn analyzer_ignores_comments_strings_tests_and_children() {
    let modules = made_up(&[
        ("", "mod a;\nmod b;\n"),
        (
            "a",
            "// crate::b::Thing\n/* crate::b */\nconst S: &str = \"crate::b::x\";\n\
             const R: &str = r#\"super::b\"#;\nconst C: char = '{';\n\
             use self::child::C;\nmod child;\nuse crate::{helper::Y as b};\n\
             #[cfg(test)]\nmod tests {\n    use crate::b::Thing;\n}\n\
             pub fn after_the_tests<'a>(x: &'a str) -> &'a str { x }\n",
        ),
        ("a::child", "use super::S;\n"),
        (
            "b",
            "pub struct Thing;\nuse crate::a::after_the_tests;\n\
             #[cfg(test)]\nuse crate::a::S;\n",
        ),
    ]);
    let cycles = module_cycles(&modules);
    assert!(cycles.is_empty(), "{cycles:?}");
}

#[test]
fn analyzer_sees_code_after_a_test_item() {
    let modules = made_up(&[
        ("", "mod a;\nmod b;\n"),
        (
            "a",
            "#[cfg(test)]\nfn only_in_tests() { let _ = crate::b::B; }\nuse crate::b::B;\n",
        ),
        ("b", "pub struct B;\nuse crate::a::A;\n"),
    ]);
    assert_eq!(module_cycles(&modules).len(), 1);
}

#[test]
fn analyzer_reports_unused_dependencies_and_only_those() {
    let manifest = "\
[package]
name = \"made-up\"

[dependencies]
used-lib.workspace = true
# commented-out = \"1\"
unused-lib = { version = \"1\", features = [
    \"not-a-dependency\",
] }
only_in_a_comment = \"1\"
in-docs = \"1\"

[dependencies.table-form]
version = \"1\"

[dev-dependencies]
used-lib.workspace = true
dev-only = \"1\"
dev_unused = \"1\"

[features]
feature-name = []
";
    let src = vec![
        "use used_lib::X;\n// only_in_a_comment\n/// [`in_docs::Y`]\nfn f() { table_form::g() }\n"
            .to_string(),
    ];
    let dev = [src.clone(), vec!["use dev_only::Z;\n".to_string()]].concat();
    let unused = unused_dependencies(manifest, &src, &dev);
    assert_eq!(
        unused,
        [
            (DependencyKind::Normal, "unused-lib".to_string()),
            (DependencyKind::Normal, "only_in_a_comment".to_string()),
            (DependencyKind::Dev, "dev_unused".to_string()),
        ]
    );
}

fn made_up(modules: &[(&str, &str)]) -> BTreeMap<ModulePath, String> {
    modules
        .iter()
        .map(|(path, text)| {
            let path = path
                .split("::")
                .filter(|segment| !segment.is_empty())
                .map(str::to_string)
                .collect();
            (path, text.to_string())
        })
        .collect()
}

// ---- the workspace on disk ----

fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("the root Cargo.toml");
    assert!(
        manifest.lines().any(|line| line.trim() == "[workspace]"),
        "{} is not the workspace root",
        root.display()
    );
    root
}

/// crates/*, each with a Cargo.toml, in name order.
fn crate_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(workspace_root().join("crates"))
        .expect("reading crates/")
        .map(|entry| entry.unwrap().path())
        .filter(|dir| dir.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn crate_name(dir: &Path) -> String {
    dir.file_name().unwrap().to_string_lossy().into_owned()
}

/// Every .rs file under `dir` (none when `dir` does not exist), sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(rust_files(&path));
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// The modules of the crate whose sources are in `src`, by path, with
/// their text: `a/b.rs` and `a/b/mod.rs` are `a::b`, lib.rs and main.rs the
/// root (both, when a crate has both, as one).
fn read_modules(src: &Path) -> BTreeMap<ModulePath, String> {
    let mut modules: BTreeMap<ModulePath, String> = BTreeMap::new();
    for file in rust_files(src) {
        let relative = file.strip_prefix(src).unwrap().with_extension("");
        let mut path: ModulePath = relative
            .components()
            .map(|part| part.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(
            path.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            path.pop();
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let module = modules.entry(path).or_default();
        module.push_str(&text);
        module.push('\n');
    }
    modules
}

// ---- check 1: modules importing each other ----

#[derive(Debug, PartialEq)]
struct Cycle {
    /// Module paths (`crate` for the root), sorted.
    modules: Vec<String>,
    /// The imports between them.
    edges: Vec<(String, String)>,
}

impl std::fmt::Display for Cycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cycle [{}]:", self.modules.join(", "))?;
        for (from, to) in &self.edges {
            write!(f, " {from} -> {to};")?;
        }
        Ok(())
    }
}

fn show(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_string()
    } else {
        module.join("::")
    }
}

/// The strongly connected components of more than one module of the
/// import graph.
fn module_cycles(modules: &BTreeMap<ModulePath, String>) -> Vec<Cycle> {
    let re_exported = re_exports(modules);
    let graph: BTreeMap<ModulePath, BTreeSet<ModulePath>> = modules
        .iter()
        .map(|(module, text)| {
            let imported = imports(module, text, modules, &re_exported);
            (module.clone(), imported)
        })
        .collect();
    let mut cycles: Vec<Cycle> = strongly_connected(&graph)
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let members: BTreeSet<&ModulePath> = component.iter().collect();
            let mut modules: Vec<String> = component.iter().map(|m| show(m)).collect();
            modules.sort();
            let mut edges = Vec::new();
            for from in &members {
                for to in &graph[*from] {
                    if members.contains(to) {
                        edges.push((show(from), show(to)));
                    }
                }
            }
            edges.sort();
            Cycle { modules, edges }
        })
        .collect();
    cycles.sort_by(|a, b| a.modules.cmp(&b.modules));
    cycles
}

/// A name a module re-exports (`pub use`), and the module it comes from.
type ReExports = BTreeMap<(ModulePath, String), ModulePath>;

/// The names each module re-exports from another of the crate's modules
/// (`pub use child::name`, `pub use crate::a::name`, grouped or not), so
/// that an import of `module::name` is an import of the module the name
/// comes from.
fn re_exports(modules: &BTreeMap<ModulePath, String>) -> ReExports {
    let mut found = ReExports::new();
    for (module, text) in modules {
        let code = code_of(text);
        let mut at = 0;
        while at < code.len() {
            let after_word = at == 0 || !is_word(code[at - 1]);
            let Some(pattern) = ["pub use ", "pub(crate) use "]
                .into_iter()
                .find(|pattern| after_word && starts_with(&code, at, pattern))
            else {
                at += 1;
                continue;
            };
            let mut tree = skip_space(&code, at + pattern.len());
            let prefix = match starts_with(&code, tree, "crate::") {
                true => {
                    tree += "crate::".len();
                    Vec::new()
                }
                false => module.clone(),
            };
            let mut paths = Vec::new();
            at = use_tree(&code, tree, prefix, &mut paths).max(at + 1);
            for path in paths {
                let (Some(name), Some(source)) = (path.last(), longest_module(&path, modules))
                else {
                    continue;
                };
                if source != module.as_slice() && source.len() < path.len() {
                    found.insert((module.clone(), name.clone()), source.to_vec());
                }
            }
        }
    }
    found
}

/// The longest prefix of `path` that is one of `modules`.
fn longest_module<'a>(
    path: &'a [String],
    modules: &BTreeMap<ModulePath, String>,
) -> Option<&'a [String]> {
    (0..=path.len())
        .rev()
        .map(|length| &path[..length])
        .find(|prefix| modules.contains_key(*prefix))
}

/// A module's code: comments and `#[cfg(test)]` items out, strings blank.
fn code_of(text: &str) -> Vec<char> {
    without_test_items(&strip(text, false, true))
        .chars()
        .collect()
}

/// The modules that `module` imports through `crate::` and `super::`
/// paths, itself excluded; a name another module re-exports is imported
/// from the module it comes from.
fn imports(
    module: &ModulePath,
    text: &str,
    modules: &BTreeMap<ModulePath, String>,
    re_exported: &ReExports,
) -> BTreeSet<ModulePath> {
    let code = code_of(text);
    let mut paths = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let before = at.checked_sub(1).map(|i| code[i]);
        let starts_path = !matches!(before, Some(c) if is_word(c) || c == ':');
        let prefix = if starts_path && starts_with(&code, at, "crate::") {
            Some((Vec::new(), "crate::".len()))
        } else if starts_path && starts_with(&code, at, "super::") {
            let mut parent = module.clone();
            parent.pop();
            Some((parent, "super::".len()))
        } else {
            None
        };
        match prefix {
            Some((base, skip)) => at = use_tree(&code, at + skip, base, &mut paths),
            None => at += 1,
        }
    }
    let mut targets = BTreeSet::new();
    for path in paths {
        let Some(target) = longest_module(&path, modules) else {
            continue;
        };
        let source = path
            .get(target.len())
            .and_then(|name| re_exported.get(&(target.to_vec(), name.clone())));
        targets.insert(source.cloned().unwrap_or_else(|| target.to_vec()));
    }
    targets.remove(module);
    targets
}

/// Parses the use tree (or expression path) at `at` below `prefix`, pushing
/// every path it names; returns where it ends.
fn use_tree(code: &[char], at: usize, prefix: ModulePath, paths: &mut Vec<ModulePath>) -> usize {
    let mut at = skip_space(code, at);
    match code.get(at) {
        Some('{') => {
            at += 1;
            loop {
                at = skip_space(code, at);
                match code.get(at) {
                    None => return at,
                    Some('}') => return at + 1,
                    Some(',') => at += 1,
                    Some(_) => {
                        let next = use_tree(code, at, prefix.clone(), paths);
                        // Something that is no path (`as name`): step over it.
                        at = if next == at { at + 1 } else { next };
                    }
                }
            }
        }
        Some('*') => {
            paths.push(prefix);
            at + 1
        }
        _ => {
            let start = at;
            while at < code.len() && is_word(code[at]) {
                at += 1;
            }
            if at == start {
                paths.push(prefix);
                return at;
            }
            let segment: String = code[start..at].iter().collect();
            let mut path = prefix;
            match segment.as_str() {
                "self" => {}
                "super" => {
                    path.pop();
                }
                _ => path.push(segment),
            }
            let after = skip_space(code, at);
            if starts_with(code, after, "::") {
                let next = skip_space(code, after + 2);
                if code
                    .get(next)
                    .is_some_and(|&c| is_word(c) || c == '{' || c == '*')
                {
                    return use_tree(code, next, path, paths);
                }
            }
            paths.push(path);
            // `… as name`: the name is no path.
            if starts_with(code, after, "as")
                && code.get(after + 2).is_some_and(|c| c.is_whitespace())
            {
                let mut end = skip_space(code, after + 2);
                while code.get(end).is_some_and(|&c| is_word(c)) {
                    end += 1;
                }
                return end;
            }
            at
        }
    }
}

/// Tarjan's algorithm; components in no particular order.
fn strongly_connected(graph: &BTreeMap<ModulePath, BTreeSet<ModulePath>>) -> Vec<Vec<ModulePath>> {
    struct State<'g> {
        graph: &'g BTreeMap<ModulePath, BTreeSet<ModulePath>>,
        index: BTreeMap<&'g ModulePath, usize>,
        low: BTreeMap<&'g ModulePath, usize>,
        stack: Vec<&'g ModulePath>,
        on_stack: BTreeSet<&'g ModulePath>,
        components: Vec<Vec<ModulePath>>,
    }
    fn visit<'g>(state: &mut State<'g>, node: &'g ModulePath) {
        let number = state.index.len();
        state.index.insert(node, number);
        state.low.insert(node, number);
        state.stack.push(node);
        state.on_stack.insert(node);
        for next in &state.graph[node] {
            if !state.index.contains_key(next) {
                visit(state, next);
                let low = state.low[node].min(state.low[next]);
                state.low.insert(node, low);
            } else if state.on_stack.contains(next) {
                let low = state.low[node].min(state.index[next]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut component = Vec::new();
            loop {
                let member = state.stack.pop().unwrap();
                state.on_stack.remove(member);
                component.push(member.clone());
                if member == node {
                    break;
                }
            }
            state.components.push(component);
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for node in graph.keys() {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.components
}

// ---- check 2: unused dependencies ----

#[derive(Clone, Copy, Debug, PartialEq)]
enum DependencyKind {
    Normal,
    Dev,
}

impl std::fmt::Display for DependencyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DependencyKind::Normal => "dependencies",
            DependencyKind::Dev => "dev-dependencies",
        })
    }
}

/// The entries of the manifest's `[dependencies]` that `src` does not name
/// and of its `[dev-dependencies]` that `dev` does not name, in manifest
/// order.
fn unused_dependencies(
    manifest: &str,
    src: &[String],
    dev: &[String],
) -> Vec<(DependencyKind, String)> {
    let named = |sources: &[String], identifier: &str| {
        sources
            .iter()
            .any(|text| names_word(&strip(text, true, false), identifier))
    };
    dependencies(manifest)
        .into_iter()
        .filter(|(kind, name)| {
            let identifier = name.replace('-', "_");
            match kind {
                DependencyKind::Normal => !named(src, &identifier),
                DependencyKind::Dev => !named(dev, &identifier),
            }
        })
        .collect()
}

/// The manifest's `[dependencies]` and `[dev-dependencies]` entries
/// (target-specific tables and `[dependencies.name]` tables included).
fn dependencies(manifest: &str) -> Vec<(DependencyKind, String)> {
    let kind_of = |table: &str| match table {
        "dependencies" => Some(DependencyKind::Normal),
        "dev-dependencies" => Some(DependencyKind::Dev),
        _ => None,
    };
    let mut found = Vec::new();
    let mut section = None;
    let mut depth = 0i32;
    for line in manifest.lines() {
        let line = line.trim();
        if depth > 0 {
            depth += nesting(line);
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_start_matches('[');
            let header = header[..header.find(']').unwrap_or(header.len())].trim();
            let parts: Vec<&str> = header.split('.').map(str::trim).collect();
            section = None;
            match parts.as_slice() {
                [table] => section = kind_of(table),
                [table, name] => {
                    if let Some(kind) = kind_of(table) {
                        found.push((kind, name.trim_matches('"').to_string()));
                    }
                }
                ["target", .., table] => section = kind_of(table),
                _ => {}
            }
            continue;
        }
        let Some(kind) = section else {
            continue;
        };
        let key_end = line
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '"'))
            .unwrap_or(line.len());
        let rest = line[key_end..].trim_start();
        if key_end > 0 && (rest.starts_with('=') || rest.starts_with('.')) {
            found.push((kind, line[..key_end].trim_matches('"').to_string()));
        }
        depth += nesting(line);
    }
    found
}

/// How many more brackets and braces `line` opens than closes, outside
/// strings and comments.
fn nesting(line: &str) -> i32 {
    let mut depth = 0;
    let mut in_string = false;
    let mut escaped = false;
    for c in line.chars() {
        if in_string {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => escaped = false,
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '#' => break,
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            _ => {}
        }
    }
    depth
}

/// Whether `identifier` occurs in `text` as a whole word.
fn names_word(text: &str, identifier: &str) -> bool {
    text.match_indices(identifier).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + identifier.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

// ---- reading Rust text ----

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn starts_with(code: &[char], at: usize, pattern: &str) -> bool {
    pattern
        .chars()
        .enumerate()
        .all(|(offset, expected)| code.get(at + offset) == Some(&expected))
}

fn skip_space(code: &[char], mut at: usize) -> usize {
    while code.get(at).is_some_and(|c| c.is_whitespace()) {
        at += 1;
    }
    at
}

/// `text` without its comments (doc comments kept when `keep_docs`), and
/// with the contents of string and char literals removed when
/// `blank_strings` (the quotes stay); the lines a removed comment or
/// literal held stay as empty lines after it.
fn strip(text: &str, keep_docs: bool, blank_strings: bool) -> String {
    let code: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < code.len() {
        let c = code[at];
        if starts_with(&code, at, "//") {
            let end = code[at..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(code.len(), |offset| at + offset);
            let doc = (starts_with(&code, at, "///") && !starts_with(&code, at, "////"))
                || starts_with(&code, at, "//!");
            if doc && keep_docs {
                out.extend(&code[at..end]);
            }
            at = end;
        } else if starts_with(&code, at, "/*") {
            let doc = (starts_with(&code, at, "/**") && !starts_with(&code, at, "/**/"))
                || starts_with(&code, at, "/*!");
            let mut depth = 0;
            let start = at;
            while at < code.len() {
                if starts_with(&code, at, "/*") {
                    depth += 1;
                    at += 2;
                } else if starts_with(&code, at, "*/") {
                    depth -= 1;
                    at += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    at += 1;
                }
            }
            if doc && keep_docs {
                out.extend(&code[start..at]);
            } else {
                out.push(' ');
                keep_lines(&mut out, &code[start..at]);
            }
        } else if let Some(hashes) = raw_string_start(&code, at) {
            // r"…", r#"…"#, br#"…"#: the prefix is already out.
            let open = at + 1 + hashes;
            let close = format!("\"{}", "#".repeat(hashes));
            let mut end = open + 1;
            while end < code.len() && !starts_with(&code, end, &close) {
                end += 1;
            }
            let end = (end + close.len()).min(code.len());
            if blank_strings {
                out.push_str("r\"\"");
                keep_lines(&mut out, &code[at..end]);
            } else {
                out.extend(&code[at..end]);
            }
            at = end;
        } else if c == '"' {
            let mut end = at + 1;
            while end < code.len() && code[end] != '"' {
                end += if code[end] == '\\' { 2 } else { 1 };
            }
            let end = (end + 1).min(code.len());
            if blank_strings {
                out.push_str("\"\"");
                keep_lines(&mut out, &code[at..end]);
            } else {
                out.extend(&code[at..end]);
            }
            at = end;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{7f}'), or a lifetime or label.
            let end = if code.get(at + 1) == Some(&'\\') {
                code.get(at + 3..)
                    .and_then(|rest| rest.iter().position(|&c| c == '\''))
                    .map(|offset| at + 3 + offset + 1)
            } else if code.get(at + 2) == Some(&'\'') {
                Some(at + 3)
            } else {
                None
            };
            match end {
                Some(end) => {
                    if blank_strings {
                        out.push_str("''");
                    } else {
                        out.extend(&code[at..end]);
                    }
                    at = end;
                }
                None => {
                    out.push(c);
                    at += 1;
                }
            }
        } else {
            out.push(c);
            at += 1;
        }
    }
    out
}

/// As many line ends onto `out` as `removed` held.
fn keep_lines(out: &mut String, removed: &[char]) {
    out.extend(removed.iter().filter(|&&c| c == '\n'));
}

/// At `r` of a raw string literal (`r"`, `r#"`, `br"`, …), its number of
/// `#`s.
fn raw_string_start(code: &[char], at: usize) -> Option<usize> {
    if code[at] != 'r' {
        return None;
    }
    let before = at.checked_sub(1).map(|i| code[i]);
    let prefix_ok = match before {
        Some('b' | 'c') => !matches!(at.checked_sub(2).map(|i| code[i]), Some(c) if is_word(c)),
        Some(c) => !is_word(c),
        None => true,
    };
    if !prefix_ok {
        return None;
    }
    let hashes = code[at + 1..].iter().take_while(|&&c| c == '#').count();
    (code.get(at + 1 + hashes) == Some(&'"')).then_some(hashes)
}

/// `code` (comments and literals already stripped) without the items,
/// statements and fields marked `#[cfg(test)]`.
fn without_test_items(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(start) = rest.find(MARK) {
        out.push_str(&rest[..start]);
        let item = &rest[start + MARK.len()..];
        let mut depth = 0i32;
        let mut end = item.len();
        for (index, c) in item.char_indices() {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = index + 1;
                        break;
                    }
                }
                ';' | ',' if depth == 0 => {
                    end = index + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}
