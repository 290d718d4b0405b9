//! Connecting to a PostgreSQL server named by a `postgres://` URL or a
//! `key=value` conninfo string, the way libpq users expect (PG* environment
//! variables fill what the string leaves out), without ever showing the
//! password.
//!
//! Not for: TLS (connections are plain), connection pooling, or retries.

use anyhow::{anyhow, bail, Result};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;
use tokio_postgres::config::Host;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const REDACTED: &str = "***";

/// Where and as whom to connect. Debug and Display show the redacted text.
#[derive(Clone)]
pub struct ConnectionTarget {
    text: String,
    config: tokio_postgres::Config,
}

impl ConnectionTarget {
    pub fn parse(text: &str) -> Result<ConnectionTarget> {
        let mut config = tokio_postgres::Config::from_str(text).map_err(|error| {
            let message = scrub_secret(&error_chain(&error), password_in(text).as_deref());
            let (masked, secrets) = strata_db::secrets::mask_secrets(&redact(text));
            let message = strata_db::secrets::scrub(&message, &secrets);
            anyhow!("cannot parse connection string {masked}: {message}")
        })?;
        apply_environment_defaults(&mut config);
        Ok(ConnectionTarget {
            text: text.to_string(),
            config,
        })
    }

    /// The text as given, with the password replaced by `***`.
    pub fn redacted(&self) -> String {
        redact(&self.text)
    }

    /// The configuration to connect with (5 s connect timeout).
    pub fn config(&self) -> tokio_postgres::Config {
        let mut config = self.config.clone();
        config.connect_timeout(CONNECT_TIMEOUT);
        config
    }

    /// `host=… port=… user=… dbname=…` as they will be used; no password.
    pub fn endpoint(&self) -> String {
        let hosts: Vec<String> = self
            .config
            .get_hosts()
            .iter()
            .map(|host| match host {
                Host::Tcp(name) => name.clone(),
                Host::Unix(path) => path.display().to_string(),
            })
            .collect();
        let ports: Vec<String> = self.config.get_ports().iter().map(u16::to_string).collect();
        let or_default = |items: Vec<String>, default: &str| match items.is_empty() {
            true => default.to_string(),
            false => items.join(","),
        };
        format!(
            "host={} port={} user={} dbname={}",
            or_default(hosts, "(none)"),
            or_default(ports, "5432"),
            self.config.get_user().unwrap_or("(none)"),
            self.config
                .get_dbname()
                .or(self.config.get_user())
                .unwrap_or("(none)"),
        )
    }
}

impl fmt::Debug for ConnectionTarget {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "ConnectionTarget({})", self.redacted())
    }
}

impl fmt::Display for ConnectionTarget {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.redacted())
    }
}

/// The `application_name` of strata's own connections (edges, samplers,
/// settings), so that `pg_stat_activity` and strata's process groups tell
/// them from the sessions'.
pub const MONITOR_APPLICATION_NAME: &str = "strata monitor";

/// Connects without TLS, as [`MONITOR_APPLICATION_NAME`], and spawns the
/// connection task on the current tokio runtime. Fails within 5 s for an
/// unreachable server.
pub async fn connect(target: &ConnectionTarget) -> Result<tokio_postgres::Client> {
    let mut config = target.config();
    config.application_name(MONITOR_APPLICATION_NAME);
    let attempt = config.connect(tokio_postgres::NoTls);
    let (client, connection) = match tokio::time::timeout(CONNECT_TIMEOUT, attempt).await {
        Ok(Ok(pair)) => pair,
        Ok(Err(error)) => bail!(
            "cannot connect to PostgreSQL at {}: {}",
            target.endpoint(),
            describe_error(&error)
        ),
        Err(_) => bail!(
            "cannot connect to PostgreSQL at {}: no answer within {} s",
            target.endpoint(),
            CONNECT_TIMEOUT.as_secs()
        ),
    };
    tokio::spawn(connection);
    Ok(client)
}

/// The server's own message for errors it sent (`FATAL: role "x" does not
/// exist`), else the error and its causes.
pub fn describe_error(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!(
            "{}: {} (SQLSTATE {})",
            db.severity(),
            db.message(),
            db.code().code()
        ),
        None => error_chain(error),
    }
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// What libpq takes from the environment when the string leaves it out:
/// PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD; then the local socket
/// directory and the OS user name.
fn apply_environment_defaults(config: &mut tokio_postgres::Config) {
    let env = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
        let host = env("PGHOST").or_else(|| {
            ["/var/run/postgresql", "/tmp"]
                .into_iter()
                .find(|dir| std::path::Path::new(dir).is_dir())
                .map(str::to_string)
        });
        if let Some(host) = host {
            config.host(&host);
        }
    }
    if config.get_ports().is_empty() {
        if let Some(port) = env("PGPORT").and_then(|port| port.parse().ok()) {
            config.port(port);
        }
    }
    if config.get_user().is_none() {
        if let Some(user) = env("PGUSER").or_else(|| env("USER")) {
            config.user(&user);
        }
    }
    if config.get_dbname().is_none() {
        if let Some(dbname) = env("PGDATABASE") {
            config.dbname(&dbname);
        }
    }
    if config.get_password().is_none() {
        if let Some(password) = env("PGPASSWORD") {
            config.password(password);
        }
    }
}

fn scrub_secret(message: &str, secret: Option<&str>) -> String {
    match secret {
        Some(secret) if !secret.is_empty() => message.replace(secret, REDACTED),
        _ => message.to_string(),
    }
}

/// Byte ranges of password values in a URL or conninfo string.
fn password_spans(text: &str) -> Vec<(usize, usize)> {
    match url_rest(text) {
        Some(rest_start) => url_password_spans(text, rest_start),
        None => conninfo_password_spans(text),
    }
}

fn password_in(text: &str) -> Option<String> {
    password_spans(text)
        .first()
        .map(|&(start, end)| text[start..end].to_string())
}

/// The text with every password value replaced by `***`.
fn redact(text: &str) -> String {
    let mut redacted = String::with_capacity(text.len());
    let mut copied_to = 0;
    for (start, end) in password_spans(text) {
        redacted.push_str(&text[copied_to..start]);
        redacted.push_str(REDACTED);
        copied_to = end;
    }
    redacted.push_str(&text[copied_to..]);
    redacted
}

/// Where the text after `postgres://` or `postgresql://` starts.
fn url_rest(text: &str) -> Option<usize> {
    ["postgres://", "postgresql://"]
        .into_iter()
        .find(|prefix| text.starts_with(prefix))
        .map(str::len)
}

/// `user:PASSWORD@host` (up to the first `@`, as tokio-postgres reads it)
/// and `password=VALUE` query parameters.
fn url_password_spans(text: &str, rest_start: usize) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let rest = &text[rest_start..];
    if let Some(at) = rest.find('@') {
        if let Some(colon) = rest[..at].find(':') {
            spans.push((rest_start + colon + 1, rest_start + at));
        }
    }
    if let Some(question) = text.find('?') {
        let mut position = question + 1;
        for parameter in text[question + 1..].split('&') {
            if let Some(value) = parameter.strip_prefix("password=") {
                let start = position + "password=".len();
                spans.push((start, start + value.len()));
            }
            position += parameter.len() + 1;
        }
    }
    spans.retain(|&(start, end)| start < end);
    spans.sort_unstable();
    spans
}

/// Values of `password` keys in `key = value` text, where a value is a
/// run of non-blanks or a single-quoted string, with `\` escaping.
fn conninfo_password_spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let skip_blanks = |mut i: usize| {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let mut spans = Vec::new();
    let mut i = skip_blanks(0);
    while i < bytes.len() {
        let key_start = i;
        while i < bytes.len() && bytes[i] != b'=' && !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let key = &text[key_start..i];
        i = skip_blanks(i);
        if i < bytes.len() && bytes[i] == b'=' {
            i = skip_blanks(i + 1);
        }
        let (value_start, value_end, next) = conninfo_value_span(bytes, i);
        if key == "password" && value_start < value_end {
            spans.push((value_start, value_end));
        }
        i = skip_blanks(next.max(key_start + 1));
    }
    spans
}

/// (start, end, next position) of the value that starts at `i`.
fn conninfo_value_span(bytes: &[u8], i: usize) -> (usize, usize, usize) {
    let quoted = bytes.get(i) == Some(&b'\'');
    let start = if quoted { i + 1 } else { i };
    let mut end = start;
    while end < bytes.len() {
        match bytes[end] {
            b'\\' => end += 2,
            b'\'' if quoted => break,
            byte if !quoted && byte.is_ascii_whitespace() => break,
            _ => end += 1,
        }
    }
    let end = end.min(bytes.len());
    let next = if quoted {
        (end + 1).min(bytes.len())
    } else {
        end
    };
    (start, end, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_passwords_are_redacted() {
        assert_eq!(
            redact("postgres://app:s3cr%40t@db.example:6432/sales?sslmode=disable"),
            "postgres://app:***@db.example:6432/sales?sslmode=disable"
        );
        assert_eq!(
            redact("postgresql://db/x?user=a&password=hunter2&port=5"),
            "postgresql://db/x?user=a&password=***&port=5"
        );
        assert_eq!(redact("postgres://app@db/x"), "postgres://app@db/x");
    }

    #[test]
    fn conninfo_passwords_are_redacted() {
        assert_eq!(
            redact("host=db password=hunter2 user=app"),
            "host=db password=*** user=app"
        );
        assert_eq!(
            redact(r"host=db password = 'it\'s secret' user=app"),
            r"host=db password = '***' user=app"
        );
        assert_eq!(redact("host=db user=app"), "host=db user=app");
        assert_eq!(redact("password=x"), "password=***");
    }

    #[test]
    fn parse_errors_do_not_echo_the_password() {
        let error = ConnectionTarget::parse("host=db password='hunter2 user=app").unwrap_err();
        assert!(!format!("{error:#}").contains("hunter2"), "{error:#}");
        let error = ConnectionTarget::parse("host=db password=hunter2 port=x").unwrap_err();
        assert!(!format!("{error:#}").contains("hunter2"), "{error:#}");
        assert!(format!("{error:#}").contains("port"), "{error:#}");
    }

    #[test]
    fn target_shows_endpoint_without_password() {
        let target =
            ConnectionTarget::parse("postgres://app:hunter2@db.example:6432/sales").unwrap();
        assert_eq!(
            target.endpoint(),
            "host=db.example port=6432 user=app dbname=sales"
        );
        assert_eq!(target.config().get_password(), Some(&b"hunter2"[..]));
        assert!(!format!("{target:?} {target}").contains("hunter2"));
    }
}
