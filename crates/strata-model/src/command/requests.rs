//! Each `strata model` subcommand's options turned into its request:
//! the copying between what the command line gives and what the model
//! takes, and for `--from` which measurement the request still needs.
//!
//! Not for: reading `--from` (strata-awr's `measured`) or the arithmetic
//! (the other `command` modules).

use super::args::*;
use super::{cluster, commit, disk, flash_cache, nfs, queue, raid, replication};
use anyhow::Context;
use std::path::Path;

impl RaidArgs {
    /// `--from`, where --iops or --read-pct is not given.
    pub fn measured_from(&self) -> Option<&Path> {
        match (&self.from, &self.iops, self.read_pct) {
            (Some(path), None, _) | (Some(path), _, None) => Some(path),
            _ => None,
        }
    }

    pub fn request(&self, measured: Option<raid::MeasuredLoad>) -> raid::RaidRequest {
        raid::RaidRequest {
            iops: self.iops.clone(),
            read_pct: self.read_pct,
            measured,
            raid: self.raid,
            write_penalty: self.write_penalty,
            disks: self.disks.clone().unwrap_or_default(),
            ceiling: self.ceiling,
            service_time: self.service_time,
            min_disks: self.min_disks,
            explain: self.explain,
        }
    }
}

impl ReplicationArgs {
    pub fn request(&self) -> replication::ReplicationRequest {
        replication::ReplicationRequest {
            size_bytes: self.size,
            distance_km: self.distance_km,
            overhead: self.overhead,
            per_kib: self.per_kib,
            calibrate_from: self.calibrate_from,
            link_gbit: self.link_gbit,
            fibre_channel: self.fibre_channel,
            round_trips: self.round_trips as u32,
            us_per_km: self.us_per_km,
            explain: self.explain,
        }
    }
}

impl QueueArgs {
    pub fn request(&self, measured: Option<queue::MeasuredDevice>) -> queue::QueueRequest {
        queue::QueueRequest {
            model: self.model.clone(),
            cv: self.cv,
            servers: self.servers as u32,
            service_time: self.service_time,
            arrival_rate: self.arrival_rate,
            utilization: self.utilization.clone(),
            centres: self.centres.clone(),
            think_time: self.think_time,
            users: self.users as u32,
            measured,
            explain: self.explain,
        }
    }
}

impl DiskArgs {
    pub fn request(&self) -> disk::DiskRequest {
        disk::DiskRequest {
            rpm: self.rpm,
            seek: self.seek,
            settle: self.settle,
            transfer_rate: self.transfer_rate,
            size: self.size,
            span: self.span,
            queue_depths: self.qd.clone(),
            explain: self.explain,
        }
    }
}

impl FlashCacheArgs {
    pub fn request(&self) -> flash_cache::FlashCacheRequest {
        flash_cache::FlashCacheRequest {
            buffer_cache: self.buffer_cache,
            data: self.data,
            flash: self.flash.clone(),
            block_size: self.block_size,
            cluster: self.cluster,
            skew: self.skew,
            ram_latency: self.ram_latency,
            flash_latency: self.flash_latency,
            disk_latency: self.disk_latency,
            explain: self.explain,
        }
    }
}

impl ClusterArgs {
    /// The request, with the CSV file read.
    pub fn request(&self) -> anyhow::Result<cluster::ClusterRequest> {
        let name = self.csv.display().to_string();
        let csv = std::fs::read_to_string(&self.csv).with_context(|| format!("reading {name}"))?;
        Ok(cluster::ClusterRequest {
            name,
            csv,
            clusters: self.clusters as usize,
            log: self.log,
            normalize: self.normalize,
            explain: self.explain,
        })
    }
}

impl CommitArgs {
    /// `--from`, where --commit-wait or --log-write-io is not given.
    pub fn measured_from(&self) -> Option<&Path> {
        match (&self.from, self.commit_wait, self.log_write_io) {
            (Some(path), None, _) | (Some(path), _, None) => Some(path),
            _ => None,
        }
    }

    pub fn request(&self, measured: Option<commit::MeasuredCommit>) -> commit::CommitRequest {
        commit::CommitRequest {
            commit_wait: self.commit_wait,
            log_write_io: self.log_write_io,
            log_writer_cpu: self.log_writer_cpu,
            measured,
            explain: self.explain,
        }
    }
}

impl NfsArgs {
    pub fn request(&self, measured: Option<nfs::MeasuredNfs>) -> nfs::NfsRequest {
        nfs::NfsRequest {
            round_trip: self.round_trip,
            transfer_bytes: self.transfer.unwrap_or(1 << 20),
            io_bytes: self.io_size.unwrap_or(8192),
            connections: self.connections.unwrap_or(1),
            connection_calls_per_s: self.connection_calls,
            link_gbit: self.link_gbit,
            outstanding: self
                .outstanding
                .clone()
                .unwrap_or_else(|| vec![1, 2, 4, 8, 16, 32]),
            measured,
            explain: self.explain,
        }
    }
}
