//! A throwaway PostgreSQL cluster made by `initdb` on the storage under
//! test, started as a child process on a free port with a private socket
//! directory, and removed with every process and file it made.
//!
//! For: benchmarks and tests that need a server of their own, optionally
//! with its page cache limited by a memory cgroup.
//!
//! Not for: the user's own servers (connect to those with
//! [`super::connect`]), or tuning PostgreSQL beyond the settings passed in.

mod install;
mod leftovers;
mod processes;
pub use leftovers::remove_abandoned;
pub(crate) use processes::process_tree;
mod settings;

use anyhow::{bail, Context, Result};
use install::PgInstall;
use processes::Postmaster;
use settings::ServerLog;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use strata_db::account;
use strata_db::pagecache::{self, MemoryCgroup, PageCacheMethod};

pub use install::PG_BIN_ENV;
pub use strata_db::account::ServerAccount;
pub use strata_probe::collectors::is_running;

/// The `server_version_num` of the server binaries a throwaway cluster
/// would use (`bin_dir`, else `$STRATA_PG_BIN`, else the newest Debian
/// install), read from `postgres --version` before anything starts.
pub fn binaries_version_num(bin_dir: Option<&Path>) -> Result<u32> {
    Ok(install::PgInstall::locate(bin_dir)?.version_num)
}

/// The OS account the server runs as when strata runs as root.
pub const DEFAULT_SERVER_ACCOUNT: &str = "postgres";

/// The account PostgreSQL runs as when strata runs as root (`requested`,
/// else `postgres`); `None` when strata is not root.
pub fn server_account(requested: Option<&str>) -> Result<Option<ServerAccount>> {
    ServerAccount::unprivileged(requested.unwrap_or(DEFAULT_SERVER_ACCOUNT), "PostgreSQL")
}

/// The superuser `initdb` creates; trust authentication, no password.
pub const SUPERUSER: &str = "strata";
const READY_TIMEOUT: Duration = Duration::from_secs(30);
const PORT_ATTEMPTS: usize = 5;

#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// The data directory is created inside it as `.strata-pg-<pid>-<random>`.
    /// The storage under test is where the data lives, so the default is the
    /// current directory, not /tmp.
    pub parent_dir: PathBuf,
    /// When strata runs as root: the OS account the server runs as
    /// (default "postgres"). Ignored when not root.
    pub os_user: Option<String>,
    pub shared_buffers_bytes: u64,
    /// Extra `postgresql.conf` settings, applied after strata's own.
    pub settings: Vec<(String, String)>,
    /// Page cache the server may use; `None` = no limit.
    pub page_cache_limit_bytes: Option<u64>,
    /// Else `$STRATA_PG_BIN`, else `pg_config --bindir`, else the highest
    /// `/usr/lib/postgresql/*/bin`.
    pub bin_dir: Option<PathBuf>,
    /// The server may outlive strata (`--keep`); else it gets SIGQUIT
    /// (immediate shutdown) when strata exits any way, SIGKILL included.
    pub survives_strata: bool,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            parent_dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            os_user: None,
            shared_buffers_bytes: 128 << 20,
            settings: Vec::new(),
            page_cache_limit_bytes: None,
            bin_dir: None,
            survives_strata: false,
        }
    }
}

/// A running throwaway cluster. Dropping it stops the server and removes
/// its files and cgroup, like [`ThrowawayCluster::stop_and_remove`].
pub struct ThrowawayCluster {
    // Declared first so that it drops first: the server stops before its
    // files are removed.
    postmaster: Postmaster,
    workspace: Workspace,
    install: PgInstall,
    account: Option<ServerAccount>,
    port: u16,
    page_cache: PageCacheMethod,
    page_cache_fallback_reason: Option<String>,
    version_num: u32,
    options: ClusterOptions,
}

impl ThrowawayCluster {
    pub fn start(options: &ClusterOptions) -> Result<ThrowawayCluster> {
        let install = PgInstall::locate(options.bin_dir.as_deref())?;
        let account = server_account(options.os_user.as_deref())?;
        let mut workspace = Workspace::create(&options.parent_dir, account.as_ref())?;
        run_initdb(&install, account.as_ref(), &workspace.data_dir)?;
        let port = settings::reserve_free_port()?;
        write_server_settings(&install, account.as_ref(), &workspace, options, port)?;
        let (page_cache, page_cache_fallback_reason) = limit_page_cache(&mut workspace, options)?;
        let launched = launch(&install, account.as_ref(), &workspace, options, port)?;
        Ok(ThrowawayCluster {
            postmaster: launched.postmaster,
            workspace,
            install,
            account,
            port: launched.port,
            page_cache,
            page_cache_fallback_reason,
            version_num: launched.version_num,
            options: options.clone(),
        })
    }

    /// Stops the server (fast shutdown) and starts it again on the same
    /// files with `settings` added to its configuration: for settings read
    /// only at server start (`io_method`, `debug_io_direct`).
    pub fn restart_with(&mut self, settings: &[(String, String)]) -> Result<()> {
        self.postmaster.stop()?;
        self.options.settings.extend(settings.iter().cloned());
        let account = self.account.as_ref();
        write_server_settings(
            &self.install,
            account,
            &self.workspace,
            &self.options,
            self.port,
        )?;
        let launched = launch(
            &self.install,
            account,
            &self.workspace,
            &self.options,
            self.port,
        )?;
        self.postmaster = launched.postmaster;
        self.port = launched.port;
        Ok(())
    }

    /// `host=<socket dir> port=<port> user=strata dbname=postgres`
    pub fn connection_string(&self) -> String {
        connection_string(&self.workspace.socket_dir, self.port)
    }

    pub fn data_dir(&self) -> &Path {
        &self.workspace.data_dir
    }

    /// `data_dir/pg_wal`, resolved when it is a symbolic link.
    pub fn wal_dir(&self) -> PathBuf {
        let wal_dir = self.workspace.data_dir.join("pg_wal");
        std::fs::canonicalize(&wal_dir).unwrap_or(wal_dir)
    }

    pub fn socket_dir(&self) -> &Path {
        &self.workspace.socket_dir
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn postmaster_pid(&self) -> u32 {
        self.postmaster.pid()
    }

    /// Says so when the postmaster is no longer running (killed or crashed)
    /// while strata still needs it; `None` while it runs.
    pub fn death(&self) -> Option<String> {
        let pid = self.postmaster.pid();
        (!is_running(pid)).then(|| {
            format!(
                "the throwaway cluster's postmaster (pid {pid}) stopped running before the \
                 window ended (killed or crashed); the session failures below say when"
            )
        })
    }

    /// The lines of the server's log that say it restarted its processes
    /// (a server process killed or crashed, then crash recovery), joined;
    /// `None` when it never did.
    pub fn restart_in_log(&self) -> Option<String> {
        let log = std::fs::read_to_string(self.workspace.data_dir.join(settings::LOG_FILE)).ok()?;
        let lines: Vec<&str> = log
            .lines()
            .filter(|line| {
                line.contains("was terminated by signal")
                    || line.contains("terminating any other active server processes")
                    || line.contains("all server processes terminated; reinitializing")
            })
            .map(str::trim)
            .collect();
        (!lines.is_empty()).then(|| lines.join("; "))
    }

    /// The postmaster and all its children alive now.
    pub fn server_pids(&self) -> Vec<u32> {
        processes::process_tree(self.postmaster.pid())
    }

    pub fn page_cache(&self) -> &PageCacheMethod {
        &self.page_cache
    }

    /// Why a page-cache limit fell back to [`PageCacheMethod::DropCaches`].
    pub fn page_cache_fallback_reason(&self) -> Option<&str> {
        self.page_cache_fallback_reason.as_deref()
    }

    /// The cgroup the server runs in, when its page cache is limited.
    pub fn memory_cgroup(&self) -> Option<&MemoryCgroup> {
        self.workspace.cgroup.as_ref()
    }

    /// `server_version_num`, e.g. 150019.
    pub fn version_num(&self) -> u32 {
        self.version_num
    }

    pub fn bin_dir(&self) -> &Path {
        &self.install.bin_dir
    }

    /// SIGKILL to the postmaster alone, for fault tests. The cluster can
    /// still be removed afterwards.
    pub fn kill_postmaster(&self) {
        self.postmaster.kill();
    }

    /// Leaves the server running with its files and cgroup in place.
    pub fn keep(self) -> KeptCluster {
        let ThrowawayCluster {
            postmaster,
            mut workspace,
            install,
            account,
            port,
            ..
        } = self;
        postmaster.detach();
        let _ = std::fs::write(workspace.data_dir.join(leftovers::KEPT_MARK), b"");
        KeptCluster {
            connection_string: connection_string(&workspace.socket_dir, port),
            data_dir: workspace.data_dir.clone(),
            socket_dir: workspace.socket_dir.clone(),
            port,
            cgroup_dir: workspace.keep(),
            bin_dir: install.bin_dir,
            os_user: account.map(|account| account.name),
        }
    }

    /// Fast shutdown (SIGINT; after 10 s SIGKILL to the whole process tree),
    /// then removes the data and socket directories and the cgroup.
    pub fn stop_and_remove(mut self) -> Result<()> {
        let stopped = self.postmaster.stop();
        let removed = self.workspace.remove();
        match (stopped, removed) {
            (Err(stop), Err(remove)) => Err(stop.context(format!("and then: {remove:#}"))),
            (Err(error), Ok(())) | (Ok(()), Err(error)) => Err(error),
            (Ok(()), Ok(())) => Ok(()),
        }
    }
}

/// A cluster left running by [`ThrowawayCluster::keep`].
#[derive(Debug, Clone)]
pub struct KeptCluster {
    pub data_dir: PathBuf,
    pub port: u16,
    pub socket_dir: PathBuf,
    pub connection_string: String,
    pub cgroup_dir: Option<PathBuf>,
    bin_dir: PathBuf,
    os_user: Option<String>,
}

impl KeptCluster {
    /// A psql command line.
    pub fn how_to_connect(&self) -> String {
        let psql = self.bin_dir.join("psql");
        let psql = if psql.is_file() {
            settings::shell_quote(&psql.to_string_lossy())
        } else {
            "psql".to_string()
        };
        format!("{psql} {}", settings::shell_quote(&self.connection_string))
    }

    /// A shell command line that stops the server and removes its files.
    pub fn how_to_stop(&self) -> String {
        let quote = |path: &Path| settings::shell_quote(&path.to_string_lossy());
        let as_user = match &self.os_user {
            Some(user) => format!("runuser -u {} -- ", settings::shell_quote(user)),
            None => String::new(),
        };
        let mut command = format!(
            "{as_user}{} -D {} stop -m fast && rm -rf {} {}",
            quote(&self.bin_dir.join("pg_ctl")),
            quote(&self.data_dir),
            quote(&self.data_dir),
            quote(&self.socket_dir)
        );
        if let Some(cgroup) = &self.cgroup_dir {
            command.push_str(&format!(" && rmdir {}", quote(cgroup)));
        }
        command
    }
}

fn connection_string(socket_dir: &Path, port: u16) -> String {
    format!(
        "host={} port={port} user={SUPERUSER} dbname=postgres",
        settings::conninfo_value(&socket_dir.to_string_lossy())
    )
}

/// The directories (and cgroup) a cluster owns; removed on drop unless kept.
struct Workspace {
    data_dir: PathBuf,
    socket_dir: PathBuf,
    socket_dir_created: bool,
    cgroup: Option<MemoryCgroup>,
    finished: bool,
}

impl Workspace {
    /// The data directory `<parent>/.strata-pg-<pid>-<random>` and the
    /// socket directory next to it (in the temporary directory when that
    /// path would be too long for a Unix socket), both mode 0700 and owned by
    /// the server's account.
    fn create(parent_dir: &Path, account: Option<&ServerAccount>) -> Result<Workspace> {
        let parent = parent_dir
            .canonicalize()
            .with_context(|| format!("resolving parent directory {}", parent_dir.display()))?;
        let random = strata_core::random::FastRng::from_entropy().next_u64() as u32;
        let name = format!(".strata-pg-{}-{random:08x}", std::process::id());
        let data_dir = parent.join(&name);
        make_private_dir(&data_dir, account)?;
        let mut socket_dir = parent.join(format!("{name}-sock"));
        if !settings::socket_path_fits(&socket_dir) {
            socket_dir = std::env::temp_dir().join(format!("{name}-sock"));
        }
        let mut workspace = Workspace {
            data_dir,
            socket_dir,
            socket_dir_created: false,
            cgroup: None,
            finished: false,
        };
        make_private_dir(&workspace.socket_dir, account)?;
        workspace.socket_dir_created = true;
        Ok(workspace)
    }

    fn cgroup_name(&self) -> String {
        let name = self
            .data_dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy();
        name.trim_start_matches('.').to_string()
    }

    fn keep(&mut self) -> Option<PathBuf> {
        self.finished = true;
        self.cgroup.take().map(MemoryCgroup::keep)
    }

    fn remove(&mut self) -> Result<()> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        let mut dirs = vec![&self.data_dir];
        if self.socket_dir_created {
            dirs.push(&self.socket_dir);
        }
        let mut first_error = None;
        for dir in dirs {
            match std::fs::remove_dir_all(dir) {
                Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                    let error =
                        anyhow::Error::new(error).context(format!("removing {}", dir.display()));
                    first_error.get_or_insert(error);
                }
                _ => {}
            }
        }
        if let Some(Err(error)) = self.cgroup.take().map(MemoryCgroup::remove) {
            first_error.get_or_insert(error);
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

fn make_private_dir(path: &Path, account: Option<&ServerAccount>) -> Result<()> {
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(path)
        .with_context(|| format!("creating directory {}", path.display()))?;
    match account {
        Some(account) => account.chown(path),
        None => Ok(()),
    }
}

fn run_initdb(install: &PgInstall, account: Option<&ServerAccount>, data_dir: &Path) -> Result<()> {
    let initdb = install.binary("initdb");
    let mut command = Command::new(&initdb);
    command
        .arg("-D")
        .arg(data_dir)
        .args([
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        ])
        .current_dir(data_dir)
        .stdin(Stdio::null());
    account::run_as(&mut command, account, None)?;
    let output = command
        .output()
        .with_context(|| format!("running {}", initdb.display()))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let hint = match account {
        Some(account) if stderr.contains("Permission denied") => format!(
            " (every directory above {} must be searchable by OS account {})",
            data_dir.display(),
            account.name
        ),
        _ => String::new(),
    };
    bail!(
        "{} -D {} failed ({}){hint}: {}",
        initdb.display(),
        data_dir.display(),
        output.status,
        stderr.trim()
    )
}

/// Creates the cgroup that limits the server's memory, or says why not.
/// As root without a usable cgroup the fallback is dropping caches; as
/// another user nothing can limit the page cache, which is an error.
fn limit_page_cache(
    workspace: &mut Workspace,
    options: &ClusterOptions,
) -> Result<(PageCacheMethod, Option<String>)> {
    let Some(page_cache_limit) = options.page_cache_limit_bytes else {
        return Ok((PageCacheMethod::Unlimited, None));
    };
    let limit =
        pagecache::server_memory_limit_bytes(options.shared_buffers_bytes, page_cache_limit);
    match MemoryCgroup::create(&workspace.cgroup_name(), limit) {
        Ok(created) => {
            let method = created.method();
            workspace.cgroup = Some(created);
            Ok((method, None))
        }
        Err(error) if unsafe { libc::geteuid() } == 0 => {
            Ok((PageCacheMethod::DropCaches, Some(format!("{error:#}"))))
        }
        Err(error) => Err(error.context(format!(
            "limiting the page cache to {page_cache_limit} bytes: no memory cgroup can be \
             created, and dropping caches instead needs root"
        ))),
    }
}

fn write_server_settings(
    install: &PgInstall,
    account: Option<&ServerAccount>,
    workspace: &Workspace,
    options: &ClusterOptions,
    port: u16,
) -> Result<()> {
    let server_settings =
        settings::server_settings(install.version_num, &workspace.socket_dir, port, options);
    settings::write_settings(&workspace.data_dir, &server_settings, account)
}

struct Launched {
    postmaster: Postmaster,
    port: u16,
    version_num: u32,
}

/// Starts `postgres -D` on `first_port`; when another process took the
/// port between choosing and binding it, tries another.
fn launch(
    install: &PgInstall,
    account: Option<&ServerAccount>,
    workspace: &Workspace,
    options: &ClusterOptions,
    first_port: u16,
) -> Result<Launched> {
    let log = ServerLog::create(&workspace.data_dir, account)?;
    let mut port = first_port;
    for attempt in 1..=PORT_ATTEMPTS {
        if attempt > 1 {
            port = settings::reserve_free_port()?;
            write_server_settings(install, account, workspace, options, port)?;
        }
        let log_start = log.len();
        let mut postmaster = spawn_postmaster(install, account, workspace, options, &log)?;
        match wait_until_ready(
            &mut postmaster,
            &workspace.socket_dir,
            port,
            &log,
            log_start,
        )? {
            Readiness::Ready { version_num } => {
                return Ok(Launched {
                    postmaster,
                    port,
                    version_num,
                })
            }
            Readiness::PortTaken => postmaster.stop()?,
        }
    }
    bail!(
        "PostgreSQL could not bind a free TCP port on 127.0.0.1 in {PORT_ATTEMPTS} attempts; see {}",
        log.path().display()
    )
}

fn spawn_postmaster(
    install: &PgInstall,
    account: Option<&ServerAccount>,
    workspace: &Workspace,
    options: &ClusterOptions,
    log: &ServerLog,
) -> Result<Postmaster> {
    let postgres = install.binary("postgres");
    let mut command = Command::new(&postgres);
    command
        .arg("-D")
        .arg(&workspace.data_dir)
        .current_dir(&workspace.data_dir)
        .stdin(Stdio::null())
        .stdout(log.writer()?)
        .stderr(log.writer()?);
    let cgroup_procs = workspace.cgroup.as_ref().map(MemoryCgroup::procs_file);
    account::run_as(&mut command, account, cgroup_procs)?;
    if !options.survives_strata {
        account::die_with_parent(&mut command, libc::SIGQUIT);
    }
    let child = command.spawn().with_context(|| {
        format!(
            "starting {} -D {}",
            postgres.display(),
            workspace.data_dir.display()
        )
    })?;
    let owner_uid = account.map_or_else(|| unsafe { libc::geteuid() }, |account| account.uid);
    Ok(Postmaster::new(child, &workspace.data_dir, owner_uid))
}

enum Readiness {
    Ready { version_num: u32 },
    PortTaken,
}

/// Polls until a connection over the socket succeeds, the postmaster exits,
/// or [`READY_TIMEOUT`] passes.
fn wait_until_ready(
    postmaster: &mut Postmaster,
    socket_dir: &Path,
    port: u16,
    log: &ServerLog,
    log_start: u64,
) -> Result<Readiness> {
    let deadline = Instant::now() + READY_TIMEOUT;
    on_own_runtime(async {
        loop {
            if let Some(status) = postmaster.exit_status()? {
                if log.says_port_taken(log_start) {
                    return Ok(Readiness::PortTaken);
                }
                bail!(
                    "postmaster exited ({status}) before accepting connections; last lines of {}:\n{}",
                    log.path().display(),
                    log.tail(log_start)
                );
            }
            let attempt = query_version_num(socket_dir, port).await;
            match attempt {
                Ok(version_num) => return Ok(Readiness::Ready { version_num }),
                Err(error) if Instant::now() >= deadline => bail!(
                    "PostgreSQL did not accept connections in {} s (last attempt: {error:#}); \
                     last lines of {}:\n{}",
                    READY_TIMEOUT.as_secs(),
                    log.path().display(),
                    log.tail(log_start)
                ),
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    })
}

async fn query_version_num(socket_dir: &Path, port: u16) -> Result<u32> {
    let (client, connection) = tokio_postgres::Config::new()
        .host_path(socket_dir)
        .port(port)
        .user(SUPERUSER)
        .dbname("postgres")
        .connect_timeout(Duration::from_secs(1))
        .connect(tokio_postgres::NoTls)
        .await
        .with_context(|| format!("connecting to {} port {port}", socket_dir.display()))?;
    tokio::spawn(connection);
    super::counters::server_version_num(&client).await
}

/// Runs `future` to completion on a runtime of its own in a thread of its
/// own, so that `start()` works whether or not the caller is inside a
/// tokio runtime.
fn on_own_runtime<T: Send>(
    future: impl std::future::Future<Output = Result<T>> + Send,
) -> Result<T> {
    std::thread::scope(|scope| {
        let thread = scope.spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("building a tokio runtime to wait for the server")?;
            runtime.block_on(future)
        });
        thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
