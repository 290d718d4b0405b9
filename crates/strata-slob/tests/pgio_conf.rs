//! Reading pgio's own configuration file.

use strata_slob::pgio_conf::{parse, PgioConf};

#[test]
fn parses_pgio_conf_and_lists_what_strata_does_not_use() {
    let text = include_str!("fixtures/pgio.conf");
    let conf = parse(text).unwrap();
    let expected = PgioConf {
        update_pct: Some(0.0),
        run_time_seconds: Some(120),
        num_schemas: Some(4),
        num_threads: Some(1),
        work_unit: Some(255),
        update_work_unit: Some(8),
        scale_blocks: Some(131_072),
        dbname: Some("pg10".to_string()),
        connect_string: Some("pg10".to_string()),
        unknown: vec!["CREATE_BASE_TABLE".to_string()],
    };
    assert_eq!(conf, expected);
}

#[test]
fn scale_in_megabytes_or_blocks_and_quoted_values() {
    let conf = parse("SCALE=\"100M\"\nUPDATE_PCT='20'\n").unwrap();
    assert_eq!(conf.scale_blocks, Some(12_800));
    assert_eq!(conf.update_pct, Some(20.0));
    assert_eq!(parse("SCALE=65536").unwrap().scale_blocks, Some(65_536));
    assert!(parse("UPDATE_PCT=150").is_err());
}
