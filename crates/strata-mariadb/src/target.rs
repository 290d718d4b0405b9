//! Where strata reaches a MariaDB (or MySQL) server: a `mysql://` URL given
//! by the user or the private socket of a throwaway server, the database the
//! SLOB tables live in, and connections whose errors never carry the
//! password (the URL's own parsing, timeouts and redaction are `collector`'s,
//! shared with the `mariadb` collector).
//!
//! Not for: starting servers (`server`) or creating anything (`setup`).

use crate::collector::{parse_url, redact, scrub_secret, unparsed_url_error, url_password};
use anyhow::{anyhow, Result};
use mysql::{Conn, Opts, OptsBuilder};
use std::path::Path;
use std::time::Duration;

use crate::schema::DEFAULT_DATABASE;

/// How long a session's statement may run before the driver gives up on
/// the server (a scan of a large table on slow storage takes minutes).
const SESSION_QUERY_TIMEOUT: Duration = Duration::from_secs(600);

/// A server and database. `Debug` and every error show the URL with its
/// password replaced by `***`.
#[derive(Clone)]
pub struct MariaDbTarget {
    url: String,
    database: String,
}

impl std::fmt::Debug for MariaDbTarget {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "MariaDbTarget({})", self.redacted())
    }
}

impl MariaDbTarget {
    /// `mysql://user[:password]@host[:port][/database][?socket=/path]`
    /// (`mariadb://` too); the database defaults to `strata_slob`.
    pub fn from_url(url: &str) -> Result<MariaDbTarget> {
        let opts = parse_url(url).map_err(|error| unparsed_url_error(url, &error))?;
        let database = opts.get_db_name().unwrap_or(DEFAULT_DATABASE).to_string();
        anyhow::ensure!(
            database != "mysql" && !database.ends_with("_schema") && database != "sys",
            "{database} is a system database: name another in the URL (default {DEFAULT_DATABASE})"
        );
        Ok(MariaDbTarget {
            url: url.to_string(),
            database,
        })
    }

    /// A server's Unix socket, as `user` without a password.
    pub fn socket(socket: &Path, user: &str, database: &str) -> MariaDbTarget {
        MariaDbTarget {
            url: format!(
                "mysql://{user}@localhost/{database}?socket={}",
                socket.display()
            ),
            database: database.to_string(),
        }
    }

    /// The URL as strata shows it: the password replaced by `***`.
    pub fn redacted(&self) -> String {
        redact(&self.url)
    }

    pub fn database(&self) -> &str {
        &self.database
    }

    /// The URL with its password, for the collector only.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// A connection with no default database (to create it).
    pub fn connect_server(&self) -> Result<Conn> {
        self.open(|builder| builder.db_name(None::<String>))
    }

    /// A connection to the target's database.
    pub fn connect(&self) -> Result<Conn> {
        let database = self.database.clone();
        self.open(move |builder| builder.db_name(Some(database)))
    }

    /// A session's connection: the target's database and a long statement
    /// timeout.
    pub(crate) fn connect_session(&self) -> Result<Conn> {
        let database = self.database.clone();
        self.open(move |builder| {
            builder
                .db_name(Some(database))
                .read_timeout(Some(SESSION_QUERY_TIMEOUT))
        })
    }

    fn open(&self, adjust: impl FnOnce(OptsBuilder) -> OptsBuilder) -> Result<Conn> {
        let opts = parse_url(&self.url).map_err(|error| self.error("parsing", error))?;
        let opts: Opts = adjust(OptsBuilder::from_opts(opts)).into();
        Conn::new(opts).map_err(|error| self.error("connecting to", error))
    }

    /// An error about this target, without the password.
    pub(crate) fn error(&self, doing: &str, error: impl std::fmt::Display) -> anyhow::Error {
        anyhow!(
            "{doing} MariaDB at {}: {}",
            self.redacted(),
            self.scrub(error.to_string())
        )
    }

    /// `text` without the password.
    pub(crate) fn scrub(&self, text: String) -> String {
        scrub_secret(text, url_password(&self.url).as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_defaults_and_the_password_stays_hidden() {
        let target = MariaDbTarget::from_url("mysql://app:hunter2@127.0.0.1:3306").unwrap();
        assert_eq!(target.database(), DEFAULT_DATABASE);
        assert_eq!(target.redacted(), "mysql://app:***@127.0.0.1:3306");
        assert!(!format!("{target:?}").contains("hunter2"));
        let target = MariaDbTarget::from_url("mysql://app@db.example:3306/bench").unwrap();
        assert_eq!(target.database(), "bench");
        assert!(MariaDbTarget::from_url("mysql://root@h/mysql").is_err());
    }
}
