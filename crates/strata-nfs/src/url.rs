//! `nfs://HOST[:PORT]/PATH`: the server and the path of a file on one of
//! its exports, as `--target` names them (libnfs's and fio's form). The
//! export is found on the server (`mount::exports`): the longest one the
//! path lies under.
//!
//! Not for: reaching the server (`mount`, `rpc`).

use anyhow::{bail, Context};

/// A file on an NFS server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NfsUrl {
    /// The server's name or address.
    pub host: String,
    /// The NFS service's port, when given; else the server's portmapper's.
    pub port: Option<u16>,
    /// The file's absolute path on the server: its export, then the path
    /// under it.
    pub path: String,
}

impl NfsUrl {
    /// Whether `text` names an NFS file rather than a local path.
    pub fn is_nfs(text: &str) -> bool {
        text.starts_with("nfs://")
    }

    /// Parses `nfs://HOST[:PORT]/PATH`.
    pub fn parse(text: &str) -> anyhow::Result<NfsUrl> {
        let Some(rest) = text.strip_prefix("nfs://") else {
            bail!("{text}: an NFS file is named nfs://HOST[:PORT]/EXPORT/PATH");
        };
        let (authority, path) = match rest.find('/') {
            Some(slash) => rest.split_at(slash),
            None => bail!("{text}: no path after the server (nfs://HOST/EXPORT/PATH)"),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) => {
                let port = port
                    .parse::<u16>()
                    .ok()
                    .filter(|&port| port > 0)
                    .with_context(|| format!("{text}: the port {port:?} is not 1–65535"))?;
                (host, Some(port))
            }
            None => (authority, None),
        };
        if host.is_empty() {
            bail!("{text}: no server (nfs://HOST/EXPORT/PATH)");
        }
        let path = path.trim_end_matches('/');
        let components: Vec<&str> = path.split('/').skip(1).collect();
        if components.len() < 2 || components.iter().any(|name| bad_name(name)) {
            bail!(
                "{text}: the path must be an export and a file under it, each part a name \
                 (not empty, '.' or '..')"
            );
        }
        Ok(NfsUrl {
            host: host.to_string(),
            port,
            path: path.to_string(),
        })
    }

    /// The path under `export` as its names, when the file lies under it.
    pub fn names_under<'a>(&'a self, export: &str) -> Option<Vec<&'a str>> {
        let export = export.trim_end_matches('/');
        let rest = self.path.strip_prefix(export)?;
        let rest = rest.strip_prefix('/')?;
        Some(rest.split('/').collect())
    }
}

fn bad_name(name: &str) -> bool {
    name.is_empty() || name == "." || name == ".."
}

impl std::fmt::Display for NfsUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.port {
            Some(port) => write!(f, "nfs://{}:{port}{}", self.host, self.path),
            None => write!(f, "nfs://{}{}", self.host, self.path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_names_the_server_its_port_and_the_path() {
        let url = NfsUrl::parse("nfs://filer1:2049/export/db/strata.dat").unwrap();
        assert_eq!(url.host, "filer1");
        assert_eq!(url.port, Some(2049));
        assert_eq!(url.path, "/export/db/strata.dat");
        assert_eq!(url.to_string(), "nfs://filer1:2049/export/db/strata.dat");
        assert_eq!(url.names_under("/export"), Some(vec!["db", "strata.dat"]));
        assert_eq!(url.names_under("/export/db/"), Some(vec!["strata.dat"]));
        assert_eq!(url.names_under("/exp"), None);
        let plain = NfsUrl::parse("nfs://10.0.0.2/vol/f").unwrap();
        assert_eq!((plain.host.as_str(), plain.port), ("10.0.0.2", None));
    }

    #[test]
    fn a_url_without_a_file_under_an_export_is_refused() {
        for text in [
            "/mnt/filer/f",
            "nfs://filer1",
            "nfs:///export/f",
            "nfs://filer1/f",
            "nfs://filer1:0/export/f",
            "nfs://filer1:x/export/f",
            "nfs://filer1/export/../f",
            "nfs://filer1/export//f",
        ] {
            assert!(NfsUrl::parse(text).is_err(), "{text}");
        }
    }
}
