//! Every JSON document strata prints matches its versioned schema in docs/:
//! `run`/`setup` (docs/run.schema.json) on each engine, `calibrate`
//! (docs/calibrate.schema.json), every `model` subcommand
//! (docs/model.schema.json, each in its own shape) and each line of
//! `observe --format json` (docs/observe.schema.json), printed by the real
//! binary; and each schema rejects a document that breaks it.

mod common;

use common::*;
use serde_json::{json, Value};
use std::path::Path;

fn schema(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{name} is not JSON: {error}"))
}

/// The validator's errors, each as `instance path: message`; where no
/// alternative of a `oneOf` or `anyOf` matched, each alternative's own
/// errors follow, indented.
fn errors(schema: &Value, instance: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(schema).expect("the schema compiles");
    let mut lines = Vec::new();
    for error in validator.iter_errors(instance) {
        describe(&error, 0, &mut lines);
    }
    lines
}

fn describe(error: &jsonschema::ValidationError<'_>, depth: usize, lines: &mut Vec<String>) {
    use jsonschema::error::ValidationErrorKind;
    const LONGEST: usize = 300;
    let indent = "  ".repeat(depth);
    let path = error.instance_path();
    match error.kind() {
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } => {
            lines.push(format!(
                "{indent}{path}: matches none of the alternatives of {}",
                error.schema_path()
            ));
            for (index, alternative) in context.iter().enumerate() {
                lines.push(format!("{indent}  alternative {index}:"));
                for inner in alternative {
                    describe(inner, depth + 2, lines);
                }
            }
        }
        _ => {
            let message: String = error.to_string().chars().take(LONGEST).collect();
            lines.push(format!("{indent}{path}: {message}"));
        }
    }
}

fn assert_valid(schema: &Value, instance: &Value, what: &str) {
    let errors = errors(schema, instance);
    assert!(
        errors.is_empty(),
        "{what} does not match its schema:\n{}\n\nthe document:\n{instance:#}",
        errors.join("\n")
    );
}

fn assert_rejected(schema: &Value, instance: &Value, what: &str) {
    assert!(
        !errors(schema, instance).is_empty(),
        "the schema accepts {what}"
    );
}

/// What a test does to a valid document to break it, named.
type Breaking = (&'static str, fn(&mut Value));

/// The schema rejects `valid` broken in each of these ways.
fn assert_each_rejected(schema: &Value, valid: &Value, broken: &[Breaking]) {
    for (what, breaking) in broken {
        let mut instance = valid.clone();
        breaking(&mut instance);
        assert_rejected(schema, &instance, what);
    }
}

/// Runs strata in `dir` and parses its stdout as one JSON document, whatever
/// the exit status (a run whose verdict is `failed` exits 1 and still
/// prints it).
fn document(args: &[&str], dir: &Path) -> Value {
    let output = run(args, dir);
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "strata {args:?} ({}) printed no JSON document ({error}):\n{}\n{}",
            output.status,
            stderr_of(&output),
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

const SQLITE_RUN: [&str; 9] = [
    "run",
    "--engine",
    "sqlite",
    "--scale",
    "8MiB",
    "--duration",
    "1s",
    "--warmup",
    "0s",
];

#[test]
fn a_postgresql_run_matches_the_run_schema() {
    let dir = scratch();
    let run_document = document(
        &[
            "run",
            "--scale",
            "8MiB",
            "--shared-buffers",
            "16MiB",
            "--duration",
            "2s",
            "--warmup",
            "0s",
            "--json",
        ],
        dir.path(),
    );
    assert_valid(
        &schema("run.schema.json"),
        &run_document,
        "strata run --json",
    );
    assert_eq!(run_document["environment"]["engine"], "postgresql");
    assert!(run_document["result"]["database"].is_object());
    assert_nothing_left_behind(dir.path());
}

#[test]
fn a_sqlite_setup_and_run_match_the_run_schema() {
    let dir = scratch();
    let schema = schema("run.schema.json");
    let mut args = SQLITE_RUN.to_vec();
    args.push("--json");
    let run_document = document(&args, dir.path());
    assert_valid(&schema, &run_document, "strata run --engine sqlite --json");
    assert_eq!(run_document["environment"]["engine"], "sqlite");
    assert!(run_document["result"].is_object());
    let setup_document = document(
        &[
            "setup",
            "--engine",
            "sqlite",
            "--db",
            "setup.sqlite",
            "--scale",
            "8MiB",
            "--json",
        ],
        dir.path(),
    );
    assert_valid(
        &schema,
        &setup_document,
        "strata setup --engine sqlite --json",
    );
    assert_eq!(setup_document["options"]["command"], "setup");
    assert!(setup_document["result"].is_null());
}

#[test]
fn a_mariadb_run_matches_the_run_schema_with_its_engine_figures() {
    let dir = scratch();
    let run_document = document(
        &[
            "run",
            "--engine",
            "mariadb",
            "--scale",
            "8MiB",
            "--duration",
            "1s",
            "--warmup",
            "0s",
            "--update-pct",
            "20",
            "--performance-schema",
            "--json",
        ],
        dir.path(),
    );
    assert_valid(
        &schema("run.schema.json"),
        &run_document,
        "strata run --engine mariadb --json",
    );
    assert!(run_document["engine_figures"]["innodb"].is_object());
}

#[test]
fn the_run_schema_rejects_what_the_document_cannot_be() {
    let dir = scratch();
    let schema = schema("run.schema.json");
    let mut args = SQLITE_RUN.to_vec();
    args.push("--json");
    let valid = document(&args, dir.path());
    assert_valid(&schema, &valid, "strata run --engine sqlite --json");
    let broken: [Breaking; 7] = [
        ("no schema_version", |doc| {
            doc.as_object_mut().unwrap().remove("schema_version");
        }),
        ("a string for a number", |doc| {
            doc["result"]["window_s"] = json!("1 s");
        }),
        ("an unknown engine", |doc| {
            doc["environment"]["engine"] = json!("oracle");
        }),
        ("an unknown page cache method", |doc| {
            doc["environment"]["page_cache"]["method"] = json!("mlock");
        }),
        ("a field the document does not have", |doc| {
            doc["result"]["cpu"]["gpu_s"] = json!(1.0);
        }),
        ("a result without its verdict", |doc| {
            doc.as_object_mut().unwrap().remove("verdict");
        }),
        ("a negative count", |doc| {
            doc["result"]["workload"]["operations"]["select"]["count"] = json!(-1);
        }),
    ];
    assert_each_rejected(&schema, &valid, &broken);
}

fn calibrate_documents(dir: &Path) -> Vec<(String, Value)> {
    let one_point = [
        "calibrate",
        "--size",
        "32MiB",
        "--workload",
        "small-random-read",
        "--qd",
        "2",
        "--ios",
        "400",
        "--json",
    ];
    let sweep = [
        "calibrate",
        "--sweep",
        "--max-qd",
        "2",
        "--max-streams",
        "1",
        "--ios",
        "200",
        "--size",
        "32MiB",
        "--json",
    ];
    [&one_point[..], &sweep[..]]
        .into_iter()
        .map(|args| (format!("strata {}", args.join(" ")), document(args, dir)))
        .collect()
}

#[test]
fn calibrate_one_point_and_a_sweep_match_the_calibrate_schema() {
    let dir = scratch();
    let schema = schema("calibrate.schema.json");
    for (what, calibrate_document) in calibrate_documents(dir.path()) {
        assert_valid(&schema, &calibrate_document, &what);
    }
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

#[test]
fn the_calibrate_schema_rejects_what_the_document_cannot_be() {
    let dir = scratch();
    let schema = schema("calibrate.schema.json");
    let (what, valid) = calibrate_documents(dir.path()).remove(0);
    assert_valid(&schema, &valid, &what);
    let broken: [Breaking; 5] = [
        ("no schema_version", |doc| {
            doc.as_object_mut().unwrap().remove("schema_version");
        }),
        ("a string for a number", |doc| {
            doc["points"][0]["groups"][0]["all"]["iops"] = json!("fast");
        }),
        ("an unknown verdict", |doc| {
            doc["summary"]["verdict"] = json!({"verdict": "maybe"});
        }),
        ("an unknown target kind", |doc| {
            doc["target"]["kind"] = json!("tape");
        }),
        ("a field the document does not have", |doc| {
            doc["points"][0]["cpu"]["idle_s"] = json!(0.0);
        }),
    ];
    assert_each_rejected(&schema, &valid, &broken);
}

/// The model schema narrowed to one subcommand's shape (`$defs/<shape>`).
fn model_shape(schema: &Value, shape: &str) -> Value {
    assert!(schema["$defs"][shape].is_object(), "no $defs/{shape}");
    let mut narrowed = schema.clone();
    let object = narrowed.as_object_mut().unwrap();
    object.remove("oneOf");
    object.insert("$ref".into(), json!(format!("#/$defs/{shape}")));
    narrowed
}

/// Every `strata model` subcommand's arguments, with the shape its JSON has.
fn model_commands(csv: &str) -> Vec<(&'static str, Vec<String>)> {
    let run = recording_fixture("run-update.strata");
    let awr = awr_fixture("11.2.0.3-single-html-sarthi2020.html");
    let calibration = recording_fixture("calibrate-sweep.strata");
    let commands: Vec<(&str, Vec<&str>)> = vec![
        (
            "raid",
            vec![
                "raid",
                "--iops",
                "1000",
                "--read-pct",
                "80",
                "--raid",
                "5",
                "--disks",
                "10",
            ],
        ),
        (
            "raid",
            vec!["raid", "--from", &run, "--raid", "10", "--disks", "4"],
        ),
        (
            "raid_min_disks",
            vec![
                "raid",
                "--iops",
                "1000-2000:1000",
                "--read-pct",
                "80",
                "--raid",
                "5",
                "--service-time",
                "6ms",
                "--min-disks",
            ],
        ),
        (
            "replication",
            vec![
                "replication",
                "--distance-km",
                "50",
                "--overhead",
                "600us",
                "--per-kib",
                "27us",
                "--size",
                "2k",
                "--fibre-channel",
            ],
        ),
        (
            "replication",
            vec![
                "replication",
                "--distance-km",
                "50",
                "--calibrate-from",
                "2k=654us,64k=2328us",
            ],
        ),
        (
            "queue_open",
            vec!["queue", "--service-time", "10ms", "--utilization", "50"],
        ),
        (
            "queue_open",
            vec![
                "queue",
                "--model",
                "md1",
                "--service-time",
                "10ms",
                "--arrival-rate",
                "50",
            ],
        ),
        (
            "queue_open",
            vec![
                "queue",
                "--model",
                "mg1",
                "--cv",
                "2",
                "--service-time",
                "10ms",
                "--arrival-rate",
                "50",
            ],
        ),
        (
            "queue_open",
            vec![
                "queue",
                "--model",
                "mmc",
                "--servers",
                "3",
                "--service-time",
                "10ms",
                "--arrival-rate",
                "50",
            ],
        ),
        ("queue_open", vec!["queue", "--from", &run]),
        (
            "queue_mva",
            vec!["queue", "--centres", "cpu=20ms,disk=30ms", "--users", "3"],
        ),
        ("disk", vec!["disk", "--rpm", "15000", "--qd", "1"]),
        (
            "disk",
            vec!["disk", "--rpm", "15000", "--span", "50", "--qd", "32"],
        ),
        (
            "flash_cache",
            vec![
                "flash-cache",
                "--buffer-cache",
                "1g",
                "--data",
                "100g",
                "--flash",
                "10g,100g",
            ],
        ),
        (
            "flash_cache",
            vec!["flash-cache", "--buffer-cache", "1g", "--data", "100g"],
        ),
        ("cluster", vec!["cluster", csv, "--clusters", "2"]),
        (
            "commit",
            vec![
                "commit",
                "--commit-wait",
                "101ms",
                "--log-write-io",
                "37ms",
                "--log-writer-cpu",
                "2.3ms",
            ],
        ),
        ("commit", vec!["commit", "--from", &run]),
        ("commit", vec!["commit", "--from", &awr]),
        (
            "predict",
            vec![
                "predict",
                "--calibration",
                &calibration,
                "--cpu-per-block",
                "20us",
                "--sessions",
                "1,4",
            ],
        ),
        (
            "predict",
            vec!["predict", "--calibration", &calibration, "--from", &run],
        ),
        (
            "nfs",
            vec![
                "nfs",
                "--round-trip",
                "500us",
                "--transfer",
                "32k",
                "--io-size",
                "1m",
                "--link-gbit",
                "10",
            ],
        ),
    ];
    commands
        .into_iter()
        .map(|(shape, args)| {
            let mut all: Vec<String> = vec!["model".into()];
            all.extend(args.into_iter().map(String::from));
            all.push("--json".into());
            (shape, all)
        })
        .collect()
}

fn model_documents(dir: &Path) -> Vec<(&'static str, String, Value)> {
    let csv = dir.join("demands.csv");
    std::fs::write(
        &csv,
        "cpu,disk\n0.010,0.020\n0.011,0.021\n0.500,0.900\n0.012,0.019\n0.510,0.880\n",
    )
    .unwrap();
    model_commands(csv.to_str().unwrap())
        .into_iter()
        .map(|(shape, args)| {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let output = run(&args, dir);
            assert!(
                output.status.success(),
                "strata {args:?}: {}",
                stderr_of(&output)
            );
            let value = serde_json::from_slice(&output.stdout).expect("one JSON document");
            (shape, format!("strata {}", args.join(" ")), value)
        })
        .collect()
}

#[test]
fn every_model_subcommand_matches_the_model_schema_in_its_own_shape() {
    let dir = scratch();
    let schema = schema("model.schema.json");
    let documents = model_documents(dir.path());
    for (shape, what, model_document) in &documents {
        assert_valid(&schema, model_document, what);
        assert_valid(&model_shape(&schema, shape), model_document, what);
    }
    let shapes: std::collections::BTreeSet<&str> =
        documents.iter().map(|(shape, ..)| *shape).collect();
    let defined: Vec<&str> = schema["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|branch| {
            branch["$ref"]
                .as_str()
                .unwrap()
                .trim_start_matches("#/$defs/")
        })
        .collect();
    for shape in defined {
        assert!(shapes.contains(shape), "no command prints {shape}");
    }
}

#[test]
fn the_model_schema_rejects_what_the_documents_cannot_be() {
    let dir = scratch();
    let schema = schema("model.schema.json");
    let documents = model_documents(dir.path());
    let of_shape = |wanted: &str| {
        documents
            .iter()
            .find(|(shape, ..)| *shape == wanted)
            .map(|(_, _, value)| value.clone())
            .unwrap()
    };
    let mut raid_without_disks = of_shape("raid");
    raid_without_disks[0]
        .as_object_mut()
        .unwrap()
        .remove("disks");
    let mut commit_with_a_string = of_shape("commit");
    commit_with_a_string["remainder_s"] = json!("61.7 ms");
    let mut unknown_queue_model = of_shape("queue_open");
    unknown_queue_model["model"] = json!("m_m2");
    let mut replication_with_more = of_shape("replication");
    replication_with_more["sync"]["jitter_s"] = json!(0.0);
    let mut commit_with_a_header = of_shape("commit");
    commit_with_a_header["schema_version"] = json!(1);
    for (what, instance) in [
        ("a raid row without disks", raid_without_disks),
        ("a string for a number", commit_with_a_string),
        ("an unknown queue model", unknown_queue_model),
        ("a field the document does not have", replication_with_more),
        ("a field of another document", commit_with_a_header),
        ("no rows", json!([])),
        ("no document", json!(null)),
    ] {
        assert_rejected(&schema, &instance, what);
    }
}

fn observe_lines(dir: &Path) -> Vec<Value> {
    let args = [
        "observe",
        "--count",
        "2",
        "--interval",
        "200ms",
        "--format",
        "json",
    ];
    let output = run(&args, dir);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("not one JSON object ({error}): {line}"))
        })
        .collect();
    assert!(lines.len() >= 2, "{stdout}");
    lines
}

#[test]
fn every_observe_json_line_matches_the_observe_schema() {
    let dir = scratch();
    let schema = schema("observe.schema.json");
    let lines = observe_lines(dir.path());
    for (number, line) in lines.iter().enumerate() {
        assert_valid(&schema, line, &format!("observe line {}", number + 1));
    }
    let has_rates = |line: &Value| {
        line["layers"]
            .as_object()
            .unwrap()
            .values()
            .any(|layer| layer["rates"].as_object().is_some_and(|r| !r.is_empty()))
    };
    assert!(
        has_rates(lines.last().unwrap()),
        "{:#}",
        lines.last().unwrap()
    );
}

#[test]
fn the_observe_schema_rejects_what_a_line_cannot_be() {
    let dir = scratch();
    let schema = schema("observe.schema.json");
    let valid = observe_lines(dir.path()).pop().unwrap();
    assert_valid(&schema, &valid, "the last observe line");
    let broken: [Breaking; 5] = [
        ("no interval_s", |line| {
            line.as_object_mut().unwrap().remove("interval_s");
        }),
        ("a string for a number", |line| {
            line["t_s"] = json!("0.2 s");
        }),
        ("an unknown status", |line| {
            line["layers"]["cpu"]["status"] = json!("ok");
        }),
        ("an unknown metric kind", |line| {
            line["layers"]["cpu"]["metrics"][0]["kind"] = json!("histogram");
        }),
        ("an unknown layer", |line| {
            line["layers"]["gpu"] = json!({"status": "absent", "reason": "none"});
        }),
    ];
    assert_each_rejected(&schema, &valid, &broken);
}

#[test]
fn observe_json_with_top_is_one_line_per_interval_matching_the_schema() {
    let dir = scratch();
    let schema = schema("observe.schema.json");
    let args = [
        "observe",
        "--json",
        "--count",
        "2",
        "--interval",
        "500ms",
        "--top",
        "5",
    ];
    let output = run(&args, dir.path());
    assert!(output.status.success(), "{}", stderr_of(&output));
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    assert_eq!(
        stdout.lines().count(),
        2,
        "--count 2 is two lines: {stdout}"
    );
    let mut last = Value::Null;
    for (number, line) in stdout.lines().enumerate() {
        let line: Value = serde_json::from_str(line).expect("one JSON object per line");
        assert_valid(
            &schema,
            &line,
            &format!("observe --top line {}", number + 1),
        );
        let top = &line["top"];
        assert_eq!(top["limit"], 5);
        assert!(top["interval_s"].as_f64().unwrap() > 0.3, "{top}");
        let processes = top["processes"].as_array().unwrap();
        assert_eq!(processes.len(), 5, "a machine has more than 5 processes");
        for field in [
            "read_mb_per_s",
            "write_mb_per_s",
            "read_syscalls_per_s",
            "cpu_pct",
            "run_delay_ms_per_s",
        ] {
            assert!(
                processes.iter().all(|p| p.get(field).is_some()),
                "{field} in {top}"
            );
        }
        last = line;
    }
    let broken: [Breaking; 4] = [
        ("MB/s as text", |line| {
            line["top"]["processes"][0]["read_mb_per_s"] = json!("12 MB/s");
        }),
        ("a process without its pid", |line| {
            line["top"]["processes"][0]
                .as_object_mut()
                .unwrap()
                .remove("pid");
        }),
        ("a top of no processes asked for", |line| {
            line["top"]["limit"] = json!(0);
        }),
        ("an unknown database", |line| {
            line["top"]["processes"][0]["database"] = json!("oracle");
            line["top"]["processes"][0]["role"] = json!("dbwr");
        }),
    ];
    assert_each_rejected(&schema, &last, &broken);
}
