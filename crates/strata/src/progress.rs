//! Progress on a terminal: one bar per point with the current IOPS and the
//! time left, a bar of rows for a load; phases of a run as plain lines on
//! stderr. No bar when stderr is not a terminal, so piped output stays
//! parseable, and no bar for work that does not happen.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};
use strata_calibrate::calibration::CalibrationObserver;
use strata_calibrate::point::PointProgress;
use strata_calibrate::result::PointResult;
use strata_calibrate::spec::{PointSpec, StopRule};

/// A progress bar that exists only on a terminal (stderr).
struct TerminalBar {
    bar: Option<ProgressBar>,
    terminal: bool,
}

impl TerminalBar {
    fn new() -> Self {
        TerminalBar {
            bar: None,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    /// The bar with this length and template, or None when not on a terminal.
    fn show(&mut self, length: u64, template: &str) -> Option<&ProgressBar> {
        if !self.terminal {
            return None;
        }
        let style = ProgressStyle::with_template(template)
            .expect("valid template")
            .progress_chars("=> ");
        match &self.bar {
            Some(bar) => {
                bar.set_style(style);
                bar.set_length(length);
            }
            None => self.bar = Some(ProgressBar::new(length).with_style(style)),
        }
        self.bar.as_ref()
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

pub struct CalibrateProgress {
    bar: TerminalBar,
    stop_rule: StopRule,
    last: (Instant, u64),
    points_left: usize,
}

impl CalibrateProgress {
    pub fn new(stop_rule: StopRule) -> Self {
        CalibrateProgress {
            bar: TerminalBar::new(),
            stop_rule,
            last: (Instant::now(), 0),
            points_left: 0,
        }
    }

    pub fn finish(&mut self) {
        self.bar.finish();
    }

    fn point_length(&self) -> Duration {
        match self.stop_rule {
            StopRule::Timed { ramp, duration } => ramp + duration,
            StopRule::Count { .. } => Duration::ZERO,
        }
    }
}

impl CalibrationObserver for CalibrateProgress {
    fn filling(&mut self, done_bytes: u64, total_bytes: u64) {
        if self.bar.bar.is_none() && done_bytes >= total_bytes {
            return;
        }
        let template =
            "filling test file {bar:30} {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta}";
        if let Some(bar) = self.bar.show(total_bytes, template) {
            bar.set_position(done_bytes);
        }
    }

    fn point_started(&mut self, index: usize, count: usize, spec: &PointSpec) {
        self.points_left = count - index - 1;
        let length = match self.stop_rule {
            StopRule::Timed { .. } => self.point_length().as_millis() as u64,
            StopRule::Count { ios } => ios,
        };
        let template = "{prefix} {bar:30} {msg}";
        if let Some(bar) = self.bar.show(length, template) {
            bar.set_position(0);
            bar.set_prefix(format!("[{}/{count}] {}", index + 1, spec.name));
            bar.reset_eta();
        }
        self.last = (Instant::now(), 0);
    }

    fn point_progress(&mut self, progress: &PointProgress) {
        let now = Instant::now();
        let (then, requests_then) = self.last;
        let interval = (now - then).as_secs_f64();
        if interval < 0.5 {
            return;
        }
        let iops = progress.measured_requests.saturating_sub(requests_then) as f64 / interval;
        self.last = (now, progress.measured_requests);
        let remaining = self.point_length() * self.points_left as u32
            + progress.expected.map_or(Duration::ZERO, |expected| {
                expected.saturating_sub(progress.elapsed)
            });
        let position = match progress.ios_target {
            Some(_) => progress.measured_requests,
            None => progress.elapsed.as_millis() as u64,
        };
        let message = match self.stop_rule {
            StopRule::Timed { .. } => format!("{iops:>9.0} IOPS · {}s left", remaining.as_secs()),
            StopRule::Count { .. } => format!("{iops:>9.0} IOPS"),
        };
        if let Some(bar) = &self.bar.bar {
            bar.set_position(position);
            bar.set_message(message);
        }
    }

    fn point_finished(&mut self, result: &PointResult) {
        if let Some(bar) = &self.bar.bar {
            bar.println(format!(
                "{:<34} {:>10.0} IOPS {:>9.1} MB/s{}",
                result.name,
                result.groups.iter().map(|g| g.all.iops).sum::<f64>(),
                result.mb_per_s(),
                if result.interrupted {
                    " (interrupted)"
                } else {
                    ""
                }
            ));
        }
    }
}

/// Progress of `strata run` and `strata setup`: phases as lines, the load as
/// a bar of rows, the run as a bar of time with loops/s and live sessions.
pub struct RunProgress {
    bar: TerminalBar,
    last: (Instant, u64),
    phase: String,
    /// When the load was first seen, and its rows done then: the rate
    /// counts from there, not from rows loaded before the bar appeared.
    load_seen: Option<(Instant, u64)>,
    /// The warm-up before the measured window: the bar says which it is in.
    warmup: Duration,
}

/// Whole rows per second over `elapsed`; `None` under half a second, when a
/// rate would mean nothing.
fn rows_per_second(rows: u64, elapsed: Duration) -> Option<u64> {
    let seconds = elapsed.as_secs_f64();
    (seconds >= 0.5).then(|| (rows as f64 / seconds).round() as u64)
}

impl RunProgress {
    /// `warmup`: the sessions' time before the measured window.
    pub fn new(warmup: Duration) -> Self {
        RunProgress {
            bar: TerminalBar::new(),
            last: (Instant::now(), 0),
            phase: "starting".into(),
            load_seen: None,
            warmup,
        }
    }

    /// The phase the run is in (its last phase line).
    pub fn phase(&self) -> &str {
        &self.phase
    }

    pub fn finish(&mut self) {
        self.bar.finish();
    }
}

impl strata_run::outcome::RunObserver for RunProgress {
    /// Phases are lines on stderr on a terminal and when piped alike: a
    /// few lines a run, so a log shows where a run stopped.
    fn phase(&mut self, message: &str) {
        self.finish();
        crate::note!("strata: {message}");
        self.phase = message.to_string();
    }

    fn said(&mut self, text: &str) {
        self.finish();
        for line in text.lines() {
            crate::note!("strata: {line}");
        }
    }

    fn loading(&mut self, progress: &strata_slob::load::LoadProgress) {
        if self.bar.bar.is_none() && progress.rows_done >= progress.rows_total {
            return;
        }
        let (since, rows_then) = *self
            .load_seen
            .get_or_insert((Instant::now(), progress.rows_done));
        let template = "loading {bar:30} {human_pos}/{human_len} rows {msg} ETA {eta}";
        if let Some(bar) = self.bar.show(progress.rows_total, template) {
            bar.set_position(progress.rows_done);
            if let Some(rate) = rows_per_second(
                progress.rows_done.saturating_sub(rows_then),
                since.elapsed(),
            ) {
                bar.set_message(format!("{} rows/s", indicatif::HumanCount(rate)));
            }
        }
    }

    fn running(
        &mut self,
        elapsed: Duration,
        expected: Option<Duration>,
        loops: u64,
        sessions_alive: u64,
    ) {
        let now = Instant::now();
        let (then, loops_then) = self.last;
        let interval = (now - then).as_secs_f64();
        if interval < 0.5 {
            return;
        }
        self.last = (now, loops);
        let rate = loops.saturating_sub(loops_then) as f64 / interval;
        let length = expected.map_or(0, |expected| expected.as_millis() as u64);
        let in_warmup = elapsed < self.warmup;
        let left = expected.map_or(String::new(), |expected| match in_warmup {
            true => format!(
                " · {}s of warm-up left, then a {}s window",
                (self.warmup - elapsed).as_secs(),
                expected.saturating_sub(self.warmup).as_secs()
            ),
            false => format!(
                " · {}s of the window left",
                expected.saturating_sub(elapsed).as_secs()
            ),
        });
        let template = match in_warmup {
            true => "warm-up {bar:30} {msg}",
            false => "window  {bar:30} {msg}",
        };
        if let Some(bar) = self.bar.show(length, template) {
            bar.set_position(elapsed.as_millis() as u64);
            bar.set_message(format!(
                "{rate:>8.1} loops/s · {sessions_alive} sessions{left}"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rows_per_second;
    use std::time::Duration;

    /// A bar that appeared with half the rows loaded once read 24,208,165
    /// rows/s: the rate counts only what it saw, in whole rows, and only
    /// after half a second.
    #[test]
    fn the_load_rate_is_whole_rows_over_what_was_seen() {
        assert_eq!(rows_per_second(4096, Duration::from_millis(10)), None);
        assert_eq!(rows_per_second(4096, Duration::from_secs(2)), Some(2048));
        assert_eq!(rows_per_second(1, Duration::from_secs(3)), Some(0));
    }
}
