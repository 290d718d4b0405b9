//! Reading SLOB's own configuration file, slob.conf.

use std::time::Duration;

use strata_slob::schema::TableSize;
use strata_slob::slob_conf::{defaults, parse, read, RedoStress, SlobConf};

const STOCK: &str = include_str!("fixtures/slob.conf");

#[test]
fn parses_the_stock_slob_conf_into_its_exact_values() {
    let expected = SlobConf {
        update_pct: Some(20.0),
        scan_pct: Some(0.0),
        run_time_seconds: Some(300),
        work_loop: Some(0),
        scale: Some(TableSize::Bytes(80 << 20)),
        scan_table_size: Some(TableSize::Bytes(1 << 20)),
        work_unit: Some(64),
        redo_stress: Some(RedoStress::Lite),
        load_parallel_degree: Some(2),
        threads_per_schema: Some(1),
        do_hotspot: Some(false),
        hotspot_mb: Some(8),
        hotspot_offset_mb: Some(16),
        hotspot_frequency: Some(3),
        hot_schema_frequency: Some(0),
        think_tm_frequency: Some(0),
        think_tm_min: Some(Duration::from_millis(100)),
        think_tm_max: Some(Duration::from_millis(500)),
        obfuscate_columns: None,
        oracle_only: vec!["DATABASE_STATISTICS_TYPE".to_string()],
        no_equivalent: vec!["EXTERNAL_SCRIPT".to_string()],
        unknown: vec![],
    };
    assert_eq!(parse(STOCK).unwrap(), expected);
}

#[test]
fn the_stock_file_becomes_strata_s_options_in_slob_s_units() {
    let stock = defaults(parse(STOCK).unwrap()).unwrap();
    assert_eq!(stock.update_pct, Some(20.0));
    assert_eq!(stock.scan_pct, Some(0.0));
    assert_eq!(stock.duration, Some(Duration::from_secs(300)));
    assert_eq!(stock.work_loops, None, "WORK_LOOP=0 is a timed run");
    assert_eq!(stock.scale, Some(TableSize::Bytes(80 << 20)));
    assert_eq!(stock.scale.unwrap().blocks(8192), 10_240);
    assert_eq!(stock.scan_table_size, Some(TableSize::Bytes(1 << 20)));
    assert_eq!(stock.work_unit, Some(63), "custid > r - 64 AND custid < r");
    assert_eq!(stock.update_work_unit, Some(63));
    assert_eq!(stock.update_pad_bytes, Some(256), "LITE: c2 and c20");
    assert_eq!(stock.load_parallel, Some(2));
    assert_eq!(stock.threads_per_schema, Some(1));
    assert!(stock.hotspot.is_none());
    assert_eq!(stock.hot_schema_every, None);
    assert_eq!((stock.think_time, stock.think_every), (None, None));
    assert!(!stock.random_data);
    assert_eq!(stock.db, None);
    assert_eq!(
        stock.notes.len(),
        2,
        "Oracle-only and no-equivalent: {:?}",
        stock.notes
    );
    assert!(stock.notes[0].contains("ignoring DATABASE_STATISTICS_TYPE (Oracle only"));
    assert!(stock.notes[1].contains("ignoring EXTERNAL_SCRIPT ("));
}

#[test]
fn scale_is_blocks_or_a_size_with_m_g_or_t() {
    let scale = |text: &str| parse(&format!("SCALE={text}\n")).map(|conf| conf.scale.unwrap());
    assert_eq!(scale("10000").unwrap(), TableSize::Blocks(10_000));
    assert_eq!(scale("80M").unwrap(), TableSize::Bytes(80 << 20));
    assert_eq!(scale("\"2G\"").unwrap(), TableSize::Bytes(2 << 30));
    assert_eq!(scale("1T").unwrap(), TableSize::Bytes(1 << 40));
    assert_eq!(scale("2G").unwrap().blocks(8192), 262_144);
    assert_eq!(scale("2G").unwrap().blocks(16384), 131_072, "InnoDB pages");
    for bad in ["80m", "64K", "0", "lots", "1.5G", "-5"] {
        let error = format!("{:#}", scale(bad).unwrap_err());
        assert!(error.contains("SCALE"), "{bad}: {error}");
        assert!(error.contains("M, G or T"), "{bad}: {error}");
    }
}

#[test]
fn bad_values_name_the_line_the_setting_and_what_is_accepted() {
    let cases = [
        ("UPDATE_PCT=150", "percentage from 0 to 100"),
        ("REDO_STRESS=MEDIUM", "LITE or HEAVY"),
        ("DO_HOTSPOT=yes", "TRUE or FALSE"),
        ("WORK_UNIT=1", "whole number of blocks from 2"),
        ("THREADS_PER_SCHEMA=0", "sessions from 1 to 10000"),
        ("RUN_TIME=2m", "whole number of seconds"),
        ("THINK_TM_MIN=soon", "seconds from 0 to 3600"),
        ("LOAD_PARALLEL_DEGREE=65", "loaders from 1 to 64"),
    ];
    for (line, accepted) in cases {
        let text = format!("RUN_TIME=5\n{line}\n");
        let error = format!("{:#}", parse(&text).unwrap_err());
        assert!(error.contains("slob.conf line 2"), "{line}: {error}");
        assert!(error.contains(line), "{line}: {error}");
        assert!(error.contains(accepted), "{line}: {error}");
    }
}

#[test]
fn settings_that_disagree_are_refused_naming_them() {
    let refused = |text: &str| format!("{:#}", defaults(parse(text).unwrap()).unwrap_err());
    let think = refused("THINK_TM_FREQUENCY=7\nTHINK_TM_MIN=.5\nTHINK_TM_MAX=.1\n");
    assert!(
        think.contains("THINK_TM_MIN") && think.contains("MIN <= MAX"),
        "{think}"
    );
    let beyond = refused("SCALE=16M\nDO_HOTSPOT=TRUE\nHOTSPOT_MB=8\nHOTSPOT_OFFSET_MB=16\n");
    assert!(beyond.contains("beyond SCALE (16 MB)"), "{beyond}");
    let never = refused("DO_HOTSPOT=TRUE\nHOTSPOT_FREQUENCY=0\n");
    assert!(never.contains("HOTSPOT_FREQUENCY of at least 1"), "{never}");
}

#[test]
fn hot_spot_think_time_and_work_loops_take_slob_s_units() {
    let text = "SCALE=10000\nDO_HOTSPOT=TRUE\nHOTSPOT_MB=8\nHOTSPOT_OFFSET_MB=16\n\
                HOTSPOT_FREQUENCY=3\nHOT_SCHEMA_FREQUENCY=5\nTHINK_TM_FREQUENCY=7\n\
                THINK_TM_MIN=.1\nTHINK_TM_MAX=2\nRUN_TIME=300\nWORK_LOOP=10\n\
                REDO_STRESS=HEAVY\nOBFUSCATE_COLUMNS=TRUE\n";
    let conf = defaults(parse(text).unwrap()).unwrap();
    let hotspot = conf.hotspot.unwrap();
    assert_eq!(hotspot.offset_blocks, 16 * 128, "MB of 8 KiB blocks");
    assert_eq!(hotspot.size_blocks, 8 * 128);
    assert_eq!(hotspot.every, 3);
    assert_eq!(conf.hot_schema_every, Some(5));
    assert_eq!(conf.think_every, Some(7));
    assert_eq!(
        conf.think_time,
        Some((Duration::from_millis(100), Duration::from_secs(2)))
    );
    assert_eq!(conf.work_loops, Some(10));
    assert_eq!(conf.update_pad_bytes, Some(19 * 128), "HEAVY: c2 to c20");
    assert!(conf.random_data, "OBFUSCATE_COLUMNS=TRUE");
    assert!(
        conf.notes
            .iter()
            .any(|note| note.contains("WORK_LOOP=10 ends the run")),
        "{:?}",
        conf.notes
    );
}

#[test]
fn passwords_and_oracle_settings_are_named_never_shown() {
    let text = "DBA_PRIV_USER=\"system\"\nSYSDBA_PASSWD=\"s3cret-pw\"\n\
                ADMIN_SQLNET_SERVICE=slob\nNON_ADMIN_CONNECT_STRING=\"@slob\"\nFOO=bar\n";
    let conf = defaults(parse(text).unwrap()).unwrap();
    let notes = conf.notes.join("\n");
    assert!(
        notes.contains(
            "ignoring DBA_PRIV_USER, SYSDBA_PASSWD, ADMIN_SQLNET_SERVICE, \
             NON_ADMIN_CONNECT_STRING (Oracle only"
        ),
        "{notes}"
    );
    assert!(
        notes.contains("ignoring FOO (not a SLOB 2.5 setting"),
        "{notes}"
    );
    for secret in ["s3cret-pw", "system", "@slob", "bar"] {
        assert!(!notes.contains(secret), "{secret} shown: {notes}");
    }
}

#[test]
fn an_error_names_the_file_it_read() {
    let path = std::env::temp_dir().join(format!("strata-slob-conf-{}.conf", std::process::id()));
    std::fs::write(&path, "UPDATE_PCT=20\nWORK_UNIT=big\n").unwrap();
    let error = format!("{:#}", read(&path).unwrap_err());
    std::fs::remove_file(&path).unwrap();
    assert!(
        error.contains(&format!("--slob-conf {}", path.display())),
        "{error}"
    );
    assert!(error.contains("line 2: WORK_UNIT=big"), "{error}");
    let missing = format!("{:#}", read(&path).unwrap_err());
    assert!(missing.contains("--slob-conf"), "{missing}");
}
