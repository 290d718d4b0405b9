//! The shards of one run (`strata run --shard I/N`) merged into the one
//! Recording of the run: the sessions' work added (loops, statements, rows,
//! each second's counts), their latency histograms added exactly (the
//! merged p99 is the p99 of every statement, never an average of p99s),
//! each database server's counters once (every shard of a server saw it
//! over the same window) and added across servers, each host's devices
//! once, the CPU of the first shard and the layer samples of the first
//! shard of each host (another host's as `LAYER@HOST`), the other
//! shards' drivers moved from "other tenants" to strata, and a table of the
//! shards. Shards of different runs, or one shard twice, are refused; a
//! missing shard is named and fails the verdict, never silently shrinking
//! the totals.
//!
//! Not for: reporting (strata-report reads the merged Recording as any
//! run's, with its shards).

use anyhow::{bail, Context};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use strata_core::histogram::LatencyHistogram;
use strata_core::verdict::{Reason, Verdict};
use strata_recording::environment::{MergedShards, ShardRecord, ShardSummary};
use strata_recording::layers::Sample;
use strata_recording::read::Recording;
use strata_recording::record::{Record, RunHistograms, RunResult};
use strata_recording::run::{
    Absorption, DatabaseFigures, RunFigures, SecondCounts, StatementOutlier, CPU_BOUND_IDLE_PCT,
};

/// The most the shards' windows may begin apart, ms.
pub const START_SKEW_MS: f64 = 50.0;

const OPERATIONS: [&str; 4] = ["select", "update", "commit", "scan"];

/// The shards at `paths` merged into the new file `output`; an `output`
/// that exists is refused before any shard is read.
pub fn merge_into(paths: &[PathBuf], output: &Path) -> anyhow::Result<()> {
    if output.exists() {
        bail!(
            "-o {}: the file exists; strata writes only files it makes (give another name)",
            output.display()
        );
    }
    merge_files(paths)?.write_to(output)
}

/// The shards at `paths`, read and merged. Layer samples are read only of
/// the first shard of each host, the ones the merged run keeps.
pub fn merge_files(paths: &[PathBuf]) -> anyhow::Result<Recording> {
    let mut shards = paths
        .iter()
        .map(|path| Recording::read_without_layers(path))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut by_number: Vec<usize> = (0..shards.len()).collect();
    by_number.sort_by_key(|index| {
        shards[*index]
            .header
            .environment
            .shard
            .as_ref()
            .map(|record| record.shard)
    });
    let mut hosts: Vec<String> = Vec::new();
    for index in by_number {
        let host = device_host(&shards[index]);
        if !hosts.contains(&host) {
            hosts.push(host);
            shards[index] = Recording::read(&paths[index])?;
        }
    }
    merge(shards)
}

/// The host whose devices a shard's figures are: the server host its agent
/// showed, else the shard's own (a local server's).
fn device_host(shard: &Recording) -> String {
    let environment = &shard.header.environment;
    match (&environment.server_host, &environment.shard) {
        (Some(host), _) => host.name.clone(),
        (None, Some(record)) => record.host.clone(),
        (None, None) => String::new(),
    }
}

/// The layers of `samples` (another host's) into the merged run's layer
/// records, as `LAYER@HOST`, each beside the merged sample nearest in time
/// (within half a second; the shards sampled each second on their own).
fn add_host_layers(records: &mut [Record], host: &str, samples: &[Sample]) {
    let at: Vec<(f64, usize)> = records
        .iter()
        .enumerate()
        .filter_map(|(index, record)| match record {
            Record::Layers(sample) => Some((sample.unix_s, index)),
            _ => None,
        })
        .collect();
    for sample in samples {
        let apart = |unix_s: f64| (unix_s - sample.unix_s).abs();
        let nearest = at
            .iter()
            .min_by(|a, b| apart(a.0).total_cmp(&apart(b.0)))
            .filter(|(unix_s, _)| apart(*unix_s) <= 0.5);
        let Some((_, index)) = nearest.copied() else {
            continue;
        };
        if let Record::Layers(merged) = &mut records[index] {
            for (layer, values) in sample
                .layers
                .iter()
                .filter(|(layer, _)| !layer.contains('@'))
            {
                merged
                    .layers
                    .insert(format!("{layer}@{host}"), values.clone());
            }
        }
    }
}

/// A run's shards, read; merged into one Recording.
pub fn merge(mut shards: Vec<Recording>) -> anyhow::Result<Recording> {
    let records = check(&shards)?;
    let order: Vec<usize> = {
        let mut order: Vec<usize> = (0..shards.len()).collect();
        order.sort_by_key(|index| records[*index].shard);
        order
    };
    let first = &shards[order[0]];
    let results: Vec<&RunResult> = order
        .iter()
        .map(|index| {
            shards[*index].run_result().with_context(|| {
                format!(
                    "{}: no run result (interrupted?)",
                    shards[*index].path.display()
                )
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let sorted: Vec<&ShardRecord> = order.iter().map(|index| &records[*index]).collect();
    let device_hosts: Vec<String> = order
        .iter()
        .map(|index| device_host(&shards[*index]))
        .collect();
    let other_hosts = other_host_layers(&shards, &order, &device_hosts);
    let merged_shards = merged_shards(&sorted, &results);
    let histograms = merged_histograms(&results)?;
    let mut figures = merged_figures(&results, &histograms, &sorted)?;
    once_per_server(&mut figures, &results, &sorted, &device_hosts);
    figures.verdict = merged_verdict(&results, &merged_shards);
    let result = RunResult {
        figures,
        engine_figures: results[0].engine_figures.clone(),
        histograms: encode(&histograms),
    };
    let mut header = first.header.clone();
    header.environment.shard = None;
    header.environment.merged_shards = Some(merged_shards);
    let seconds = summed_seconds(&shards);
    let outliers = all_outliers(&shards);
    let path = first.path.clone();
    let first = shards.swap_remove(order[0]);
    let mut records_out: Vec<Record> = first
        .lines
        .into_iter()
        .map(|line| line.record)
        .filter(|record| {
            !matches!(
                record,
                Record::RunSecond(_) | Record::StatementOutlier(_) | Record::RunResult(_)
            )
        })
        .collect();
    records_out.extend(seconds.into_iter().map(Record::RunSecond));
    records_out.extend(outliers.into_iter().map(Record::StatementOutlier));
    for (host, samples) in &other_hosts {
        add_host_layers(&mut records_out, host, samples);
    }
    records_out.push(Record::RunResult(result));
    Recording::of(path, header, records_out)
}

/// The layer samples of the first shard of each host but the first
/// shard's, by host.
fn other_host_layers(
    shards: &[Recording],
    order: &[usize],
    device_hosts: &[String],
) -> Vec<(String, Vec<Sample>)> {
    let mut seen = vec![device_hosts[0].clone()];
    let mut layers = Vec::new();
    for (index, host) in order.iter().zip(device_hosts).skip(1) {
        if !seen.contains(host) {
            seen.push(host.clone());
            layers.push((host.clone(), shards[*index].layers().cloned().collect()));
        }
    }
    layers
}

/// Each shard's record, once every input is a shard of the same run and
/// no shard comes twice.
fn check(shards: &[Recording]) -> anyhow::Result<Vec<ShardRecord>> {
    let mut records: Vec<ShardRecord> = Vec::new();
    for recording in shards {
        let shown = recording.path.display();
        let record = recording
            .header
            .environment
            .shard
            .clone()
            .with_context(|| {
                format!("{shown} is not a shard's Recording (it was not run with --shard)")
            })?;
        if let Some(first) = records.first() {
            if record.run_id != first.run_id || record.shards != first.shards {
                bail!(
                    "{shown} is shard {}/{} of run {}, not of run {} ({} shards): shards of \
                     different runs are not merged",
                    record.shard,
                    record.shards,
                    record.run_id,
                    first.run_id,
                    first.shards
                );
            }
        }
        if records.iter().any(|seen| seen.shard == record.shard) {
            bail!(
                "{shown}: shard {} of run {} is given twice",
                record.shard,
                record.run_id
            );
        }
        records.push(record);
    }
    if records.is_empty() {
        bail!("give the Recordings of a run's shards");
    }
    Ok(records)
}

fn merged_shards(records: &[&ShardRecord], results: &[&RunResult]) -> MergedShards {
    let first = records[0];
    let missing = (1..=first.shards)
        .filter(|shard| !records.iter().any(|record| record.shard == *shard))
        .collect();
    let starts: Vec<f64> = records
        .iter()
        .filter_map(|record| record.window_start_server_unix_s)
        .collect();
    let start_skew_ms = (starts.len() == records.len()).then(|| {
        let earliest = starts.iter().copied().fold(f64::INFINITY, f64::min);
        let latest = starts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (latest - earliest) * 1e3
    });
    let merged = records
        .iter()
        .zip(results)
        .map(|(record, result)| shard_summary(record, &result.figures))
        .collect();
    MergedShards {
        run_id: first.run_id.clone(),
        shards: first.shards,
        merged,
        missing,
        start_skew_ms,
    }
}

fn shard_summary(record: &ShardRecord, figures: &RunFigures) -> ShardSummary {
    let select = figures.workload.operations.get("select");
    ShardSummary {
        shard: record.clone(),
        sessions: figures.sessions.started,
        loops: figures.workload.loops,
        loops_per_s: figures.workload.loops_per_s,
        select_p99_ms: select
            .filter(|select| select.latency.count > 0)
            .map(|select| select.latency.lat_p99_us / 1e3),
        strata_cpu_s: figures.cpu.strata_cpu_s,
        host_idle_pct: figures.cpu.host_idle_pct,
        cpu_bound: figures
            .cpu
            .host_idle_pct
            .is_some_and(|idle| idle < CPU_BOUND_IDLE_PCT),
    }
}

/// Each operation's histograms, added.
fn merged_histograms(
    results: &[&RunResult],
) -> anyhow::Result<BTreeMap<&'static str, LatencyHistogram>> {
    let mut merged = BTreeMap::new();
    for operation in OPERATIONS {
        let mut histogram = LatencyHistogram::new();
        for result in results {
            let encoded = result.histograms.of(operation).unwrap_or_default();
            let shard = LatencyHistogram::from_base64(encoded)
                .with_context(|| format!("the {operation} latency histogram"))?;
            histogram.merge(&shard);
        }
        merged.insert(operation, histogram);
    }
    Ok(merged)
}

fn encode(histograms: &BTreeMap<&'static str, LatencyHistogram>) -> RunHistograms {
    let of = |operation: &str| histograms[operation].to_base64();
    RunHistograms {
        select_lat_ns_hdr: of("select"),
        update_lat_ns_hdr: of("update"),
        commit_lat_ns_hdr: of("commit"),
        scan_lat_ns_hdr: of("scan"),
    }
}

/// The first shard's figures (the server, its host, the window), with the
/// sessions' work of every shard added.
fn merged_figures(
    results: &[&RunResult],
    histograms: &BTreeMap<&'static str, LatencyHistogram>,
    records: &[&ShardRecord],
) -> anyhow::Result<RunFigures> {
    let mut figures = results[0].figures.clone();
    let window_s = figures.window_s;
    let per_s = |count: f64| {
        if window_s > 0.0 {
            count / window_s
        } else {
            0.0
        }
    };
    let (sessions, workload) = (&mut figures.sessions, &mut figures.workload);
    for (result, record) in results.iter().zip(records).skip(1) {
        let shard = &result.figures;
        sessions.started += shard.sessions.started;
        sessions.failed += shard.sessions.failed;
        sessions.alive_through_window += shard.sessions.alive_through_window;
        sessions.reconnects += shard.sessions.reconnects;
        sessions.failures.extend(
            shard
                .sessions
                .failures
                .iter()
                .map(|failure| format!("shard {}: {failure}", record.shard)),
        );
        workload.loops += shard.workload.loops;
        workload.sql_statements += shard.workload.sql_statements;
        workload.rows_selected += shard.workload.rows_selected;
        workload.rows_updated += shard.workload.rows_updated;
        figures.cpu.strata_cpu_s += shard.cpu.strata_cpu_s;
        figures.interrupted |= shard.interrupted;
        figures.outliers.dropped += shard.outliers.dropped;
        figures
            .outliers
            .statements
            .extend(shard.outliers.statements.iter().cloned());
    }
    workload.loops_per_s = per_s(workload.loops as f64);
    workload.sql_per_s = per_s(workload.sql_statements as f64);
    for (operation, histogram) in histograms {
        let figures = workload
            .operations
            .get_mut(*operation)
            .with_context(|| format!("no {operation} figures in the first shard"))?;
        figures.per_s = per_s(histogram.count() as f64);
        figures.latency = histogram.summary();
    }
    figures
        .outliers
        .statements
        .sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    figures.per_second = summed(
        results
            .iter()
            .flat_map(|result| result.figures.per_second.iter()),
    );
    drivers_are_strata(&mut figures, records);
    Ok(figures)
}

/// With shards on several database servers (`--db` repeated): each
/// server's counters added once (from its first shard), each host's
/// devices once (named `HOST:DEVICE` when there are several hosts), and
/// the page cache's share of reads reckoned again from those sums.
fn once_per_server(
    figures: &mut RunFigures,
    results: &[&RunResult],
    records: &[&ShardRecord],
    device_hosts: &[String],
) {
    let mut servers: Vec<&str> = vec![&records[0].server];
    let mut hosts: Vec<&str> = vec![&device_hosts[0]];
    let several_hosts = device_hosts.iter().any(|host| host != &device_hosts[0]);
    if several_hosts {
        for device in &mut figures.devices {
            device.device = format!("{}:{}", device_hosts[0], device.device);
        }
    }
    for ((result, record), host) in results.iter().zip(records).zip(device_hosts).skip(1) {
        if !servers.contains(&record.server.as_str()) {
            servers.push(&record.server);
            if let (Some(sum), Some(more)) = (figures.database.as_mut(), &result.figures.database) {
                add_database(sum, more);
            }
        }
        if !hosts.contains(&host.as_str()) {
            hosts.push(host);
            figures
                .devices
                .extend(result.figures.devices.iter().map(|device| {
                    let mut device = device.clone();
                    device.device = format!("{host}:{}", device.device);
                    device
                }));
        }
    }
    if servers.len() > 1 || hosts.len() > 1 {
        reckon_absorption(figures);
    }
}

/// `more`'s counts added to `sum`, and the rates and shares of the sums.
fn add_database(sum: &mut DatabaseFigures, more: &DatabaseFigures) {
    let add = |a: &mut f64, b: f64| *a += b;
    add(&mut sum.blocks_read, more.blocks_read);
    add(&mut sum.blocks_read_per_s, more.blocks_read_per_s);
    add(&mut sum.blocks_hit, more.blocks_hit);
    add(&mut sum.commits, more.commits);
    add(&mut sum.commits_per_s, more.commits_per_s);
    add(&mut sum.wal_bytes, more.wal_bytes);
    add(&mut sum.wal_mb_per_s, more.wal_mb_per_s);
    add(&mut sum.block_read_time_ms, more.block_read_time_ms);
    add(&mut sum.temp_files, more.temp_files);
    add(&mut sum.temp_bytes, more.temp_bytes);
    add(&mut sum.deadlocks, more.deadlocks);
    for (key, value) in &more.counters {
        *sum.counters.entry(key.clone()).or_insert(0.0) += value;
    }
    let both = |a: Option<f64>, b: Option<f64>| Some(a? + b?);
    sum.read_requests = both(sum.read_requests, more.read_requests);
    sum.read_requests_per_s = both(sum.read_requests_per_s, more.read_requests_per_s);
    sum.read_bytes = both(sum.read_bytes, more.read_bytes);
    sum.read_mb_per_s = both(sum.read_mb_per_s, more.read_mb_per_s);
    sum.wal_writes = both(sum.wal_writes, more.wal_writes);
    sum.wal_syncs = both(sum.wal_syncs, more.wal_syncs);
    sum.wal_write_time_ms = both(sum.wal_write_time_ms, more.wal_write_time_ms);
    sum.wal_sync_time_ms = both(sum.wal_sync_time_ms, more.wal_sync_time_ms);
    let reads = sum.blocks_read + sum.blocks_hit;
    sum.buffer_hit_pct = if reads > 0.0 {
        100.0 * sum.blocks_hit / reads
    } else {
        0.0
    };
    sum.block_read_time_us_per_block = if sum.blocks_read > 0.0 {
        sum.block_read_time_ms * 1e3 / sum.blocks_read
    } else {
        0.0
    };
}

/// Blocks the servers read that no data device read, from the summed
/// figures.
fn reckon_absorption(figures: &mut RunFigures) {
    if let Some(database) = &figures.database {
        figures.absorption = Some(Absorption::of(database, &figures.devices));
    }
}

/// The other shards' drivers on the first shard's host read as other
/// tenants there: they are strata.
fn drivers_are_strata(figures: &mut RunFigures, records: &[&ShardRecord]) {
    let Some(tenants) = figures.tenants.as_mut() else {
        return;
    };
    let host = &records[0].host;
    let drivers: Vec<u32> = records[1..]
        .iter()
        .filter(|record| &record.host == host)
        .map(|record| record.pid)
        .collect();
    let (ours, others): (Vec<_>, Vec<_>) = tenants
        .top_others
        .drain(..)
        .partition(|process| drivers.contains(&process.pid));
    let moved: u64 = ours
        .iter()
        .map(|process| process.read_bytes + process.write_bytes)
        .sum();
    tenants.top_others = others;
    tenants.strata_bytes += moved;
    tenants.other_bytes = tenants.other_bytes.saturating_sub(moved);
    let all = tenants.server_bytes + tenants.strata_bytes + tenants.other_bytes;
    tenants.other_share_pct = match all {
        0 => 0.0,
        all => 100.0 * tenants.other_bytes as f64 / all as f64,
    };
}

/// Each second's counts of every shard, added by second.
fn summed<'a>(seconds: impl Iterator<Item = &'a SecondCounts>) -> Vec<SecondCounts> {
    let mut by_second: BTreeMap<u64, SecondCounts> = BTreeMap::new();
    for second in seconds {
        let sum = by_second.entry(second.second).or_insert(SecondCounts {
            second: second.second,
            loops: 0,
            selects: 0,
            updates: 0,
            scans: 0,
        });
        sum.loops += second.loops;
        sum.selects += second.selects;
        sum.updates += second.updates;
        sum.scans += second.scans;
    }
    by_second.into_values().collect()
}

fn summed_seconds(shards: &[Recording]) -> Vec<SecondCounts> {
    summed(shards.iter().flat_map(Recording::run_seconds))
}

fn all_outliers(shards: &[Recording]) -> Vec<StatementOutlier> {
    let mut outliers: Vec<StatementOutlier> = shards
        .iter()
        .flat_map(Recording::statement_outliers)
        .cloned()
        .collect();
    outliers.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    outliers
}

/// Every shard's causes and reasons (each reason once); a missing shard,
/// a shard whose driver host was CPU-bound, or a start skew over the bound
/// fails the merged run.
fn merged_verdict(results: &[&RunResult], shards: &MergedShards) -> Verdict {
    let mut causes: Vec<String> = Vec::new();
    let mut reasons: Vec<Reason> = Vec::new();
    for (result, summary) in results.iter().zip(&shards.merged) {
        match &result.figures.verdict {
            Verdict::Failed { causes: failed } => causes.extend(
                failed
                    .iter()
                    .map(|cause| format!("shard {}: {cause}", summary.shard.shard)),
            ),
            Verdict::NotAStorageResult { reasons: found } => {
                for reason in found {
                    if !reasons.iter().any(|known| known.code == reason.code) {
                        reasons.push(reason.clone());
                    }
                }
            }
            Verdict::Valid | Verdict::NotRecorded => {}
        }
    }
    if let Some(skew_ms) = shards
        .start_skew_ms
        .filter(|skew_ms| *skew_ms > START_SKEW_MS)
    {
        reasons.push(Reason::new(
            "shards_started_apart",
            format!(
                "the shards' windows began {skew_ms:.1} ms apart (over {START_SKEW_MS} ms): they \
                 did not measure one window"
            ),
        ));
    }
    for summary in shards.merged.iter().filter(|summary| summary.cpu_bound) {
        let shard = &summary.shard;
        let code = "shard_driver_cpu_bound";
        if !reasons
            .iter()
            .any(|known| known.code == code && known.text.contains(&shard.host))
        {
            reasons.push(Reason::new(
                code,
                format!(
                    "shard {}'s driver host {} was {:.1}% idle: that shard may have measured its \
                     own CPU",
                    shard.shard,
                    shard.host,
                    summary.host_idle_pct.unwrap_or_default()
                ),
            ));
        }
    }
    if !shards.missing.is_empty() {
        let missing: Vec<String> = shards.missing.iter().map(u32::to_string).collect();
        causes.push(format!(
            "shards {} of {} of run {} are missing: these totals are of {}' sessions only",
            missing.join(", "),
            shards.shards,
            shards.run_id,
            strata_core::units::counted(shards.merged.len() as u64, "shard", "shards")
        ));
    }
    Verdict::of(causes, reasons)
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_recording::layers::LayerSample;

    fn sample(unix_s: f64, layer: &str) -> Sample {
        Sample {
            t_s: 0.0,
            unix_s,
            interval_s: 1.0,
            layers: BTreeMap::from([(
                layer.to_string(),
                LayerSample::Absent {
                    reason: "test".into(),
                },
            )]),
        }
    }

    #[test]
    fn another_host_s_layers_sit_beside_the_nearest_sample_as_layer_at_host() {
        let mut records = vec![
            Record::Layers(sample(100.0, "device")),
            Record::Layers(sample(101.0, "device")),
        ];
        let other = [sample(100.3, "device"), sample(105.0, "device")];
        add_host_layers(&mut records, "db2", &other);
        let layers = |index: usize| match &records[index] {
            Record::Layers(sample) => sample.layers.keys().cloned().collect::<Vec<_>>(),
            _ => Vec::new(),
        };
        assert_eq!(layers(0), ["device", "device@db2"]);
        assert_eq!(layers(1), ["device"], "nothing within half a second of it");
    }
}
