//! Glue every SLOB module shares for talking to PostgreSQL: opening a
//! connection with its driver task, telling a lost server from a failed
//! statement, and describing errors so people can act on them.
//!
//! Not for: any SQL of the SLOB method itself.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, Config, NoTls};

/// How long one connection attempt may take before it counts as failed.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a connection's driver ended, once it has: the server's last words
/// (e.g. FATAL 57P01 on shutdown) that the client itself only sees as
/// "connection closed".
pub(crate) type ConnectionEnd = Arc<OnceLock<String>>;

/// Opens a connection; its driver runs as a tokio task until the client is
/// dropped or the server goes away.
pub(crate) async fn connect(config: &Config) -> Result<Client, String> {
    connect_watched(config).await.map(|(client, _)| client)
}

/// Like [`connect`], with a note of why the connection ended.
pub(crate) async fn connect_watched(config: &Config) -> Result<(Client, ConnectionEnd), String> {
    let mut config = config.clone();
    if config.get_application_name().is_none() {
        config.application_name("strata slob");
    }
    let attempt = tokio::time::timeout(CONNECT_TIMEOUT, config.connect(NoTls));
    match attempt.await {
        Ok(Ok((client, connection))) => {
            let end = ConnectionEnd::default();
            let note = Arc::clone(&end);
            tokio::spawn(async move {
                let reason = match connection.await {
                    Ok(()) => "the server closed the connection".to_string(),
                    Err(error) => describe(&error),
                };
                let _first_note_wins = note.set(reason);
            });
            Ok((client, end))
        }
        Ok(Err(error)) => Err(format!("cannot connect: {}", describe(&error))),
        Err(_) => Err(format!(
            "cannot connect: no answer in {} s",
            CONNECT_TIMEOUT.as_secs()
        )),
    }
}

/// `error`, described with why the connection ended when the client only
/// knows it closed (waiting briefly for the driver task to note it).
pub(crate) async fn describe_lost(error: &tokio_postgres::Error, end: &ConnectionEnd) -> String {
    if !error.is_closed() {
        return describe(error);
    }
    for _ in 0..20 {
        if let Some(reason) = end.get() {
            return format!("connection closed: {reason}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    describe(error)
}

/// Whether `error` means the server (or the connection to it) went away,
/// rather than that a statement failed on a live connection.
pub(crate) fn server_went_away(error: &tokio_postgres::Error) -> bool {
    if error.is_closed() {
        return true;
    }
    match error.code() {
        Some(code) => {
            *code == SqlState::ADMIN_SHUTDOWN
                || *code == SqlState::CRASH_SHUTDOWN
                || *code == SqlState::CANNOT_CONNECT_NOW
                || code.code().starts_with("08")
        }
        None => std::error::Error::source(error)
            .is_some_and(|cause| cause.downcast_ref::<std::io::Error>().is_some()),
    }
}

/// One line describing `error`: the server's severity, SQLSTATE, message,
/// detail and hint, or the client-side cause chain. Never holds a password:
/// nothing from the connection configuration goes into it.
pub(crate) fn describe(error: &tokio_postgres::Error) -> String {
    if let Some(db_error) = error.as_db_error() {
        let mut text = format!(
            "{} {}: {}",
            db_error.severity(),
            db_error.code().code(),
            db_error.message()
        );
        if let Some(detail) = db_error.detail() {
            text.push_str(&format!(" (detail: {detail})"));
        }
        if let Some(hint) = db_error.hint() {
            text.push_str(&format!(" (hint: {hint})"));
        }
        return text;
    }
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Turns a driver error into an `anyhow` error carrying `what` was being
/// done and the server's full message.
pub(crate) fn context(
    what: impl std::fmt::Display,
) -> impl FnOnce(tokio_postgres::Error) -> anyhow::Error {
    move |error| anyhow::anyhow!("{what}: {}", describe(&error))
}
