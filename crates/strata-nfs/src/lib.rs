//! strata-nfs: NFSv3 from user space, the way Oracle's Direct NFS reaches a
//! filer: strata's own ONC RPC connections over TCP, many calls in flight
//! on each (`rpc`), the portmapper and MOUNT calls that find and mount an
//! export (`mount`), and the file strata reads and writes there with NFS
//! READ, WRITE (stable or unstable) and COMMIT calls (`file`), named by an
//! `nfs://HOST/EXPORT/PATH` URL (`url`). The XDR encoding of every message
//! is nfs3_types' (docs/nfs.md says why).
//!
//! Not for: a workload (calibrate's), or the kernel's NFS client (its
//! per-mount figures are strata-probe's `mountstats`).

pub mod file;
pub mod mount;
pub mod rpc;
pub mod url;

pub use file::{DurableWrites, NfsFile, Transfer};
pub use rpc::{RpcConnection, RpcCounters};
pub use url::NfsUrl;
