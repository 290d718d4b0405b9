//! `strata model`: the command line of the capacity models — the options
//! (their doc comments are the `--help` text), turned into a request of
//! `strata_model::command`, run, and printed through the shared output path
//! (`--format text|json|csv|html`, `--json`, `--output`, `--html`).
//!
//! Not for: any arithmetic or layout (strata-model's `command` and `input`),
//! or reading `--from` (strata-awr's `measured`).

use anyhow::Context;
use strata_awr::measured;
use strata_model::command::args::*;
use strata_model::command::{
    cluster, commit, disk, flash_cache, predict, queue, raid, replication,
};

pub use strata_model::command::args::ModelArgs;

pub fn run(args: ModelArgs) -> anyhow::Result<i32> {
    let (output, printed) = match args.model {
        ModelCommand::Raid(args) => (args.output.clone(), raid::run(&raid_request(&args)?)?),
        ModelCommand::Replication(args) => {
            let printed = replication::run(&replication_request(&args))?;
            (args.output, printed)
        }
        ModelCommand::Queue(args) => (args.output.clone(), queue::run(&queue_request(&args)?)?),
        ModelCommand::Disk(args) => (args.output.clone(), disk::run(&disk_request(&args))?),
        ModelCommand::FlashCache(args) => {
            let printed = flash_cache::run(&flash_cache_request(&args))?;
            (args.output, printed)
        }
        ModelCommand::Cluster(args) => {
            (args.output.clone(), cluster::run(&cluster_request(&args)?)?)
        }
        ModelCommand::Commit(args) => (args.output.clone(), commit::run(&commit_request(&args)?)?),
        ModelCommand::Predict(args) => {
            let printed = predict::run(&strata_run::predict_inputs::request(&args)?)?;
            (args.output, printed)
        }
    };
    crate::output::print(&output, &printed)?;
    Ok(0)
}

fn raid_request(args: &RaidArgs) -> anyhow::Result<raid::RaidRequest> {
    let measured = match (&args.from, &args.iops, args.read_pct) {
        (Some(path), None, _) | (Some(path), _, None) => {
            Some(measured::front_end_load(&measured::read(path)?, path)?)
        }
        _ => None,
    };
    Ok(raid::RaidRequest {
        iops: args.iops.clone(),
        read_pct: args.read_pct,
        measured,
        raid: args.raid,
        write_penalty: args.write_penalty,
        disks: args.disks.clone().unwrap_or_default(),
        ceiling: args.ceiling,
        service_time: args.service_time,
        min_disks: args.min_disks,
        explain: args.explain,
    })
}

fn replication_request(args: &ReplicationArgs) -> replication::ReplicationRequest {
    replication::ReplicationRequest {
        size_bytes: args.size,
        distance_km: args.distance_km,
        overhead: args.overhead,
        per_kib: args.per_kib,
        calibrate_from: args.calibrate_from,
        link_gbit: args.link_gbit,
        fibre_channel: args.fibre_channel,
        round_trips: args.round_trips as u32,
        us_per_km: args.us_per_km,
        explain: args.explain,
    }
}

fn queue_request(args: &QueueArgs) -> anyhow::Result<queue::QueueRequest> {
    let measured = match &args.from {
        Some(path) => {
            let figures = measured::read(path)?;
            Some(measured::device_queue(
                &figures,
                path,
                args.device.as_deref(),
            )?)
        }
        None => None,
    };
    Ok(queue::QueueRequest {
        model: args.model.clone(),
        cv: args.cv,
        servers: args.servers as u32,
        service_time: args.service_time,
        arrival_rate: args.arrival_rate,
        utilization: args.utilization.clone(),
        centres: args.centres.clone(),
        think_time: args.think_time,
        users: args.users as u32,
        measured,
        explain: args.explain,
    })
}

fn disk_request(args: &DiskArgs) -> disk::DiskRequest {
    disk::DiskRequest {
        rpm: args.rpm,
        seek: args.seek,
        settle: args.settle,
        transfer_rate: args.transfer_rate,
        size: args.size,
        span: args.span,
        queue_depths: args.qd.clone(),
        explain: args.explain,
    }
}

fn flash_cache_request(args: &FlashCacheArgs) -> flash_cache::FlashCacheRequest {
    flash_cache::FlashCacheRequest {
        buffer_cache: args.buffer_cache,
        data: args.data,
        flash: args.flash.clone(),
        block_size: args.block_size,
        cluster: args.cluster,
        skew: args.skew,
        ram_latency: args.ram_latency,
        flash_latency: args.flash_latency,
        disk_latency: args.disk_latency,
        explain: args.explain,
    }
}

fn cluster_request(args: &ClusterArgs) -> anyhow::Result<cluster::ClusterRequest> {
    let name = args.csv.display().to_string();
    let csv = std::fs::read_to_string(&args.csv).with_context(|| format!("reading {name}"))?;
    Ok(cluster::ClusterRequest {
        name,
        csv,
        clusters: args.clusters as usize,
        log: args.log,
        normalize: args.normalize,
        explain: args.explain,
    })
}

fn commit_request(args: &CommitArgs) -> anyhow::Result<commit::CommitRequest> {
    let measured = match (&args.from, args.commit_wait, args.log_write_io) {
        (Some(path), None, _) | (Some(path), _, None) => {
            Some(measured::commit_inputs(&measured::read(path)?, path)?)
        }
        _ => None,
    };
    Ok(commit::CommitRequest {
        commit_wait: args.commit_wait,
        log_write_io: args.log_write_io,
        log_writer_cpu: args.log_writer_cpu,
        measured,
        explain: args.explain,
    })
}
