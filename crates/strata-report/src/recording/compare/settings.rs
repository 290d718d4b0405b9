//! [settings] of compared Recordings: what each was run with (engine,
//! server version, data set, sessions, work unit, update %, the database's
//! cache, the page-cache limit, window, host, device), read from the
//! header's options and environment and the result record; a table of the
//! settings that differ, one column per Recording, and a line naming those
//! that are the same. Also the figures `explain` weighs (data set, cache,
//! sessions).
//!
//! Not for: measured figures (`operations`, `points`, `profile`).

use super::Side;
use strata_core::units::format_size;
use strata_output::document::{Cell, Column, Section, Table};
use strata_recording::environment::{DatabaseCache, PageCache};
use strata_recording::{Kind, Recording};

/// The throwaway PostgreSQL cluster's shared_buffers when the run gave no
/// `--shared-buffers` (strata-postgres's `DEFAULT_SHARED_BUFFERS`).
const THROWAWAY_SHARED_BUFFERS_BYTES: f64 = 128.0 * 1024.0 * 1024.0;

fn size(bytes: f64) -> String {
    format_size(bytes.max(0.0) as u64)
}

/// The run's data set, bytes: schemas × blocks per schema × block size.
pub(super) fn data_set_bytes(recording: &Recording) -> Option<f64> {
    let plan = recording.header.options.plan.as_ref()?;
    let (schemas, blocks) = (f64::from(plan.schemas), plan.blocks_per_schema as f64);
    Some(schemas * blocks * super::super::run::block_bytes(&recording.header.environment))
}

fn data_set_text(recording: &Recording) -> Option<Cell> {
    let bytes = data_set_bytes(recording)?;
    let plan = recording.header.options.plan.as_ref()?;
    let schemas = f64::from(plan.schemas);
    let each = size(bytes / schemas.max(1.0));
    let text = match plan.single_schema {
        true => format!("1 shared schema of {each}"),
        false => format!("{schemas} × {each} = {}", size(bytes)),
    };
    Some(Cell::number_as(bytes, "bytes", text))
}

/// The database's own cache, bytes, and what the engine calls it.
pub(super) fn database_cache(recording: &Recording) -> Option<(f64, &'static str)> {
    let environment = &recording.header.environment;
    let cache = environment.recorded_engine()?.cache?;
    let bytes = match cache {
        DatabaseCache::InnodbBufferPool => environment.buffer_pool_bytes.map(|bytes| bytes as f64),
        DatabaseCache::SharedBuffers => (recording.header.options.shared_buffers_bytes)
            .map(|bytes| bytes as f64)
            .or_else(|| {
                (environment.server.as_deref() == Some("throwaway cluster"))
                    .then_some(THROWAWAY_SHARED_BUFFERS_BYTES)
            }),
    };
    Some((bytes?, cache.setting()))
}

/// The sessions that ran: the result's, else the options'.
pub(super) fn sessions(recording: &Recording) -> Option<f64> {
    if let Some(result) = recording.run_result() {
        return Some(f64::from(result.figures.sessions.started));
    }
    let options = &recording.header.options;
    let asked = match (&options.plan, options.threads_per_schema) {
        (Some(plan), Some(threads)) => strata_recording::environment::session_total(
            options.sessions,
            (plan.schemas, plan.single_schema),
            threads,
        ),
        _ => u64::from(options.sessions?),
    };
    Some(asked as f64)
}

/// How the page cache was limited: the cgroup's limit, or the method.
fn page_cache(recording: &Recording) -> Option<String> {
    let page_cache = recording.header.environment.page_cache.as_ref()?;
    let method = page_cache.method().to_string();
    match page_cache {
        PageCache::Chosen {
            limit_bytes: Some(bytes),
            ..
        } => Some(format!("{} ({method})", size(*bytes as f64))),
        _ => Some(method),
    }
}

fn engine(recording: &Recording) -> Option<String> {
    let environment = &recording.header.environment;
    environment.engine.as_ref()?;
    let engine = environment.engine_label();
    Some(format!(
        "{engine} ({})",
        environment.server.as_deref().unwrap_or("a server")
    ))
}

fn server_version(recording: &Recording) -> Option<String> {
    let environment = &recording.header.environment;
    environment.server_version.clone().or_else(|| {
        environment
            .server_version_num
            .map(|number| format!("{}.{}", number / 10_000, number % 10_000))
    })
}

fn host(recording: &Recording) -> String {
    let host = &recording.header.host;
    format!(
        "{}, {} CPUs, {:.1} GiB, Linux {}",
        host.hostname,
        host.cpus,
        host.memory_bytes as f64 / (1u64 << 30) as f64,
        host.kernel
    )
}

/// The devices measured, each with what sysfs says of it.
fn devices(side: &Side) -> Option<String> {
    let environment = &side.recording.header.environment;
    let names: Vec<String> = side
        .measured
        .devices
        .iter()
        .map(|device| {
            let details = environment
                .devices_described()
                .find(|details| details.name == device.name);
            match details {
                Some(details) => format!(
                    "{} ({}, {})",
                    device.name,
                    match details.rotational {
                        Some(true) => "rotational",
                        Some(false) => "non-rotational",
                        None => "rotation unknown",
                    },
                    format_size(details.size_bytes)
                ),
                None => device.name.clone(),
            }
        })
        .collect();
    (!names.is_empty()).then(|| names.join(", "))
}

fn text(value: Option<String>) -> Option<Cell> {
    value.map(Cell::text)
}

fn number(value: Option<f64>, unit: &str, text: impl Fn(f64) -> String) -> Option<Cell> {
    value.map(|value| Cell::number_as(value, unit, text(value)))
}

/// A run's settings, by name; `None` where the Recording does not say.
fn run_settings(side: &Side) -> Vec<(&'static str, Option<Cell>)> {
    let recording = &side.recording;
    let cache = database_cache(recording);
    let workload = recording.header.options.workload.as_ref();
    vec![
        ("engine", text(engine(recording))),
        ("server version", text(server_version(recording))),
        ("data set (schemas × size)", data_set_text(recording)),
        (
            "sessions",
            number(sessions(recording), "sessions", |n| format!("{n}")),
        ),
        (
            "work unit",
            number(
                workload.and_then(|workload| workload.work_unit.map(f64::from)),
                "blocks",
                |n| format!("{n} blocks"),
            ),
        ),
        (
            "update %",
            number(
                workload.and_then(|workload| workload.update_pct),
                "%",
                |n| format!("{n}%"),
            ),
        ),
        (
            "database cache",
            cache.map(|(bytes, name)| {
                Cell::number_as(bytes, "bytes", format!("{} ({name})", size(bytes)))
            }),
        ),
        ("page-cache limit", text(page_cache(recording))),
    ]
}

/// A calibration's settings, by name.
fn calibrate_settings(side: &Side) -> Vec<(&'static str, Option<Cell>)> {
    let recording = &side.recording;
    let options = &recording.header.options;
    let target =
        recording
            .header
            .environment
            .target
            .as_ref()
            .map(|target| match options.target.is_some() {
                true => format!("{} ({})", target.path, target.kind),
                false => "a temporary file".to_string(),
            });
    vec![
        ("target", text(target)),
        (
            "size",
            number(options.size_bytes.map(|bytes| bytes as f64), "bytes", size),
        ),
        ("I/O engine", text(options.engine.clone())),
        (
            "direct I/O",
            text(options.direct.map(|direct| direct.to_string())),
        ),
        ("mode", text(options.mode.clone())),
        (
            "points",
            Some(Cell::number(
                recording.point_results().count() as f64,
                0,
                "points",
            )),
        ),
    ]
}

/// Every setting of the side, in the order the table gives them.
fn settings_of(side: &Side) -> Vec<(&'static str, Option<Cell>)> {
    let mut settings = match side.recording.header.kind {
        Kind::Run => run_settings(side),
        Kind::Calibrate => calibrate_settings(side),
        Kind::Observe => Vec::new(),
    };
    let window_s = side.measured.window_s;
    settings.extend([
        (
            "window",
            Some(Cell::number_as(window_s, "s", format!("{window_s:.1} s"))),
        ),
        ("host", Some(Cell::text(host(&side.recording)))),
        ("device", text(devices(side))),
        (
            "strata version",
            Some(Cell::text(side.recording.header.strata_version.clone())),
        ),
    ]);
    settings
}

/// The section: the settings that differ, then a line naming the same.
pub(super) fn section(sides: &[Side]) -> Section {
    let each: Vec<Vec<(&str, Option<Cell>)>> = sides.iter().map(settings_of).collect();
    let mut columns = vec![Column::text("setting")];
    columns.extend(sides.iter().map(|side| Column::text(side.mark.as_str())));
    let mut table = Table::new(Some("Settings that differ"), columns);
    let mut same = Vec::new();
    for (index, (name, _)) in each[0].iter().enumerate() {
        let cells: Vec<Cell> = each
            .iter()
            .map(|settings| {
                settings[index]
                    .1
                    .clone()
                    .unwrap_or_else(|| Cell::text("not recorded"))
            })
            .collect();
        if cells.iter().all(|cell| cell.text == cells[0].text) {
            same.push(format!("{name} ({})", cells[0].text));
            continue;
        }
        let mut row = vec![Cell::text(*name)];
        row.extend(cells);
        table.push(row);
    }
    let mut section = Section::new("settings", "Settings: what differs");
    section = match table.rows.is_empty() {
        true => section.note("No setting differs."),
        false => section.table(table),
    };
    match same.is_empty() {
        true => section.note("No setting is the same."),
        false => section.note(format!("The same in every Recording: {}.", same.join("; "))),
    }
}
