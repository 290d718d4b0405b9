//! The HTML page as a browser sees it: headless Chromium loads a rich
//! report and the reports of real recordings (the fixtures); its DOM must hold one chart per chart with every finite point
//! drawn, its console must stay silent (the page's content security policy
//! turns any script or external resource into a console error), a latency
//! histogram's bars must sit between the tick labels of their buckets'
//! edges, a calibration sweep's ORION matrices must be there, and a
//! screenshot is kept in `target/ci-artifacts/` for a person to look at.
//!
//! Chromium comes from scripts/install-test-deps; without it this test
//! fails, it never skips.

mod common;

use common::{finite_points, rich_report};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use strata_output::document::Report;
use strata_output::render::html::HtmlRenderer;
use strata_output::render::Renderer;
use strata_report::recording::report_from_recording;

const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(120);

fn chromium() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join("chromium"));
    std::iter::once(PathBuf::from("/usr/bin/chromium"))
        .chain(on_path)
        .find(|candidate| candidate.is_file())
        .expect("chromium is not installed: run scripts/install-test-deps (as root) to install it")
}

/// The workspace's target directory, where CI picks up artifacts.
fn target_dir() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace.join(dir),
        None => workspace.join("target"),
    }
}

/// Runs headless Chromium on `page` with `arguments`; returns its stdout
/// and stderr. Panics when it fails or takes longer than two minutes.
fn run_chromium(profile: &Path, page: &Path, arguments: &[&str]) -> (String, String) {
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(arguments)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || read_all(&mut stdout));
    let err = std::thread::spawn(move || read_all(&mut stderr));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if started.elapsed() > CHROMIUM_TIMEOUT {
            child.kill().ok();
            panic!("chromium took longer than {CHROMIUM_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    assert!(status.success(), "chromium failed ({status}):\n{err}");
    (out, err)
}

fn read_all(stream: &mut impl Read) -> String {
    let mut text = String::new();
    stream.read_to_string(&mut text).ok();
    text
}

/// Lines of Chromium's log that come from the page's console (errors,
/// uncaught exceptions, blocked resources), not from Chromium itself.
fn console_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|line| line.contains(":CONSOLE") || line.contains("Uncaught"))
        .collect()
}

/// The markup of the `<svg>` whose `data-chart-id` is `id`, and how many
/// such elements there are.
fn chart_markup<'a>(dom: &'a str, id: &str) -> (Option<&'a str>, usize) {
    let needle = format!("data-chart-id=\"{id}\"");
    let count = dom.matches(&needle).count();
    let markup = dom.find(&needle).map(|start| {
        let open = dom[..start].rfind("<svg").expect("data-chart-id on an svg");
        let end = start + dom[start..].find("</svg>").expect("svg is closed");
        &dom[open..end]
    });
    (markup, count)
}

/// `<circle>` elements whose class list holds `point`.
fn point_circles(svg: &str) -> usize {
    svg.split("<circle")
        .skip(1)
        .filter(|tag| {
            let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
            let class = tag
                .split("class=\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next());
            class.is_some_and(|class| class.split_whitespace().any(|name| name == "point"))
        })
        .count()
}

#[test]
fn chromium_draws_every_chart_and_point_without_console_errors() {
    check_in_chromium(&rich_report(), "report");
}

#[test]
fn chromium_draws_the_reports_of_real_recordings() {
    for (fixture, name) in [
        ("run-update.strata", "run-report"),
        ("calibrate-sweep.strata", "calibrate-report"),
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(fixture);
        let report = report_from_recording(&path, None).unwrap();
        assert!(report.charts().count() >= 3, "{fixture}: too few charts");
        let dom = check_in_chromium(&report, name);
        match name {
            "run-report" => assert_bars_sit_between_their_edges(&dom, "select_latency_histogram"),
            _ => assert_the_orion_matrix_is_drawn(&dom),
        }
    }
}

/// The `x` attributes of the `class="tick x"` labels and the `(x, width)`
/// of the `class="bar"` rectangles in `svg`.
fn ticks_and_bars(svg: &str) -> (Vec<f64>, Vec<(f64, f64)>) {
    let attribute = |tag: &str, name: &str| -> Option<f64> {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        tag[start..].split('"').next()?.parse().ok()
    };
    let ticks = svg
        .split("<text class=\"tick x\"")
        .skip(1)
        .filter_map(|tag| attribute(tag, "x"))
        .collect();
    let bars = svg
        .split("<rect class=\"bar\"")
        .skip(1)
        .filter_map(|tag| Some((attribute(tag, "x")?, attribute(tag, "width")?)))
        .collect();
    (ticks, bars)
}

/// A doubling-bucket histogram as Chromium drew it: every bar spans from
/// one tick label to the next (its bucket's two edges, 1 px of gap each
/// side), none straddles a label or the axis.
fn assert_bars_sit_between_their_edges(dom: &str, id: &str) {
    let (svg, _) = chart_markup(dom, id);
    let svg = svg.unwrap_or_else(|| panic!("no chart {id}"));
    assert!(
        svg.contains("data-kind=\"histogram\""),
        "{id} is no histogram"
    );
    let (ticks, bars) = ticks_and_bars(svg);
    assert!(
        bars.len() >= 2 && ticks.len() == bars.len() + 1,
        "{ticks:?} {bars:?}"
    );
    let on_a_tick = |at: f64| ticks.iter().any(|tick| (tick - at).abs() < 0.6);
    for (x, width) in &bars {
        assert!(
            on_a_tick(x - 1.0),
            "bar at {x} starts off its edge: {ticks:?}"
        );
        assert!(
            on_a_tick(x + width + 1.0),
            "bar at {x} ends off its edge: {ticks:?}"
        );
    }
}

/// A calibration sweep's report, as Chromium drew it, holds ORION's
/// matrices (a row per large-stream count, a column per small outstanding
/// count) under their caption, and the latency target's line.
fn assert_the_orion_matrix_is_drawn(dom: &str) {
    for title in [
        "IOPS of the small I/O (workload layer, requests/s)",
        "MB/s of the large I/O (workload layer, 10^6 bytes/s)",
    ] {
        assert!(dom.contains(title), "no matrix {title}");
    }
    assert!(dom.contains("large streams \\ small outstanding"));
    assert!(dom.contains("ORION&#39;s matrix") || dom.contains("ORION's matrix"));
    assert!(
        dom.contains("max IOPS with p99 ≤"),
        "no latency target's line"
    );
}

/// Renders `report`, loads it in headless Chromium and checks one svg per
/// chart with every finite point drawn and no console error; saves the
/// page and a screenshot as `target/ci-artifacts/NAME{.html,-screenshot.png}`;
/// returns the DOM as Chromium made it.
fn check_in_chromium(report: &Report, name: &str) -> String {
    let scratch = tempfile::tempdir().unwrap();
    let page = scratch.path().join(format!("{name}.html"));
    std::fs::write(&page, HtmlRenderer.render(report)).unwrap();
    let profile = scratch.path().join("profile");

    let (dom, stderr) = run_chromium(&profile, &page, &["--dump-dom"]);
    let errors = console_lines(&stderr);
    assert!(errors.is_empty(), "console errors:\n{}", errors.join("\n"));
    assert_eq!(
        dom.matches("<svg").count(),
        report.charts().count(),
        "{name}: one svg per chart"
    );
    for chart in report.charts() {
        let (svg, count) = chart_markup(&dom, &chart.id);
        assert_eq!(count, 1, "{name}: svg elements for chart {}", chart.id);
        let points = point_circles(svg.unwrap());
        let finite = finite_points(chart);
        assert!(
            points >= finite,
            "{name}: chart {}: {points} circles for {finite} points",
            chart.id
        );
    }
    save_screenshot(&profile, &page, name);
    dom
}

fn save_screenshot(profile: &Path, page: &Path, name: &str) {
    let artifacts = target_dir().join("ci-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let screenshot = artifacts.join(format!("{name}-screenshot.png"));
    std::fs::remove_file(&screenshot).ok();
    let screenshot_argument = format!("--screenshot={}", screenshot.display());
    let arguments = [
        screenshot_argument.as_str(),
        "--window-size=1280,3000",
        "--hide-scrollbars",
    ];
    let (_, stderr) = run_chromium(profile, page, &arguments);
    let errors = console_lines(&stderr);
    assert!(errors.is_empty(), "console errors:\n{}", errors.join("\n"));
    let png = std::fs::read(&screenshot).expect("chromium wrote the screenshot");
    assert!(
        png.starts_with(b"\x89PNG"),
        "{} is not a PNG",
        screenshot.display()
    );
    assert!(png.len() > 10 * 1024, "screenshot only {} bytes", png.len());
    std::fs::copy(page, artifacts.join(format!("{name}.html"))).unwrap();
}
