//! Sampling in the background while another command works: `calibrate` and
//! `run` keep every layer's samples for their whole duration (a run writes
//! each to its Recording as it is taken; calibrate writes them at the end).
//!
//! Not for: live display (that is `strata observe`).

use crate::sampler::{Sample, Sampler};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use strata_core::metrics::Collector;

pub struct BackgroundSampler {
    stop: Arc<AtomicBool>,
    clock: SampleClock,
    handle: JoinHandle<Vec<Sample>>,
}

/// Moves a background sampler's seconds onto a window's: a sample is taken
/// at a moment asked for, and the next ones every interval from it, so that
/// samples end at the window's start, each of its seconds and its end
/// (charts of one window then end where the window does).
#[derive(Clone)]
pub struct SampleClock {
    moments: Arc<Mutex<Vec<Instant>>>,
    sampler: std::thread::Thread,
}

impl SampleClock {
    /// A sample now, and every interval from now on.
    pub fn sample_now(&self) {
        self.sample_at(Instant::now());
    }

    /// A sample at `moment`, and every interval from it on.
    pub fn sample_at(&self, moment: Instant) {
        self.moments
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(moment);
        self.sampler.unpark();
    }

    /// Waits until `next` or the earliest moment asked for before it,
    /// whichever comes first, or until `stopping`; returns the moment asked
    /// for that ended the wait (taken off the list).
    fn wait(&self, next: Instant, stopping: &AtomicBool) -> Option<Instant> {
        loop {
            let earliest = self.earliest().filter(|moment| *moment < next);
            let until = earliest.unwrap_or(next);
            let now = Instant::now();
            if stopping.load(Ordering::Relaxed) || now >= until {
                return earliest.inspect(|moment| self.remove(*moment));
            }
            std::thread::park_timeout(until - now);
        }
    }

    fn earliest(&self) -> Option<Instant> {
        let moments = self.moments.lock().unwrap_or_else(PoisonError::into_inner);
        moments.iter().min().copied()
    }

    fn remove(&self, moment: Instant) {
        let mut moments = self.moments.lock().unwrap_or_else(PoisonError::into_inner);
        moments.retain(|asked| *asked != moment);
    }
}

impl BackgroundSampler {
    /// Takes a first sample at once, then one every `interval`.
    pub fn start(collectors: Vec<Box<dyn Collector>>, interval: Duration) -> Self {
        Self::start_writing(collectors, interval, Box::new(|_| {}))
    }

    /// The same, handing each sample to `each` as it is taken (a Recording
    /// written as the run goes).
    pub fn start_writing(
        collectors: Vec<Box<dyn Collector>>,
        interval: Duration,
        mut each: Box<dyn FnMut(&Sample) + Send>,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let moments = Arc::new(Mutex::new(Vec::new()));
        let (stopping, asked) = (stop.clone(), moments.clone());
        let handle = std::thread::Builder::new()
            .name("strata-sampler".into())
            .spawn(move || {
                // Ahead of the load it measures: hundreds of sessions on
                // two CPUs would otherwise take its samples late. Only
                // root may; elsewhere it stays at its nice level.
                unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, -20) };
                let clock = SampleClock {
                    moments: asked,
                    sampler: std::thread::current(),
                };
                let mut sampler = Sampler::new(collectors);
                let mut samples = Vec::new();
                let mut next = Instant::now();
                loop {
                    let sample = sampler.sample();
                    each(&sample);
                    samples.push(sample);
                    if stopping.load(Ordering::Relaxed) {
                        break samples;
                    }
                    next += interval;
                    if let Some(moment) = clock.wait(next, &stopping) {
                        next = moment;
                    }
                }
            })
            .expect("spawning the sampler thread");
        let clock = SampleClock {
            moments,
            sampler: handle.thread().clone(),
        };
        BackgroundSampler {
            stop,
            clock,
            handle,
        }
    }

    /// The handle that moves this sampler's seconds onto a window's.
    pub fn clock(&self) -> SampleClock {
        self.clock.clone()
    }

    /// Takes a last sample and returns them all.
    pub fn finish(self) -> Vec<Sample> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.thread().unpark();
        self.handle.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_core::metrics::{Collected, Metric};

    struct Counting(f64);

    impl Collector for Counting {
        fn layer(&self) -> &str {
            "test"
        }
        fn collect(&mut self) -> anyhow::Result<Collected> {
            self.0 += 1.0;
            Ok(Collected::Metrics {
                metrics: vec![Metric::counter("ticks", self.0)],
            })
        }
    }

    #[test]
    fn the_clock_takes_a_sample_at_once_between_two_ticks() {
        let sampler =
            BackgroundSampler::start(vec![Box::new(Counting(0.0))], Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(200));
        sampler.clock().sample_now();
        std::thread::sleep(Duration::from_millis(200));
        let samples = sampler.finish();
        let moments: Vec<f64> = samples.iter().map(|sample| sample.t_s).collect();
        assert_eq!(
            moments.len(),
            3,
            "first, the clock's, the last: {moments:?}"
        );
        assert!(
            moments[1] >= 0.1 && moments[1] < 30.0,
            "the clock's sample came at {} s, not at the next tick (60 s)",
            moments[1]
        );
        assert!(moments[2] >= moments[1] + 0.1, "{moments:?}");
    }

    #[test]
    fn a_moment_asked_for_moves_the_seconds_after_it() {
        let t0 = Instant::now();
        let sampler =
            BackgroundSampler::start(vec![Box::new(Counting(0.0))], Duration::from_secs(1));
        sampler.clock().sample_at(t0 + Duration::from_millis(500));
        std::thread::sleep(Duration::from_millis(1800).saturating_sub(t0.elapsed()));
        let samples = sampler.finish();
        let moments: Vec<f64> = samples.iter().map(|sample| sample.t_s).collect();
        assert!(moments.len() >= 3, "{moments:?}");
        assert!(moments[1] >= 0.4 && moments[1] < 0.9, "{moments:?}");
        assert!(
            moments[2] >= 1.3,
            "the second after the moment asked for is at 1.5 s, not the old tick's 1.0 s: {moments:?}"
        );
    }
}
