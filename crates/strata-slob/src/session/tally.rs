//! Counting what sessions completed inside the measurement window: latency
//! histograms, statement and row counts, and per-second counts, in a few
//! locked shards so a thousand sessions neither contend nor each carry their
//! own histograms.
//!
//! Not for: deciding what a session does, or anything outside the window
//! (warm-up work is dropped here).

use std::sync::Mutex;
use std::time::Duration;

use strata_core::histogram::LatencyHistogram;
use tokio::time::Instant;

use super::SecondCounts;

const SHARDS: usize = 32;

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
}

impl Tally {
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
    shards: Vec<Mutex<Tally>>,
}

impl SharedTally {
    pub fn new(window: Window) -> Self {
        SharedTally {
            window,
            shards: (0..SHARDS).map(|_| Mutex::new(Tally::default())).collect(),
        }
    }

    /// Counts `event`, completed at `finished_at` by session `session`, if
    /// it completed inside the window.
    pub fn record(&self, session: usize, finished_at: Instant, event: Event) {
        if !self.window.contains(finished_at) {
            return;
        }
        let second = finished_at.duration_since(self.window.start).as_secs() as usize;
        self.shards[session % SHARDS]
            .lock()
            .expect("tally shard lock")
            .record(second, event);
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
        let tally = SharedTally::new(window);
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
    }
}
