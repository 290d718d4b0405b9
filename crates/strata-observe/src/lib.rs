//! strata-observe: every layer of the I/O stack on one clock. The sampler
//! asks every collector once per interval, turns counters into rates in one
//! place, and hands the sample to the outputs: iostat-style text (live on a
//! terminal, timestamped lines when piped), JSON lines and CSV rows, the
//! Recording, and a Prometheus endpoint; `watch` is `strata observe`'s loop
//! and options; `top` and `top_view` are `--top N`, the busiest processes
//! by device bytes and CPU. `fleet` makes the same samples of other hosts from what a
//! Prometheus server scraped of their agents.
//!
//! Not for: reading /proc or databases (the collectors in `strata-probe`
//! and each engine's crate do that) or diagnosing anything (`strata report`).

pub mod background;
pub mod block_histograms;
pub mod exposition;
pub mod fleet;
pub mod fleet_report;
pub mod layer_table;
pub mod prometheus;
pub mod record;
pub mod sampler;
pub mod stream;
pub mod top;
pub mod top_view;
pub mod view;
pub mod watch;
