//! Sampling in the background while another command works: `calibrate` and
//! `run` keep every layer's samples for their whole duration and write them
//! into their own Recording at the end.
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
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let handle = std::thread::Builder::new()
            .name("strata-sampler".into())
            .spawn(move || {
                let mut sampler = Sampler::new(collectors);
                let mut samples = Vec::new();
                let mut next = Instant::now();
                while !stopping.load(Ordering::Relaxed) {
                    samples.push(sampler.sample());
                    next += interval;
                    while Instant::now() < next && !stopping.load(Ordering::Relaxed) {
                        std::thread::sleep((next - Instant::now()).min(Duration::from_millis(50)));
                    }
                }
                samples.push(sampler.sample());
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
