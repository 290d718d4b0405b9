//! Database collectors for the sampler: `strata_core::metrics::Collector`
//! implementations that read a database server's raw monotonic counters.
//!
//! For: [`PostgresCollector`] (layer `postgres`: the statistics views plus
//! wait-event sampling of `pg_stat_activity` at 10 Hz) and
//! [`MariaDbCollector`] (layer `mariadb`: InnoDB status counters plus, when
//! `performance_schema` is on, per-file-kind I/O from
//! `file_summary_by_event_name`).
//!
//! Every counter is returned raw; the sampler turns two collections into
//! rates. Metric names carry their unit (`_bytes`, `_ms`, `_ps`, or a count).
//!
//! Not for: rates, findings, or load generation.

pub mod mariadb;
mod postgres;

pub use mariadb::MariaDbCollector;
pub use postgres::PostgresCollector;
