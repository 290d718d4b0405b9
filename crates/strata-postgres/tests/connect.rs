//! Connection targets: passwords never shown, and failures that say where
//! the connection went and why.

mod common;

use common::*;
use std::time::{Duration, Instant};
use strata_postgres::cluster::ThrowawayCluster;
use strata_postgres::connect::{connect, ConnectionTarget};

const PASSWORD: &str = "Hunter2-very-secret";

#[test]
fn url_with_password_is_shown_redacted_everywhere() {
    let url = format!("postgres://app:{PASSWORD}@db.example:6432/sales?application_name=x");
    let target = ConnectionTarget::parse(&url).unwrap();
    assert_eq!(
        target.redacted(),
        "postgres://app:***@db.example:6432/sales?application_name=x"
    );
    for shown in [target.redacted(), format!("{target:?}"), target.to_string()] {
        assert!(!shown.contains(PASSWORD), "{shown}");
    }
    assert_eq!(target.config().get_password(), Some(PASSWORD.as_bytes()));
    assert_eq!(
        target.config().get_connect_timeout(),
        Some(&Duration::from_secs(5))
    );
}

#[tokio::test]
async fn closed_port_fails_within_five_seconds_naming_the_port_not_the_password() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let target =
        ConnectionTarget::parse(&format!("postgres://app:{PASSWORD}@127.0.0.1:{port}/x")).unwrap();
    let started = Instant::now();
    let error = connect(&target).await.expect_err("nothing listens there");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    let message = format!("{error:#}");
    assert!(message.contains(&format!("port={port}")), "{message}");
    assert!(message.contains("user=app"), "{message}");
    assert!(!message.contains(PASSWORD), "{message}");
}

#[tokio::test]
async fn unknown_user_is_refused_with_the_servers_reason() {
    let cluster = ThrowawayCluster::start(&cluster_options()).expect("starting cluster");
    let conninfo = format!(
        "host=127.0.0.1 port={} user=nobody_here password={PASSWORD} dbname=postgres",
        cluster.port()
    );
    let target = ConnectionTarget::parse(&conninfo).unwrap();
    let message = format!("{:#}", connect(&target).await.expect_err("no such role"));
    assert!(
        message.contains(r#"role "nobody_here" does not exist"#),
        "{message}"
    );
    assert!(
        message.contains(&format!("port={}", cluster.port())),
        "{message}"
    );
    assert!(!message.contains(PASSWORD), "{message}");
}
