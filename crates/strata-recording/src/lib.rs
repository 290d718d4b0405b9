//! The Recording: the one file format every strata command writes and
//! `strata report` reads, as Rust types. JSON lines: the first line is the
//! [`Header`], each later line one [`Record`] tagged by `"type"`.
//! `docs/recording.md` is the specification; version 1 files are read
//! through [`v1`]'s upgrade.
//!
//! Not for: computing figures or printing them; the types here only hold
//! what the commands measured.

pub mod calibrate;
pub mod device;
pub mod environment;
mod filesystem;
pub mod format;
pub mod layers;
pub mod names;
mod parse;
pub mod read;
pub mod record;
pub mod run;
pub mod sweep;
pub mod top;
mod v1;
pub mod written;

pub use environment::{Environment, Options};
pub use format::{Existing, Header, HostInfo, Kind, RecordingWriter, FORMAT_NAME, FORMAT_VERSION};
pub use parse::Line;
pub use read::Recording;
pub use record::Record;
pub use written::{SortedKeys, Written};
