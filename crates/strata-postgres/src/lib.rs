//! strata-postgres: PostgreSQL as a database engine of strata, beside
//! strata-sqlite and strata-mariadb.
//!
//! For: a throwaway cluster made by `initdb` on the storage under test
//! (`cluster`), connecting to the user's server (`connect`), its raw
//! counters and collector for the sampler (`counters`, `collector`), its
//! read path (`read_path`), the SLOB schemas and their loader (`schema`,
//! `load`), the sessions over tokio-postgres (`sessions`), the edges of the
//! measured window and PostgreSQL's own figures (`edge`, `figures`), its
//! own options (`options`), and the engine that runs it all (`engine`,
//! `run`).
//!
//! Not for: what every engine shares — the method's rules and tally
//! (strata-slob), accounting, verdict and output (strata-run), page-cache
//! limits and work directories (strata-db).

pub mod cluster;
pub mod collector;
pub mod connect;
pub mod counters;
pub mod edge;
pub mod engine;
pub mod figures;
pub mod kind;
pub mod load;
pub mod locality;
pub mod options;
pub mod outlier_files;
pub mod outlier_queries;
pub mod read_path;
pub mod rendezvous;
pub mod run;
pub mod schema;
pub mod sessions;

pub use engine::ENGINE;
pub use kind::KIND;

mod pg;
