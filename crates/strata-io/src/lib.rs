//! strata-io: the machinery that issues I/O — engines behind one trait
//! (io_uring, psync, and NFS from user space), aligned buffers, and targets (test files strata
//! creates and fills, block devices the user names).
//!
//! Not for: deciding what I/O to issue or measuring it; that is the workload
//! driver's job (`strata-calibrate`). Not for: the safety check on block
//! devices, which is `strata_probe::safety`.

pub mod buffer;
pub mod engine;
pub mod kind;
pub mod nfs;
pub mod psync;
pub mod target;
pub mod uring;

pub use engine::{IoCompletion, IoEngine, IoRequest, Operation, WireCounters};
pub use kind::{EngineTarget, IoEngineKind};
pub use nfs::{NfsChannel, NfsClientCounters};
