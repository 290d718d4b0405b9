//! strata-run: the SLOB method end to end for every database engine, behind
//! the database-engine plug-in point (`engine`): the run's options resolved
//! in one step against the engines' registry (`registry`, `job`), the
//! run's skeleton every engine's run follows (`engine::Skeleton`, its steps
//! the engine's `engine::EngineRun` hooks), the two edges of the measured
//! window, accounting for every I/O across the layers (database, block
//! devices and each of their requests traced, page cache, CPU of the host,
//! the server and strata), the
//! run's verdict, and its JSON document, text and Recording; the
//! shards of one run merged into its one Recording (`merge`); and what was
//! measured read for the models (`measured`: calibrate curves, runs, AWR
//! and STATSPACK reports).
//!
//! Not for: any one engine (strata-postgres, strata-sqlite, strata-mariadb
//! each implement `engine::DatabaseEngine`), the SQL of the method, or
//! printing to a terminal (the binary).

pub mod accounting;
pub mod block_trace;
pub mod block_trace_text;
pub mod edge;
pub mod engine;
pub mod engine_options;
pub mod formats;
pub mod job;
pub mod measured;
pub mod merge;
pub mod options;
pub mod outcome;
pub mod outlier_queries;
pub mod outliers;
pub mod output;
pub mod predict_inputs;
pub mod processes;
pub mod read_path;
pub mod recorder;
pub mod registry;
pub mod request;
pub mod server_host;
pub mod sweep;
pub mod tenants;
pub mod verdict;
