//! The database-engine plug-in point: what `strata run` and `strata setup`
//! need from a database, and the run's skeleton every engine shares.
//!
//! A run, in order: `job` resolves the options against the engines'
//! `registry` (the engine, its capabilities and its own options checked,
//! the Recording opened); the engine's
//! [`DatabaseEngine::run`] provisions its database (starts a throwaway
//! server, makes a file) or takes the user's, runs [`Skeleton::run`] on it,
//! and removes what it made, also on an error or an interrupt; the binary
//! prints the [`SlobOutcome`]. The skeleton calls the engine's
//! [`EngineRun`] hooks in this order:
//!
//! 1. `reach`: connect, reach the server host's agents, refuse what cannot
//!    work — all before any load;
//! 2. `load`: what the plan needs and is missing;
//! 3. `environment`: the database and its host as the Recording's header
//!    holds them (`strata setup` ends here);
//! 4. `before_windows`: the page cache kept out of the data set;
//! 5. the Recording's environment and load written, `collectors` sampled
//!    each second beside the windows;
//! 6. `windows`: one measured window, or the sweep's, each between two
//!    edges, accounted and judged (`sweep::windows` runs them);
//! 7. `after_windows`, also when a window failed;
//! 8. the Recording's end written, and the engine's `outcome`.
//!
//! docs/engines.md ("Writing an engine") maps each hook to strata-sqlite's
//! files. Each engine lives in a crate of its own (strata-postgres,
//! strata-sqlite, strata-mariadb), which depends on this one, and is one
//! line of the binary's registry.
//!
//! Not for: the method's arithmetic (shared by every engine through
//! `accounting` and strata-slob's sessions), the registry (`registry`) or
//! printing (`output`).

pub use crate::outcome::{Capability, EngineFigures, EngineKind, EngineTraits};
pub use crate::sweep::windows::{EngineWindows, Measured, MeasuredWindow, WindowPurpose};

use crate::outcome::{RunObserver, SlobOutcome};
use crate::recorder::{RunEnd, RunRecorder};
use crate::sweep::SweepRequest;
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use strata_core::metrics::Collector;
use strata_observe::background::{BackgroundSampler, SampleClock};
use strata_slob::load::LoadReport;
use strata_slob::session::DriverOptions;

/// One database engine, configured for one `strata run` or `strata setup`.
pub trait DatabaseEngine {
    fn kind(&self) -> EngineKind;

    /// Provisions the database (or takes the user's), runs the
    /// [`Skeleton`] on it and, unless asked to keep them, removes the
    /// server or file it made. Stops early, with a partial result where
    /// there is one, when `interrupt` is set.
    fn run(
        self: Box<Self>,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<SlobOutcome>;
}

/// One engine's steps of a run on its provisioned database, each called
/// once by [`Skeleton::run`] in the order of this module's doc.
pub trait EngineRun {
    /// The database and its host as the Recording's header holds them.
    type Environment: Serialize;
    /// One measured window, accounted for and judged.
    type Window: MeasuredWindow;
    /// What the run gives the engine's `DatabaseEngine::run`.
    type Outcome;
    /// What every window of the run shares.
    type Windows<'a>: EngineWindows<Window = Self::Window>
    where
        Self: 'a;

    /// Connects, reaches the server host's agents and refuses what cannot
    /// work, before any load.
    fn reach(&mut self, observer: &mut dyn RunObserver) -> anyhow::Result<()>;

    /// Loads what the plan needs and is missing; `None`: the run checked
    /// that nothing is.
    fn load(
        &mut self,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<Option<LoadReport>>;

    /// The database and its host once loaded.
    fn environment(&mut self) -> anyhow::Result<Self::Environment>;

    /// Readies the database for the windows: the page cache kept out.
    fn before_windows(
        &mut self,
        environment: &mut Self::Environment,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<()>;

    /// The layers the Recording samples each second beside the windows.
    fn collectors(&mut self, environment: &Self::Environment) -> Vec<Box<dyn Collector>>;

    /// The windows, each edge on the sampler's `clock` when there is one.
    fn windows<'a>(
        &'a mut self,
        environment: &'a Self::Environment,
        clock: Option<SampleClock>,
    ) -> anyhow::Result<Self::Windows<'a>>;

    /// Stops what `before_windows` started, also when a window failed
    /// (`window`: `None`), and takes what the window of the run's result
    /// says of the environment.
    fn after_windows(
        &mut self,
        environment: &mut Self::Environment,
        window: Option<&mut Self::Window>,
    );

    /// The run's result: `measured` is `None` for `strata setup`.
    fn outcome(
        self,
        environment: Self::Environment,
        load: Option<LoadReport>,
        measured: Option<Measured<Self::Window>>,
    ) -> Self::Outcome;
}

/// What the run asks of every engine: its Recording, sessions, sweep, and
/// whether it loads alone (`strata setup`).
pub struct Skeleton<'a> {
    /// The run's Recording, open since before any work.
    pub record: Option<&'a RunRecorder>,
    pub driver: &'a DriverOptions,
    pub sweep: Option<&'a SweepRequest>,
    pub setup_only: bool,
}

/// How often the layers are sampled for the Recording.
pub const SAMPLE_EVERY: Duration = Duration::from_secs(1);

impl Skeleton<'_> {
    /// The run on `engine`'s provisioned database, hook by hook.
    pub fn run<E: EngineRun>(
        &self,
        mut engine: E,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<E::Outcome> {
        engine.reach(observer)?;
        let load = engine.load(interrupt, observer)?;
        let mut environment = engine.environment()?;
        if self.setup_only {
            return Ok(engine.outcome(environment, load, None));
        }
        engine.before_windows(&mut environment, observer)?;
        let measured = self.measure(
            &mut engine,
            (&environment, load.as_ref()),
            interrupt,
            observer,
        );
        let mut measured = match measured {
            Ok(measured) => measured,
            Err(error) => {
                engine.after_windows(&mut environment, None);
                return Err(error);
            }
        };
        engine.after_windows(&mut environment, Some(&mut measured.window));
        measured.record(self.record, &environment)?;
        Ok(engine.outcome(environment, load, Some(measured)))
    }

    /// The Recording's environment and load written, the layers sampled
    /// each second beside the engine's windows (on the sampler's clock) run
    /// as one window or the sweep, and the sampler stopped, also when a
    /// window failed.
    fn measure<E: EngineRun>(
        &self,
        engine: &mut E,
        (environment, load): (&E::Environment, Option<&LoadReport>),
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<Measured<E::Window>> {
        let sampler = match self.record {
            Some(recorder) => {
                recorder.begin(environment, load)?;
                let each = recorder.sample_writer();
                let collectors = engine.collectors(environment);
                Some(BackgroundSampler::start_writing(
                    collectors,
                    SAMPLE_EVERY,
                    each,
                ))
            }
            None => None,
        };
        let clock = sampler.as_ref().map(BackgroundSampler::clock);
        let measured = engine.windows(environment, clock).and_then(|mut windows| {
            crate::sweep::windows::measure(
                &mut windows,
                self.driver,
                self.sweep,
                interrupt,
                observer,
            )
        });
        sampler.map(BackgroundSampler::finish);
        measured
    }
}

impl<W: MeasuredWindow> Measured<W> {
    /// The end of the run's Recording, in the shape every engine writes:
    /// the environment as it stands at the end, the window of the run's
    /// result with the engine's own figures, and a sweep's points and curve.
    pub fn record(
        &self,
        recorder: Option<&RunRecorder>,
        environment: &impl Serialize,
    ) -> anyhow::Result<()> {
        let Some(recorder) = recorder else {
            return Ok(());
        };
        let window = &self.window;
        recorder.finish(
            environment,
            &RunEnd {
                database_counters: window.database_counters(),
                engine_figures: window.engine_figures(),
                figures: window.figures(),
                outcome: window.outcome(),
                sweep: self
                    .sweep
                    .as_ref()
                    .map(|(points, summary)| (points.as_slice(), summary)),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    //! The skeleton's order, on an engine that only notes which hook was
    //! called: no database is measured here (every engine's tests run the
    //! skeleton on its real database).

    use super::*;
    use crate::accounting::RunFigures;
    use crate::outcome::RunObserver;
    use crate::sweep::WindowBlocks;
    use std::cell::RefCell;
    use std::rc::Rc;
    use strata_slob::schema::SchemaPlan;
    use strata_slob::session::RunOutcome;

    /// The hooks called, in order; `window_fails`: its one window fails.
    #[derive(Default)]
    struct Noted {
        calls: Rc<RefCell<Vec<String>>>,
        window_fails: bool,
    }

    impl Noted {
        fn note(&self, call: String) {
            self.calls.borrow_mut().push(call);
        }
    }

    struct NotedWindow;

    impl MeasuredWindow for NotedWindow {
        fn figures(&self) -> &RunFigures {
            unreachable!("without a Recording the skeleton reads no figure")
        }
        fn blocks(&self) -> WindowBlocks {
            unreachable!("a sweep's, and there is none")
        }
        fn outcome(&self) -> &RunOutcome {
            unreachable!("without a Recording the skeleton reads no outcome")
        }
        fn start_unix_s(&self) -> f64 {
            unreachable!("a sweep's, and there is none")
        }
    }

    impl EngineWindows for &mut Noted {
        type Window = NotedWindow;

        fn window(
            &mut self,
            _: DriverOptions,
            purpose: WindowPurpose,
            _: &AtomicBool,
            _: &mut dyn RunObserver,
        ) -> anyhow::Result<NotedWindow> {
            self.note(format!("window {purpose:?}"));
            anyhow::ensure!(!self.window_fails, "the window failed");
            Ok(NotedWindow)
        }

        fn cache_and_block_bytes(&self) -> (u64, u64) {
            unreachable!("a sweep's, and there is none")
        }

        fn prefetches(&mut self) -> bool {
            unreachable!("a sweep's, and there is none")
        }
    }

    impl EngineRun for Noted {
        type Environment = ();
        type Window = NotedWindow;
        type Outcome = ();
        type Windows<'a> = &'a mut Noted;

        fn reach(&mut self, _: &mut dyn RunObserver) -> anyhow::Result<()> {
            self.note("reach".into());
            Ok(())
        }
        fn load(
            &mut self,
            _: &AtomicBool,
            _: &mut dyn RunObserver,
        ) -> anyhow::Result<Option<LoadReport>> {
            self.note("load".into());
            Ok(None)
        }
        fn environment(&mut self) -> anyhow::Result<()> {
            self.note("environment".into());
            Ok(())
        }
        fn before_windows(&mut self, _: &mut (), _: &mut dyn RunObserver) -> anyhow::Result<()> {
            self.note("before_windows".into());
            Ok(())
        }
        fn collectors(&mut self, _: &()) -> Vec<Box<dyn Collector>> {
            self.note("collectors".into());
            Vec::new()
        }
        fn windows<'a>(
            &'a mut self,
            _: &'a (),
            clock: Option<SampleClock>,
        ) -> anyhow::Result<&'a mut Noted> {
            self.note(format!("windows, clock {}", clock.is_some()));
            Ok(self)
        }
        fn after_windows(&mut self, _: &mut (), window: Option<&mut NotedWindow>) {
            self.note(format!("after_windows, window {}", window.is_some()));
        }
        fn outcome(self, _: (), _: Option<LoadReport>, measured: Option<Measured<NotedWindow>>) {
            let measured = measured.is_some_and(|measured| measured.sweep.is_none());
            self.note(format!("outcome, measured {measured}"));
        }
    }

    struct Silent;

    impl RunObserver for Silent {
        fn phase(&mut self, _: &str) {}
        fn loading(&mut self, _: &strata_slob::load::LoadProgress) {}
        fn running(
            &mut self,
            _: std::time::Duration,
            _: Option<std::time::Duration>,
            _: u64,
            _: u64,
        ) {
        }
    }

    /// The hooks `noted` heard, and whether the run failed.
    fn run(noted: Noted, setup_only: bool) -> (Vec<String>, anyhow::Result<()>) {
        let plan = SchemaPlan {
            schemas: 1,
            single_schema: true,
            blocks_per_schema: 64,
            scan_table_blocks: 0,
            random_data: false,
        };
        let driver = crate::request::setup_driver_options(plan);
        let skeleton = Skeleton {
            record: None,
            driver: &driver,
            sweep: None,
            setup_only,
        };
        let calls = Rc::clone(&noted.calls);
        let result = skeleton.run(noted, &AtomicBool::new(false), &mut Silent);
        let calls = calls.borrow().clone();
        (calls, result)
    }

    #[test]
    fn the_skeleton_calls_every_engine_s_hooks_in_the_run_s_order() {
        let (calls, result) = run(Noted::default(), false);
        result.unwrap();
        assert_eq!(
            calls,
            [
                "reach",
                "load",
                "environment",
                "before_windows",
                "windows, clock false",
                "window Measured",
                "after_windows, window true",
                "outcome, measured true",
            ]
        );
    }

    #[test]
    fn setup_alone_ends_with_the_environment() {
        let (calls, result) = run(Noted::default(), true);
        result.unwrap();
        assert_eq!(
            calls,
            ["reach", "load", "environment", "outcome, measured false"]
        );
    }

    #[test]
    fn a_failed_window_still_stops_what_before_windows_started() {
        let failing = Noted {
            window_fails: true,
            ..Noted::default()
        };
        let (calls, result) = run(failing, false);
        assert_eq!(format!("{:#}", result.unwrap_err()), "the window failed");
        assert_eq!(
            calls,
            [
                "reach",
                "load",
                "environment",
                "before_windows",
                "windows, clock false",
                "window Measured",
                "after_windows, window false",
            ]
        );
    }
}
