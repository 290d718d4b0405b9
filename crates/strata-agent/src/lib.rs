//! The hosts strata does not run on, seen through the agents already there:
//! a strata agent (`strata observe --prometheus ADDR` on that host) or
//! node_exporter. An agent is reached at its `endpoint` (HTTP or HTTPS,
//! Basic auth); one scrape is a GET of its `/metrics` timed on this
//! machine's clock (`scrape`), its text read into series (`text`), and its
//! devices, CPU and memory as the counters strata keeps for its own host
//! (`host`), so a window on another host is accounted by the same code;
//! the requests a strata agent traced there, as it serves them at
//! `/blocktrace` (`traced`); an NFS server's own counters it serves
//! (`nfs_server`);
//! an agent's layers as collectors of this machine's sampler
//! (`collector`); and what a Prometheus server scraped of the agents over a
//! past window (`query`).
//!
//! Not for: serving metrics (strata-observe's endpoint) or accounting.

pub mod collector;
pub mod endpoint;
pub mod host;
pub mod nfs_server;
pub mod query;
pub mod scrape;
pub mod text;
pub mod traced;
