//! `strata run` against a server on another host (a namespace host whose
//! data directory's path exists here too): the run completes with the
//! workload and the database's own figures, and says plainly that the
//! server's host is not observed, with no device of this machine in its
//! figures.

mod common;

use common::*;
use strata_testkit::host::NamespaceHost;
use strata_testkit::postgres::{debian_bin_dir, HostedPostgres};

#[test]
fn a_run_against_a_server_on_another_host_says_its_host_is_not_observed() {
    let dir = scratch();
    let mut host = NamespaceHost::create(1);
    let server = HostedPostgres::start(&mut host, &debian_bin_dir());
    let url = server.url();
    let plan = ["--schemas", "1", "--scale", "4MiB"];
    let mut setup = vec!["setup", "--db", url.as_str()];
    setup.extend(plan);
    run_json(&setup, dir.path());
    let mut args = vec![
        "run",
        "--db",
        url.as_str(),
        "--duration",
        "2s",
        "--warmup",
        "0s",
    ];
    args.extend(plan);
    let document = run_json(&args, dir.path());
    let environment = &document["environment"];
    let note = environment["device_note"].as_str().unwrap_or_default();
    assert!(
        note.starts_with("the server's host is not observed (")
            && note.contains("run strata on the server's host"),
        "{note}"
    );
    assert_eq!(environment["devices"]["data"], serde_json::json!([]));
    assert_eq!(document["result"]["devices"], serde_json::json!([]));
    assert!(document["result"]["workload"]["loops"].as_u64().unwrap() > 0);
    assert!(document["result"]["database"]["blocks_read"]
        .as_f64()
        .is_some());

    let text = run(&args, dir.path());
    assert!(text.status.success(), "{}", stderr_of(&text));
    let shown = String::from_utf8_lossy(&text.stdout);
    assert!(
        shown.contains("the server's host is not observed"),
        "{shown}"
    );
}
