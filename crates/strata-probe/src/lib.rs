//! Read-only probes of the Linux host for strata: its block layer, CPU and
//! processes, and the OS collectors `strata observe` samples.
//!
//! - [`diskstats`]: parse `/proc/diskstats` and turn two samples into
//!   `iostat -x` figures.
//! - [`blockdev`]: block device topology from `/sys` (partitions,
//!   device-mapper, md, loop; which disks actually do the work).
//! - [`safety`]: decide whether strata may write to a raw block device.
//! - [`cpu`]: host and process CPU time from `/proc`.
//! - [`top`]: every process's I/O and CPU counters in one pass over
//!   `/proc`, for `strata observe --top`.
//! - [`blocktrace`]: every block request's queue and device time, counted
//!   in the kernel by BPF programs on the block tracepoints.
//! - [`extents`]: which file a block request touched, from the files'
//!   extents on the disk.
//! - [`route`]: the interface this host reaches an address through, and
//!   its byte counters.
//! - [`titles`]: the roles of PostgreSQL's processes from their titles,
//!   for an agent with no connection to the database.
//! - [`collectors`]: the OS layers `strata observe` samples (devices,
//!   traced requests, NFS client, NICs, CPU and pressure, memory, processes).
//!
//! This crate never writes to a device and never issues I/O for measurement;
//! load generation lives elsewhere.

pub mod blockdev;
pub mod blocktrace;
pub mod collectors;
pub mod cpu;
pub mod diskstats;
pub mod extents;
pub mod route;
pub mod safety;
pub mod titles;
pub mod top;
