//! What the workspace's integration tests share, so that each crate's
//! `tests/common` keeps only what is specific to that crate.
//!
//! For tests only (`[dev-dependencies]`): everything here panics instead of
//! returning errors, and drives the real machine (processes, loop devices,
//! mounts) rather than mocking it. It knows no engine: nothing here depends
//! on strata-postgres, strata-mariadb, strata-sqlite or the binary, so a
//! helper that needs one of their types belongs in that crate's tests.

pub mod command;
pub mod files;
pub mod host;
pub mod http;
pub mod loopdev;
pub mod mariadb;
pub mod nfs;
pub mod observer;
pub mod postgres;
pub mod process;
pub mod slob;
pub mod slurm;
