//! The parts of a header's `options` and `environment` that strata reads
//! back, typed: a reader sees them through [`crate::Written`], which keeps
//! the rest of each object (what the command describes for people) to be
//! written again. Each command's own options and environment types
//! serialize to a superset of these (checked by their crates' tests).
//!
//! Not for: what the commands write (their own option and environment
//! types).

use crate::device::{BlockDevice, DeviceKind};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What strata reads back of a header's `environment`; every part is
/// absent where the command has none (an observation's environment is
/// empty, a run stopped while starting has none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// The Prometheus server a Recording made in memory was made from
    /// (`strata report --prometheus`); `None` for one strata sampled.
    pub prometheus: Option<String>,
    /// A run's database engine: `postgresql`, `mariadb`, `sqlite`
    /// ([`RECORDED_ENGINES`]).
    pub engine: Option<String>,
    /// The engine's version as its users write it (`15.20`).
    pub server_version: Option<String>,
    /// PostgreSQL's `server_version_num`, for Recordings that lack
    /// `server_version`.
    pub server_version_num: Option<u64>,
    /// How strata reached the server: `throwaway cluster`…
    pub server: Option<String>,
    /// The engine's block or page size, bytes.
    pub block_bytes: Option<f64>,
    /// MariaDB's `innodb_page_size` in Recordings before `block_bytes`.
    pub page_bytes: Option<f64>,
    /// MariaDB's `innodb_flush_method`.
    pub flush_method: Option<String>,
    /// MariaDB's `innodb_buffer_pool_size`, bytes.
    #[serde(default, deserialize_with = "lenient")]
    pub buffer_pool_bytes: Option<u64>,
    pub page_cache: Option<PageCache>,
    /// Where the run's device figures come from when not from this
    /// machine's devices under the data directory, or why there are none.
    pub device_note: Option<String>,
    /// The run's data and WAL devices by name.
    #[serde(default)]
    pub devices: RunDevices,
    #[serde(default)]
    pub device_details: Vec<BlockDevice>,
    /// A calibration's target.
    pub target: Option<Target>,
    /// A run's server host seen through its agent (`--agent`).
    pub server_host: Option<ServerHost>,
    /// Other hosts followed beside the server's (`--agent` after the
    /// first), their layers recorded as `device@HOST` and `cpu@HOST`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_hosts: Vec<ServerHost>,
    /// A shard of a run (`--shard I/N`): which, and when it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord>,
    /// A run merged from its shards (`strata merge`): which they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_shards: Option<MergedShards>,
}

/// The server's host as the agent there shows it (`strata run --agent`):
/// its devices and CPU are that host's in the run's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerHost {
    /// The host's name, as the agent gives it.
    pub name: String,
    /// The agent's URL, its password `***`.
    pub agent: String,
    /// How the agent was reached: `http`, `https`, or `https, certificate
    /// not verified (--agent-insecure)`, with `, Basic auth as USER` when
    /// credentials were sent; `None` in Recordings older than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// `strata` (`strata observe --prometheus`) or `node_exporter`.
    pub agent_kind: String,
    /// The agent's clock less this machine's, ms (NTP's formula from a
    /// strata agent, node_time_seconds against the round trip's middle
    /// from node_exporter); `None` from an agent that gives no clock.
    pub clock_offset_ms: Option<f64>,
    pub round_trip_ms: f64,
}

/// One shard of a run, as its Recording keeps it: the run, its number,
/// where it ran, and its start on the server's clock (the rendezvous's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardRecord {
    pub run_id: String,
    /// 1-based.
    pub shard: u32,
    pub shards: u32,
    pub host: String,
    pub pid: u32,
    /// The database server this shard drove, as the merge tells servers
    /// apart: `system_identifier N` (pg_control_system()), else its
    /// endpoint without password.
    pub server: String,
    /// The start every shard agreed on, Unix seconds on the server's clock.
    pub start_server_unix_s: f64,
    /// When this shard's measured window began, Unix seconds on the
    /// server's clock (this machine's, plus the offset below).
    pub window_start_server_unix_s: Option<f64>,
    /// The server's clock less this machine's, ms.
    pub clock_offset_ms: f64,
}

/// The shards a Recording was merged from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergedShards {
    pub run_id: String,
    pub shards: u32,
    /// The shards merged, in order.
    pub merged: Vec<ShardSummary>,
    /// The shards of the run that were not given.
    pub missing: Vec<u32>,
    /// The latest window start less the earliest, on the server's clock,
    /// ms; `None` when a shard did not measure its own.
    pub start_skew_ms: Option<f64>,
}

/// One shard of a merged run, in the per-shard table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardSummary {
    pub shard: ShardRecord,
    pub sessions: u32,
    pub loops: u64,
    pub loops_per_s: f64,
    /// The shard's own p99 of selects, ms (the merged p99 is not their
    /// average).
    pub select_p99_ms: Option<f64>,
    /// CPU seconds of this shard's driver.
    pub strata_cpu_s: f64,
    /// The driver host's idle share over the window, %; `None` where it is
    /// not known.
    #[serde(default)]
    pub host_idle_pct: Option<f64>,
    /// The driver host had under 10% idle: the shard may have measured
    /// its own CPU.
    pub cpu_bound: bool,
}

/// How the run kept the page cache from holding its data set: the method
/// PostgreSQL's and SQLite's runs chose, or MariaDB's sentence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PageCache {
    Chosen {
        /// `cgroup_v1`, `cgroup_v2`, `unlimited`…
        method: String,
        /// The cgroup's memory limit, bytes (`cgroup_v1`, `cgroup_v2`).
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "lenient"
        )]
        limit_bytes: Option<u64>,
    },
    Described(String),
}

impl PageCache {
    pub fn method(&self) -> &str {
        match self {
            PageCache::Chosen { method, .. } | PageCache::Described(method) => method,
        }
    }

    /// The method in words: a chosen method's name said as a sentence, a
    /// described one as it is.
    pub fn in_words(&self) -> String {
        let method = self.method();
        let words = match method {
            "cgroup_v2" => "limited by a cgroup v2 memory.max",
            "cgroup_v1" => "limited by a cgroup v1 memory.limit_in_bytes",
            "drop_caches" => "dropped before the run (not limited during it)",
            "evicted" => "the database file's pages dropped before the run and during it",
            "direct_io" => "bypassed: the server reads with O_DIRECT",
            "unlimited" => "not limited (reads may come from the page cache)",
            "other_host" => "on the server's host, neither limited nor dropped from here",
            described => described,
        };
        words.to_string()
    }
}

/// The block devices a run reads, by role.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunDevices {
    /// Physical devices under the data directory.
    #[serde(default)]
    pub data: Vec<String>,
    /// Physical devices under the WAL (redo) directory.
    #[serde(default)]
    pub wal: Vec<String>,
    /// Why the server's host's devices are not known here (a server on
    /// another host with no agent there): no figure of them is made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unobserved: Option<String>,
}

impl RunDevices {
    /// No device: the server's host is not observed, for `why`.
    pub fn unobserved(why: &str) -> RunDevices {
        RunDevices {
            unobserved: Some(why.to_string()),
            ..RunDevices::default()
        }
    }

    /// Every device, each once: the data devices, then the WAL devices not
    /// among them.
    pub fn each_once(&self) -> Vec<String> {
        let mut names = self.data.clone();
        names.extend(
            self.wal
                .iter()
                .filter(|name| !self.data.contains(name))
                .cloned(),
        );
        names
    }

    /// Each device with its role: `data`, `wal` or `data+wal`.
    pub fn roles(&self) -> Vec<(String, &'static str)> {
        self.each_once()
            .into_iter()
            .map(|name| {
                let role = match (self.data.contains(&name), self.wal.contains(&name)) {
                    (true, true) => "data+wal",
                    (true, false) => "data",
                    _ => "wal",
                };
                (name, role)
            })
            .collect()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub path: String,
    /// `file` or `block_device`.
    pub kind: String,
    pub device: Option<BlockDevice>,
    #[serde(default)]
    pub physical_devices: Vec<BlockDevice>,
}

impl Environment {
    /// Every device described: a run's, a calibration's target and the
    /// physical devices under it.
    pub fn devices_described(&self) -> impl Iterator<Item = &BlockDevice> {
        let target = self
            .target
            .iter()
            .flat_map(|target| target.device.iter().chain(target.physical_devices.iter()));
        self.device_details.iter().chain(target)
    }

    /// What a reader knows of the run's engine: PostgreSQL for a
    /// Recording from before engines were named; `None` for an engine
    /// not in [`RECORDED_ENGINES`].
    pub fn recorded_engine(&self) -> Option<&'static RecordedEngine> {
        let name = self.engine.as_deref().unwrap_or("postgresql");
        RECORDED_ENGINES.iter().find(|engine| engine.name == name)
    }

    /// The run's engine as its users write it; an engine this reader does
    /// not know by the name its Recording gives.
    pub fn engine_label(&self) -> String {
        match (self.recorded_engine(), &self.engine) {
            (Some(engine), _) => engine.label.to_string(),
            (None, name) => name.clone().unwrap_or_default(),
        }
    }

    /// Whether the window's database counters are InnoDB's, in the
    /// Recording's `window_database` record, rather than the result's.
    pub fn innodb_counters(&self) -> bool {
        self.recorded_engine()
            .is_some_and(|engine| engine.cache == Some(DatabaseCache::InnodbBufferPool))
    }

    /// For a MariaDB run: whether InnoDB opens its data files with O_DIRECT.
    pub fn innodb_direct(&self) -> bool {
        self.innodb_counters()
            && self
                .flush_method
                .as_deref()
                .is_some_and(|method| method.starts_with("O_DIRECT"))
    }
}

impl DeviceKind {
    /// An md array's level, chunk and member disks.
    pub fn md(&self) -> Option<(&str, u64, u32)> {
        match self {
            DeviceKind::Md {
                level,
                chunk_bytes,
                raid_disks,
            } => Some((level, *chunk_bytes, *raid_disks)),
            _ => None,
        }
    }
}

/// How a reader of a Recording takes each engine a run names in its
/// environment: the one place a reader matches an engine's name, and
/// where an engine's name and label are written (its `EngineTraits`
/// refers to its entry here). An engine not here is shown by its name,
/// its database counters read from its result, its cache unknown.
#[derive(Debug, PartialEq)]
pub struct RecordedEngine {
    /// As the environment's `engine` names it.
    pub name: &'static str,
    /// As its users write it.
    pub label: &'static str,
    /// The engine's own cache of blocks, where it has one.
    pub cache: Option<DatabaseCache>,
}

/// An engine's own cache of blocks, and where a Recording holds its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DatabaseCache {
    /// PostgreSQL's `shared_buffers`: the run's `--shared-buffers`
    /// (options' `shared_buffers_bytes`), else a throwaway cluster's own.
    SharedBuffers,
    /// InnoDB's `innodb_buffer_pool_size` (environment's
    /// `buffer_pool_bytes`); its counters are InnoDB's.
    InnodbBufferPool,
}

impl DatabaseCache {
    /// The setting's name, as the engine's users write it.
    pub fn setting(self) -> &'static str {
        match self {
            DatabaseCache::SharedBuffers => "shared_buffers",
            DatabaseCache::InnodbBufferPool => "innodb_buffer_pool_size",
        }
    }
}

/// PostgreSQL, as its Recordings name it (strata-postgres's engine takes
/// its name and label from here).
pub const POSTGRESQL: RecordedEngine = RecordedEngine {
    name: "postgresql",
    label: "PostgreSQL",
    cache: Some(DatabaseCache::SharedBuffers),
};

/// MariaDB, as its Recordings name it.
pub const MARIADB: RecordedEngine = RecordedEngine {
    name: "mariadb",
    label: "MariaDB",
    cache: Some(DatabaseCache::InnodbBufferPool),
};

/// SQLite, as its Recordings name it.
pub const SQLITE: RecordedEngine = RecordedEngine {
    name: "sqlite",
    label: "SQLite",
    cache: None,
};

pub const RECORDED_ENGINES: &[RecordedEngine] = &[POSTGRESQL, MARIADB, SQLITE];

/// Engine options every run's Recording of this format has among its
/// options, null where the run's engine has no such option: PostgreSQL's,
/// written for every engine before each engine owned its options.
pub const OPTIONS_OF_EVERY_RUN: [&str; 2] = ["pg_bin", "shared_buffers_bytes"];

/// What strata reads back of a header's `options`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Options {
    /// A run's end: its warm-up comes before its measured window.
    pub stop_after: Option<StopAfter>,
    /// A calibration's points' end: a timed point ramps before it measures.
    pub stop_rule: Option<StopRule>,
    /// A calibration's `--outlier`, µs.
    pub outlier_us: Option<f64>,
    /// The I/Os a calibration kept as `io_outlier` records, from this
    /// latency on, µs.
    pub outlier_floor_us: Option<f64>,
    /// A run's schemas.
    #[serde(default, deserialize_with = "lenient")]
    pub plan: Option<PlanOptions>,
    #[serde(default, deserialize_with = "lenient")]
    pub threads_per_schema: Option<u32>,
    /// A run's sessions where they were given apart from the schemas.
    #[serde(default, deserialize_with = "lenient")]
    pub sessions: Option<u32>,
    /// A run's `--shared-buffers`, bytes.
    #[serde(default, deserialize_with = "lenient")]
    pub shared_buffers_bytes: Option<u64>,
    /// A run's statements (none for a setup).
    #[serde(default, deserialize_with = "lenient")]
    pub workload: Option<WorkloadOptions>,
    /// The database engine of a run; the I/O engine of a calibration.
    #[serde(default, deserialize_with = "lenient")]
    pub engine: Option<String>,
    /// A calibration's workload (`oltp`, `matrix`, …).
    #[serde(default, deserialize_with = "lenient")]
    pub mode: Option<String>,
    /// Whether a calibration opened its target with O_DIRECT.
    #[serde(default, deserialize_with = "lenient")]
    pub direct: Option<bool>,
    /// A calibration's target as given; `None` for a temporary file.
    #[serde(default, deserialize_with = "lenient")]
    pub target: Option<String>,
    /// A calibration's target size, bytes.
    #[serde(default, deserialize_with = "lenient")]
    pub size_bytes: Option<u64>,
}

/// A run's schemas, as its options hold them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanOptions {
    pub schemas: u32,
    pub blocks_per_schema: u64,
    #[serde(default)]
    pub single_schema: bool,
}

/// The sessions a run starts: `sessions` where given apart, else
/// `threads_per_schema` on each schema (on one shared schema, that many in
/// all): the one place the rule is written.
pub fn session_total(
    sessions: Option<u32>,
    (schemas, single_schema): (u32, bool),
    threads_per_schema: u32,
) -> u64 {
    match (sessions, single_schema) {
        (Some(sessions), _) => u64::from(sessions),
        (None, true) => u64::from(threads_per_schema),
        (None, false) => u64::from(schemas) * u64::from(threads_per_schema),
    }
}

/// A run's statements, as its options hold them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadOptions {
    /// Blocks per select.
    #[serde(default, deserialize_with = "lenient")]
    pub work_unit: Option<u32>,
    #[serde(default, deserialize_with = "lenient")]
    pub update_pct: Option<f64>,
    /// Rows per update.
    #[serde(default, deserialize_with = "lenient")]
    pub update_work_unit: Option<u64>,
}

/// A field strata reads back whose value is not of its type reads as
/// absent (a Recording written by another version), as a JSON reader
/// taking `as_u64()` of it would; the rest of the header still reads.
fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let value = serde_json::Value::deserialize(deserializer)?;
    Ok(T::deserialize(value).ok())
}

/// How a run ends, as its options hold it: a timed run's warm-up, in
/// either encoding; neither for a run of a number of loops.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StopAfter {
    /// `{"duration": {"warmup_s": …, "duration_s": …}}`.
    pub duration: Option<TimedRun>,
    /// `{"Duration": {"warmup": {"secs": …, "nanos": …}, …}}`, as
    /// Recordings before version 2 hold it.
    #[serde(rename = "Duration", default, skip_serializing_if = "Option::is_none")]
    pub duration_v1: Option<TimedRunV1>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimedRun {
    pub warmup_s: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimedRunV1 {
    pub warmup: Duration,
}

/// How a calibrate point ends, as its options hold it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StopRule {
    Timed {
        ramp_s: f64,
    },
    #[serde(other)]
    Count,
}

impl Options {
    /// A run's warm-up, seconds; 0 for a run that ends otherwise.
    pub fn warmup_s(&self) -> f64 {
        let Some(stop_after) = &self.stop_after else {
            return 0.0;
        };
        match (&stop_after.duration, &stop_after.duration_v1) {
            (Some(timed), _) => timed.warmup_s,
            (None, Some(timed)) => timed.warmup.as_secs_f64(),
            (None, None) => 0.0,
        }
    }

    /// A timed point's ramp, seconds; 0 for points of a count.
    pub fn ramp_s(&self) -> f64 {
        match self.stop_rule {
            Some(StopRule::Timed { ramp_s }) => ramp_s,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_is_labelled_as_its_users_write_it_and_an_unknown_one_by_its_name() {
        let label = |engine: Option<&str>| {
            let environment = Environment {
                engine: engine.map(str::to_string),
                ..Environment::default()
            };
            environment.engine_label()
        };
        assert_eq!(label(None), "PostgreSQL");
        assert_eq!(label(Some("mariadb")), "MariaDB");
        assert_eq!(label(Some("sqlite")), "SQLite");
        assert_eq!(label(Some("duckdb")), "duckdb");
    }

    #[test]
    fn each_engine_s_cache_and_counters_come_from_the_one_table() {
        let of = |engine: Option<&str>| Environment {
            engine: engine.map(str::to_string),
            ..Environment::default()
        };
        let cache = |engine| of(engine).recorded_engine().and_then(|known| known.cache);
        assert_eq!(cache(None), Some(DatabaseCache::SharedBuffers));
        assert_eq!(
            cache(Some("mariadb")),
            Some(DatabaseCache::InnodbBufferPool)
        );
        assert_eq!(cache(Some("sqlite")), None);
        assert_eq!(cache(Some("duckdb")), None);
        assert!(of(Some("mariadb")).innodb_counters());
        assert!(!of(Some("postgresql")).innodb_counters());
        assert!(!of(Some("duckdb")).innodb_counters());
    }

    #[test]
    fn a_run_s_options_read_typed_and_a_field_of_another_type_reads_as_absent() {
        let options: Options = serde_json::from_value(serde_json::json!({
            "engine": "postgres",
            "plan": {"schemas": 4, "blocks_per_schema": 1024, "single_schema": false,
                     "scan_table_blocks": 0},
            "threads_per_schema": 2,
            "sessions": null,
            "shared_buffers_bytes": "128MB",
            "workload": {"work_unit": 64, "update_pct": 20.0, "update_work_unit": 8},
        }))
        .unwrap();
        let plan = options.plan.as_ref().unwrap();
        assert_eq!((plan.schemas, plan.blocks_per_schema), (4, 1024));
        assert_eq!(
            options.shared_buffers_bytes, None,
            "a string is no byte count"
        );
        let workload = options.workload.as_ref().unwrap();
        assert_eq!(
            (workload.work_unit, workload.update_pct),
            (Some(64), Some(20.0))
        );
        assert_eq!(options.engine.as_deref(), Some("postgres"));
        let environment: Environment = serde_json::from_value(serde_json::json!({
            "buffer_pool_bytes": 134217728u64,
            "page_cache": {"method": "cgroup_v2", "path": "/sys/fs/cgroup/x", "limit_bytes": 1024},
        }))
        .unwrap();
        assert_eq!(environment.buffer_pool_bytes, Some(134_217_728));
        let limited = PageCache::Chosen {
            method: "cgroup_v2".into(),
            limit_bytes: Some(1024),
        };
        assert_eq!(environment.page_cache, Some(limited));
    }

    #[test]
    fn sessions_are_threads_on_each_schema_or_on_the_one_shared_schema() {
        assert_eq!(session_total(None, (4, false), 2), 8);
        assert_eq!(session_total(None, (4, true), 2), 2);
        assert_eq!(session_total(Some(3), (4, false), 2), 3);
    }
}
