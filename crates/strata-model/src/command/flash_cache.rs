//! `strata model flash-cache`: for each flash cache size, the RAM its
//! metadata costs, the share of reads each tier serves, and the average
//! read latency; with the recommended size range first.
//!
//! Not for: the cache arithmetic itself ([`crate::flash_cache`]).

use super::{ms, number, Page};
use crate::flash_cache::{self, CacheResult, Latencies, Skew};
use std::time::Duration;
use strata_core::units::format_size;
use strata_output::document::{Cell, Column};
use strata_output::Output;

/// What `strata model flash-cache` was asked.
#[derive(Debug, Clone)]
pub struct FlashCacheRequest {
    /// Database buffer cache, bytes.
    pub buffer_cache: u64,
    /// Data set read, bytes.
    pub data: u64,
    /// Flash cache sizes; `None`: 2×, 5× and 10× the buffer cache.
    pub flash: Option<Vec<u64>>,
    pub block_size: u64,
    /// A cluster: ~200 bytes of RAM per cached block instead of ~100.
    pub cluster: bool,
    pub skew: Skew,
    pub ram_latency: Duration,
    pub flash_latency: Duration,
    pub disk_latency: Duration,
    pub explain: bool,
}

/// Runs `strata model flash-cache`.
pub fn run(request: &FlashCacheRequest) -> anyhow::Result<Output> {
    let (low, high) = flash_cache::recommended_range(request.buffer_cache);
    let sizes = request
        .flash
        .clone()
        .unwrap_or_else(|| vec![low, request.buffer_cache * 5, high]);
    let latencies = Latencies {
        ram_s: request.ram_latency.as_secs_f64(),
        flash_s: request.flash_latency.as_secs_f64(),
        disk_s: request.disk_latency.as_secs_f64(),
    };
    let rows = sizes
        .iter()
        .map(|&flash_bytes| {
            flash_cache::evaluate(flash_cache::CacheInput {
                buffer_cache_bytes: request.buffer_cache,
                flash_bytes,
                data_bytes: request.data,
                block_bytes: request.block_size,
                cluster: request.cluster,
                skew: request.skew,
                latencies,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut page = Page::new("Flash cache sizing", columns());
    page.note(format!(
        "recommended flash cache: {} to {} (2× to 10× the {} buffer cache)",
        format_size(low),
        format_size(high),
        format_size(request.buffer_cache)
    ));
    page.line(format!(
        "{:>12} {:>7} {:>14} {:>11} {:>11} {:>11} {:>14}",
        "flash", "ratio", "RAM metadata", "buffer %", "flash %", "disk %", "avg read ms"
    ));
    for row in &rows {
        print_row(&mut page, row);
        if request.explain {
            explain(&mut page, row, request);
        }
    }
    page.finish(&serde_json::json!({ "recommended_min_bytes": low, "recommended_max_bytes": high, "rows": rows }))
}

fn columns() -> Vec<Column> {
    vec![
        number("flash", "bytes"),
        number("flash ÷ buffer cache", "×"),
        number("RAM metadata", "bytes"),
        number("buffer cache hits", "%"),
        number("flash hits", "%"),
        number("disk reads", "%"),
        number("average read", "ms"),
    ]
}

fn print_row(page: &mut Page, row: &CacheResult) {
    page.line(format!(
        "{:>12} {:>6.1}× {:>14} {:>10.2}% {:>10.2}% {:>10.2}% {:>14.3}",
        format_size(row.flash_bytes),
        row.flash_to_buffer_ratio,
        format_size(row.metadata_bytes),
        row.buffer_hit * 100.0,
        row.flash_hit * 100.0,
        row.disk_read * 100.0,
        ms(row.average_read_s)
    ));
    let bytes = |value: u64| Cell::number_as(value as f64, "bytes", format_size(value));
    page.row(vec![
        bytes(row.flash_bytes),
        Cell::number(row.flash_to_buffer_ratio, 1, "×"),
        bytes(row.metadata_bytes),
        Cell::number(row.buffer_hit * 100.0, 2, "%"),
        Cell::number(row.flash_hit * 100.0, 2, "%"),
        Cell::number(row.disk_read * 100.0, 2, "%"),
        Cell::number(ms(row.average_read_s), 3, "ms"),
    ]);
}

fn explain(page: &mut Page, row: &CacheResult, request: &FlashCacheRequest) {
    let per_block = flash_cache::metadata_bytes_per_block(request.cluster);
    page.note(format!(
        "  metadata = flash ÷ block × {} B = {} ÷ {} × {} B = {} B",
        per_block, row.flash_bytes, request.block_size, per_block, row.metadata_bytes
    ));
    let latency = |time: Duration| ms(time.as_secs_f64());
    page.note(format!("  read = buffer × RAM + flash × flash + disk × disk = {:.4} × {:.3} + {:.4} × {:.3} + {:.4} × {:.3} ms = {:.3} ms",
        row.buffer_hit, latency(request.ram_latency), row.flash_hit, latency(request.flash_latency),
        row.disk_read, latency(request.disk_latency), ms(row.average_read_s)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenth_of_the_data_in_flash_serves_a_tenth_of_the_reads() {
        const GIB: u64 = 1 << 30;
        let request = FlashCacheRequest {
            buffer_cache: GIB,
            data: 100 * GIB,
            flash: Some(vec![10 * GIB]),
            block_size: 8192,
            cluster: false,
            skew: Skew::Uniform,
            ram_latency: Duration::from_micros(10),
            flash_latency: Duration::from_micros(500),
            disk_latency: Duration::from_millis(6),
            explain: true,
        };
        let output = run(&request).unwrap();
        let text = output.text.unwrap();
        assert!(
            text.starts_with(
                "recommended flash cache: 2 GiB to 10 GiB (2× to 10× the 1 GiB buffer cache)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("  metadata = flash ÷ block × 100 B"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&output.json.unwrap()).unwrap();
        assert!((json["rows"][0]["flash_hit"].as_f64().unwrap() - 0.10).abs() < 1e-9);
    }
}
