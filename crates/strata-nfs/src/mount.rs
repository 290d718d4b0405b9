//! Finding and mounting an export: the TCP port of a program from the
//! server's portmapper (PMAPPROC_GETPORT, a short connection each), and on
//! one connection to the MOUNT service the server's exports
//! (MOUNTPROC3_EXPORT) and the root file handle of one (MOUNTPROC3_MNT).
//!
//! Not for: the files under the export (`file`).

use crate::rpc::RpcConnection;
use anyhow::{bail, Context};
use nfs3_types::mount::{self, dirpath, mountres3, MOUNT_PROGRAM};
use nfs3_types::nfs3::nfs_fh3;
use nfs3_types::portmap::{self, mapping, PMAP_PROG};
use nfs3_types::xdr_codec::{Opaque, Void};

/// The TCP port of `program` version `version` at `host`, from its
/// portmapper.
pub fn port_of(host: &str, program: u32, version: u32) -> anyhow::Result<u16> {
    let mut portmapper = RpcConnection::connect(host, portmap::PMAP_PORT)
        .with_context(|| format!("{host}: its portmapper (rpcbind, port 111)"))?;
    let wanted = mapping {
        prog: program,
        vers: version,
        prot: portmap::IPPROTO_TCP,
        port: 0,
    };
    let getport = (
        portmap::PROGRAM,
        portmap::VERSION,
        PMAP_PROG::PMAPPROC_GETPORT as u32,
    );
    let port: u32 = portmapper.call(getport, &wanted)?;
    match u16::try_from(port) {
        Ok(port) if port > 0 => Ok(port),
        _ => {
            bail!("{host}: its portmapper knows no TCP port of program {program} version {version}")
        }
    }
}

/// A server's MOUNT service (version 3), on one connection.
pub struct Mountd {
    host: String,
    connection: RpcConnection,
}

impl Mountd {
    /// Connects to `host`'s MOUNT service, found by its portmapper.
    pub fn connect(host: &str) -> anyhow::Result<Mountd> {
        let port = port_of(host, mount::PROGRAM, mount::VERSION)?;
        let connection = RpcConnection::connect(host, port)
            .with_context(|| format!("{host}: its MOUNT service"))?;
        Ok(Mountd {
            host: host.to_string(),
            connection,
        })
    }

    /// The directories the server exports.
    pub fn exports(&mut self) -> anyhow::Result<Vec<String>> {
        let export = (
            mount::PROGRAM,
            mount::VERSION,
            MOUNT_PROGRAM::MOUNTPROC3_EXPORT as u32,
        );
        let listed: mount::exports = self.connection.call(export, &Void)?;
        let directories = listed.into_inner().into_iter();
        Ok(directories
            .map(|node| String::from_utf8_lossy(node.ex_dir.0.as_ref()).into_owned())
            .collect())
    }

    /// The root file handle of `export`.
    pub fn mount(&mut self, export: &str) -> anyhow::Result<nfs_fh3> {
        let mnt = (
            mount::PROGRAM,
            mount::VERSION,
            MOUNT_PROGRAM::MOUNTPROC3_MNT as u32,
        );
        let path = dirpath(Opaque::borrowed(export.as_bytes()));
        match self.connection.call(mnt, &path)? {
            mountres3::Ok(mounted) => Ok(nfs_fh3 {
                data: Opaque::owned(mounted.fhandle.0.as_ref().to_vec()),
            }),
            mountres3::Err(status) => {
                bail!(
                    "{}:{export}: the server refused the mount ({status:?})",
                    self.host
                )
            }
        }
    }
}
