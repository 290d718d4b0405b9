//! Loading SLOB schemas into a throwaway cluster: the layout (one row per
//! block, shuffled keys, incompressible data) and the ownership rules (keep,
//! replace, reload what was interrupted, never touch what strata did not
//! make).

mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};

use common::slob::{client, load, number, start_server};
use strata_postgres::load::{check_layout, setup, LoadAction, LoadOptions};
use strata_testkit::slob::plan;

fn actions(report: &strata_slob::load::LoadReport) -> Vec<LoadAction> {
    report
        .schemas
        .iter()
        .map(|schema| schema.action.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setup_lays_out_one_row_per_block_with_shuffled_random_data() {
    let server = start_server(32 << 20, &[]);
    let plan = plan(2, 256);
    let report = load(&server.config, &plan, 2).await;
    assert_eq!(actions(&report), [LoadAction::Loaded, LoadAction::Loaded]);
    assert_eq!(report.rows_loaded, 512);
    assert_eq!(report.blocks, 512);
    assert!(
        report.bytes_on_disk >= 512 * 8192 && report.gb_per_hour > 0.0,
        "{report:?}"
    );

    let layout = check_layout(&server.config, &plan).await.unwrap();
    for check in &layout {
        assert!(check.one_row_per_block && check.complete, "{check:?}");
        assert_eq!(
            (check.rows, check.heap_blocks, check.distinct_row_blocks),
            (256, 256, 256)
        );
    }
    let db = client(&server.config).await;
    for schema in ["strata_slob_1", "strata_slob_2"] {
        assert_keys_shuffled_and_pads_unique(&db, schema, 256).await;
        assert_first_read_dirties_nothing(&db, schema, 256).await;
    }
    let sample = relation_file_sample(&server, &db, "strata_slob_1.slob").await;
    let data_words: Vec<&[u8]> = sample
        .chunks(8)
        .filter(|word| word.iter().any(|&b| b != 0))
        .collect();
    let data_share = data_words.len() as f64 / (sample.len() / 8) as f64;
    assert!(
        data_share > 0.45,
        "only {data_share:.3} of the pages hold data (half is kept free for updates)"
    );
    let words: HashSet<&[u8]> = data_words.iter().copied().collect();
    let distinct_share = words.len() as f64 / data_words.len() as f64;
    assert!(
        distinct_share > 0.95,
        "only {distinct_share:.3} of the data's 8-byte words are distinct"
    );
}

/// A schema loaded in chunks by parallel loaders (asynchronous commits),
/// with a WAL writer that flushes only every 10 s: VACUUM still finds
/// every commit flushed, so every page is all-visible and the first read
/// through the index dirties nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunked_load_leaves_every_page_all_visible_and_hinted() {
    let server = start_server(32 << 20, &[("wal_writer_delay", "10s")]);
    let plan = plan(1, 8192);
    let report = load(&server.config, &plan, 2).await;
    assert_eq!(actions(&report), [LoadAction::Loaded]);
    let db = client(&server.config).await;
    db.batch_execute("CREATE EXTENSION pg_visibility")
        .await
        .unwrap();
    let all_visible = number(
        &db,
        "SELECT all_visible FROM pg_visibility_map_summary('strata_slob_1.slob')",
    )
    .await;
    assert_eq!(all_visible, 8192, "pages VACUUM left not all-visible");
    assert_first_read_dirties_nothing(&db, "strata_slob_1", 8192).await;
}

/// Key order is not block order (by the rows' ctids and by ANALYZE), and
/// no two rows share their pad.
async fn assert_keys_shuffled_and_pads_unique(
    db: &tokio_postgres::Client,
    schema: &str,
    rows: i64,
) {
    let correlation_sql = format!("SELECT corr(key, (ctid::text::point)[0]) FROM {schema}.slob");
    let correlation: f64 = db.query_one(&correlation_sql, &[]).await.unwrap().get(0);
    assert!(
        correlation.abs() < 0.3,
        "{schema}: key/block correlation {correlation}"
    );
    let stats_sql = "SELECT correlation FROM pg_stats \
         WHERE schemaname = $1 AND tablename = 'slob' AND attname = 'key'";
    let stats_correlation: f32 = db.query_one(stats_sql, &[&schema]).await.unwrap().get(0);
    assert!(
        stats_correlation.abs() < 0.3,
        "{schema}: pg_stats correlation {stats_correlation}"
    );
    let distinct_pads = number(
        db,
        &format!("SELECT count(DISTINCT pad) FROM {schema}.slob"),
    )
    .await;
    assert_eq!(distinct_pads, rows, "{schema}: pad values repeat");
}

/// Reading every row through the index, as sessions do, right after the
/// load: an index scan that dirties no buffer (hint bits are already set).
async fn assert_first_read_dirties_nothing(db: &tokio_postgres::Client, schema: &str, rows: i64) {
    db.batch_execute("SET enable_seqscan = off; SET enable_bitmapscan = off")
        .await
        .unwrap();
    let explain = format!(
        "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) \
         SELECT sum(n) FROM {schema}.slob WHERE key BETWEEN 1 AND {rows}"
    );
    let messages = db.simple_query(&explain).await.unwrap();
    let text = messages
        .iter()
        .find_map(|message| match message {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_string),
            _ => None,
        })
        .expect("EXPLAIN returned a row");
    let plan: serde_json::Value = serde_json::from_str(&text).unwrap();
    let top = &plan[0]["Plan"];
    let scan = &top["Plans"][0];
    assert_eq!(scan["Node Type"], "Index Scan", "{plan}");
    assert_eq!(scan["Actual Rows"], rows, "{plan}");
    assert_eq!(
        top["Shared Dirtied Blocks"], 0,
        "{schema}: the first read dirtied blocks: {plan}"
    );
}

/// The first 64 KiB of a relation's file, after a checkpoint wrote it.
async fn relation_file_sample(
    server: &common::slob::TestServer,
    db: &tokio_postgres::Client,
    relation: &str,
) -> Vec<u8> {
    db.batch_execute("CHECKPOINT").await.unwrap();
    let path: String = db
        .query_one(&format!("SELECT pg_relation_filepath('{relation}')"), &[])
        .await
        .unwrap()
        .get(0);
    let bytes = std::fs::read(server.cluster.data_dir().join(path)).unwrap();
    assert!(bytes.len() >= 64 << 10, "{} bytes", bytes.len());
    bytes[..64 << 10].to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setup_keeps_replaces_and_reloads_interrupted_loads() {
    let server = start_server(32 << 20, &[]);
    let plan = plan(2, 256);
    let never = AtomicBool::new(false);
    load(&server.config, &plan, 2).await;
    let mut options = LoadOptions {
        plan: plan.clone(),
        parallel: 2,
        replace: false,
    };
    let again = setup(&server.config, &options, &|_| {}, &never)
        .await
        .unwrap();
    assert_eq!(
        actions(&again),
        [LoadAction::KeptComplete, LoadAction::KeptComplete]
    );
    assert_eq!(again.rows_loaded, 0);

    options.plan.blocks_per_schema = 300;
    let resized = setup(&server.config, &options, &|_| {}, &never)
        .await
        .unwrap_err();
    assert!(format!("{resized:#}").contains("--replace"), "{resized:#}");
    options.plan.blocks_per_schema = 256;

    options.replace = true;
    let replaced = setup(&server.config, &options, &|_| {}, &never)
        .await
        .unwrap();
    assert_eq!(
        actions(&replaced),
        [LoadAction::Replaced, LoadAction::Replaced]
    );
    options.replace = false;

    let db = client(&server.config).await;
    db.batch_execute(
        "UPDATE strata_slob_meta.loads SET completed_at = NULL WHERE schema_name = 'strata_slob_2'",
    )
    .await
    .unwrap();
    let reloaded = setup(&server.config, &options, &|_| {}, &never)
        .await
        .unwrap();
    assert_eq!(
        actions(&reloaded),
        [LoadAction::KeptComplete, LoadAction::ReloadedIncomplete]
    );
    let layout = check_layout(&server.config, &plan).await.unwrap();
    assert!(
        layout
            .iter()
            .all(|check| check.one_row_per_block && check.complete),
        "{layout:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopped_setup_leaves_the_schema_incomplete_and_the_next_reloads_it() {
    let server = start_server(32 << 20, &[]);
    let mut plan = plan(1, 20_000);
    plan.scan_table_blocks = 64;
    let stop = AtomicBool::new(false);
    let options = LoadOptions {
        plan: plan.clone(),
        parallel: 2,
        replace: false,
    };
    let stop_at_first_progress = |_| stop.store(true, Ordering::Relaxed);
    let error = setup(&server.config, &options, &stop_at_first_progress, &stop)
        .await
        .unwrap_err();
    assert!(format!("{error:#}").contains("interrupted"), "{error:#}");
    let layout = check_layout(&server.config, &plan).await.unwrap();
    assert!(!layout[0].complete, "{layout:?}");

    stop.store(false, Ordering::Relaxed);
    let reloaded = setup(&server.config, &options, &|_| {}, &stop)
        .await
        .unwrap();
    assert_eq!(actions(&reloaded), [LoadAction::ReloadedIncomplete]);
    assert_eq!(reloaded.rows_loaded, 20_064);
    let layout = check_layout(&server.config, &plan).await.unwrap();
    assert!(
        layout[0].one_row_per_block && layout[0].complete,
        "{layout:?}"
    );
    let db = client(&server.config).await;
    assert_eq!(
        number(&db, "SELECT count(*) FROM strata_slob_1.scan").await,
        64
    );
    eprintln!(
        "load: {:.0} MB/s ({:.1} GB/hour) for {} bytes",
        reloaded.bytes_loaded as f64 / 1e6 / reloaded.seconds,
        reloaded.gb_per_hour,
        reloaded.bytes_loaded
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setup_refuses_a_schema_strata_did_not_create() {
    let server = start_server(32 << 20, &[]);
    let db = client(&server.config).await;
    db.batch_execute("CREATE SCHEMA strata_slob_1; CREATE TABLE strata_slob_1.precious (id int); INSERT INTO strata_slob_1.precious VALUES (1)")
        .await
        .unwrap();
    let never = AtomicBool::new(false);
    for replace in [false, true] {
        let options = LoadOptions {
            plan: plan(2, 64),
            parallel: 2,
            replace,
        };
        let error = setup(&server.config, &options, &|_| {}, &never)
            .await
            .unwrap_err();
        assert!(format!("{error:#}").contains("strata_slob_1"), "{error:#}");
    }
    assert_eq!(
        number(&db, "SELECT count(*) FROM strata_slob_1.precious").await,
        1
    );
    let others = number(
        &db,
        "SELECT count(*) FROM pg_namespace WHERE nspname = 'strata_slob_2'",
    )
    .await;
    assert_eq!(others, 0, "setup changed something before refusing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_drops_only_what_strata_made_and_names_what_else_is_there() {
    let server = start_server(32 << 20, &[]);
    let plan = plan(1, 64);
    let never = AtomicBool::new(false);
    load(&server.config, &plan, 1).await;
    let db = client(&server.config).await;
    db.batch_execute(
        "CREATE TABLE strata_slob_1.precious (id int); INSERT INTO strata_slob_1.precious VALUES (1); \
         CREATE FUNCTION strata_slob_1.keep_me(int) RETURNS int LANGUAGE sql AS 'SELECT $1'",
    )
    .await
    .unwrap();
    let options = LoadOptions {
        plan: plan.clone(),
        parallel: 1,
        replace: true,
    };
    let error = setup(&server.config, &options, &|_| {}, &never)
        .await
        .unwrap_err();
    let message = format!("{error:#}");
    assert!(
        message.contains("relation precious")
            && message.contains("function strata_slob_1.keep_me(integer)"),
        "{message}"
    );
    assert!(message.contains("nothing was dropped"), "{message}");
    assert_eq!(
        number(&db, "SELECT count(*) FROM strata_slob_1.precious").await,
        1
    );
    assert_eq!(
        number(&db, "SELECT count(*) FROM strata_slob_1.slob").await,
        64
    );

    db.batch_execute("DROP TABLE strata_slob_1.precious; DROP FUNCTION strata_slob_1.keep_me(int)")
        .await
        .unwrap();
    let replaced = setup(&server.config, &options, &|_| {}, &never)
        .await
        .unwrap();
    assert_eq!(actions(&replaced), [LoadAction::Replaced]);
}
