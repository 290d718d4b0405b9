//! The file strata reads and writes on an export: found or made under the
//! export's root (LOOKUP, CREATE), its size and the server's transfer sizes
//! (GETATTR, FSINFO), its reads and writes (READ; WRITE as FILE_SYNC or
//! UNSTABLE, then COMMIT), and its removal. As on a local filesystem,
//! strata writes only a file it made. NFSv3 has no extended attributes, so
//! strata marks a file it makes with an empty file beside it,
//! `.NAME.strata`; a file without the mark is opened read-only, and only
//! a marked file (with its mark) is ever removed.
//!
//! Not for: pipelining (the caller sends [`NfsFile::read_args`] and
//! [`NfsFile::write_args`] on its own connections), or finding the export
//! (`mount`).

use crate::mount;
use crate::rpc::{Reply, RpcConnection};
use crate::url::NfsUrl;
use anyhow::{bail, Context};
use nfs3_types::nfs3::post_op_attr;
use nfs3_types::nfs3::{
    self, createhow3, diropargs3, filename3, nfs_fh3, sattr3, stable_how, writeverf3, COMMIT3args,
    COMMIT3res, CREATE3args, CREATE3res, FSINFO3args, FSINFO3res, GETATTR3args, GETATTR3res,
    LOOKUP3args, LOOKUP3res, Nfs3Option, Nfs3Result, READ3args, READ3res, REMOVE3args, REMOVE3res,
    WRITE3args, WRITE3res, NFS_PROGRAM,
};
use nfs3_types::xdr_codec::{Opaque, Unpack};

/// The sizes of one READ or WRITE the server takes (FSINFO): the most, and
/// the one it prefers (a mount's default rsize and wsize).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub read_max_bytes: u32,
    pub read_preferred_bytes: u32,
    pub write_max_bytes: u32,
    pub write_preferred_bytes: u32,
}

/// A file on an export, and what strata may do to it.
#[derive(Debug)]
pub struct NfsFile {
    pub url: NfsUrl,
    /// The export the file lies under.
    pub export: String,
    /// The NFS service's port on the server.
    pub port: u16,
    pub handle: nfs_fh3,
    pub size_bytes: u64,
    /// The file system and the file within it (GETATTR's fsid and fileid):
    /// another address of the server answers with the same.
    pub identity: (u64, u64),
    pub transfer: Transfer,
    /// Whether strata made the file: only then may it write or remove it.
    pub strata_made: bool,
    directory: nfs_fh3,
    name: String,
}

/// What a WRITE did: the bytes the server took and how durably.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    pub bytes: u32,
    pub committed: stable_how,
    pub verifier: writeverf3,
}

impl Written {
    /// Whether the server says the data is on stable storage.
    pub fn is_file_sync(&self) -> bool {
        self.committed == stable_how::FILE_SYNC
    }
}

/// How a durable write is made durable on the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DurableWrites {
    /// Each WRITE is FILE_SYNC: answered once the data is on stable
    /// storage (one call).
    FileSync,
    /// Each WRITE is UNSTABLE, then a COMMIT of its bytes (two calls).
    Commit,
}

impl DurableWrites {
    pub const NAMES: &'static [&'static str] = &["file-sync", "commit"];

    pub fn parse(name: &str) -> Option<DurableWrites> {
        match name {
            "file-sync" | "file_sync" => Some(DurableWrites::FileSync),
            "commit" | "unstable-commit" => Some(DurableWrites::Commit),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DurableWrites::FileSync => "file_sync",
            DurableWrites::Commit => "unstable_commit",
        }
    }
}

/// A READ's reply: the bytes read (at the file's end, fewer than asked).
pub fn read_reply(reply: &Reply) -> anyhow::Result<Vec<u8>> {
    let result: READ3res = reply.decode()?;
    let read = answered(result, || "READ".to_string())?;
    Ok(read.data.0.into_owned())
}

/// A READ's reply, its data copied from the reply straight into `buffer`
/// (no copy of its own, unlike [`read_reply`]): the bytes read, at most
/// `buffer`'s length (at the file's end, fewer than asked).
pub fn read_reply_into(reply: &Reply, buffer: &mut [u8]) -> anyhow::Result<usize> {
    let results = reply.results();
    let mut cursor = std::io::Cursor::new(results);
    let undecodable = |error| anyhow::anyhow!("decoding a READ reply: {error}");
    let (status, _) = u32::unpack(&mut cursor).map_err(undecodable)?;
    if status != 0 {
        read_reply(reply)?;
        bail!("READ: status {status}");
    }
    post_op_attr::unpack(&mut cursor).map_err(undecodable)?;
    let (_count, _) = u32::unpack(&mut cursor).map_err(undecodable)?;
    let (_eof, _) = bool::unpack(&mut cursor).map_err(undecodable)?;
    let (length, _) = u32::unpack(&mut cursor).map_err(undecodable)?;
    let at = cursor.position() as usize;
    let data = results
        .get(at..at + length as usize)
        .context("a READ reply shorter than the data it announces")?;
    let bytes = data.len().min(buffer.len());
    buffer[..bytes].copy_from_slice(&data[..bytes]);
    Ok(bytes)
}

/// A WRITE's reply: what the server took, and how durably.
pub fn write_reply(reply: &Reply) -> anyhow::Result<Written> {
    let result: WRITE3res = reply.decode()?;
    let written = answered(result, || "WRITE".to_string())?;
    Ok(Written {
        bytes: written.count,
        committed: written.committed,
        verifier: written.verf,
    })
}

/// A COMMIT's reply: the server's write verifier.
pub fn commit_reply(reply: &Reply) -> anyhow::Result<writeverf3> {
    let result: COMMIT3res = reply.decode()?;
    Ok(answered(result, || "COMMIT".to_string())?.verf)
}

/// An NFS version 3 procedure, as [`RpcConnection::send`] takes it.
pub fn procedure(which: NFS_PROGRAM) -> (u32, u32, u32) {
    (nfs3::PROGRAM, nfs3::VERSION, which as u32)
}

/// A result's value, or an error naming what was asked and the server's
/// status.
pub fn answered<T, E>(result: Nfs3Result<T, E>, asked: impl Fn() -> String) -> anyhow::Result<T> {
    match result {
        Nfs3Result::Ok(value) => Ok(value),
        Nfs3Result::Err((status, _)) => bail!("{}: {status}", asked()),
    }
}

fn name_of(name: &str) -> filename3<'_> {
    filename3(Opaque::borrowed(name.as_bytes()))
}

impl NfsFile {
    /// The file at `url`, made when missing and `create` (with its mark).
    /// Errors name the URL and what the server said, before any I/O.
    pub fn open(url: &NfsUrl, create: bool) -> anyhow::Result<NfsFile> {
        let mut place = Place::of(url)?;
        match lookup(&mut place.connection, &place.directory, &place.name)? {
            Some(handle) => NfsFile::at(place, handle, None),
            None if create => {
                let handle = make(&mut place.connection, &place.directory, &place.name)?;
                let mark = place.mark();
                make(&mut place.connection, &place.directory, &mark)?;
                NfsFile::at(place, handle, Some(true))
            }
            None => bail!("{url}: no such file on the server"),
        }
    }

    /// The file at `url` when it is there; `None` when its directory holds
    /// no such file.
    pub fn find(url: &NfsUrl) -> anyhow::Result<Option<NfsFile>> {
        let mut place = Place::of(url)?;
        match lookup(&mut place.connection, &place.directory, &place.name)? {
            Some(handle) => Ok(Some(NfsFile::at(place, handle, None)?)),
            None => Ok(None),
        }
    }

    /// The file `handle` at `place`; whether strata made it, when not
    /// known, from its mark.
    fn at(mut place: Place, handle: nfs_fh3, strata_made: Option<bool>) -> anyhow::Result<NfsFile> {
        let strata_made = match strata_made {
            Some(made) => made,
            None => {
                let mark = place.mark();
                lookup(&mut place.connection, &place.directory, &mark)?.is_some()
            }
        };
        let (size_bytes, identity) = attributes_of(&mut place.connection, &handle)?;
        Ok(NfsFile {
            url: place.url,
            export: place.export,
            port: place.port,
            size_bytes,
            identity,
            transfer: transfer_of(&mut place.connection, &place.root)?,
            handle,
            strata_made,
            directory: place.directory,
            name: place.name,
        })
    }

    /// A new connection to the file's NFS service.
    pub fn connect(&self) -> anyhow::Result<RpcConnection> {
        RpcConnection::connect(&self.url.host, self.port)
    }

    /// A new connection to the file's NFS service at another of the
    /// server's addresses (a path of Direct NFS's multipath), once the
    /// server there answers for the same file: a GETATTR of its handle
    /// gives the same file system and file.
    pub fn connect_at(&self, address: &str) -> anyhow::Result<RpcConnection> {
        let mut connection = RpcConnection::connect(address, self.port)
            .with_context(|| format!("{address}: the NFS service, port {}", self.port))?;
        let (_, identity) = attributes_of(&mut connection, &self.handle)
            .with_context(|| format!("{address}: the file {}", self.url))?;
        if identity != self.identity {
            bail!(
                "{address} answers for another file than {} (file system {:#x}, file {} there;                  {:#x}, {} at {}): not an address of the same server",
                self.url,
                identity.0,
                identity.1,
                self.identity.0,
                self.identity.1,
                self.url.host
            );
        }
        Ok(connection)
    }

    /// A READ of `count` bytes at `offset`.
    pub fn read_args(&self, offset: u64, count: u32) -> READ3args {
        READ3args {
            file: self.handle.clone(),
            offset,
            count,
        }
    }

    /// A WRITE of `data` at `offset`; refused for a file strata did not make.
    pub fn write_args<'a>(
        &self,
        offset: u64,
        data: &'a [u8],
        stable: stable_how,
    ) -> anyhow::Result<WRITE3args<'a>> {
        if !self.strata_made {
            bail!(
                "{}: strata did not make this file (no .{}.strata beside it) and never writes it",
                self.url,
                self.name
            );
        }
        Ok(WRITE3args {
            file: self.handle.clone(),
            offset,
            count: u32::try_from(data.len()).context("a WRITE of 4 GiB or more")?,
            stable,
            data: Opaque::borrowed(data),
        })
    }

    /// Sends a READ of `count` bytes at `offset` on `connection`; its XID.
    pub fn send_read(
        &self,
        connection: &mut RpcConnection,
        offset: u64,
        count: u32,
    ) -> anyhow::Result<u32> {
        let arguments = self.read_args(offset, count);
        connection.send(procedure(NFS_PROGRAM::NFSPROC3_READ), &arguments)
    }

    /// Sends a WRITE of `data` at `offset` on `connection`, FILE_SYNC when
    /// `durable` and UNSTABLE otherwise; its XID.
    pub fn send_write(
        &self,
        connection: &mut RpcConnection,
        offset: u64,
        data: &[u8],
        durable: bool,
    ) -> anyhow::Result<u32> {
        let stable = match durable {
            true => stable_how::FILE_SYNC,
            false => stable_how::UNSTABLE,
        };
        let arguments = self.write_args(offset, data, stable)?;
        connection.send(procedure(NFS_PROGRAM::NFSPROC3_WRITE), &arguments)
    }

    /// Reads `count` bytes at `offset` in one READ; fewer at the file's end.
    pub fn read_at(
        &self,
        connection: &mut RpcConnection,
        offset: u64,
        count: u32,
    ) -> anyhow::Result<Vec<u8>> {
        let xid = self.send_read(connection, offset, count)?;
        let reply = connection.receive_one(xid)?;
        read_reply(&reply).with_context(|| format!("{}: at {offset}", self.url))
    }

    /// Writes `data` at `offset` in one WRITE.
    pub fn write_at(
        &self,
        connection: &mut RpcConnection,
        offset: u64,
        data: &[u8],
        stable: stable_how,
    ) -> anyhow::Result<Written> {
        let arguments = self.write_args(offset, data, stable)?;
        let result: WRITE3res =
            connection.call(procedure(NFS_PROGRAM::NFSPROC3_WRITE), &arguments)?;
        let written = answered(result, || format!("{}: WRITE at {offset}", self.url))?;
        Ok(Written {
            bytes: written.count,
            committed: written.committed,
            verifier: written.verf,
        })
    }

    /// COMMITs every UNSTABLE write of the file; the server's verifier.
    pub fn commit(&self, connection: &mut RpcConnection) -> anyhow::Result<writeverf3> {
        let xid = self.send_commit(connection, 0, 0)?;
        let reply = connection.receive_one(xid)?;
        commit_reply(&reply).with_context(|| format!("{}", self.url))
    }

    /// Sends a COMMIT of the `count` bytes at `offset` (0: to the end);
    /// its XID.
    pub fn send_commit(
        &self,
        connection: &mut RpcConnection,
        offset: u64,
        count: u32,
    ) -> anyhow::Result<u32> {
        let arguments = COMMIT3args {
            file: self.handle.clone(),
            offset,
            count,
        };
        connection.send(procedure(NFS_PROGRAM::NFSPROC3_COMMIT), &arguments)
    }

    /// Removes the file and its mark, when strata made it; a file strata
    /// did not make is left as it is.
    pub fn remove(self) -> anyhow::Result<bool> {
        if !self.strata_made {
            return Ok(false);
        }
        let mut connection = self.connect()?;
        for name in [self.name.clone(), format!(".{}.strata", self.name)] {
            let arguments = REMOVE3args {
                object: diropargs3 {
                    dir: self.directory.clone(),
                    name: name_of(&name),
                },
            };
            let result: REMOVE3res =
                connection.call(procedure(NFS_PROGRAM::NFSPROC3_REMOVE), &arguments)?;
            answered(result, || format!("{}: REMOVE {name}", self.url))?;
        }
        Ok(true)
    }
}

/// Where a URL's file is: its export and that export's root, the NFS
/// service's port, the file's directory and name, and a connection there.
struct Place {
    url: NfsUrl,
    export: String,
    port: u16,
    root: nfs_fh3,
    directory: nfs_fh3,
    name: String,
    connection: RpcConnection,
}

impl Place {
    /// The export the URL lies under (the longest), mounted, and each
    /// directory of its path looked up.
    fn of(url: &NfsUrl) -> anyhow::Result<Place> {
        let host = url.host.as_str();
        let mut mountd = mount::Mountd::connect(host)?;
        let exports = mountd.exports()?;
        let Some((export, names)) = exports
            .iter()
            .filter_map(|export| Some((export, url.names_under(export)?)))
            .max_by_key(|(export, _)| export.len())
        else {
            bail!(
                "{url}: no export of {host} holds {}; its exports: {}",
                url.path,
                exports.join(", ")
            );
        };
        let root = mountd.mount(export)?;
        let port = match url.port {
            Some(port) => port,
            None => mount::port_of(host, nfs3::PROGRAM, nfs3::VERSION)?,
        };
        let mut connection = RpcConnection::connect(host, port)?;
        let (name, parents) = names.split_last().context("no file name")?;
        let mut directory = root.clone();
        for parent in parents {
            directory = lookup(&mut connection, &directory, parent)?
                .with_context(|| format!("{url}: no directory {parent} on the server"))?;
        }
        Ok(Place {
            url: url.clone(),
            export: export.clone(),
            port,
            root,
            directory,
            name: name.to_string(),
            connection,
        })
    }

    /// The mark of a file strata made: `.NAME.strata` beside it.
    fn mark(&self) -> String {
        format!(".{}.strata", self.name)
    }
}

/// `name` in `directory`, when it is there.
fn lookup(
    connection: &mut RpcConnection,
    directory: &nfs_fh3,
    name: &str,
) -> anyhow::Result<Option<nfs_fh3>> {
    let arguments = LOOKUP3args {
        what: diropargs3 {
            dir: directory.clone(),
            name: name_of(name),
        },
    };
    let result: LOOKUP3res =
        connection.call(procedure(NFS_PROGRAM::NFSPROC3_LOOKUP), &arguments)?;
    match result {
        Nfs3Result::Ok(found) => Ok(Some(found.object)),
        Nfs3Result::Err((nfs3::nfsstat3::NFS3ERR_NOENT, _)) => Ok(None),
        Nfs3Result::Err((status, _)) => bail!("LOOKUP {name}: {status}"),
    }
}

/// Makes `name` in `directory` (GUARDED: never over a file that is there).
fn make(
    connection: &mut RpcConnection,
    directory: &nfs_fh3,
    name: &str,
) -> anyhow::Result<nfs_fh3> {
    let arguments = CREATE3args {
        where_: diropargs3 {
            dir: directory.clone(),
            name: name_of(name),
        },
        how: createhow3::GUARDED(sattr3 {
            mode: Nfs3Option::Some(0o644),
            ..sattr3::default()
        }),
    };
    let result: CREATE3res =
        connection.call(procedure(NFS_PROGRAM::NFSPROC3_CREATE), &arguments)?;
    let made = answered(result, || format!("CREATE {name}"))?;
    match made.obj {
        Nfs3Option::Some(handle) => Ok(handle),
        Nfs3Option::None => lookup(connection, directory, name)?
            .with_context(|| format!("CREATE {name}: made, then not found")),
    }
}

/// The file's size, and its file system and file ids.
fn attributes_of(
    connection: &mut RpcConnection,
    handle: &nfs_fh3,
) -> anyhow::Result<(u64, (u64, u64))> {
    let arguments = GETATTR3args {
        object: handle.clone(),
    };
    let result: GETATTR3res =
        connection.call(procedure(NFS_PROGRAM::NFSPROC3_GETATTR), &arguments)?;
    let attributes = answered(result, || "GETATTR".to_string())?.obj_attributes;
    Ok((attributes.size, (attributes.fsid, attributes.fileid)))
}

fn transfer_of(connection: &mut RpcConnection, root: &nfs_fh3) -> anyhow::Result<Transfer> {
    let arguments = FSINFO3args {
        fsroot: root.clone(),
    };
    let result: FSINFO3res =
        connection.call(procedure(NFS_PROGRAM::NFSPROC3_FSINFO), &arguments)?;
    let info = answered(result, || "FSINFO".to_string())?;
    Ok(Transfer {
        read_max_bytes: info.rtmax,
        read_preferred_bytes: info.rtpref,
        write_max_bytes: info.wtmax,
        write_preferred_bytes: info.wtpref,
    })
}
