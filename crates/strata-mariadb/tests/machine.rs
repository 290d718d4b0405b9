//! Against the MariaDB running on the machine (127.0.0.1:3306, root, no
//! password): setup in a database strata creates and removes, strata's
//! refusal to touch what it did not create, and a wrong password that fails
//! fast without being printed.

mod common;

use common::*;
use mysql::prelude::Queryable;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use strata_mariadb::{remove, setup, MariaDbTarget, SetupOptions};
use strata_slob::load::LoadAction;
use strata_testkit::slob::plan;

fn database_name(what: &str) -> String {
    format!("strata_test_{what}_{}", std::process::id())
}

fn machine(database: &str) -> MariaDbTarget {
    let target = MariaDbTarget::from_url(&format!("{MACHINE_URL}/{database}")).unwrap();
    target.connect_server().unwrap_or_else(|error| {
        panic!("MariaDB is not reachable at {MACHINE_URL} ({error:#}); {START_HINT}")
    });
    target
}

fn databases(target: &MariaDbTarget) -> Vec<String> {
    target
        .connect_server()
        .unwrap()
        .query("SHOW DATABASES")
        .unwrap()
}

fn options(blocks: u64) -> SetupOptions {
    SetupOptions {
        plan: plan(1, blocks),
        replace: false,
        seed: 7,
    }
}

fn load(
    target: &MariaDbTarget,
    options: &SetupOptions,
) -> anyhow::Result<strata_mariadb::SetupReport> {
    setup(target, options, &mut |_| {}, &AtomicBool::new(false))
}

#[test]
fn setup_in_a_database_strata_creates_and_removes() {
    let name = database_name("own");
    let target = machine(&name);
    let report = load(&target, &options(128)).unwrap();
    assert!(report.database_created);
    assert_eq!(report.layout.len(), 1);
    let table = &report.layout[0];
    assert!(
        table.one_row_per_page && (128..=130).contains(&table.leaf_pages),
        "{table:?}"
    );
    assert_eq!(report.load.schemas[0].action, LoadAction::Loaded);

    let mut conn = target.connect().unwrap();
    let (rows, keys, low, high): (u64, u64, i64, i64) = conn
        .query_first(
            "SELECT COUNT(*), COUNT(DISTINCT `key`), MIN(`key`), MAX(`key`) FROM strata_slob_1",
        )
        .unwrap()
        .unwrap();
    assert_eq!((rows, keys, low, high), (128, 128, 1, 128));
    let in_id_order: Vec<i64> = conn
        .query("SELECT `key` FROM strata_slob_1 ORDER BY id LIMIT 8")
        .unwrap();
    assert_ne!(
        in_id_order,
        (1..=8).collect::<Vec<i64>>(),
        "keys are shuffled"
    );

    let again = load(&target, &options(128)).unwrap();
    assert!(!again.database_created);
    assert_eq!(again.load.schemas[0].action, LoadAction::KeptComplete);
    let error = load(&target, &options(64)).unwrap_err();
    assert!(format!("{error:#}").contains("--replace"), "{error:#}");

    let removed = remove(&target).unwrap();
    assert!(removed.database_dropped, "{removed:?}");
    assert!(!databases(&target).contains(&name));
}

#[test]
fn strata_never_drops_what_it_did_not_create() {
    let name = database_name("theirs");
    let target = machine(&name);
    let mut server = target.connect_server().unwrap();
    server
        .query_drop(format!("CREATE DATABASE {name}"))
        .unwrap();
    server
        .query_drop(format!("CREATE TABLE {name}.strata_slob_1 (id INT)"))
        .unwrap();
    let error = load(&target, &options(16)).unwrap_err();
    assert!(
        format!("{error:#}").contains("did not create it"),
        "{error:#}"
    );
    server
        .query_drop(format!(
            "RENAME TABLE {name}.strata_slob_1 TO {name}.theirs"
        ))
        .unwrap();

    let report = load(&target, &options(16)).unwrap();
    assert!(!report.database_created);
    let removed = remove(&target).unwrap();
    assert_eq!(removed.tables, ["strata_slob_1"]);
    assert!(!removed.database_dropped);
    let left: Vec<String> = server.query(format!("SHOW TABLES FROM {name}")).unwrap();
    assert_eq!(left, ["theirs"]);
    server.query_drop(format!("DROP DATABASE {name}")).unwrap();
}

#[test]
fn a_wrong_password_fails_fast_and_is_never_shown() {
    drop(machine("strata_slob"));
    let secret = "strata-wrong-pw-4711";
    let target =
        MariaDbTarget::from_url(&format!("mysql://root:{secret}@127.0.0.1:3306/strata_slob"))
            .unwrap();
    let started = Instant::now();
    let error = load(&target, &options(16)).unwrap_err();
    let elapsed = started.elapsed();
    let text = format!("{error:#} {error:?} {target:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}: {text}");
    assert!(!text.contains(secret), "{text}");
    assert!(text.contains("mysql://root:***@127.0.0.1:3306"), "{text}");
}
