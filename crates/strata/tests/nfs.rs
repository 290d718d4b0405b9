//! `strata calibrate --target nfs://…` against a real filer: nfs-ganesha on
//! another host (a network namespace), reached by strata's own NFS client.

mod common;

use common::{run, run_json, scratch, stderr_of, strata};
use std::process::Stdio;
use strata_testkit::host::NamespaceHost;
use strata_testkit::nfs::HostedFiler;

/// A filer on host `index`, exporting a new directory.
fn filer(index: u8) -> (NamespaceHost, HostedFiler, tempfile::TempDir) {
    let mut host = NamespaceHost::create(index);
    let export = scratch();
    let filer = HostedFiler::start(&mut host, export.path());
    (host, filer, export)
}

/// 64 reads of 1 MiB at a transfer size of 32 KiB: exactly 32 READ calls
/// each, every one answered, the records' bytes beyond the data a few %;
/// the file strata made is marked as strata's, and the matrix with RPC
/// figures, a verdict and a Recording `strata report` renders.
#[test]
fn calibrate_reads_a_filer_with_its_own_client_and_counts_every_call() {
    let (host, filer, export) = filer(0);
    let dir = scratch();
    let url = filer.url("strata.dat");
    let document = run_json(
        &[
            "calibrate",
            "--target",
            &url,
            "--size",
            "16MiB",
            "--workload",
            "large-read",
        ],
        dir.path(),
    );
    let _ = document;
    let counted = run_json(
        &[
            "calibrate",
            "--target",
            &url,
            "--workload",
            "large-read",
            "--ios",
            "64",
            "--nfs-transfer",
            "32KiB",
        ],
        dir.path(),
    );
    let nfs = &counted["points"][0]["nfs"];
    assert_eq!(nfs["calls"], 64 * 32, "{nfs}");
    assert_eq!(nfs["replies"], 64 * 32, "{nfs}");
    assert_eq!(nfs["calls_per_io"], 32.0, "{nfs}");
    assert_eq!(nfs["transfer_bytes"], 32768, "{nfs}");
    assert_eq!(nfs["data_bytes"], 64 << 20, "{nfs}");
    let overhead = nfs["protocol_overhead_pct"].as_f64().unwrap();
    assert!(overhead > 0.0 && overhead < 5.0, "{nfs}");
    assert_eq!(nfs["interface"], host.interface(), "{nfs}");
    let records = nfs["bytes_received"].as_u64().unwrap();
    let on_the_veth = nfs["interface_bytes_received"].as_u64().unwrap();
    assert!(on_the_veth >= records, "{nfs}");
    assert!(on_the_veth <= records * 115 / 100 + (1 << 20), "{nfs}");
    assert_eq!(counted["target"]["kind"], "nfs_file");
    let schema_path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/calibrate.schema.json"
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&counted)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "against docs/calibrate.schema.json: {errors:?}"
    );
    let size = std::fs::metadata(export.path().join("strata.dat"))
        .unwrap()
        .len();
    assert_eq!(size, 16 << 20);
    assert!(export.path().join(".strata.dat.strata").exists());
    let sweep = run(
        &[
            "calibrate",
            "--target",
            &url,
            "--sweep",
            "--max-qd",
            "2",
            "--max-streams",
            "1",
            "--duration",
            "1s",
            "--ramp",
            "500ms",
            "--nfs-connections",
            "2",
            "--record",
            "s.strata",
        ],
        dir.path(),
    );
    assert!(sweep.status.success(), "{}", stderr_of(&sweep));
    let text = String::from_utf8_lossy(&sweep.stdout);
    assert!(text.contains("NFS — strata's own calls"), "{text}");
    assert!(
        text.contains("whose devices strata does not watch"),
        "{text}"
    );
    let report = run(&["report", "s.strata"], dir.path());
    assert!(report.status.success(), "{}", stderr_of(&report));
    assert!(String::from_utf8_lossy(&report.stdout).contains("nfs_file"));
}

/// A file strata did not make is only read; options that need an nfs://
/// target, another engine, a path under no export: each a named error
/// before any work, and nothing made on the export.
#[test]
fn what_strata_may_not_do_on_a_filer_is_refused_before_any_work() {
    let (_host, filer, export) = filer(1);
    let dir = scratch();
    let theirs = export.path().join("theirs.dat");
    std::fs::write(&theirs, vec![7u8; 1 << 20]).unwrap();
    let url = filer.url("theirs.dat");
    let refused = [
        (
            vec!["--target", url.as_str(), "--workload", "random-write"],
            "was not created by strata",
        ),
        (
            vec!["--nfs-connections", "2", "--workload", "large-read"],
            "--nfs-connections needs an nfs://",
        ),
        (
            vec!["--target", url.as_str(), "--engine", "psync"],
            "--engine psync does not reach an nfs://",
        ),
        (
            vec!["--target", url.as_str(), "--buffered"],
            "--buffered does not apply",
        ),
    ];
    for (args, said) in refused {
        let output = run(&[&["calibrate"][..], &args].concat(), dir.path());
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr_of(&output)
        );
        assert!(
            stderr_of(&output).contains(said),
            "{args:?}: {}",
            stderr_of(&output)
        );
    }
    let elsewhere = format!("nfs://{}/not/exported/f", filer.address);
    let output = run(&["calibrate", "--target", &elsewhere], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr_of(&output).contains("no export of"),
        "{}",
        stderr_of(&output)
    );
    let read = run_json(
        &[
            "calibrate",
            "--target",
            &url,
            "--workload",
            "small-random-read",
            "--ios",
            "200",
        ],
        dir.path(),
    );
    assert_eq!(read["points"][0]["nfs"]["calls"], 200);
    assert!(std::fs::read(&theirs).unwrap() == vec![7u8; 1 << 20]);
    let names: Vec<String> = std::fs::read_dir(export.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["theirs.dat"]);
}

/// The filer goes away in the middle of a timed point: a named error, and
/// the Recording keeps what was measured before.
#[test]
fn a_filer_that_goes_away_is_a_named_error_and_the_recording_is_kept() {
    let (mut host, filer, _export) = filer(2);
    let dir = scratch();
    let url = filer.url("strata.dat");
    let child = strata()
        .args([
            "calibrate",
            "--target",
            &url,
            "--size",
            "8MiB",
            "--workload",
            "small-random-read",
        ])
        .args([
            "--duration",
            "30s",
            "--ramp",
            "0s",
            "--record",
            "gone.strata",
        ])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(4));
    filer.stop(&mut host);
    let output = child.wait_with_output().unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("Connection reset by peer"), "{text}");
    assert!(
        text.contains(&filer.address.to_string()),
        "{text}\n{stderr}"
    );
    assert!(dir.path().join("gone.strata").exists());
}
