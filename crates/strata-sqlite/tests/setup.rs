//! Setup on real SQLite files in a temporary directory.

use std::sync::atomic::AtomicBool;
use strata_slob::load::LoadAction;
use strata_sqlite::{check_layout, setup, SetupOptions};
use strata_testkit::slob::plan;

fn options(path: std::path::PathBuf, pages: u64) -> SetupOptions {
    SetupOptions {
        path,
        plan: plan(2, pages),
        replace: false,
        page_bytes: None,
    }
}

#[test]
fn setup_gives_one_row_per_page_with_shuffled_keys_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slob.sqlite");
    let mut batches = 0;
    let report = setup(
        &options(path.clone(), 3000),
        &mut |_| batches += 1,
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(report.rows_loaded, 6000);
    assert!(batches >= 6, "{batches}");
    for layout in check_layout(&path, &plan(2, 3000)).unwrap() {
        assert!(layout.one_row_per_page, "{layout:?}");
        assert_eq!(
            (layout.rows, layout.leaf_pages, layout.overflow_pages),
            (3000, 3000, 0)
        );
        assert!(
            layout.index_pages >= 1 && layout.index_pages < 100,
            "{layout:?}"
        );
    }
    let connection = rusqlite::Connection::open(&path).unwrap();
    let pragma = |name: &str| -> String {
        connection
            .query_row(&format!("PRAGMA {name}"), [], |row| {
                row.get::<_, rusqlite::types::Value>(0)
            })
            .map(|value| format!("{value:?}"))
            .unwrap()
    };
    assert_eq!(pragma("page_size"), "Integer(8192)");
    assert_eq!(pragma("journal_mode"), "Text(\"wal\")");
    let page_count: i64 = connection
        .query_row("PRAGMA page_count", [], |row| row.get(0))
        .unwrap();
    assert!(
        (6000..6200).contains(&page_count),
        "{page_count} pages for 6000 rows"
    );
    let in_order: i64 = connection
        .query_row(
            "SELECT count(*) FROM strata_slob_1 a JOIN strata_slob_1 b ON b.id = a.id + 1 WHERE b.key > a.key",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert!(
        (1200..1800).contains(&in_order),
        "{in_order} of 2999 neighbours ascending"
    );
    let complete: i64 = connection
        .query_row(
            "SELECT count(*) FROM strata_slob_meta WHERE completed_at IS NOT NULL",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(complete, 2);
}

#[test]
fn a_second_setup_keeps_complete_sets_and_replace_reloads_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slob.sqlite");
    let stop = AtomicBool::new(false);
    setup(&options(path.clone(), 500), &mut |_| {}, &stop).unwrap();
    let again = setup(&options(path.clone(), 500), &mut |_| {}, &stop).unwrap();
    assert!(again
        .schemas
        .iter()
        .all(|schema| schema.action == LoadAction::KeptComplete));
    assert_eq!(again.rows_loaded, 0);
    let other_size = setup(&options(path.clone(), 600), &mut |_| {}, &stop).unwrap_err();
    assert!(
        format!("{other_size:#}").contains("--replace"),
        "{other_size:#}"
    );
    let mut replace = options(path.clone(), 600);
    replace.replace = true;
    let replaced = setup(&replace, &mut |_| {}, &stop).unwrap();
    assert!(replaced
        .schemas
        .iter()
        .all(|schema| schema.action == LoadAction::Replaced));
    assert!(check_layout(&path, &plan(2, 600))
        .unwrap()
        .iter()
        .all(|layout| layout.rows == 600));
}

#[test]
fn tables_strata_did_not_create_are_never_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("theirs.sqlite");
    let connection = rusqlite::Connection::open(&path).unwrap();
    connection
        .execute_batch("CREATE TABLE strata_slob_2 (x); INSERT INTO strata_slob_2 VALUES (42)")
        .unwrap();
    let mut replace = options(path.clone(), 100);
    replace.replace = true;
    let error = setup(&replace, &mut |_| {}, &AtomicBool::new(false)).unwrap_err();
    assert!(format!("{error:#}").contains("did not create"), "{error:#}");
    let kept: i64 = connection
        .query_row("SELECT x FROM strata_slob_2", [], |row| row.get(0))
        .unwrap();
    assert_eq!(kept, 42);
    let strata_tables: i64 = connection
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name = 'strata_slob_1'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(strata_tables, 0, "refused before changing anything");
}

#[test]
fn an_interrupted_load_is_reloaded_by_the_next_setup() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slob.sqlite");
    let stop = AtomicBool::new(false);
    let mut batches = 0;
    let interrupted = setup(
        &options(path.clone(), 4000),
        &mut |_| {
            batches += 1;
            if batches == 2 {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        },
        &stop,
    );
    assert!(interrupted.is_err());
    stop.store(false, std::sync::atomic::Ordering::Relaxed);
    let report = setup(&options(path.clone(), 4000), &mut |_| {}, &stop).unwrap();
    assert_eq!(report.schemas[0].action, LoadAction::ReloadedIncomplete);
    assert_eq!(report.schemas[1].action, LoadAction::Loaded);
    assert!(check_layout(&path, &plan(2, 4000))
        .unwrap()
        .iter()
        .all(|layout| layout.one_row_per_page));
}

#[test]
fn a_page_size_the_file_does_not_have_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slob.sqlite");
    let mut four_k = options(path.clone(), 200);
    four_k.page_bytes = Some(4096);
    setup(&four_k, &mut |_| {}, &AtomicBool::new(false)).unwrap();
    assert!(check_layout(&path, &plan(2, 200))
        .unwrap()
        .iter()
        .all(|layout| layout.one_row_per_page));
    let mut eight_k = options(path, 200);
    eight_k.page_bytes = Some(8192);
    let error = setup(&eight_k, &mut |_| {}, &AtomicBool::new(false)).unwrap_err();
    assert!(format!("{error:#}").contains("4096"), "{error:#}");
}
