//! Counting what sessions completed inside the measurement window: latency
//! histograms, statement and row counts, per-second counts and every
//! statement slower than the outlier floor, in a few locked shards so a
//! thousand sessions neither contend nor each carry their own histograms.
//!
//! Not for: deciding what a session does, or anything outside the window
//! (warm-up work is dropped here).

use std::sync::Mutex;
use std::time::Duration;

use strata_core::histogram::LatencyHistogram;
use tokio::time::Instant;

use super::SecondCounts;
pub use strata_recording::run::StatementOutlier;

const SHARDS: usize = 32;
/// Outliers kept per shard; past it they are counted, not kept.
const OUTLIERS_PER_SHARD: usize = 2_000;

/// The measurement window; `end` is unknown (None) in batch mode, where
/// everything after `start` counts.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub start: Instant,
    pub end: Option<Instant>,
}

impl Window {
    fn contains(&self, moment: Instant) -> bool {
        moment >= self.start && self.end.is_none_or(|end| moment < end)
    }
}

/// Something a session completed at some moment.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    Select { latency: Duration, rows: u64 },
    Update { latency: Duration, rows: u64 },
    Commit { latency: Duration },
    Scan { latency: Duration },
    Begin,
    LoopDone,
}

impl Event {
    /// The statement's name and latency, for the events that time one.
    fn timed(&self) -> Option<(&'static str, Duration)> {
        match *self {
            Event::Select { latency, .. } => Some(("select", latency)),
            Event::Update { latency, .. } => Some(("update", latency)),
            Event::Commit { latency } => Some(("commit", latency)),
            Event::Scan { latency } => Some(("scan", latency)),
            Event::Begin | Event::LoopDone => None,
        }
    }
}

#[derive(Default)]
pub struct Tally {
    pub select: LatencyHistogram,
    pub update: LatencyHistogram,
    pub commit: LatencyHistogram,
    pub scan: LatencyHistogram,
    pub loops: u64,
    pub sql_statements: u64,
    pub rows_selected: u64,
    pub rows_updated: u64,
    pub per_second: Vec<SecondCounts>,
    /// Statements at or over the floor (schema not yet filled in), in the
    /// order they finished per shard.
    pub outliers: Vec<StatementOutlier>,
    /// Outliers past what a shard keeps.
    pub outliers_dropped: u64,
}

impl Tally {
    fn keep_outlier(&mut self, outlier: StatementOutlier) {
        if self.outliers.len() < OUTLIERS_PER_SHARD {
            self.outliers.push(outlier);
        } else {
            self.outliers_dropped += 1;
        }
    }

    fn record(&mut self, second: usize, event: Event) {
        if self.per_second.len() <= second {
            self.per_second
                .resize_with(second + 1, SecondCounts::default);
        }
        let counts = &mut self.per_second[second];
        let nanos = |latency: Duration| latency.as_nanos().min(u128::from(u64::MAX)) as u64;
        match event {
            Event::Select { latency, rows } => {
                self.select.record_ns(nanos(latency));
                self.rows_selected += rows;
                self.sql_statements += 1;
                counts.selects += 1;
            }
            Event::Update { latency, rows } => {
                self.update.record_ns(nanos(latency));
                self.rows_updated += rows;
                self.sql_statements += 1;
                counts.updates += 1;
            }
            Event::Commit { latency } => {
                self.commit.record_ns(nanos(latency));
                self.sql_statements += 1;
            }
            Event::Scan { latency } => {
                self.scan.record_ns(nanos(latency));
                self.sql_statements += 1;
                counts.scans += 1;
            }
            Event::Begin => self.sql_statements += 1,
            Event::LoopDone => {
                self.loops += 1;
                counts.loops += 1;
            }
        }
    }

    fn merge(&mut self, other: &Tally) {
        self.select.merge(&other.select);
        self.update.merge(&other.update);
        self.commit.merge(&other.commit);
        self.scan.merge(&other.scan);
        self.loops += other.loops;
        self.sql_statements += other.sql_statements;
        self.rows_selected += other.rows_selected;
        self.rows_updated += other.rows_updated;
        self.outliers.extend(other.outliers.iter().cloned());
        self.outliers_dropped += other.outliers_dropped;
        if self.per_second.len() < other.per_second.len() {
            self.per_second
                .resize_with(other.per_second.len(), SecondCounts::default);
        }
        for (mine, theirs) in self.per_second.iter_mut().zip(&other.per_second) {
            mine.loops += theirs.loops;
            mine.selects += theirs.selects;
            mine.updates += theirs.updates;
            mine.scans += theirs.scans;
        }
    }
}

/// The run's tally, shared by its sessions.
pub struct SharedTally {
    window: Window,
    /// `--outlier-threshold`, when given.
    pub outlier_threshold: Option<Duration>,
    /// Statements this slow or slower are kept one by one: the threshold
    /// given, else [`DEFAULT_OUTLIER_FLOOR`].
    pub outlier_floor: Duration,
    shards: Vec<Mutex<Tally>>,
}

/// The floor of the default outlier threshold (ten times the window's p99,
/// or this, whichever is larger): without `--outlier-threshold`, statements
/// this slow or slower are kept.
pub const DEFAULT_OUTLIER_FLOOR: Duration = Duration::from_millis(100);

impl SharedTally {
    pub fn new(window: Window, outlier_threshold: Option<Duration>) -> Self {
        SharedTally {
            window,
            outlier_threshold,
            outlier_floor: outlier_threshold.unwrap_or(DEFAULT_OUTLIER_FLOOR),
            shards: (0..SHARDS).map(|_| Mutex::new(Tally::default())).collect(),
        }
    }

    /// Counts `event`, completed at `finished_at` by session `session`, if
    /// it completed inside the window.
    pub fn record(&self, session: usize, finished_at: Instant, event: Event) {
        if !self.window.contains(finished_at) {
            return;
        }
        let since_start = finished_at.duration_since(self.window.start);
        let mut shard = self.shards[session % SHARDS]
            .lock()
            .expect("tally shard lock");
        shard.record(since_start.as_secs() as usize, event);
        if let Some((operation, latency)) = event.timed() {
            if latency >= self.outlier_floor {
                shard.keep_outlier(StatementOutlier {
                    at_s: since_start.as_secs_f64(),
                    session: session as u32,
                    schema: String::new(),
                    operation: operation.to_string(),
                    latency_ms: latency.as_secs_f64() * 1e3,
                });
            }
        }
    }

    /// The sum of all shards, with `per_second` numbered and padded to
    /// `window_seconds` entries.
    pub fn total(&self, window_seconds: usize) -> Tally {
        let mut total = Tally::default();
        for shard in &self.shards {
            total.merge(&shard.lock().expect("tally shard lock"));
        }
        if total.per_second.len() < window_seconds {
            total
                .per_second
                .resize_with(window_seconds, SecondCounts::default);
        }
        for (second, counts) in total.per_second.iter_mut().enumerate() {
            counts.second = second as u64;
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_events_inside_the_window_count() {
        let start = Instant::now();
        let window = Window {
            start: start + Duration::from_secs(1),
            end: Some(start + Duration::from_secs(3)),
        };
        let tally = SharedTally::new(window, Some(Duration::from_millis(1)));
        let select = Event::Select {
            latency: Duration::from_micros(100),
            rows: 256,
        };
        tally.record(0, start, select);
        tally.record(1, start + Duration::from_millis(1500), select);
        tally.record(2, start + Duration::from_millis(2500), Event::LoopDone);
        tally.record(3, start + Duration::from_secs(3), Event::LoopDone);
        let total = tally.total(2);
        assert_eq!(total.select.count(), 1);
        assert_eq!(total.rows_selected, 256);
        assert_eq!(total.loops, 1);
        assert_eq!(total.per_second.len(), 2);
        assert_eq!(
            (total.per_second[0].selects, total.per_second[1].loops),
            (1, 1)
        );
        assert!(total.outliers.is_empty());
    }

    #[test]
    fn statements_at_or_over_the_floor_are_kept_with_their_moment() {
        let start = Instant::now();
        let window = Window {
            start,
            end: Some(start + Duration::from_secs(10)),
        };
        let tally = SharedTally::new(window, None);
        let slow = Event::Commit {
            latency: Duration::from_millis(250),
        };
        tally.record(7, start + Duration::from_millis(2500), slow);
        tally.record(
            8,
            start + Duration::from_secs(3),
            Event::Commit {
                latency: Duration::from_millis(99),
            },
        );
        let total = tally.total(10);
        assert_eq!(total.outliers.len(), 1);
        let outlier = &total.outliers[0];
        assert_eq!((outlier.session, outlier.operation.as_str()), (7, "commit"));
        assert!((outlier.at_s - 2.5).abs() < 1e-9 && (outlier.latency_ms - 250.0).abs() < 1e-9);
    }
}
