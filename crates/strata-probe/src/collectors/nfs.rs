//! The `nfs` layer: the kernel NFS client's per-mount, per-operation RPC
//! statistics from `/proc/self/mountstats` (what `nfsiostat` and
//! `mountstats` read). Oracle Direct NFS is a user-space client and does not
//! appear here; its traffic shows only on the NICs. strata's own user-space
//! client (calibrate's `nfs://` target) counts its calls itself and gives
//! them to the layer beside the kernel's mounts
//! ([`NfsCollector::with_own_client`]).

use super::{for_each_line, parse_u64, read_if_exists};
use anyhow::{anyhow, bail};
use std::path::Path;
use strata_core::metrics::{Collected, Collector, Metric};
use strata_recording::names::{label, layer, nfs};

/// The kernel NFS client's per-mount statistics.
pub const MOUNTSTATS_PATH: &str = "/proc/self/mountstats";

/// The per-op fields in the kernel's order (`errors` is optional).
const OP_COUNTERS: [&str; 9] = nfs::OP_COUNTERS;
const REQUIRED_OP_FIELDS: usize = 8;

/// Layer `nfs`: for each NFS mount (labels `mount`, `server`, `export`) and
/// each RPC operation the kernel lists for it (label `op`: `READ`, `WRITE`,
/// `COMMIT`, `GETATTR`, …), the counters `ops, transmissions, timeouts,
/// bytes_sent, bytes_received, queue_ms, rtt_ms, execute_ms`, plus `errors`
/// where the kernel prints it. No NFS mount: `Absent("no NFS mounts")`.
///
/// Two mounts of the same export with the same options share one superblock
/// in the kernel, and so show the same counters under both mount points.
#[derive(Default)]
pub struct NfsCollector {
    own_client: Option<OwnClient>,
}

/// A user-space client's calls so far, as the layer's metrics (labelled as
/// a mount's).
pub type OwnClient = Box<dyn FnMut() -> Vec<Metric> + Send>;

impl NfsCollector {
    pub fn new() -> NfsCollector {
        NfsCollector::default()
    }

    /// The kernel's mounts, and `own_client`'s calls beside them.
    pub fn with_own_client(own_client: OwnClient) -> NfsCollector {
        NfsCollector {
            own_client: Some(own_client),
        }
    }

    fn kernel_mounts(&self) -> anyhow::Result<Result<Vec<Metric>, String>> {
        let Some(text) = read_if_exists(Path::new(MOUNTSTATS_PATH))? else {
            return Ok(Err(format!("{MOUNTSTATS_PATH} does not exist")));
        };
        let parsed = parse(&text)?;
        Ok(match (parsed.nfs_mounts, parsed.metrics.is_empty()) {
            (0, _) => Err("no NFS mounts".to_string()),
            (_, true) => Err("NFS mounts without per-op statistics".to_string()),
            (_, false) => Ok(parsed.metrics),
        })
    }
}

impl Collector for NfsCollector {
    fn layer(&self) -> &'static str {
        layer::NFS
    }

    fn collect(&mut self) -> anyhow::Result<Collected> {
        let kernel = self.kernel_mounts()?;
        let Some(own_client) = &mut self.own_client else {
            return Ok(match kernel {
                Ok(metrics) => Collected::Metrics { metrics },
                Err(reason) => Collected::Absent { reason },
            });
        };
        let mut metrics = kernel.unwrap_or_default();
        metrics.extend(own_client());
        Ok(Collected::Metrics { metrics })
    }
}

/// Parses the text of `/proc/self/mountstats` into the metrics of
/// [`NfsCollector`]; non-NFS mounts give none. Errors name the line.
pub fn parse_mountstats(text: &str) -> anyhow::Result<Vec<Metric>> {
    Ok(parse(text)?.metrics)
}

struct Parsed {
    nfs_mounts: usize,
    metrics: Vec<Metric>,
}

struct NfsMount {
    mount: String,
    server: String,
    export: String,
}

fn parse(text: &str) -> anyhow::Result<Parsed> {
    let mut parsed = Parsed {
        nfs_mounts: 0,
        metrics: Vec::new(),
    };
    let mut current: Option<NfsMount> = None;
    let mut in_per_op = false;
    for_each_line("mountstats", text, |line| {
        if let Some(rest) = line.strip_prefix("device ") {
            current = parse_device_line(rest)?;
            in_per_op = false;
            if current.is_some() {
                parsed.nfs_mounts += 1;
            }
            return Ok(());
        }
        if !line.starts_with(char::is_whitespace) {
            bail!("expected a \"device ... mounted on ... with fstype ...\" line or an indented statistics line");
        }
        let Some(mount) = &current else {
            return Ok(()); // statistics of a filesystem other than NFS
        };
        let trimmed = line.trim();
        if trimmed == "per-op statistics" {
            in_per_op = true;
        } else if in_per_op {
            parsed.metrics.extend(parse_op_line(trimmed, mount)?);
        }
        Ok(())
    })?;
    Ok(parsed)
}

/// `SERVER:/export mounted on /mnt with fstype nfs4 statvers=1.1` (after
/// `device `): the mount when it is NFS, `None` for any other filesystem.
fn parse_device_line(rest: &str) -> anyhow::Result<Option<NfsMount>> {
    let (device, rest) = rest
        .split_once(" mounted on ")
        .ok_or_else(|| anyhow!("device line without \" mounted on \""))?;
    let (mount, rest) = rest
        .split_once(" with fstype ")
        .ok_or_else(|| anyhow!("device line without \" with fstype \""))?;
    let fstype = rest.split_whitespace().next().unwrap_or("");
    if fstype != "nfs" && fstype != "nfs4" {
        return Ok(None);
    }
    let device = unescape(device);
    let (server, export) = match device.find(":/") {
        Some(colon) => (device[..colon].to_string(), device[colon + 1..].to_string()),
        None => (device.clone(), String::new()),
    };
    Ok(Some(NfsMount {
        mount: unescape(mount),
        server,
        export,
    }))
}

/// `READ: 1204 1204 0 182372 158219648 33 1524 1620 0`.
fn parse_op_line(line: &str, mount: &NfsMount) -> anyhow::Result<Vec<Metric>> {
    let (op, values) = line
        .split_once(':')
        .ok_or_else(|| anyhow!("per-op line without \"OP:\""))?;
    let op = op.trim();
    if op.is_empty() || op.contains(char::is_whitespace) {
        bail!("per-op line has no operation name before ':'");
    }
    let fields: Vec<&str> = values.split_whitespace().collect();
    if fields.len() < REQUIRED_OP_FIELDS {
        bail!(
            "{op} has {} counters, expected at least {REQUIRED_OP_FIELDS} (ops, transmissions, \
             timeouts, bytes sent, bytes received, queue ms, RTT ms, execute ms)",
            fields.len()
        );
    }
    fields
        .iter()
        .zip(OP_COUNTERS)
        .map(|(field, name)| {
            let value = parse_u64(field, &format!("{op} {name}"))?;
            Ok(Metric::counter(name, value as f64)
                .with_label("mount", &mount.mount)
                .with_label(label::SERVER, &mount.server)
                .with_label(label::EXPORT, &mount.export)
                .with_label(label::OP, op))
        })
        .collect()
}

/// Undoes the kernel's octal escapes in mount paths (`\040` for a space,
/// `\011` tab, `\012` newline, `\134` backslash).
fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'\\' {
            if let Some(digits) = bytes.get(index + 1..index + 4) {
                if digits.iter().all(|digit| (b'0'..=b'7').contains(digit)) {
                    let value = digits
                        .iter()
                        .fold(0u32, |value, digit| value * 8 + u32::from(digit - b'0'));
                    if let Ok(byte) = u8::try_from(value) {
                        out.push(byte);
                        index += 4;
                        continue;
                    }
                }
            }
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octal_escapes_are_undone() {
        assert_eq!(unescape(r"/u03/redo\040logs"), "/u03/redo logs");
        assert_eq!(unescape(r"/a\134b"), r"/a\b");
        assert_eq!(unescape(r"/trailing\04"), r"/trailing\04");
        assert_eq!(unescape(r"/x\"), r"/x\");
    }
}
