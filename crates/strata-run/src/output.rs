//! How a run is shown: the human report (workload, database, devices, page
//! cache, CPU, warnings) and the versioned JSON document.
//!
//! Not for: computing figures (`accounting`) or the Recording (`recorder`).

use crate::accounting::RunFigures;
use crate::engine::EngineKind;
use crate::outcome::{KeptInfo, RunEnvironment, SlobOutcome};
use crate::request::ResolvedOptions;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use strata_core::units::{counted, format_latency_ns, format_size};
use strata_probe::diskstats::IostatFigures;
use strata_recording::run::{CpuFigures, COUNTED_BY_TRACE};
use strata_recording::sweep::SweepSummary;
use strata_recording::SortedKeys;
use strata_slob::load::LoadReport;

pub const JSON_SCHEMA: &str = "strata.run";
pub const JSON_SCHEMA_VERSION: u32 = 2;

#[derive(Serialize)]
struct JsonDocument<'a> {
    schema: &'static str,
    schema_version: u32,
    /// The run's verdict (also in `result`), first for a reader.
    #[serde(skip_serializing_if = "Option::is_none")]
    verdict: Option<&'a crate::verdict::Verdict>,
    environment: &'a RunEnvironment,
    options: SortedKeys<&'a ResolvedOptions<'a>>,
    load: Option<&'a LoadReport>,
    result: Option<&'a RunFigures>,
    #[serde(skip_serializing_if = "Option::is_none")]
    engine_figures: Option<&'a serde_json::Value>,
    kept: Option<&'a KeptInfo>,
    /// `--sweep-sessions`: the curve; `result` is its last point.
    #[serde(skip_serializing_if = "Option::is_none")]
    sweep: Option<&'a SweepSummary>,
}

pub fn json_document(outcome: &SlobOutcome, options: &ResolvedOptions) -> String {
    let document = JsonDocument {
        schema: JSON_SCHEMA,
        schema_version: JSON_SCHEMA_VERSION,
        verdict: outcome.figures.as_ref().map(|figures| &figures.verdict),
        environment: &outcome.environment,
        options: SortedKeys(options),
        load: outcome.load.as_ref(),
        result: outcome.figures.as_ref(),
        engine_figures: outcome.engine_figures.as_ref().map(|extra| &extra.figures),
        kept: outcome.kept.as_ref(),
        sweep: outcome.sweep.as_ref(),
    };
    serde_json::to_string_pretty(&document).expect("results serialize")
}

/// Whose bytes the devices moved: the server's processes, strata, others.
fn tenants_text(figures: &RunFigures) -> String {
    let Some(tenants) = &figures.tenants else {
        return String::new();
    };
    let mb = |bytes: u64| bytes as f64 / 1e6;
    let kernel = match tenants.kernel_bytes {
        0 => String::new(),
        bytes => format!(", the kernel's threads {:.1} MB (writeback)", mb(bytes)),
    };
    let mut out = format!(
        "  by process ({}): server {:.1} MB, strata {:.1} MB, others {:.1} MB{kernel} ({:.1}% \
         of the processes'; the devices above moved {:.1} MB)\n",
        tenants.counted_by,
        mb(tenants.server_bytes),
        mb(tenants.strata_bytes),
        mb(tenants.other_bytes),
        tenants.other_share_pct,
        mb(tenants.device_bytes)
    );
    let processes = tenants.server_bytes + tenants.strata_bytes + tenants.other_bytes;
    if processes > tenants.device_bytes && tenants.counted_by != COUNTED_BY_TRACE {
        let _ = writeln!(
            out,
            "  the processes' {:.1} MB are more than the devices' {:.1} MB: /proc/PID/io \
             counts reads and writes on every device, not only the run's, and a \
             write when its page is dirtied, which the kernel may write later, merged, or \
             never (a file removed first)",
            mb(processes),
            mb(tenants.device_bytes)
        );
    }
    if !tenants.top_others.is_empty() {
        let _ = writeln!(out, "  largest others: {}", tenants.named_others());
    }
    out
}

fn latency_us(us: f64) -> String {
    format_latency_ns(us * 1e3)
}

/// The human report.
pub fn report_text(outcome: &SlobOutcome) -> String {
    let mut out = String::new();
    if let Some(figures) = &outcome.figures {
        out += &figures.verdict.lines().join("\n");
        out += "\n\n";
    }
    out += &environment_text(&outcome.environment);
    if let Some(load) = &outcome.load {
        out += &load_text(load);
    }
    if let Some(sweep) = &outcome.sweep {
        out += "\n";
        out += &crate::sweep::text(sweep);
        out += &format!(
            "\nThe last point ({}), in full:\n",
            counted(
                sweep
                    .points
                    .last()
                    .map_or(0, |point| u64::from(point.sessions)),
                "session",
                "sessions"
            )
        );
    }
    if let Some(figures) = &outcome.figures {
        out += &figures_text(figures, outcome);
    }
    if let Some(kept) = &outcome.kept {
        let _ = writeln!(
            out,
            "\nThe cluster was kept running ({}).\nConnect with:\n  {}\nStop and remove it with:\n  {}",
            kept.data_directory.display(),
            kept.how_to_connect,
            kept.how_to_stop
        );
    }
    out
}

fn environment_text(environment: &RunEnvironment) -> String {
    let mut out = String::new();
    let plan = &environment.plan;
    let _ = writeln!(
        out,
        "{} {} ({}) at {}",
        environment.engine.label(),
        environment.server_version,
        environment.server,
        environment.connection
    );
    if let Some(work_dir) = &environment.work_directory {
        let _ = writeln!(
            out,
            "work directory {} ({})",
            work_dir.path.display(),
            work_dir.reason
        );
    }
    if let Some(dir) = &environment.data_directory {
        let _ = writeln!(
            out,
            "data directory {} on {}",
            dir.display(),
            environment.devices.data.join(", ")
        );
    }
    if let Some(dir) = &environment.wal_directory {
        let log = environment.engine.0.log_directory;
        let _ = writeln!(
            out,
            "{log} {} on {}",
            dir.display(),
            environment.devices.wal.join(", ")
        );
    }
    if let Some(note) = &environment.device_note {
        let _ = writeln!(out, "devices: {note}");
    }
    if let Some(shard) = &environment.shard {
        let began = shard
            .window_start_server_unix_s
            .map_or(String::new(), |start| {
                format!(", its window began at {start:.3} (Unix s, server's clock)")
            });
        let _ = writeln!(
            out,
            "shard {}/{} of run {} on {} (pid {}): the rendezvous fixed the start on the \
             server's clock (offset {:+.2} ms){began}; merge the shards with `strata merge`",
            shard.shard, shard.shards, shard.run_id, shard.host, shard.pid, shard.clock_offset_ms
        );
    }
    let _ = writeln!(out, "read path: {}", environment.read_path.text());
    let schemas = if plan.single_schema {
        "1 shared schema".to_string()
    } else {
        format!("{} schemas", plan.schemas)
    };
    let _ = writeln!(
        out,
        "data set: {schemas} × {} blocks of {} ({} each), {} data; page cache: {}",
        plan.blocks_per_schema,
        format_size(u64::from(environment.block_bytes)),
        format_size(plan.blocks_per_schema * u64::from(environment.block_bytes)),
        if plan.random_data {
            "random"
        } else {
            "patterned"
        },
        page_cache_text(&environment.page_cache)
    );
    out
}

fn page_cache_text(method: &strata_db::pagecache::PageCacheMethod) -> String {
    use strata_db::pagecache::PageCacheMethod;
    match method {
        PageCacheMethod::CgroupV2 { limit_bytes, .. } => format!(
            "limited by a cgroup v2 memory.max of {}",
            format_size(*limit_bytes)
        ),
        PageCacheMethod::CgroupV1 { limit_bytes, .. } => {
            format!(
                "limited by a cgroup v1 memory.limit_in_bytes of {}",
                format_size(*limit_bytes)
            )
        }
        PageCacheMethod::DropCaches => "dropped before the run (not limited during it)".into(),
        PageCacheMethod::Evicted { interval_ms } => format!(
            "the file's pages dropped before the run and every {interval_ms} ms during it \
             (posix_fadvise DONTNEED)"
        ),
        PageCacheMethod::DirectIo { how } => format!("bypassed: {how}"),
        PageCacheMethod::Unlimited => "not limited (reads may come from the page cache)".into(),
        PageCacheMethod::OtherHost => {
            "on the server's host, neither limited nor dropped from here".into()
        }
    }
}

fn load_text(load: &LoadReport) -> String {
    let mut out = String::from("\nLoad\n");
    for schema in &load.schemas {
        let _ = writeln!(
            out,
            "  {:<20} {:<22} {:>10} rows {:>10} blocks {:>12} on disk",
            schema.schema,
            format!("{:?}", schema.action),
            schema.rows,
            schema.blocks,
            format_size(schema.bytes_on_disk)
        );
    }
    let _ = writeln!(
        out,
        "  loaded {} rows in {:.1} s: {:.1} GB/h ({:.1} GiB/h)",
        load.rows_loaded, load.seconds, load.gb_per_hour, load.gib_per_hour
    );
    out
}

fn figures_text(figures: &RunFigures, outcome: &SlobOutcome) -> String {
    let engine = outcome.environment.engine;
    let mut out = String::new();
    let sessions = &figures.sessions;
    let _ = writeln!(
        out,
        "\nMeasured window {:.1} s{} — sessions: {} started, {} alive through the window, {} failed, {} reconnects",
        figures.window_s,
        if figures.interrupted { " (INTERRUPTED: partial result)" } else { "" },
        sessions.started,
        sessions.alive_through_window,
        sessions.failed,
        sessions.reconnects
    );
    out += &workload_text(figures);
    out += &outliers_text(&figures.outliers);
    out += &database_text(figures, engine);
    if let Some(extra) = &outcome.engine_figures {
        let _ = writeln!(out, "\n{}", extra.title);
        for line in &extra.lines {
            let _ = writeln!(out, "  {line}");
        }
    }
    out += &absorption_text(figures, &outcome.environment);
    out += &devices_text(figures);
    out += &other_hosts_text(figures);
    out += &tenants_text(figures);
    if let Some(traced) = &figures.block_trace {
        out += &crate::block_trace_text::text(traced);
        // pg_stat_io's times by role (16+) hold io workers' reads with the
        // backends'; blk_read_time alone (15) gives the backends' line.
        let database = figures.database.as_ref();
        let by_role = crate::block_trace_text::database_time_by_role_text(traced, database);
        out += &match by_role.is_empty() {
            true => crate::block_trace_text::host_share_text(traced, database),
            false => by_role,
        };
    }
    out += &cpu_text(&figures.cpu, figures.window_s, engine);
    if !figures.warnings.is_empty() {
        out += "\nWARNINGS\n";
        for warning in &figures.warnings {
            let _ = writeln!(out, "  ! {warning}");
        }
    }
    const SHOWN: usize = 10;
    for failure in sessions.failures.iter().take(SHOWN) {
        let _ = writeln!(out, "  session failure: {failure}");
    }
    if sessions.failures.len() > SHOWN {
        let _ = writeln!(
            out,
            "  … {} more session failures in --json and the Recording",
            sessions.failures.len() - SHOWN
        );
    }
    out
}

/// The threshold and its rule, then the slowest statements over it.
fn outliers_text(outliers: &crate::outliers::OutlierFigures) -> String {
    const SHOWN: usize = 10;
    let mut out = format!(
        "  outliers: {} statements at or over {:.1} ms — {}",
        outliers.statements.len(),
        outliers.threshold_ms,
        outliers.threshold_rule
    );
    if outliers.dropped > 0 {
        let _ = write!(
            out,
            "; {} more at or over {:.0} ms counted but not kept",
            outliers.dropped, outliers.floor_ms
        );
    }
    out.push('\n');
    let mut slowest: Vec<_> = outliers.statements.iter().collect();
    slowest.sort_by(|a, b| b.latency_ms.total_cmp(&a.latency_ms));
    for outlier in slowest.iter().take(SHOWN) {
        let _ = writeln!(
            out,
            "    {:>8.1} ms  {:<6} at {:.2} s, session {} ({})",
            outlier.latency_ms, outlier.operation, outlier.at_s, outlier.session, outlier.schema
        );
    }
    if slowest.len() > SHOWN {
        let _ = writeln!(
            out,
            "    … {} more in --json and the Recording",
            slowest.len() - SHOWN
        );
    }
    out
}

fn workload_text(figures: &RunFigures) -> String {
    let workload = &figures.workload;
    let mut out = format!(
        "\nWorkload (strata's sessions)\n  loops {} ({:.1}/s), SQL statements {} ({:.1}/s), rows selected {}, rows updated {}\n",
        workload.loops, workload.loops_per_s, workload.sql_statements, workload.sql_per_s, workload.rows_selected, workload.rows_updated
    );
    let _ = writeln!(
        out,
        "  {:<8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "op", "count", "per s", "mean", "p50", "p90", "p99", "max"
    );
    for (name, operation) in &workload.operations {
        if operation.latency.count == 0 {
            continue;
        }
        let latency = &operation.latency;
        let _ = writeln!(
            out,
            "  {:<8} {:>10} {:>10.1} {:>10} {:>10} {:>10} {:>10} {:>10}",
            name,
            operation.latency.count,
            operation.per_s,
            latency_us(latency.lat_mean_us),
            latency_us(latency.lat_p50_us),
            latency_us(latency.lat_p90_us),
            latency_us(latency.lat_p99_us),
            latency_us(latency.lat_max_us)
        );
    }
    out
}

fn database_text(figures: &RunFigures, engine: EngineKind) -> String {
    let Some(database) = &figures.database else {
        return engine.0.without_counters.to_string();
    };
    let mut out = String::from("\nDatabase (pg_stat_database, pg_stat_wal, pg_stat_io)\n");
    let _ = writeln!(
        out,
        "  blocks read (8 KiB, shared-buffer misses) {:.0} ({:.1}/s), block hits {:.0} ({:.1}% hit), read time {:.1} us/block",
        database.blocks_read, database.blocks_read_per_s, database.blocks_hit, database.buffer_hit_pct, database.block_read_time_us_per_block
    );
    out += &read_requests_text(database);
    let optional = |value: Option<f64>| value.map_or("n/a".to_string(), |v| format!("{v:.0}"));
    let _ = writeln!(
        out,
        "  commits {:.0} ({:.1}/s), WAL {:.2} MB ({:.2} MB/s), WAL write requests {}, WAL syncs {}, WAL sync time {} ms, temp files {:.0} ({:.0} bytes), deadlocks {:.0}",
        database.commits,
        database.commits_per_s,
        database.wal_bytes / 1e6,
        database.wal_mb_per_s,
        optional(database.wal_writes),
        optional(database.wal_syncs),
        optional(database.wal_sync_time_ms),
        database.temp_files,
        database.temp_bytes,
        database.deadlocks
    );
    let mut by_reason: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (field, reason) in &database.unavailable {
        by_reason.entry(reason.as_str()).or_default().push(field);
    }
    for (reason, fields) in by_reason {
        let _ = writeln!(out, "  n/a {}: {reason}", fields.join(", "));
    }
    out
}

/// The page cache's share: blocks the database (or SQLite's sessions)
/// read that no device read.
fn absorption_text(figures: &RunFigures, environment: &RunEnvironment) -> String {
    let held = figures.page_cache_held.as_ref().map_or(String::new(), |held| {
        format!(
            "  page cache of the server's files in strata's cgroup: mean {}, max {} in {} samples over the window (target {})\n",
            format_size(held.mean_bytes),
            format_size(held.max_bytes),
            held.samples,
            format_size(held.target_bytes)
        )
    });
    let Some(absorption) = &figures.absorption else {
        return held;
    };
    let block = format_size(u64::from(environment.block_bytes));
    let reader = environment.engine.0.blocks_read.replace("{block}", &block);
    held + &format!(
        "  page cache: of {:.0} {reader}, the data devices read {:.0} blocks' worth ({} read requests): {:.0} blocks ({:.1}%) absorbed above the devices\n",
        absorption.database_blocks_read,
        absorption.device_read_blocks,
        absorption.device_read_requests,
        absorption.absorbed_blocks,
        absorption.absorbed_pct
    )
}

/// PostgreSQL 18's own read requests, beside its blocks and the devices'
/// requests; nothing before 18 (the reason is listed with the others).
fn read_requests_text(database: &crate::accounting::DatabaseFigures) -> String {
    let (Some(requests), Some(per_s)) = (database.read_requests, database.read_requests_per_s)
    else {
        return String::new();
    };
    let size = match database.read_bytes {
        Some(bytes) if requests > 0.0 => format!(
            ", {:.2} MB ({:.1} KiB per request, {:.2} blocks per request)",
            bytes / 1e6,
            bytes / requests / 1024.0,
            database.blocks_read / requests
        ),
        _ => String::new(),
    };
    format!("  read requests (pg_stat_io, relations) {requests:.0} ({per_s:.1}/s){size}\n")
}

fn devices_text(figures: &RunFigures) -> String {
    let mut out = String::from("\nDevices (/proc/diskstats, iostat -x definitions)\n");
    device_lines(&mut out, "role", &figures.devices);
    out
}

/// Other hosts followed beside the server's: each one's disks and CPU
/// over the window, or why there are none.
fn other_hosts_text(figures: &RunFigures) -> String {
    if figures.other_hosts.is_empty() {
        return String::new();
    }
    let mut out =
        String::from("\nOther hosts (their agents' counters at the window's edges, iostat -x)\n");
    for host in &figures.other_hosts {
        match (&host.gap, host.host_idle_pct) {
            (Some(gap), _) => {
                let _ = writeln!(out, "  {}: no figures: {gap}", host.host);
            }
            (None, idle) => {
                let cpus = host
                    .cpus
                    .map_or("?".to_string(), |cpus| format!("{cpus:.0}"));
                let idle = idle.map_or("n/a".to_string(), |idle| format!("{idle:.1}%"));
                let _ = writeln!(out, "  {}: CPU idle {idle} of {cpus} CPUs", host.host);
            }
        }
    }
    let observed: Vec<IostatFigures> = figures
        .other_hosts
        .iter()
        .flat_map(|host| {
            host.devices.iter().map(|device| IostatFigures {
                role: host.host.clone(),
                ..device.clone()
            })
        })
        .collect();
    if !observed.is_empty() {
        device_lines(&mut out, "host", &observed);
    }
    out
}

/// iostat -x's columns, one line per device; `second` names what the
/// second column holds (each device's `role`).
fn device_lines(out: &mut String, second: &str, devices: &[IostatFigures]) {
    let _ = writeln!(
        out,
        "  {:<10} {:<9} {:>9} {:>9} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9} {:>7} {:>6}",
        "device",
        second,
        "r/s",
        "w/s",
        "rMB/s",
        "wMB/s",
        "rareq-sz",
        "wareq-sz",
        "r_await",
        "w_await",
        "aqu-sz",
        "%util"
    );
    for device in devices {
        let _ = writeln!(
            out,
            "  {:<10} {:<9} {:>9.1} {:>9.1} {:>8.2} {:>8.2} {:>9} {:>9} {:>9} {:>9} {:>7.2} {:>6.1}",
            device.device,
            device.role,
            device.r_per_s,
            device.w_per_s,
            device.read_mb_per_s,
            device.write_mb_per_s,
            format!("{:.1}KiB", device.rareq_sz_kib),
            format!("{:.1}KiB", device.wareq_sz_kib),
            format!("{:.2}ms", device.r_await_ms),
            format!("{:.2}ms", device.w_await_ms),
            device.aqu_sz,
            device.util_pct
        );
    }
}

/// A CPU time that adds up to more than the host's CPUs can give over the
/// interval it was read over: never printed as a figure.
fn beyond_the_host(cpu: &CpuFigures) -> String {
    format!(
        "CPU not known (its CPU times add up to more than the host's {} CPUs give over the \
         {:.1} s they were read over: a host too busy to read them in time)",
        cpu.cpus, cpu.interval_s
    )
}

fn cpu_text(cpu: &CpuFigures, window_s: f64, engine: EngineKind) -> String {
    let cpus = |seconds: f64| match cpu.cpus_used(seconds, window_s) {
        Some(used) => format!("{seconds:.1} CPU-s ({used:.2} CPUs)"),
        None => beyond_the_host(cpu),
    };
    let server = match engine.has_server() {
        true => format!("{} server {}, ", engine.label(), cpus(cpu.server_cpu_s)),
        false => format!(
            "{} runs in strata's session threads: its CPU is strata's; ",
            engine.label()
        ),
    };
    let host = match (cpu.host_idle_pct, cpu.host_iowait_pct) {
        (Some(idle), Some(iowait)) => format!("host idle {idle:.1}% (iowait {iowait:.1}%)"),
        _ => "host idle not known (its CPU was not observed at both edges)".to_string(),
    };
    let mut out = format!(
        "\nCPU ({} CPUs)\n  {host}, {server}strata {}\n",
        cpu.cpus,
        cpus(cpu.strata_cpu_s)
    );
    for group in &cpu.server_processes {
        let optional = |value: Option<f64>, unit: &str| {
            value.map_or("n/a".to_string(), |v| format!("{v:.1} {unit}"))
        };
        let group_cpu = match cpu.cpus_used(group.cpu_s, window_s) {
            Some(_) => format!("{:.2} s", group.cpu_s),
            None => "n/a (more than the host gives)".to_string(),
        };
        let _ = writeln!(
            out,
            "  {:<34} {:>13}: CPU {group_cpu}, run-queue delay {}, read from devices {}",
            if group.exited && group.backend_type == "client backend" {
                "client backend (the sessions', closed at the window's end)".to_string()
            } else if group.exited {
                format!("{} (exited before the end edge)", group.backend_type)
            } else {
                group.backend_type.clone()
            },
            counted(group.processes as u64, "process", "processes"),
            optional(group.run_delay_ms, "ms"),
            optional(group.device_read_bytes.map(|bytes| bytes / 1e6), "MB")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineTraits;
    use strata_recording::run::ProcessGroupFigures;

    /// A server engine as the text names it (strata-postgres's own is
    /// PostgreSQL's; this crate cannot see it).
    const SERVER: EngineKind = EngineKind(&EngineTraits {
        recorded: &strata_recording::environment::POSTGRESQL,
        aliases: &[],
        has_server: true,
        capabilities: &[],
        log_directory: "WAL directory ",
        without_counters: "",
        blocks_read: "blocks ({block}) PostgreSQL read",
        options: crate::engine_options::EngineOptions::NONE,
    });

    #[test]
    fn a_cpu_time_beyond_the_host_is_never_printed() {
        let sessions = ProcessGroupFigures {
            backend_type: "client backend".to_string(),
            processes: 1000,
            exited: true,
            cpu_s: 19.4,
            run_delay_ms: None,
            device_read_bytes: None,
        };
        let cpu = CpuFigures {
            cpus: 2,
            host_idle_pct: Some(0.5),
            host_iowait_pct: Some(0.1),
            host_cpu_pressure_pct: None,
            interval_s: 5.8,
            server_cpu_s: 19.6,
            strata_cpu_s: 0.4,
            server_processes: vec![sessions],
        };
        let text = cpu_text(&cpu, 10.0, SERVER);
        assert!(!text.contains("19.6") && !text.contains("19.4"), "{text}");
        assert!(text.contains("PostgreSQL server CPU not known (its CPU times add up to more than the host's 2 CPUs give over the 5.8 s"), "{text}");
        assert!(
            text.contains("CPU n/a (more than the host gives)"),
            "{text}"
        );
        assert!(text.contains("strata 0.4 CPU-s (0.07 CPUs)"), "{text}");
    }
}
