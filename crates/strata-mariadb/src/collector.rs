//! The `mariadb` layer: a MariaDB (or MySQL) server's raw InnoDB I/O
//! counters.
//!
//! Each collection returns, as counters, from `SHOW GLOBAL STATUS`:
//!
//! | metric | status variable |
//! |---|---|
//! | `innodb_data_reads` (read requests) | `Innodb_data_reads` |
//! | `innodb_data_read_bytes` | `Innodb_data_read` |
//! | `innodb_pages_read` | `Innodb_pages_read` |
//! | `innodb_data_writes` | `Innodb_data_writes` |
//! | `innodb_data_written_bytes` | `Innodb_data_written` |
//! | `innodb_data_fsyncs` | `Innodb_data_fsyncs` |
//! | `innodb_buffer_pool_reads` (misses) | `Innodb_buffer_pool_reads` |
//! | `innodb_buffer_pool_read_requests` | `Innodb_buffer_pool_read_requests` |
//! | `innodb_log_writes` | `Innodb_log_writes` |
//! | `innodb_os_log_written_bytes` | `Innodb_os_log_written` |
//! | `innodb_os_log_fsyncs` | `Innodb_os_log_fsyncs` |
//! | `com_commit` (explicit COMMITs only, not autocommit) | `Com_commit` |
//! | `questions` | `Questions` |
//!
//! A variable the server does not have gives no metric. MariaDB 10.8 and
//! later have no `Innodb_os_log_fsyncs`: there redo-log fsyncs are counted
//! in `innodb_data_fsyncs`. Data pages are written when InnoDB flushes them,
//! not at commit, so `innodb_data_written_bytes` lags the commits that
//! dirtied them.
//!
//! The gauge `performance_schema_on` (1 or 0) says whether per-file figures
//! are available. When it is 1, each of the events
//! `wait/io/file/innodb/innodb_data_file` and
//! `wait/io/file/innodb/innodb_log_file` that
//! `performance_schema.file_summary_by_event_name` has gives counters
//! labelled `event=<event name>`: `file_reads`, `file_read_bytes`,
//! `file_read_wait_ps`, `file_writes`, `file_write_bytes`,
//! `file_write_wait_ps`, `file_misc_wait_ps` (fsync, open, close: mostly
//! fsync). Timers are picoseconds. MariaDB 10.8 and later do not instrument
//! the redo log, so only the data file event appears there. When it is 0,
//! no file metrics are returned: start the server with
//! `performance_schema=ON` (it cannot be switched on at run time) for
//! per-file figures.
//!
//! Not for: per-table or per-statement figures.

use anyhow::{anyhow, Context, Result};
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use std::time::Duration;
use strata_core::metrics::{Collected, Collector, Metric};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const QUERY_TIMEOUT: Duration = Duration::from_secs(10);
const REDACTED: &str = "***";

/// `(metric, status variable)`.
const STATUS_COUNTERS: &[(&str, &str)] = &[
    ("innodb_data_reads", "Innodb_data_reads"),
    ("innodb_data_read_bytes", "Innodb_data_read"),
    ("innodb_pages_read", "Innodb_pages_read"),
    ("innodb_data_writes", "Innodb_data_writes"),
    ("innodb_data_written_bytes", "Innodb_data_written"),
    ("innodb_data_fsyncs", "Innodb_data_fsyncs"),
    ("innodb_buffer_pool_reads", "Innodb_buffer_pool_reads"),
    (
        "innodb_buffer_pool_read_requests",
        "Innodb_buffer_pool_read_requests",
    ),
    ("innodb_log_writes", "Innodb_log_writes"),
    ("innodb_os_log_written_bytes", "Innodb_os_log_written"),
    ("innodb_os_log_fsyncs", "Innodb_os_log_fsyncs"),
    ("com_commit", "Com_commit"),
    ("questions", "Questions"),
];

const FILE_EVENTS: &[&str] = &[
    "wait/io/file/innodb/innodb_data_file",
    "wait/io/file/innodb/innodb_log_file",
];

/// `file_summary_by_event_name` columns after EVENT_NAME, with their metrics.
const FILE_COLUMNS: &[(&str, &str)] = &[
    ("file_reads", "COUNT_READ"),
    ("file_read_bytes", "SUM_NUMBER_OF_BYTES_READ"),
    ("file_read_wait_ps", "SUM_TIMER_READ"),
    ("file_writes", "COUNT_WRITE"),
    ("file_write_bytes", "SUM_NUMBER_OF_BYTES_WRITE"),
    ("file_write_wait_ps", "SUM_TIMER_WRITE"),
    ("file_misc_wait_ps", "SUM_TIMER_MISC"),
];

/// One connection to a MariaDB/MySQL server. Debug shows the URL with the
/// password replaced by `***`; no error carries the password.
pub struct MariaDbCollector {
    conn: Conn,
    redacted_url: String,
    password: Option<String>,
    performance_schema_on: bool,
}

impl std::fmt::Debug for MariaDbCollector {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "MariaDbCollector({})", self.redacted_url)
    }
}

impl MariaDbCollector {
    /// The server's id of this connection (`CONNECTION_ID()`).
    pub fn connection_id(&self) -> u64 {
        u64::from(self.conn.connection_id())
    }

    /// Connects (5 s timeout, no TLS) to `mysql://user[:password]@host[:port][/db]`
    /// (`mariadb://` is taken as `mysql://`; `?socket=/path` selects a Unix
    /// socket), or to a bare socket path such as `/run/mysqld/mysqld.sock`
    /// as the OS user. A TCP address is used as given, not swapped for the
    /// server's socket, unless the URL says `prefer_socket=true`.
    pub fn connect(url: &str) -> Result<MariaDbCollector> {
        let redacted_url = redact(url);
        let password = url_password(url);
        let scrub = |text: String| scrub_secret(text, password.as_deref());
        let opts = parse_url(url).map_err(|error| unparsed_url_error(url, &error))?;
        let mut conn = Conn::new(opts).map_err(|error| {
            anyhow!(
                "cannot connect to MariaDB at {redacted_url}: {}",
                scrub(error.to_string())
            )
        })?;
        let performance_schema_on = conn
            .query_first::<Option<String>, _>("SELECT @@performance_schema")
            .map_err(|error| {
                anyhow!(
                    "reading @@performance_schema from MariaDB at {redacted_url}: {}",
                    scrub(error.to_string())
                )
            })?
            .flatten()
            .is_some_and(|value| value == "1" || value.eq_ignore_ascii_case("ON"));
        Ok(MariaDbCollector {
            conn,
            redacted_url,
            password,
            performance_schema_on,
        })
    }

    /// The server's `Uptime` status variable: whole seconds since it started.
    pub fn uptime_s(&mut self) -> Result<f64> {
        let row: Option<(String, String)> = self
            .conn
            .query_first("SHOW GLOBAL STATUS LIKE 'Uptime'")
            .map_err(|error| self.query_error("reading Uptime", error))?;
        let (_, value) = row.ok_or_else(|| anyhow!("the server has no Uptime status variable"))?;
        value
            .trim()
            .parse()
            .with_context(|| format!("Uptime = {value:?} is not a number"))
    }

    /// Whether the server runs with `performance_schema` (fixed at start).
    pub fn performance_schema_on(&self) -> bool {
        self.performance_schema_on
    }

    fn query_error(&self, what: &str, error: mysql::Error) -> anyhow::Error {
        let lost = match error {
            mysql::Error::IoError(_) | mysql::Error::DriverError(_) => " (connection lost?)",
            _ => "",
        };
        anyhow!(
            "{what} from MariaDB at {}{lost}: {}",
            self.redacted_url,
            scrub_secret(error.to_string(), self.password.as_deref())
        )
    }

    fn status_metrics(&mut self) -> Result<Vec<Metric>> {
        let names: Vec<String> = STATUS_COUNTERS
            .iter()
            .map(|(_, variable)| format!("'{variable}'"))
            .collect();
        let sql = format!(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
            names.join(", ")
        );
        let rows: Vec<(String, String)> = self
            .conn
            .query(&sql)
            .map_err(|error| self.query_error("reading SHOW GLOBAL STATUS", error))?;
        let mut metrics = Vec::new();
        for (metric, variable) in STATUS_COUNTERS {
            let Some((_, value)) = rows
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(variable))
            else {
                continue;
            };
            let value: f64 = value.trim().parse().with_context(|| {
                format!("status variable {variable} = {value:?} is not a number")
            })?;
            metrics.push(Metric::counter(metric, value));
        }
        Ok(metrics)
    }

    fn file_metrics(&mut self) -> Result<Vec<Metric>> {
        let columns: Vec<String> = FILE_COLUMNS
            .iter()
            .map(|(_, column)| format!("CAST({column} AS CHAR)"))
            .collect();
        let events: Vec<String> = FILE_EVENTS
            .iter()
            .map(|event| format!("'{event}'"))
            .collect();
        let sql = format!(
            "SELECT EVENT_NAME, {} FROM performance_schema.file_summary_by_event_name \
             WHERE EVENT_NAME IN ({}) ORDER BY EVENT_NAME",
            columns.join(", "),
            events.join(", ")
        );
        let rows: Vec<mysql::Row> = self.conn.query(&sql).map_err(|error| {
            self.query_error(
                "reading performance_schema.file_summary_by_event_name",
                error,
            )
        })?;
        let mut metrics = Vec::new();
        for row in rows {
            let event: String = row
                .get_opt(0)
                .and_then(|value| value.ok())
                .context("file_summary_by_event_name row without EVENT_NAME")?;
            for (index, (metric, column)) in FILE_COLUMNS.iter().enumerate() {
                let text: Option<String> = row.get_opt(index + 1).and_then(|value| value.ok());
                let Some(text) = text else { continue };
                let value: f64 = text
                    .parse()
                    .with_context(|| format!("{column} of {event} = {text:?} is not a number"))?;
                metrics.push(Metric::counter(metric, value).with_label("event", &event));
            }
        }
        Ok(metrics)
    }
}

impl Collector for MariaDbCollector {
    fn layer(&self) -> &'static str {
        "mariadb"
    }

    fn collect(&mut self) -> Result<Collected> {
        let mut metrics = self.status_metrics()?;
        metrics.push(Metric::gauge(
            "performance_schema_on",
            if self.performance_schema_on { 1.0 } else { 0.0 },
        ));
        if self.performance_schema_on {
            metrics.extend(self.file_metrics()?);
        }
        Ok(Collected::Metrics { metrics })
    }
}

/// Options for the URL or bare socket path, with strata's timeouts.
pub fn parse_url(url: &str) -> Result<Opts> {
    let builder = if url.starts_with('/') {
        let user = std::env::var("USER").ok().filter(|user| !user.is_empty());
        OptsBuilder::new().socket(Some(url)).user(user)
    } else {
        let url = match url.strip_prefix("mariadb://") {
            Some(rest) => format!("mysql://{rest}"),
            None => url.to_string(),
        };
        let opts = Opts::from_url(&url)?;
        let builder = OptsBuilder::from_opts(opts);
        if url.contains("prefer_socket=") {
            builder
        } else {
            builder.prefer_socket(false)
        }
    };
    Ok(builder
        .tcp_connect_timeout(Some(CONNECT_TIMEOUT))
        .read_timeout(Some(QUERY_TIMEOUT))
        .write_timeout(Some(QUERY_TIMEOUT))
        .into())
}

/// Byte range of the password in `scheme://user:PASSWORD@host…`.
fn password_span(url: &str) -> Option<(usize, usize)> {
    let rest_start = url.find("://")? + 3;
    let rest = &url[rest_start..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let at = rest[..authority_end].rfind('@')?;
    let colon = rest[..at].find(':')?;
    (colon + 1 < at).then_some((rest_start + colon + 1, rest_start + at))
}

/// The password in the URL as written (percent-encoded), if any.
pub fn url_password(url: &str) -> Option<String> {
    password_span(url).map(|(start, end)| url[start..end].to_string())
}

/// The URL with its password replaced by `***`.
/// The error for a URL that did not parse, every possible password masked
/// (its grammar is unknown, so `redact` may not find it).
pub fn unparsed_url_error(url: &str, error: &dyn std::fmt::Display) -> anyhow::Error {
    let (masked, secrets) = strata_db::secrets::mask_secrets(&redact(url));
    let message = scrub_secret(format!("{error:#}"), url_password(url).as_deref());
    anyhow!(
        "cannot parse MariaDB URL {masked}: {}",
        strata_db::secrets::scrub(&message, &secrets)
    )
}

pub fn redact(url: &str) -> String {
    match password_span(url) {
        Some((start, end)) => format!("{}{REDACTED}{}", &url[..start], &url[end..]),
        None => url.to_string(),
    }
}

/// `text` without the password, as written or percent-decoded.
pub fn scrub_secret(text: String, password: Option<&str>) -> String {
    let Some(password) = password.filter(|password| !password.is_empty()) else {
        return text;
    };
    let mut text = text.replace(password, REDACTED);
    let decoded = percent_decode(password);
    if !decoded.is_empty() && decoded != password {
        text = text.replace(&decoded, REDACTED);
    }
    text
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&high), Some(&low)) if hex(high).is_some() && hex(low).is_some() => {
                decoded.push((hex(high).unwrap() * 16 + hex(low).unwrap()) as u8);
                i += 3;
            }
            (byte, _, _) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact("mysql://app:s3cr%40t@db:3306/shop"),
            "mysql://app:***@db:3306/shop"
        );
        assert_eq!(
            redact("mysql://root@127.0.0.1/test"),
            "mysql://root@127.0.0.1/test"
        );
        assert_eq!(redact("mysql://root:@h/test"), "mysql://root:@h/test");
        assert_eq!(redact("/run/mysqld/mysqld.sock"), "/run/mysqld/mysqld.sock");
        assert_eq!(url_password("mysql://a:b%20c@h"), Some("b%20c".to_string()));
    }

    #[test]
    fn scrubbing_covers_the_decoded_password() {
        assert_eq!(
            scrub_secret("x s3cr@t y s3cr%40t".to_string(), Some("s3cr%40t")),
            "x *** y ***"
        );
        assert_eq!(scrub_secret("abc".to_string(), None), "abc");
    }

    #[test]
    fn url_options_carry_timeouts_and_keep_tcp() {
        let opts = parse_url("mariadb://root:pw@127.0.0.1:3307/test").unwrap();
        assert_eq!(opts.get_tcp_port(), 3307);
        assert_eq!(opts.get_pass(), Some("pw"));
        assert_eq!(opts.get_db_name(), Some("test"));
        assert!(!opts.get_prefer_socket());
        assert_eq!(opts.get_tcp_connect_timeout(), Some(CONNECT_TIMEOUT));
        let opts = parse_url("/run/mysqld/mysqld.sock").unwrap();
        assert_eq!(opts.get_socket(), Some("/run/mysqld/mysqld.sock"));
    }

    #[test]
    fn debug_and_parse_errors_hide_the_password() {
        let error =
            MariaDbCollector::connect("mysql://root:hunter2@127.0.0.1:notaport/test").unwrap_err();
        let text = format!("{error:#} {error:?}");
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("***"), "{text}");
    }
}
