//! ONC RPC (RFC 5531) on one TCP connection, its calls pipelined: many are
//! sent before their replies come back, and each reply is matched to its
//! call by its XID, as Direct NFS keeps many requests in flight on each of
//! its channels. Every call carries AUTH_UNIX credentials of strata's
//! user. A reply is read into a buffer of at most [`MAX_RECORD_BYTES`];
//! a server that stops answering is an error after [`CALL_TIMEOUT`].
//!
//! Not for: what a call means (`mount`, `file`).

use anyhow::{anyhow, bail, Context};
use nfs3_types::rpc::{
    accept_stat_data, auth_unix, call_body, fragment_header, msg_body, opaque_auth, reply_body,
    rpc_msg, RPC_VERSION_2,
};
use nfs3_types::xdr_codec::{Opaque, Pack, Unpack};
use std::io::{BufReader, Cursor, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// The largest reply strata reads: a READ of 1 MiB with its headers, and room.
pub const MAX_RECORD_BYTES: usize = 4 << 20;

/// How long a call may wait for the server: connecting, sending, or the
/// next reply.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// What one connection sent and received, counted by strata itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RpcCounters {
    pub calls: u64,
    pub replies: u64,
    /// The records' bytes on the connection, each with its 4-byte mark.
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

/// One TCP connection to one RPC service.
pub struct RpcConnection {
    server: SocketAddr,
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    next_xid: u32,
    credential: opaque_auth<'static>,
    counters: RpcCounters,
    record: Vec<u8>,
}

/// One reply: the XID of the call it answers, and its results, still
/// encoded.
pub struct Reply {
    pub xid: u32,
    record: Vec<u8>,
    results_at: usize,
}

impl Reply {
    /// The results, still encoded.
    pub fn results(&self) -> &[u8] {
        &self.record[self.results_at..]
    }

    /// The results, decoded as `R`.
    pub fn decode<R: Unpack>(&self) -> anyhow::Result<R> {
        let mut cursor = Cursor::new(&self.record[self.results_at..]);
        let (value, _) = R::unpack(&mut cursor)
            .map_err(|error| anyhow!("decoding the reply to call {}: {error}", self.xid))?;
        Ok(value)
    }
}

impl RpcConnection {
    /// Connects to `host`'s `port`.
    pub fn connect(host: &str, port: u16) -> anyhow::Result<RpcConnection> {
        let server = (host, port)
            .to_socket_addrs()
            .with_context(|| format!("resolving {host}"))?
            .next()
            .with_context(|| format!("{host} has no address"))?;
        let stream = TcpStream::connect_timeout(&server, CALL_TIMEOUT)
            .with_context(|| format!("connecting to {server}"))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(CALL_TIMEOUT))?;
        stream.set_write_timeout(Some(CALL_TIMEOUT))?;
        let user = auth_unix {
            machinename: Opaque::borrowed(b"strata"),
            uid: unsafe { libc::getuid() },
            gid: unsafe { libc::getgid() },
            ..auth_unix::default()
        };
        Ok(RpcConnection {
            server,
            reader: BufReader::with_capacity(256 << 10, stream.try_clone()?),
            writer: stream,
            next_xid: std::process::id().rotate_left(16),
            credential: opaque_auth::auth_unix(&user),
            counters: RpcCounters::default(),
            record: Vec::new(),
        })
    }

    /// The server's address.
    pub fn server(&self) -> SocketAddr {
        self.server
    }

    /// What the connection has sent and received so far.
    pub fn counters(&self) -> RpcCounters {
        self.counters
    }

    /// Sends one call and returns its XID; its reply is one that
    /// [`RpcConnection::receive`] returns.
    pub fn send(
        &mut self,
        (program, version, procedure): (u32, u32, u32),
        arguments: &impl Pack,
    ) -> anyhow::Result<u32> {
        let xid = self.next_xid;
        self.next_xid = xid.wrapping_add(1);
        let message = rpc_msg {
            xid,
            body: msg_body::CALL(call_body {
                rpcvers: RPC_VERSION_2,
                prog: program,
                vers: version,
                proc: procedure,
                cred: self.credential.borrow(),
                verf: opaque_auth::default(),
            }),
        };
        let length = message.packed_size() + arguments.packed_size();
        let mark = u32::try_from(length).context("an RPC call larger than 4 GiB")?;
        self.record.clear();
        let encoded = fragment_header::new(mark, true)
            .pack(&mut self.record)
            .and_then(|_| message.pack(&mut self.record))
            .and_then(|_| arguments.pack(&mut self.record));
        encoded.map_err(|error| anyhow!("encoding a call to {}: {error}", self.server))?;
        self.writer
            .write_all(&self.record)
            .with_context(|| format!("sending a call to {}", self.server))?;
        self.counters.calls += 1;
        self.counters.bytes_sent += self.record.len() as u64;
        Ok(xid)
    }

    /// The next reply, to whichever call it answers.
    pub fn receive(&mut self) -> anyhow::Result<Reply> {
        let record = self
            .read_record()
            .with_context(|| format!("reading a reply from {}", self.server))?;
        let mut cursor = Cursor::new(record.as_slice());
        let (message, _) = rpc_msg::unpack(&mut cursor)
            .map_err(|error| anyhow!("{}: a reply strata cannot read: {error}", self.server))?;
        let results_at = cursor.position() as usize;
        match message.body {
            msg_body::REPLY(reply_body::MSG_ACCEPTED(accepted)) => match accepted.reply_data {
                accept_stat_data::SUCCESS => {}
                refused => bail!(
                    "{}: the server refused call {}: {refused:?}",
                    self.server,
                    message.xid
                ),
            },
            msg_body::REPLY(reply_body::MSG_DENIED(denied)) => {
                bail!(
                    "{}: the server denied call {}: {denied:?}",
                    self.server,
                    message.xid
                )
            }
            msg_body::CALL(_) => bail!("{}: the server sent a call, not a reply", self.server),
        }
        self.counters.replies += 1;
        Ok(Reply {
            xid: message.xid,
            record,
            results_at,
        })
    }

    /// One call and its reply, with no other call in flight.
    pub fn call<R: Unpack>(
        &mut self,
        procedure: (u32, u32, u32),
        arguments: &impl Pack,
    ) -> anyhow::Result<R> {
        let xid = self.send(procedure, arguments)?;
        self.receive_one(xid)?.decode()
    }

    /// The reply to call `xid`, the only one in flight.
    pub fn receive_one(&mut self, xid: u32) -> anyhow::Result<Reply> {
        let reply = self.receive()?;
        if reply.xid != xid {
            bail!(
                "{}: a reply to call {} came while only call {xid} was in flight",
                self.server,
                reply.xid
            );
        }
        Ok(reply)
    }

    /// One record: its fragments joined, at most [`MAX_RECORD_BYTES`].
    fn read_record(&mut self) -> anyhow::Result<Vec<u8>> {
        let mut record = Vec::new();
        loop {
            let mut mark = [0u8; 4];
            read_exact(&mut self.reader, &mut mark)?;
            let header = fragment_header::from(mark);
            let length = header.fragment_length() as usize;
            let start = record.len();
            if start + length > MAX_RECORD_BYTES {
                bail!("a reply of more than {MAX_RECORD_BYTES} bytes");
            }
            record.resize(start + length, 0);
            read_exact(&mut self.reader, &mut record[start..])?;
            self.counters.bytes_received += 4 + length as u64;
            if header.eof() {
                return Ok(record);
            }
        }
    }
}

/// `buffer` filled from `reader`; the server's closing the connection
/// said so, not as a short read.
fn read_exact(reader: &mut impl Read, buffer: &mut [u8]) -> anyhow::Result<()> {
    reader
        .read_exact(buffer)
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::UnexpectedEof => anyhow!("the server closed the connection"),
            _ => error.into(),
        })
}
