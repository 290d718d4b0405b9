//! What `strata run` and `strata setup` are asked for (`options`),
//! resolved into a plan, the sessions' options and the options as the
//! Recording keeps them: defaults applied (an option given beats pgio.conf or
//! slob.conf, which beats strata's default), and every contradiction refused, naming the option,
//! before any work starts. Also what every engine's configuration is made
//! from, and the checks every engine shares.
//!
//! The pieces `job` resolves a run from, in its order.
//!
//! Not for: choosing the engine (`registry::Registry`), the order of the
//! resolution (`job`), or any one engine's checks (its crate's
//! `configure`).

use crate::engine::{Capability, EngineKind};
use crate::options::{DataRequest, TableSize, WorkloadRequest};
use crate::outcome::{data_set_bytes_in_blocks_of, PageCacheChoice};
use crate::read_path::ReadPathRequest;
use crate::sweep::SweepRequest;
use anyhow::bail;
use serde::Serialize;
use std::time::Duration;
use strata_agent::endpoint::Endpoint;
use strata_core::units::{format_size, MIB};
use strata_db::account::ServerAccount;
use strata_db::workdir::{WorkDir, WorkDirRequest};
use strata_slob::conf_file::Defaults;
use strata_slob::schema::SchemaPlan;
use strata_slob::session::{AccessDistribution, DriverOptions, Shard, StopAfter, WorkloadOptions};

/// What an engine brings to the resolution: the size of its block (one
/// row) and the cache a data set must not fit in.
#[derive(Clone, Copy, Debug)]
pub struct EngineDefaults {
    pub block_bytes: u32,
    /// The cache's setting as its users name it.
    pub cache: &'static str,
    pub cache_bytes: u64,
    /// What to change when the data set fits in it.
    pub ways_out: &'static str,
}

/// What every engine's configuration is made from.
pub struct EngineRequest {
    pub page_cache: PageCacheChoice,
    pub driver: DriverOptions,
    pub read_path: ReadPathRequest,
    pub setup_only: bool,
    /// The run's Recording, created before any work.
    pub record: Option<crate::recorder::RunRecorder>,
    /// The command line, without passwords, for the Recording.
    pub command: Vec<String>,
    /// `--shard`: this driver is one shard of a run.
    pub shard: Option<ShardRequest>,
    /// `--sweep-sessions`: one window per session count.
    pub sweep: Option<SweepRequest>,
}

/// One shard of a run: which, of which run, and how long it waits for the
/// others at the rendezvous.
#[derive(Clone, Debug, Serialize)]
pub struct ShardRequest {
    pub shard: Shard,
    pub run_id: String,
    #[serde(rename = "rendezvous_timeout_s", serialize_with = "seconds")]
    pub rendezvous_timeout: Duration,
    /// Where the shards meet when they drive several servers: the first
    /// `--db` (with its password: never shown); `None`: this shard's own.
    #[serde(skip)]
    pub rendezvous_db: Option<String>,
}

fn seconds<S: serde::Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(duration.as_secs_f64())
}

/// Slurm's own steps (the batch script, the extern step…) are numbered from
/// here; `srun`'s steps below it.
const SLURM_SPECIAL_STEPS: u32 = 0xFFFF_FFF0;

/// The default wait for the other shards.
const RENDEZVOUS_TIMEOUT: Duration = Duration::from_secs(120);

/// `--shard`, `--shards`, `--run-id`, `--rendezvous-timeout`, and the
/// scheduler's environment (`env`): Slurm's `SLURM_PROCID`/`SLURM_NTASKS`
/// in a task `srun` started (a job step of its own, `SLURM_STEP_ID`; not
/// the batch script itself; `SLURM_JOB_ID` names the run), a Kubernetes
/// Indexed Job's `JOB_COMPLETION_INDEX` with `--shards`. `None`: one
/// driver.
pub fn shard_request(
    args: &WorkloadRequest,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<Option<ShardRequest>> {
    let number = |name: &str| env(name).and_then(|text| text.trim().parse::<u32>().ok());
    let srun_step = number("SLURM_STEP_ID").is_some_and(|step| step < SLURM_SPECIAL_STEPS);
    let slurm = match (number("SLURM_PROCID"), number("SLURM_NTASKS")) {
        (Some(rank), Some(tasks)) if tasks > 1 && srun_step => Some(Shard {
            index: rank + 1,
            count: tasks,
        }),
        _ => None,
    };
    let indexed_job = number("JOB_COMPLETION_INDEX")
        .zip(args.shards)
        .map(|(index, count)| Shard {
            index: index + 1,
            count,
        });
    let Some(shard) = args.shard.or(slurm).or(indexed_job) else {
        if args.shards.is_some() {
            bail!("--shards N: give --shard I/N, or run under a scheduler that sets JOB_COMPLETION_INDEX");
        }
        return Ok(None);
    };
    if shard.index == 0 || shard.index > shard.count {
        bail!(
            "shard {}/{}: the index is outside 1..={}",
            shard.index,
            shard.count,
            shard.count
        );
    }
    let run_id = args
        .run_id
        .clone()
        .or_else(|| env("SLURM_JOB_ID").map(|job| format!("slurm-{job}")))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "--shard {}/{}: give --run-id ID, the same for every shard",
                shard.index,
                shard.count
            )
        })?;
    Ok(Some(ShardRequest {
        shard,
        run_id,
        rendezvous_timeout: args.rendezvous_timeout.unwrap_or(RENDEZVOUS_TIMEOUT),
        rendezvous_db: None,
    }))
}

/// This driver's `--db`: the one given, or, for a shard, number
/// (I-1) mod K + 1 of the K given (the shards then meet on the first);
/// several without `--shard` are refused.
pub fn choose_db(data: &mut DataRequest, shard: Option<&mut ShardRequest>) -> anyhow::Result<()> {
    data.db = match (data.dbs.as_slice(), shard) {
        ([], _) => None,
        ([one], _) => Some(one.clone()),
        (several, Some(shard)) => {
            shard.rendezvous_db = Some(several[0].clone());
            Some(several[(shard.shard.index as usize - 1) % several.len()].clone())
        }
        (several, None) => bail!(
            "--db given {} times: one server per driver; several are for shards (--shard I/N \
             spreads them: shard I drives the ((I-1) mod {} + 1)th)",
            several.len(),
            several.len()
        ),
    };
    Ok(())
}

/// A seed every shard of `run_id` derives alike (FNV-1a of the id).
pub fn run_seed(run_id: &str) -> u64 {
    run_id.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `--agent` with the throwaway server strata makes here is refused before
/// any work: that server's devices and CPU are this machine's, and an
/// agent elsewhere would account them with another host's.
pub fn refuse_agents_of_a_throwaway_server(
    data: &DataRequest,
    engine: EngineKind,
) -> anyhow::Result<()> {
    if data.db.is_some() || data.agents.is_empty() || !engine.can(Capability::Agents) {
        return Ok(());
    }
    bail!(
        "--agent {}: strata's throwaway {} server runs on this machine, whose devices and CPU \
         strata counts itself; an agent is for a server on another host: give --db URL of the \
         server on the agent's host, or leave --agent out",
        data.agents[0],
        engine.label()
    )
}

/// `--agent`: the first is the server host's agent; the others are other
/// hosts the run follows beside it (an NFS server, a second node).
pub fn server_host_agent(data: &DataRequest) -> Option<Endpoint> {
    data.agents.first().cloned()
}

/// The agents after the first: other hosts, shown per host.
pub fn other_host_agents(data: &DataRequest) -> Vec<Endpoint> {
    data.agents.iter().skip(1).cloned().collect()
}

/// The throwaway server's (or temporary file's) directory, checked before
/// any work, and said on stderr at once.
pub fn work_dir(data: &DataRequest, account: Option<ServerAccount>) -> anyhow::Result<WorkDir> {
    let request = WorkDirRequest::from_option(data.work_dir.as_deref())?;
    let work_dir = WorkDir::resolve(&request, account.as_ref())?;
    strata_core::note::note(&format!(
        "strata: work directory {} ({})",
        work_dir.path.display(),
        work_dir.reason
    ));
    Ok(work_dir)
}

/// Data options that contradict each other or that the server would
/// refuse only after initdb: named before any work.
pub fn check_data(data: &DataRequest) -> anyhow::Result<()> {
    if let (true, Some(schemas)) = (data.single_schema, data.schemas) {
        if schemas != 1 {
            bail!(
                "--single-schema loads one schema shared by every session: --schemas {schemas} \
                 does not apply (give the sessions with --sessions)"
            );
        }
    }
    Ok(())
}

/// The schemas as the engine will lay them out: a size becomes the
/// engine's own blocks, so that `--scale` is the table's size on disk.
pub fn plan(data: &DataRequest, conf: &Defaults, engine: &EngineDefaults) -> SchemaPlan {
    let block = engine.block_bytes;
    let scale = data
        .scale
        .or(conf.scale)
        .unwrap_or(TableSize::Bytes(256 * MIB));
    let scan_table_size = data.scan_table_size.or(conf.scan_table_size);
    SchemaPlan {
        schemas: data.schemas.or(conf.schemas).unwrap_or(4),
        single_schema: data.single_schema,
        blocks_per_schema: scale.blocks(block),
        scan_table_blocks: scan_table_size.map_or(0, |size| size.blocks(block)),
        random_data: data.random_data || conf.random_data,
    }
}

/// Sessions per CPU past which a throwaway PostgreSQL's window is not a
/// storage result: the host takes the window's start edge late, and the
/// page cache, held to its target from the window's start, absorbs what
/// the warm-up let it hold. Measured on 2 CPUs, a 512 MiB single schema,
/// 25.6 MiB target, 10 s windows, with the server's shared memory touched
/// before the window: 250 sessions held 25.28 MiB (max 25.61 MiB), 8.8%
/// of block reads absorbed, the start edge 0.46 s late; 500 held
/// 24.40 MiB (max 25.42 MiB) but absorbed 19.4%, the start edge 1.9 s
/// late; 1,000 took the start edge 7.0 s late.
pub const MOST_SESSIONS_PER_CPU_WITH_A_LIMITED_CACHE: u32 = 125;

/// Refuses, before any work, more sessions than this host can run on a
/// throwaway PostgreSQL while holding its page cache to the limit: the
/// result could not be a storage result. `most_sessions` is the run's, or
/// its sweep's largest point's.
pub fn refuse_more_sessions_than_the_cache_can_hold(
    data: &DataRequest,
    kind: EngineKind,
    most_sessions: u32,
    cpus: u32,
) -> anyhow::Result<()> {
    let unlimited = data.page_cache_limit == Some(PageCacheChoice::Unlimited);
    if !kind.can(Capability::CgroupPageCache) || data.db.is_some() || unlimited {
        return Ok(());
    }
    let most = MOST_SESSIONS_PER_CPU_WITH_A_LIMITED_CACHE * cpus.max(1);
    if most_sessions > most {
        bail!(
            "{most_sessions} sessions on this host's {cpus} CPUs: past {most} \
             ({MOST_SESSIONS_PER_CPU_WITH_A_LIMITED_CACHE} per CPU) this host takes the window's \
             edges late and the throwaway server's page cache absorbs over a tenth of the \
             reads the warm-up let it hold, so the devices would not see the reads; give at most {most} sessions (--sessions, --schemas, --threads-per-schema, \
             --sweep-sessions), a host with more CPUs, or --page-cache-limit unlimited to \
             measure through the cache"
        );
    }
    Ok(())
}

/// On a server strata makes, a data set that fits in the database's own
/// cache measures the cache: refused before any work, naming both sizes and
/// the ways out (`--page-cache-limit none` says the cache is the point).
pub fn refuse_a_data_set_in_the_cache(
    data: &DataRequest,
    conf: &Defaults,
    plan: &SchemaPlan,
    engine: &EngineDefaults,
) -> anyhow::Result<()> {
    let deliberate = data.page_cache_limit == Some(PageCacheChoice::Unlimited);
    if data.db.is_some() || conf.db.is_some() || deliberate {
        return Ok(());
    }
    let data_set_bytes = data_set_bytes_in_blocks_of(plan, u64::from(engine.block_bytes));
    if data_set_bytes > engine.cache_bytes {
        return Ok(());
    }
    bail!(
        "the data set ({}) fits in {} ({}): every read would be a cache hit, not a storage \
         result. Give a larger --scale or --schemas, {}",
        format_size(data_set_bytes),
        engine.cache,
        format_size(engine.cache_bytes),
        engine.ways_out
    )
}

fn workload(args: &WorkloadRequest, conf: &Defaults) -> anyhow::Result<WorkloadOptions> {
    let update_pct = args.update_pct.or(conf.update_pct).unwrap_or(0.0);
    let scan_pct = args.scan_pct.or(conf.scan_pct).unwrap_or(0.0);
    if update_pct + scan_pct > 100.0 {
        bail!("--update-pct {update_pct} plus --scan-pct {scan_pct} is over 100");
    }
    Ok(WorkloadOptions {
        work_unit: args
            .work_unit
            .or(conf.work_unit)
            .unwrap_or(strata_slob::session::DEFAULT_WORK_UNIT),
        update_pct,
        update_work_unit: args
            .update_work_unit
            .or(conf.update_work_unit)
            .unwrap_or(strata_slob::session::DEFAULT_UPDATE_WORK_UNIT),
        update_pad_bytes: args.update_pad_bytes.or(conf.update_pad_bytes).unwrap_or(0),
        scan_pct,
        think_time: args.think_time.or(conf.think_time),
        think_every: args.think_every.or(conf.think_every).unwrap_or(1),
        hotspot: args.hotspot.clone().or(conf.hotspot.clone()),
        hot_schema_every: args.hot_schema_every.or(conf.hot_schema_every),
        distribution: args
            .distribution
            .clone()
            .unwrap_or(AccessDistribution::Uniform),
    })
}

/// The workload against the plan: refused where they disagree.
fn check_workload(
    args: &WorkloadRequest,
    plan: &SchemaPlan,
    workload: &WorkloadOptions,
) -> anyhow::Result<()> {
    if workload.scan_pct > 0.0 && plan.scan_table_blocks == 0 {
        bail!(
            "--scan-pct needs a scan table: give --scan-table-size (and load it with strata setup)"
        );
    }
    if u64::from(workload.work_unit) > plan.blocks_per_schema {
        bail!(
            "--work-unit {} is larger than the table ({} blocks, --scale)",
            workload.work_unit,
            plan.blocks_per_schema
        );
    }
    if args.sessions.is_some() && !plan.single_schema {
        bail!("--sessions applies to --single-schema; use --threads-per-schema with --schemas");
    }
    if args
        .outlier_threshold
        .is_some_and(|threshold| threshold.is_zero())
    {
        bail!("--outlier-threshold must be more than 0 s: every statement would be an outlier");
    }
    if let Some(threshold) = args.io_outlier {
        crate::block_trace::refuse_outlier_threshold(threshold)
            .map_err(|why| anyhow::anyhow!("--io-outlier {why}"))?;
    }
    Ok(())
}

/// `--work-loops`, else `--duration`/`--warmup`, else the file's work loops
/// (slob.conf's WORK_LOOP) or duration, else 30 s.
fn stop_after(args: &WorkloadRequest, conf: &Defaults) -> anyhow::Result<StopAfter> {
    let timed_on_the_command_line = args.duration.is_some() || args.warmup.is_some();
    let conf_loops = conf.work_loops.filter(|_| !timed_on_the_command_line);
    let stop_after = match args.work_loops.or(conf_loops) {
        Some(loops) => StopAfter::WorkLoops(loops),
        None => StopAfter::Duration {
            warmup: args.warmup.unwrap_or(Duration::from_secs(5)),
            duration: args
                .duration
                .or(conf.duration)
                .unwrap_or(Duration::from_secs(30)),
        },
    };
    if let StopAfter::Duration { duration, .. } = stop_after {
        if duration < Duration::from_secs(1) {
            bail!(
                "--duration must be at least 1 s, got {}: every layer is sampled each second, \
                 and a shorter window holds too little to give a rate",
                strata_core::units::format_duration(duration)
            );
        }
    }
    Ok(stop_after)
}

/// The sessions' options of a run.
pub fn driver_options(
    args: &WorkloadRequest,
    plan: SchemaPlan,
    conf: &Defaults,
) -> anyhow::Result<DriverOptions> {
    let workload = workload(args, conf)?;
    check_workload(args, &plan, &workload)?;
    let stop_after = stop_after(args, conf)?;
    let single_schema = plan.single_schema;
    Ok(DriverOptions {
        plan,
        workload,
        threads_per_schema: args
            .threads_per_schema
            .or(conf.threads_per_schema)
            .unwrap_or(1),
        sessions: args.sessions.or(single_schema.then_some(4)),
        stop_after,
        seed: args
            .seed
            .unwrap_or_else(|| strata_core::random::FastRng::from_entropy().next_u64()),
        tolerate_failures: args.tolerate_failures,
        outlier_threshold: args.outlier_threshold,
        shard: None,
    })
}

/// The sessions' options of a setup: it loads and runs nothing.
pub fn setup_driver_options(plan: SchemaPlan) -> DriverOptions {
    DriverOptions {
        plan,
        workload: WorkloadOptions {
            work_unit: 1,
            update_pct: 0.0,
            update_work_unit: 1,
            update_pad_bytes: 0,
            scan_pct: 0.0,
            think_time: None,
            think_every: 1,
            hotspot: None,
            hot_schema_every: None,
            distribution: AccessDistribution::Uniform,
        },
        threads_per_schema: 1,
        sessions: None,
        stop_after: StopAfter::WorkLoops(0),
        seed: 0,
        tolerate_failures: false,
        outlier_threshold: None,
        shard: None,
    }
}

/// The options as resolved, for the Recording and the JSON document (the
/// connection string already without its password).
#[derive(Serialize)]
pub struct ResolvedOptions<'a> {
    pub command: &'static str,
    pub engine: EngineKind,
    pub db: Option<String>,
    pub plan: &'a SchemaPlan,
    pub page_cache_limit: PageCacheChoice,
    pub load_parallel: usize,
    pub replace: bool,
    pub workload: Option<&'a WorkloadOptions>,
    pub threads_per_schema: u32,
    pub sessions: Option<u32>,
    pub stop_after: Option<&'a StopAfter>,
    pub tolerate_failures: bool,
    pub outlier_threshold_ms: Option<f64>,
    pub strict: bool,
    pub read_path: &'a ReadPathRequest,
    /// The engine's own options, with those every run records.
    #[serde(flatten)]
    pub engine_options: &'a serde_json::Map<String, serde_json::Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    fn resolved(
        args: &WorkloadRequest,
        pairs: &'static [(&'static str, &'static str)],
    ) -> Option<(u32, u32, String)> {
        shard_request(args, &env_of(pairs))
            .unwrap()
            .map(|request| (request.shard.index, request.shard.count, request.run_id))
    }

    #[test]
    fn a_shard_comes_from_the_options_or_the_scheduler_s_task() {
        let explicit = WorkloadRequest {
            shard: Some(Shard { index: 2, count: 3 }),
            run_id: Some("nightly".into()),
            ..WorkloadRequest::default()
        };
        assert_eq!(resolved(&explicit, &[]), Some((2, 3, "nightly".into())));
        let none = WorkloadRequest::default();
        let srun = &[
            ("SLURM_PROCID", "1"),
            ("SLURM_NTASKS", "3"),
            ("SLURM_STEP_ID", "0"),
            ("SLURM_JOB_ID", "77"),
        ];
        assert_eq!(resolved(&none, srun), Some((2, 3, "slurm-77".into())));
        let batch_script = &[
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "3"),
            ("SLURM_STEP_ID", "4294967294"),
            ("SLURM_JOB_ID", "77"),
        ];
        assert_eq!(
            resolved(&none, batch_script),
            None,
            "the batch script is no shard"
        );
        let indexed = WorkloadRequest {
            shards: Some(4),
            run_id: Some("k8s".into()),
            ..WorkloadRequest::default()
        };
        assert_eq!(
            resolved(&indexed, &[("JOB_COMPLETION_INDEX", "3")]),
            Some((4, 4, "k8s".into()))
        );
        assert!(
            shard_request(&indexed, &env_of(&[])).is_err(),
            "--shards without an index"
        );
    }
}
