//! A one-node Slurm for a test ([`OneNodeSlurm`]): Debian's slurmctld and
//! slurmd with munge, on this machine, with a private configuration,
//! state, spool, munge key and socket in a temporary directory and ports
//! of their own; stopped and removed when dropped. `SLURM_CONF` in
//! [`OneNodeSlurm::env`] points `sbatch`, `srun` and `sinfo` at it.
//!
//! Needs root and `scripts/install-test-deps` (slurmctld, slurmd,
//! slurm-client, munge).

use crate::process::{free_port, wait_until};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct OneNodeSlurm {
    dir: tempfile::TempDir,
    daemons: Vec<Child>,
}

impl OneNodeSlurm {
    /// Starts munged, slurmctld and slurmd; returns once the node is idle.
    pub fn start(cpus: u32) -> OneNodeSlurm {
        let dir = tempfile::tempdir_in("/tmp").unwrap();
        for sub in ["state", "spool", "munge"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        let mut slurm = OneNodeSlurm {
            dir,
            daemons: Vec::new(),
        };
        slurm.start_munge();
        std::fs::write(slurm.conf(), slurm.config(cpus)).unwrap();
        for daemon in ["slurmctld", "slurmd"] {
            let log = std::fs::File::create(slurm.path(&format!("{daemon}.out"))).unwrap();
            let child = Command::new(daemon)
                .args(["-D", "-f"])
                .arg(slurm.conf())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .unwrap_or_else(|error| panic!("{daemon}: {error}: run scripts/install-test-deps"));
            slurm.daemons.push(child);
        }
        let what = format!(
            "the test's Slurm (see {})",
            slurm.path("slurmctld.out").display()
        );
        wait_until(Duration::from_secs(60), &what, || slurm.node_is_idle());
        slurm
    }

    /// The environment `sbatch` and `srun` need to find this Slurm.
    pub fn env(&self) -> [(&'static str, PathBuf); 1] {
        [("SLURM_CONF", self.conf())]
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn conf(&self) -> PathBuf {
        self.path("slurm.conf")
    }

    fn start_munge(&mut self) {
        let key = self.path("munge/munge.key");
        let status = Command::new("dd")
            .args(["if=/dev/urandom", "bs=1024", "count=1"])
            .arg(format!("of={}", key.display()))
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "a munge key");
        set_mode(&key, 0o400);
        set_mode(&self.path("munge"), 0o700);
        let munge = |name: &str| self.path(&format!("munge/{name}"));
        let status = Command::new("munged")
            .arg("--force")
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--socket={}", munge("munge.socket").display()))
            .arg(format!("--pid-file={}", munge("munged.pid").display()))
            .arg(format!("--log-file={}", munge("munged.log").display()))
            .arg(format!("--seed-file={}", munge("munged.seed").display()))
            .status()
            .expect("munged: run scripts/install-test-deps");
        assert!(status.success(), "munged did not start");
    }

    fn config(&self, cpus: u32) -> String {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        let host = host.trim();
        let at = |name: &str| self.path(name).display().to_string();
        format!(
            "ClusterName=strata-test\nSlurmctldHost={host}\nSlurmctldPort={}\nSlurmdPort={}\n\
             SlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nCredType=cred/munge\n\
             AuthInfo=socket={}\nStateSaveLocation={}\nSlurmdSpoolDir={}\n\
             SlurmctldPidFile={}\nSlurmdPidFile={}\nProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\nMpiDefault=none\nSchedulerType=sched/builtin\n\
             SelectType=select/linear\nReturnToService=2\nSlurmdParameters=config_overrides\n\
             JobCompType=jobcomp/none\nAccountingStorageType=accounting_storage/none\n\
             NodeName={host} CPUs={cpus} State=UNKNOWN\n\
             PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
            free_port(),
            free_port(),
            at("munge/munge.socket"),
            at("state"),
            at("spool"),
            at("slurmctld.pid"),
            at("slurmd.pid"),
        )
    }

    fn node_is_idle(&self) -> bool {
        Command::new("sinfo")
            .args(["-h", "-o", "%t"])
            .envs(self.env())
            .output()
            .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "idle")
    }
}

impl Drop for OneNodeSlurm {
    fn drop(&mut self) {
        for daemon in &mut self.daemons {
            let _ = daemon.kill();
            let _ = daemon.wait();
        }
        let pid = std::fs::read_to_string(self.path("munge/munged.pid")).unwrap_or_default();
        if let Ok(pid) = pid.trim().parse::<i32>() {
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
    }
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}
