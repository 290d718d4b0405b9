//! Sampling in the background while another command works: `calibrate` and
//! `run` keep every layer's samples for their whole duration (a run writes
//! each to its Recording as it is taken; calibrate writes them at the end).
//!
//! Not for: live display (that is `strata observe`).

use crate::sampler::{Sample, Sampler};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use strata_core::metrics::Collector;

pub struct BackgroundSampler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Vec<Sample>>,
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
        let stopping = stop.clone();
        let handle = std::thread::Builder::new()
            .name("strata-sampler".into())
            .spawn(move || {
                let mut sampler = Sampler::new(collectors);
                let mut samples = Vec::new();
                let mut next = Instant::now();
                let mut take = |samples: &mut Vec<Sample>| {
                    let sample = sampler.sample();
                    each(&sample);
                    samples.push(sample);
                };
                while !stopping.load(Ordering::Relaxed) {
                    take(&mut samples);
                    next += interval;
                    while Instant::now() < next && !stopping.load(Ordering::Relaxed) {
                        std::thread::sleep((next - Instant::now()).min(Duration::from_millis(50)));
                    }
                }
                take(&mut samples);
                samples
            })
            .expect("spawning the sampler thread");
        BackgroundSampler { stop, handle }
    }

    /// Takes a last sample and returns them all.
    pub fn finish(self) -> Vec<Sample> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}
