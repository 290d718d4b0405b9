//! An NFS filer on another host ([`HostedFiler`]): nfs-ganesha with its VFS
//! backend, exporting one directory of the shared filesystem over NFSv3 on
//! TCP, beside an rpcbind of its own, both run in a [`NamespaceHost`] with
//! a private /run (so that neither meets this machine's rpcbind, nor
//! another test's filer), and a D-Bus daemon of its own as ganesha's system
//! bus, where it serves its statistics ([`HostedFiler::bus_address`]).
//! Debian's nfs-ganesha, nfs-ganesha-vfs, rpcbind and dbus-daemon,
//! installed by scripts/install-test-deps.
//!
//! Knows no strata-nfs type.

use crate::host::NamespaceHost;
use crate::process::wait_until;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

pub struct HostedFiler {
    /// The exported directory, as this machine sees it.
    pub export: PathBuf,
    pub address: Ipv4Addr,
    dir: tempfile::TempDir,
    program: usize,
}

impl HostedFiler {
    /// The NFS service's port.
    pub const NFS_PORT: u16 = 2049;
    /// The MOUNT service's port.
    pub const MOUNT_PORT: u16 = 20048;

    /// Starts the filer on `host`, exporting `export` with root's writes
    /// kept as root's; returns once its portmapper, MOUNT and NFS services
    /// accept connections.
    pub fn start(host: &mut NamespaceHost, export: &Path) -> HostedFiler {
        let dir = tempfile::tempdir_in("/tmp").unwrap();
        let config = dir.path().join("ganesha.conf");
        std::fs::write(&config, ganesha_config(export)).unwrap();
        let log = dir.path().join("ganesha.log");
        let bus = dir.path().join("bus.conf");
        let socket = dir.path().join("bus.socket");
        std::fs::write(&bus, bus_config(&socket)).unwrap();
        let script = format!(
            "set -e; mount -t tmpfs strata-filer-run /run; mkdir -p /run/rpcbind; \
             rpcbind -f -w & \
             dbus-daemon --config-file={} --nofork --nopidfile 2>/dev/null & \
             for _ in $(seq 100); do [ -S /run/rpcbind.sock ] && [ -S {} ] && break; \
             sleep 0.05; done; \
             DBUS_SYSTEM_BUS_ADDRESS=unix:path={} exec ganesha.nfsd -F -f {} -L {} -p {} \
             -N NIV_EVENT",
            bus.display(),
            socket.display(),
            socket.display(),
            config.display(),
            log.display(),
            dir.path().join("ganesha.pid").display()
        );
        let program = host.spawn("sh", &["-c", &script], None, Stdio::null());
        let filer = HostedFiler {
            export: export.to_path_buf(),
            address: host.address,
            dir,
            program,
        };
        filer.wait_until_ready();
        filer
    }

    /// `nfs://ADDRESS/EXPORT/NAME`.
    pub fn url(&self, name: &str) -> String {
        format!("nfs://{}{}/{name}", self.address, self.export.display())
    }

    /// The D-Bus address of ganesha's system bus (for
    /// `DBUS_SYSTEM_BUS_ADDRESS`); a path, so any host of this machine
    /// reaches it.
    pub fn bus_address(&self) -> String {
        format!("unix:path={}", self.dir.path().join("bus.socket").display())
    }

    /// Kills the filer (its rpcbind and ganesha), as a server that goes
    /// away: its connections are reset.
    pub fn stop(&self, host: &mut NamespaceHost) {
        host.stop(self.program);
    }

    /// What ganesha logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("ganesha.log")).unwrap_or_default()
    }

    fn wait_until_ready(&self) {
        let what = format!("the hosted nfs-ganesha (its log: {})", self.log());
        wait_until(Duration::from_secs(60), &what, || {
            [111, Self::MOUNT_PORT, Self::NFS_PORT].iter().all(|&port| {
                let address = SocketAddr::from((self.address, port));
                TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok()
            })
        });
    }
}

/// A system bus on `socket` that lets anyone own a name and call anyone
/// (the test's own, for ganesha and the agent asking it).
fn bus_config(socket: &Path) -> String {
    format!(
        "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\" \
         \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n\
         <busconfig><type>system</type><listen>unix:path={}</listen><auth>EXTERNAL</auth>\
         <policy context=\"default\"><allow user=\"*\"/><allow own=\"*\"/>\
         <allow send_destination=\"*\"/><allow receive_sender=\"*\"/></policy></busconfig>\n",
        socket.display()
    )
}

/// NFSv3 only, on fixed ports, one export with root kept as root (the
/// test runs as root and owns what it makes).
fn ganesha_config(export: &Path) -> String {
    format!(
        "NFS_CORE_PARAM {{ Protocols = 3; NFS_Port = {}; MNT_Port = {}; Enable_RQUOTA = false; }}\n\
         NFSV4 {{ Graceless = true; }}\n\
         EXPORT {{\n  Export_Id = 1; Path = {path}; Pseudo = {path}; Protocols = 3;\n  \
         Access_Type = RW; Squash = No_Root_Squash; Transports = TCP; SecType = sys;\n  \
         FSAL {{ Name = VFS; }}\n}}\n\
         LOG {{ Default_Log_Level = EVENT; }}\n",
        HostedFiler::NFS_PORT,
        HostedFiler::MOUNT_PORT,
        path = export.display()
    )
}
