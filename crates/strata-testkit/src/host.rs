//! Another host on this machine, for tests of servers strata does not run
//! beside (`ARCHITECTURE.md`, "Testing past one host"): a network namespace
//! joined to the test's own by a veth pair with private addresses, and a
//! PID namespace for each program started there, so that the host's
//! processes are invisible from here as on a real second machine. The
//! filesystem stays shared: exactly the trap a remote server sets, since
//! its paths exist here too.
//!
//! A host that traces its block requests with BPF shares this machine's
//! PID namespace instead ([`NamespaceHost::share_machine_pids`]): the
//! kernel's tracepoints give the process ids of its first namespace, and
//! on a real host those are the ids its database and its agent see.
//!
//! Needs root, `ip` (iproute2) and `unshare` (util-linux). Everything made
//! is removed when the host is dropped.

use std::net::Ipv4Addr;
use std::process::{Child, Command, Stdio};

pub struct NamespaceHost {
    /// The network namespace's name.
    pub name: String,
    /// The host's address, inside its namespace.
    pub address: Ipv4Addr,
    /// This side's address, on the veth in the test's namespace.
    pub peer_address: Ipv4Addr,
    veth: String,
    /// The veths of the paths added.
    paths: Vec<String>,
    programs: Vec<Child>,
    machine_pids: bool,
}

/// Runs `ip ARGS`, panicking with its stderr when it fails.
fn ip(args: &[&str]) {
    let output = Command::new("ip")
        .args(args)
        .output()
        .expect("running ip (iproute2)");
    assert!(
        output.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
}

impl NamespaceHost {
    /// Makes host `index` (0–15) of this test process, with a /30 of
    /// 10.231.0.0/16 chosen from the process id and the index so that
    /// tests running side by side do not share addresses.
    pub fn create(index: u8) -> NamespaceHost {
        let pid = std::process::id();
        let name = format!("strata-{pid}-{index}");
        ip(&["netns", "add", &name]);
        let mut host = NamespaceHost {
            name,
            address: Ipv4Addr::UNSPECIFIED,
            peer_address: Ipv4Addr::UNSPECIFIED,
            veth: String::new(),
            paths: Vec::new(),
            machine_pids: false,
            programs: Vec::new(),
        };
        (host.veth, host.peer_address, host.address) = host.join(index);
        let mut all = vec!["netns", "exec", &host.name, "ip"];
        all.extend(["link", "set", "lo", "up"]);
        ip(&all);
        host
    }

    /// Joins the host to the test's namespace by another veth pair, as a
    /// filer's second port on a subnet of its own, with the /30 that host
    /// `index` of this test process would have (so no host of the test may
    /// have that index): the host's address on it, and this side's end.
    pub fn add_path(&mut self, index: u8) -> (Ipv4Addr, String) {
        let (veth, _, address) = self.join(index);
        self.paths.push(veth.clone());
        (address, veth)
    }

    /// A veth pair with the /30 of `index`: this side's end, its address
    /// and the host's.
    fn join(&self, index: u8) -> (String, Ipv4Addr, Ipv4Addr) {
        assert!(
            index < 16,
            "host index {index}: at most 16 hosts per test process"
        );
        let pid = std::process::id();
        let block = ((pid % 1024) * 16 + u32::from(index)) % 16384;
        let base = u32::from(Ipv4Addr::new(10, 231, 0, 0)) + block * 4;
        let (peer_address, address) = (Ipv4Addr::from(base + 1), Ipv4Addr::from(base + 2));
        let veth = format!("sv{}h{index}", pid % 1_000_000);
        let inside = format!("{veth}i");
        ip(&[
            "link", "add", &veth, "type", "veth", "peer", "name", &inside,
        ]);
        ip(&["link", "set", &inside, "netns", &self.name]);
        ip(&["addr", "add", &format!("{peer_address}/30"), "dev", &veth]);
        ip(&["link", "set", &veth, "up"]);
        let in_host = |args: &[&str]| {
            let mut all = vec!["netns", "exec", &self.name, "ip"];
            all.extend(args);
            ip(&all);
        };
        in_host(&["addr", "add", &format!("{address}/30"), "dev", &inside]);
        in_host(&["link", "set", &inside, "up"]);
        (veth, peer_address, address)
    }

    /// This side's end of the veth pair: its counters
    /// (`/sys/class/net/NAME/statistics`) are every byte to and from the
    /// host.
    pub fn interface(&self) -> &str {
        &self.veth
    }

    /// Programs started from now on share this machine's PID namespace
    /// (and /proc), as a host's processes share its kernel's: for a host
    /// whose agent traces block requests and names their processes.
    pub fn share_machine_pids(&mut self) {
        self.machine_pids = true;
    }

    /// Starts `program args` on the host, in a PID namespace of its own
    /// (its processes are not in this machine's /proc as themselves)
    /// unless the host shares this machine's, as `user` when given, its
    /// output to `log`. It is killed
    /// with the host, or by [`NamespaceHost::stop`] with the number this
    /// returns.
    pub fn spawn(&mut self, program: &str, args: &[&str], user: Option<&str>, log: Stdio) -> usize {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.name]);
        match (self.machine_pids, user) {
            // `ip netns exec` and setpriv exec the program: killing the
            // child kills it.
            (true, Some(user)) => {
                command.args([
                    "setpriv",
                    "--reuid",
                    user,
                    "--regid",
                    user,
                    "--init-groups",
                    "--",
                ]);
            }
            (true, None) => {}
            (false, user) => {
                command.args(["unshare", "--pid", "--fork"]);
                command.args(["--mount-proc", "--kill-child=SIGKILL", "--"]);
                if let Some(user) = user {
                    command.args(["runuser", "-u", user, "--"]);
                }
            }
        }
        let child = command
            .arg(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|error| panic!("starting {program} on {}: {error}", self.name));
        self.programs.push(child);
        self.programs.len() - 1
    }

    /// Kills program `number` (as a lost host would lose it) and its PID
    /// namespace with it.
    pub fn stop(&mut self, number: usize) {
        let child = &mut self.programs[number];
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for NamespaceHost {
    fn drop(&mut self) {
        for child in &mut self.programs {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
        for veth in std::iter::once(&self.veth).chain(&self.paths) {
            let _ = Command::new("ip")
                .args(["link", "del", veth])
                .stderr(Stdio::null())
                .status();
        }
    }
}
