//! MariaDB behind strata-run's database-engine plug-in point: runs
//! [`crate::run`] and hands the binary the one result type every engine
//! returns, with InnoDB's own figures as the engine's section.
//!
//! Not for: measuring (`run`) or printing (strata-run's `output`).

use crate::environment::MariaDbEnvironment;
use crate::figures::{InnoDbFigures, ReadReconciliation};
use crate::run::{run, MariaDbOutcome, MariaDbRunConfig};
use std::sync::atomic::AtomicBool;
use strata_db::pagecache::PageCacheMethod;
use strata_run::engine::{DatabaseEngine, EngineFigures, EngineKind};
use strata_run::outcome::{RunEnvironment, RunObserver, SlobOutcome};
use strata_run::read_path::ReadPath;

/// MariaDB (or MySQL) with InnoDB: a throwaway `mariadbd` or the user's server.
pub struct MariaDbEngine(pub MariaDbRunConfig);

impl DatabaseEngine for MariaDbEngine {
    fn kind(&self) -> EngineKind {
        crate::kind::KIND
    }

    fn run(
        self: Box<Self>,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<SlobOutcome> {
        run(&self.0, observer, interrupt).map(slob_outcome)
    }
}

fn slob_outcome(outcome: MariaDbOutcome) -> SlobOutcome {
    let page = strata_core::units::format_size(u64::from(outcome.environment.page_bytes));
    let engine_figures = outcome.figures.as_ref().map(|figures| EngineFigures {
        title: format!("InnoDB (SHOW GLOBAL STATUS; pages are InnoDB's {page} pages)"),
        lines: innodb_lines(figures.innodb.as_ref(), figures.reads.as_ref()),
        figures: serde_json::json!({
            "innodb": figures.innodb,
            "reads": figures.reads,
            "layout": outcome.setup.as_ref().map(|setup| &setup.layout),
        }),
    });
    SlobOutcome {
        environment: run_environment(&outcome.environment),
        load: outcome.setup.map(|setup| setup.load),
        figures: outcome.figures.map(|figures| figures.run),
        kept: None,
        engine_figures,
        sweep: outcome.sweep,
    }
}

fn run_environment(environment: &MariaDbEnvironment) -> RunEnvironment {
    let direct = environment.flush_method.starts_with("O_DIRECT");
    let page_cache = match direct {
        true => PageCacheMethod::DirectIo {
            how: format!("innodb_flush_method={}", environment.flush_method),
        },
        false => PageCacheMethod::Unlimited,
    };
    RunEnvironment {
        engine: crate::kind::KIND,
        block_bytes: environment.page_bytes,
        server_version: environment.server_version.clone(),
        server: match environment.throwaway {
            Some(_) => "throwaway server",
            None => "external server",
        },
        connection: environment.connection.clone(),
        server_version_num: version_num(&environment.server_version),
        work_directory: environment
            .throwaway
            .as_ref()
            .map(|throwaway| throwaway.work_directory.clone()),
        data_directory: environment.data_directory.clone(),
        wal_directory: environment
            .redo_directory
            .as_ref()
            .map(|dir| std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone())),
        devices: environment.devices.clone(),
        device_details: environment.device_details.clone(),
        device_note: environment.device_note.clone(),
        page_cache,
        read_path: read_path(direct),
        plan: environment.plan.clone(),
        server_host: environment.server_host.clone(),
        other_hosts: environment.other_hosts.clone(),
        shard: None,
    }
}

/// `10.11.19-MariaDB-0+deb12u1` → 101119, PostgreSQL's encoding of versions.
fn version_num(version: &str) -> u32 {
    let mut parts = version
        .split(|c: char| !c.is_ascii_digit())
        .filter(|part| !part.is_empty())
        .map(|part| part.parse::<u32>().unwrap_or(0));
    let (major, minor, patch) = (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    );
    major * 10_000 + minor * 100 + patch
}

fn read_path(direct: bool) -> ReadPath {
    ReadPath {
        io_method: None,
        data_files: if direct {
            "direct (O_DIRECT: innodb_flush_method)"
        } else {
            "buffered (through the OS page cache)"
        },
        reads_issued_by: "mariadbd's connection threads, for strata's sessions",
        unavailable: [(
            "io_method",
            "MariaDB has no io_method: each connection thread reads the pages it misses".into(),
        )]
        .into(),
    }
}

fn innodb_lines(innodb: Option<&InnoDbFigures>, reads: Option<&ReadReconciliation>) -> Vec<String> {
    let Some(innodb) = innodb else {
        return vec!["InnoDB's counters could not be read (see warnings)".into()];
    };
    let mut lines = vec![
        format!(
            "pages read (16 KiB) {:.0} ({:.1}/s), read requests (Innodb_data_reads) {:.0} ({:.1}/s), \
             {:.2} pages per request, bytes read {:.1} MB ({:.2} MB/s)",
            innodb.pages_read,
            innodb.pages_read_per_s,
            innodb.read_requests,
            innodb.read_requests_per_s,
            innodb.pages_per_read_request,
            innodb.read_bytes / 1e6,
            innodb.read_mb_per_s
        ),
        format!(
            "buffer pool: {:.0} misses of {:.0} page requests ({:.1}% hit); commits {:.0} ({:.1}/s)",
            innodb.buffer_pool_reads,
            innodb.buffer_pool_read_requests,
            innodb.buffer_pool_hit_pct,
            innodb.commits,
            innodb.commits_per_s
        ),
        format!(
            "redo: write requests {:.0}, {:.2} MB written ({:.3} MB/s), log fsyncs {}; data fsyncs {:.0}",
            innodb.log_writes,
            innodb.log_written_bytes / 1e6,
            innodb.log_mb_per_s,
            innodb
                .log_fsyncs
                .map_or("n/a".to_string(), |fsyncs| format!("{fsyncs:.0}")),
            innodb.data_fsyncs
        ),
    ];
    for file in &innodb.files {
        lines.push(format!(
            "performance_schema {}: {:.0} reads ({:.1} us each), {:.0} writes ({:.1} us each), \
             {:.1} ms other (fsyncs)",
            file.event,
            file.reads,
            file.read_us_per_read,
            file.writes,
            file.write_us_per_write,
            file.misc_wait_ms
        ));
    }
    for (field, reason) in &innodb.unavailable {
        lines.push(format!("n/a {field}: {reason}"));
    }
    if let Some(reads) = reads {
        lines.push(format!(
            "devices: {} read requests = {:.3} per InnoDB read request, {:.3} bytes per InnoDB byte",
            reads.device_read_requests,
            reads.device_requests_per_innodb_request,
            reads.device_bytes_per_innodb_byte
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::version_num;

    #[test]
    fn versions_encode_like_server_version_num() {
        assert_eq!(version_num("10.11.19-MariaDB-0+deb12u1"), 101_119);
        assert_eq!(version_num("8.0.36"), 80_036);
        assert_eq!(version_num("garbage"), 0);
    }
}
