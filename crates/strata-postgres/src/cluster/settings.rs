//! What a throwaway server is told and where it talks: its settings file, a
//! free port, its log, and quoting for the command lines shown to users.
//!
//! Not for: settings of servers strata did not create.

use super::account::ServerAccount;
use super::ClusterOptions;
use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Included from `postgresql.conf`; rewritten on each start attempt.
const SETTINGS_FILE: &str = "strata.conf";
pub const LOG_FILE: &str = "server.log";
const LOG_TAIL_LINES: usize = 20;
/// `sizeof(sockaddr_un.sun_path)` on Linux, including the closing NUL.
const UNIX_SOCKET_PATH_MAX: usize = 108;
const MAX_CONNECTIONS: u32 = 1100;

/// strata's settings, then the caller's (later lines win).
pub fn server_settings(
    version_num: u32,
    socket_dir: &Path,
    port: u16,
    options: &ClusterOptions,
) -> Vec<(String, String)> {
    let mut settings: Vec<(String, String)> = [
        ("listen_addresses", "127.0.0.1".to_string()),
        ("port", port.to_string()),
        (
            "unix_socket_directories",
            socket_directories_value(&socket_dir.to_string_lossy()),
        ),
        (
            "shared_buffers",
            format!("{}kB", options.shared_buffers_bytes / 1024),
        ),
        ("max_connections", MAX_CONNECTIONS.to_string()),
        ("track_io_timing", "on".to_string()),
        ("logging_collector", "off".to_string()),
        // An autovacuum worker's memory must fit the room the memory cgroup
        // leaves above the server's measured memory (64 MiB by default).
        ("autovacuum_work_mem", "8MB".to_string()),
        ("log_destination", "stderr".to_string()),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_string(), value))
    .collect();
    if version_num >= 140000 {
        settings.push(("track_wal_io_timing".to_string(), "on".to_string()));
    }
    settings.extend(options.settings.iter().cloned());
    settings
}

/// Writes `strata.conf` into the data directory and includes it from
/// `postgresql.conf` (once).
pub fn write_settings(
    data_dir: &Path,
    settings: &[(String, String)],
    account: Option<&ServerAccount>,
) -> Result<()> {
    let mut text = String::from("# Written by strata for a throwaway cluster.\n");
    for (name, value) in settings {
        text.push_str(&conf_line(name, value)?);
    }
    let settings_path = data_dir.join(SETTINGS_FILE);
    std::fs::write(&settings_path, text)
        .with_context(|| format!("writing {}", settings_path.display()))?;
    if let Some(account) = account {
        account.chown(&settings_path)?;
    }
    let main_conf = data_dir.join("postgresql.conf");
    let current = std::fs::read_to_string(&main_conf)
        .with_context(|| format!("reading {}", main_conf.display()))?;
    let include = format!("include = '{SETTINGS_FILE}'\n");
    if !current.contains(&include) {
        OpenOptions::new()
            .append(true)
            .open(&main_conf)
            .and_then(|mut file| file.write_all(format!("\n{include}").as_bytes()))
            .with_context(|| format!("appending an include to {}", main_conf.display()))?;
    }
    Ok(())
}

/// `name = 'value'`, with the quoting `postgresql.conf` reads back.
fn conf_line(name: &str, value: &str) -> Result<String> {
    let name_ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if !name_ok {
        bail!("invalid PostgreSQL setting name {name:?}");
    }
    if value.contains(['\n', '\r', '\0']) {
        bail!("the value of setting {name} contains a line break or NUL");
    }
    let quoted = value.replace('\\', "\\\\").replace('\'', "''");
    Ok(format!("{name} = '{quoted}'\n"))
}

/// `unix_socket_directories` is a comma-separated list: quote a path that
/// holds a comma, a space or a double quote.
fn socket_directories_value(path: &str) -> String {
    if path.contains([',', ' ', '"']) {
        format!("\"{}\"", path.replace('"', "\"\""))
    } else {
        path.to_string()
    }
}

/// Whether `<dir>/.s.PGSQL.<port>` fits in a Unix socket address.
pub fn socket_path_fits(dir: &Path) -> bool {
    dir.as_os_str().len() + "/.s.PGSQL.65535".len() < UNIX_SOCKET_PATH_MAX
}

/// A port the kernel just called free on 127.0.0.1, never one this process
/// handed out before (so two clusters started at once differ).
pub fn reserve_free_port() -> Result<u16> {
    static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    for _ in 0..100 {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
            .context("binding 127.0.0.1:0 to find a free TCP port")?;
        let port = listener
            .local_addr()
            .context("reading a bound port")?
            .port();
        let mut handed_out = HANDED_OUT
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if handed_out.insert(port) {
            return Ok(port);
        }
    }
    bail!("found no TCP port on 127.0.0.1 that this process did not use before")
}

/// `server.log` in the data directory: the server's stdout and stderr.
pub struct ServerLog {
    path: PathBuf,
}

impl ServerLog {
    pub fn create(data_dir: &Path, account: Option<&ServerAccount>) -> Result<ServerLog> {
        let path = data_dir.join(LOG_FILE);
        File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        if let Some(account) = account {
            account.chown(&path)?;
        }
        Ok(ServerLog { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn writer(&self) -> Result<File> {
        OpenOptions::new()
            .append(true)
            .open(&self.path)
            .with_context(|| format!("opening {} for the server's output", self.path.display()))
    }

    pub fn len(&self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |meta| meta.len())
    }

    fn text_since(&self, offset: u64) -> String {
        let mut text = Vec::new();
        let read = File::open(&self.path).and_then(|mut file| {
            file.seek(SeekFrom::Start(offset))?;
            file.read_to_end(&mut text)
        });
        match read {
            Ok(_) => String::from_utf8_lossy(&text).into_owned(),
            Err(error) => format!("(cannot read {}: {error})", self.path.display()),
        }
    }

    /// The last lines written since `offset`.
    pub fn tail(&self, offset: u64) -> String {
        let text = self.text_since(offset);
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
    }

    pub fn says_port_taken(&self, offset: u64) -> bool {
        let text = self.text_since(offset);
        text.contains("could not bind") || text.contains("could not create any TCP/IP sockets")
    }
}

/// A libpq conninfo value, quoted when it must be.
pub fn conninfo_value(value: &str) -> String {
    let plain = !value.is_empty()
        && !value
            .chars()
            .any(|c| c.is_whitespace() || c == '\'' || c == '\\');
    if plain {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

/// A word for a POSIX shell, single-quoted when it must be.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conf_lines_quote_values_and_refuse_injection() {
        assert_eq!(
            conf_line("search_path", r"it's a\path").unwrap(),
            "search_path = 'it''s a\\\\path'\n"
        );
        assert!(conf_line("work_mem = 1\nfsync", "off").is_err());
        assert!(conf_line("work_mem", "1\nfsync = off").is_err());
    }

    #[test]
    fn quoting_for_conninfo_and_shell() {
        assert_eq!(conninfo_value("/tmp/sock"), "/tmp/sock");
        assert_eq!(conninfo_value("/my dir/it's"), r"'/my dir/it\'s'");
        assert_eq!(shell_quote("/usr/bin/psql"), "/usr/bin/psql");
        assert_eq!(shell_quote("host=/a b port=1"), "'host=/a b port=1'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(socket_directories_value("/a,b"), "\"/a,b\"");
    }
}
