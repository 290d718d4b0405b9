//! `strata observe`: its options, the collectors of every layer it was
//! asked for (the operating system's, and a database server's through its
//! engine in the registry), and where its samples go; the loop itself is `strata_observe::watch`.
//!
//! Not for: sampling or showing (strata-observe).

use crate::interrupt;
use crate::output::Stream;
use anyhow::{bail, Context};
use clap::Args;
use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use strata_core::metrics::Collector;
use strata_observe::watch::{self, NfsServer, ObserveRequest, Shape, Shown};
use strata_output::args::{OutputArgs, RecordingPath};
use strata_output::render::Format;
use strata_probe::collectors::{
    all_os_collectors, BlockTraceCollector, DeviceFilter, GaneshaCollector,
};
use strata_recording::format::check_path;
use strata_recording::{Existing, RecordingWriter};
use strata_run::registry::RecordedServers;

#[derive(Args, Debug)]
pub struct ObserveArgs {
    #[command(flatten)]
    request: ObserveRequest,
    /// text: live on a terminal, timestamped lines when piped; json: one
    /// line per interval; csv: one row per metric per sample; html: the report
    /// of the samples when observing ends
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(mut args: ObserveArgs) -> anyhow::Result<i32> {
    check_top_output(&args)?;
    let mut stream = Stream::open(&args.output)?;
    let mut write = |text: &str| stream.write(text);
    if let Some(path) = &args.request.replay {
        if args.output.chosen() == Format::Html {
            report_page(&args.output, path)?;
        } else {
            let mut shown = Shown::new(
                Shape::of(args.output.chosen(), None),
                args.request.all,
                &mut write,
            );
            watch::replay(path, &mut shown)?;
        }
        return Ok(0);
    }
    let interval = args.request.interval()?;
    args.output.check_writable()?;
    let recording = RecordingPath::for_output(args.request.record.clone(), args.output.chosen())?;
    let existing = match (&recording, args.request.overwrite) {
        (RecordingPath::Asked(_), false) => Existing::Refuse,
        _ => Existing::Replace,
    };
    if let Some(path) = recording.path() {
        check_path(&path, existing).map_err(|error| error.context("--record"))?;
    }
    let agents = &mut args.request.agents;
    args.request.agent_access.apply(agents)?;
    let (mut collectors, databases) = collectors(&args.request)?;
    let other_hosts = strata_run::server_host::follow_others(&args.request.agents)?;
    collectors.extend(other_hosts.collectors);
    let interrupt = interrupt::install();
    let writer = match recording.path() {
        Some(path) => Some(
            RecordingWriter::create(
                &path,
                &args.request.header(
                    crate::engines::redacted_command_line(),
                    interval,
                    databases,
                    &other_hosts.hosts,
                ),
                existing,
            )
            .map_err(|error| error.context("--record"))?,
        ),
        None => None,
    };
    let live = args.output.text_to_stdout() && std::io::stdout().is_terminal();
    let shape = Shape::of(args.output.chosen(), live.then_some(interval));
    let mut shown = Shown::new(shape, args.request.all, &mut write);
    watch::watch(&args.request, collectors, interrupt, writer, &mut shown)?;
    if let Some(path) = recording
        .path()
        .filter(|_| args.output.chosen() == Format::Html)
    {
        report_page(&args.output, &path)?;
    }
    Ok(match interrupt.load(Ordering::Relaxed) {
        true => interrupt::exit_code(),
        false => 0,
    })
}

/// `--top` is shown as text or JSON: refused with CSV (one row per metric)
/// and HTML (the report of the layers) before any work.
fn check_top_output(args: &ObserveArgs) -> anyhow::Result<()> {
    let format = args.output.chosen();
    if let (Some(count), Format::Csv | Format::Html) = (args.request.top, format) {
        bail!(
            "--top {count} is shown with --format text or --format json (--json), not with \
             --format {}",
            format.name()
        );
    }
    Ok(())
}

fn report_page(output: &OutputArgs, path: &std::path::Path) -> anyhow::Result<()> {
    let report = strata_report::recording::report_with(path, &Default::default())?;
    crate::output::print(output, &strata_output::Output::document(report))
}

/// Every collector of this machine asked for, and the database servers
/// among them as the Recording's options name them.
fn collectors(args: &ObserveRequest) -> anyhow::Result<(Vec<Box<dyn Collector>>, RecordedServers)> {
    let filter = match (&args.path, args.device.is_empty()) {
        (Some(path), _) => DeviceFilter::Path(path.clone()),
        (None, false) => DeviceFilter::Names(args.device.clone()),
        (None, true) => DeviceFilter::All,
    };
    let servers = crate::engines::REGISTRY.observe(&args.databases())?;
    let pids = [args.pid.as_slice(), &servers.local_pids].concat();
    let mut collectors = all_os_collectors(filter, pids)?;
    collectors.push(Box::new(BlockTraceCollector::new()));
    if let Some(NfsServer::Ganesha) = args.nfs_server {
        let ganesha = GaneshaCollector::connect().context("--nfs-server ganesha")?;
        collectors.push(Box::new(ganesha));
    }
    collectors.extend(servers.collectors);
    Ok((collectors, servers.recorded))
}
