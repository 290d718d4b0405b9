//! The Recording file: written and read back typed, version 1 files
//! upgraded, and every way a file can be wrong named with its line.

use std::path::{Path, PathBuf};
use strata_recording::record::Stopped;
use strata_recording::{
    Existing, Header, Kind, Record, Recording, RecordingWriter, FORMAT_VERSION,
};

fn stopped() -> Record {
    Record::Stopped(Stopped {
        phase: "loading".into(),
        reason: "interrupted".into(),
    })
}

fn error_of(path: &Path) -> String {
    format!("{:#}", Recording::read(path).unwrap_err())
}

#[test]
fn write_then_read_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.strata");
    let header = Header::new(Kind::Run, vec!["strata".into(), "run".into()], (), ());
    let mut writer = RecordingWriter::create(&path, &header, Existing::Refuse).unwrap();
    writer.write(&stopped()).unwrap();
    drop(writer);
    let recording = Recording::read(&path).unwrap();
    assert_eq!(
        serde_json::to_value(&recording.header).unwrap(),
        serde_json::to_value(&header).unwrap()
    );
    assert_eq!(recording.stopped().unwrap().phase, "loading");
    assert_eq!(recording.lines[0].number, 2);
}

#[test]
fn newer_version_truncation_and_missing_fields_are_named_by_line_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.strata");
    let mut header = serde_json::to_value(Header::new(Kind::Calibrate, vec![], (), ())).unwrap();
    header["version"] = 99.into();
    std::fs::write(&path, format!("{header}\n")).unwrap();
    let error = error_of(&path);
    assert!(
        error.contains("version 99") && error.contains("line 1"),
        "{error}"
    );

    header["version"] = FORMAT_VERSION.into();
    std::fs::write(&path, format!("{header}\n{{\"type\":\"sto\n")).unwrap();
    let error = error_of(&path);
    assert!(
        error.contains("line 2") && error.contains("truncated"),
        "{error}"
    );

    let lacking = r#"{"type":"stopped","phase":"loading"}"#;
    std::fs::write(&path, format!("{header}\n{lacking}\n")).unwrap();
    let error = error_of(&path);
    assert!(
        error.contains(&format!("{}: line 2", path.display()))
            && error.contains("missing field `reason`"),
        "{error}"
    );
}

#[test]
fn joined_recordings_and_records_after_the_final_one_are_refused_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("calibrate.strata");
    let header = Header::new(Kind::Calibrate, vec![], (), ());
    let summary = r#"{"type":"summary","max_iops":null,"max_mb_per_s":null,"min_latency":null,"iops_under_latency_target":{"lat_target_us":10000.0,"best":null,"p99_us":null},"knee":null,"verdict":{"verdict":"valid"}}"#;
    let one = format!("{}\n{summary}\n", serde_json::to_string(&header).unwrap());
    std::fs::write(&path, &one).unwrap();
    assert!(Recording::read(&path).unwrap().summary().is_some());

    std::fs::write(&path, format!("{one}{one}")).unwrap();
    let error = error_of(&path);
    assert!(error.contains("line 3: a second header"), "{error}");

    std::fs::write(&path, format!("{one}{summary}\n")).unwrap();
    let error = error_of(&path);
    assert!(
        error.contains("line 3: a record after the summary record of line 2"),
        "{error}"
    );
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../strata-report/tests/fixtures")
        .join(name)
}

/// Every version 1 fixture reads as version 2's records: layers of one
/// moment joined into one record, results typed, nothing lost.
#[test]
fn version_one_recordings_upgrade_to_typed_records() {
    let run = Recording::read(&fixture("run-update.strata")).unwrap();
    assert_eq!(run.header.kind, Kind::Run);
    assert_eq!(run.header.version, FORMAT_VERSION);
    let result = run.run_result().expect("the run's result");
    assert_eq!(
        result.figures.workload.operations["update"].latency.count,
        352
    );
    assert_eq!(result.figures.verdict.name(), "not recorded");
    assert_eq!(run.run_seconds().count(), 10);
    assert!(run.window_database().is_some());
    assert_eq!(run.header.options.warmup_s(), 2.0);
    assert_eq!(run.header.environment.devices.data, vec!["vda".to_string()]);
    let moment = run.layers().next().unwrap();
    for layer in ["cpu", "device", "memory", "postgres", "process"] {
        assert!(moment.values(layer).is_some(), "{layer} joined its moment");
    }

    let calibrate = Recording::read(&fixture("calibrate-sweep.strata")).unwrap();
    let points: Vec<_> = calibrate.point_results().collect();
    assert!(points.len() > 1);
    assert!(points[0].histograms.contains_key("small"));
    assert_eq!(
        calibrate.point_seconds().next().unwrap().point,
        points[0].point.name
    );
    assert_eq!(
        calibrate.summary().unwrap().knee.as_ref().unwrap().unit,
        "IOPS"
    );

    let observe = Recording::read(&fixture("observe-db.strata")).unwrap();
    assert_eq!(
        observe.layers().count(),
        4,
        "--count 3 and the first moment"
    );
    assert!(observe
        .layers()
        .all(|sample| sample.values("postgres").is_some()));
}

/// A writer killed mid-line (SIGKILL, a full filesystem) leaves a last
/// line without its newline: the records before it are read, and the cut
/// is named.
#[test]
fn a_last_line_cut_off_mid_record_leaves_the_records_before_it_readable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.strata");
    let header = Header::new(Kind::Run, vec![], (), ());
    let mut writer = RecordingWriter::create(&path, &header, Existing::Refuse).unwrap();
    writer.write(&stopped()).unwrap();
    drop(writer);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"type\":\"layers\",\"t_s\":1.0,\"unix");
    std::fs::write(&path, text).unwrap();
    let recording = Recording::read(&path).unwrap();
    assert_eq!(recording.stopped().unwrap().phase, "loading");
    let truncated = recording.truncated.unwrap();
    assert!(truncated.starts_with("line 3 of "), "{truncated}");
    assert!(truncated.contains("read up to line 2"), "{truncated}");
}

/// The environment written after the header (a run's, once its server is
/// up) is the header's when read back: the last one wins.
#[test]
fn the_last_environment_record_is_the_headers_environment() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.strata");
    let header = Header::new(Kind::Run, vec![], (), ());
    let mut writer = RecordingWriter::create(&path, &header, Existing::Refuse).unwrap();
    for engine in ["postgresql", "mariadb"] {
        let environment = serde_json::json!({ "engine": engine, "for_people": engine });
        writer.write_environment(&environment).unwrap();
    }
    writer.write(&stopped()).unwrap();
    drop(writer);
    let recording = Recording::read(&path).unwrap();
    assert_eq!(
        recording.header.environment.engine.as_deref(),
        Some("mariadb")
    );
    assert_eq!(
        serde_json::to_value(&recording.header.environment).unwrap(),
        serde_json::json!({ "engine": "mariadb", "for_people": "mariadb" })
    );
    assert_eq!(recording.lines.len(), 1);
}

/// A file that is no Recording is said to be one at once, however large:
/// `/dev/zero` has no end and no newline.
#[test]
fn an_endless_file_is_refused_at_once_in_bounded_memory() {
    let began = std::time::Instant::now();
    let error = error_of(Path::new("/dev/zero"));
    assert!(error.contains("line 1"), "{error}");
    assert!(error.contains("not a strata Recording"), "{error}");
    assert!(began.elapsed() < std::time::Duration::from_secs(1));

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.strata");
    let header = serde_json::to_string(&Header::new(Kind::Observe, vec![], (), ())).unwrap();
    let mut file = std::fs::File::create(&path).unwrap();
    use std::io::Write;
    writeln!(file, "{header}").unwrap();
    let long = vec![b'x'; (64 << 20) + 2];
    file.write_all(&long).unwrap();
    drop(file);
    let error = error_of(&path);
    assert!(error.contains("line 2"), "{error}");
    assert!(error.contains("longer than 64 MiB"), "{error}");
}

#[test]
fn an_existing_file_is_never_replaced_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.strata");
    std::fs::write(&path, "mine").unwrap();
    let header = Header::new(Kind::Observe, vec![], (), ());
    let refused = RecordingWriter::create(&path, &header, Existing::Refuse);
    let error = format!("{:#}", refused.err().unwrap());
    assert!(error.contains("already exists"), "{error}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine");
    RecordingWriter::create(&path, &header, Existing::Replace).unwrap();
    assert!(Recording::read(&path).is_ok());
    let missing = dir.path().join("no/such/dir.strata");
    let error = format!(
        "{:#}",
        RecordingWriter::create(&missing, &header, Existing::Refuse)
            .err()
            .unwrap()
    );
    assert!(error.contains("its directory does not exist"), "{error}");
}

/// A window that lasts no time, or less than none, is refused by line and
/// field, never reported ("1–-4 s").
#[test]
fn a_negative_window_is_refused_by_its_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.strata");
    let mut recording = Recording::read(&fixture("run-scan.strata")).unwrap();
    let mut changed = 0;
    for line in &mut recording.lines {
        if let Record::RunResult(result) = &mut line.record {
            result.figures.window_s = -5.0;
            changed += 1;
        }
    }
    assert_eq!(changed, 1);
    recording.write_to(&path).unwrap();
    let error = error_of(&path);
    assert!(
        error.contains("the run_result record's figures.window_s is -5: it must be 0 s or more"),
        "{error}"
    );
}
