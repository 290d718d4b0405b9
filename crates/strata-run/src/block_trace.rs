//! The run's block tracer read at the window's edges: each run device's
//! requests traced one by one ([`strata_probe::blocktrace::shared`]).
//!
//! Not for: the tracing itself, or printing the figures (`output`).

use crate::edge::Edge;
use strata_recording::device::IostatFigures;
use strata_recording::run::BlockTraceFigures;

pub use strata_probe::blocktrace::shared::{
    decline, forget_roles, name_roles, set_outlier_threshold_ms, snapshot, start, with_diskstats,
};

/// The run's devices' traced requests between the two edges.
pub fn figures(start: &Edge, end: &Edge, devices: &[IostatFigures]) -> BlockTraceFigures {
    strata_probe::blocktrace::shared::figures(
        (start.block_trace.as_ref(), end.block_trace.as_ref()),
        &end.disks,
        devices,
    )
}
