//! What an AWR or STATSPACK report says, read but not yet judged: header
//! facts, the Load Profile as printed, the instance statistics, wait events,
//! I/O by function and by file type, RAC per-instance rates, host CPU and
//! parameters. Every figure is as Oracle printed it (counts, per-second
//! rates, MiB where Oracle's "MB" is binary); a figure the report does not
//! have is `None` or absent, never zero.
//!
//! Not for: derived figures or labels (see `figures` and `build`).

use std::collections::BTreeMap;

/// Which kind of report was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// awrrpt HTML, one instance.
    HtmlAwr,
    /// awrgrpt HTML, the whole cluster.
    HtmlAwrGlobal,
    /// awrrpt plain text.
    TextAwr,
    /// spreport plain text.
    Statspack,
}

impl Format {
    pub fn describe(self) -> &'static str {
        match self {
            Format::HtmlAwr => "AWR report (HTML)",
            Format::HtmlAwrGlobal => "AWR RAC global report (HTML)",
            Format::TextAwr => "AWR report (text)",
            Format::Statspack => "STATSPACK report (text)",
        }
    }

    pub fn is_statspack(self) -> bool {
        self == Format::Statspack
    }
}

/// One AWR or STATSPACK report.
#[derive(Debug, Clone, PartialEq)]
pub struct AwrReport {
    /// The file name as given.
    pub name: String,
    pub format: Format,
    pub header: ReportHeader,
    /// Load Profile rows as printed (label without the colon).
    pub load_profile: Vec<ProfileRow>,
    /// Instance Activity Stats (or System Statistics (Global)) by name.
    pub activity: BTreeMap<String, ActivityStat>,
    /// The report's top timed (foreground) events, in its order.
    pub top_events: Vec<WaitEvent>,
    pub foreground_events: Vec<WaitEvent>,
    pub background_events: Vec<WaitEvent>,
    /// Events from other lists (a RAC report's Top Timed Events of both
    /// kinds, STATSPACK's fg-and-bg list): looked at last.
    pub other_events: Vec<WaitEvent>,
    pub wait_classes: Vec<WaitEvent>,
    pub io_by_function: Vec<IoRow>,
    pub io_by_filetype: Vec<IoRow>,
    /// RAC: System Statistics - Per Second, one row per instance and the
    /// Sum row, as (row label, heading → value).
    pub rac_per_second: Vec<(String, BTreeMap<String, f64>)>,
    pub host_cpu: Option<HostCpu>,
    /// init.ora parameters (begin values).
    pub parameters: BTreeMap<String, String>,
    /// Parts that could not be read, each named.
    pub problems: Vec<String>,
}

/// An AWR or STATSPACK report's header: the database, its instances and
/// release (not a Recording's `Header`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportHeader {
    pub database: Option<String>,
    /// The database's DBID: what tells two databases of one name apart.
    pub dbid: Option<String>,
    pub instances: Vec<String>,
    /// An instance report's instance number (`Inst Num`).
    pub instance_number: Option<u32>,
    /// How many instances the database had open at the snapshots (a RAC
    /// instance report's `Instances` column).
    pub cluster_instances: Option<u32>,
    /// A PDB report's container (12.2 and later, awrrpt run in a PDB).
    pub pdb: Option<String>,
    /// The HTML was spooled through SQL*Plus at this line size, every line
    /// cut and padded there; the reader rejoined the lines.
    pub spooled_at: Option<usize>,
    pub release: Option<String>,
    pub rac: Option<bool>,
    pub host: Option<String>,
    pub block_size_bytes: Option<f64>,
    /// Where the block size came from, e.g. "Std Block Size".
    pub block_size_source: Option<String>,
    pub begin_snap: Option<Snapshot>,
    pub end_snap: Option<Snapshot>,
    pub elapsed_s: Option<f64>,
    pub db_time_s: Option<f64>,
}

/// A snapshot: its id and time as printed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    pub id: Option<u64>,
    pub time: String,
    /// `time` as seconds since 1970 (as printed, no zone).
    pub epoch_s: Option<f64>,
}

/// A Load Profile row.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileRow {
    pub label: String,
    pub per_second: Option<f64>,
    pub per_transaction: Option<f64>,
}

/// An instance statistic over the interval.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ActivityStat {
    pub total: Option<f64>,
    pub per_second: Option<f64>,
    pub per_transaction: Option<f64>,
}

/// Which sessions' waits a table counts: Oracle keeps foreground
/// (user sessions), background (LGWR, DBWR, …) and all-session lists, and
/// an event's figures mean something different in each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EventTable {
    /// User sessions only (the Foreground Wait Events, Top … Foreground).
    #[default]
    Foreground,
    /// Background processes only.
    Background,
    /// Every session together (STATSPACK's Top 5, a RAC report's Top Timed
    /// Events, the all-session event list).
    AllSessions,
}

impl EventTable {
    /// How a table of this kind is named to the reader.
    pub fn describe(self) -> &'static str {
        match self {
            EventTable::Foreground => "foreground",
            EventTable::Background => "background",
            EventTable::AllSessions => "all sessions",
        }
    }
}

/// A wait event (or wait class, or DB CPU), as one table of the report
/// printed it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WaitEvent {
    pub name: String,
    pub waits: Option<f64>,
    pub time_s: Option<f64>,
    /// Oracle's printed average (converted to ms): rounded to whole ms in
    /// 11g and STATSPACK; see [`WaitEvent::average`] for time ÷ waits.
    pub avg_ms: Option<f64>,
    /// The share in `pct_time`, as its heading says: "% of DB time",
    /// "% of background time", "% of total call time".
    pub pct_time: Option<f64>,
    pub pct_of: Option<String>,
    pub wait_class: Option<String>,
    /// The table the row came from.
    pub table: EventTable,
    /// The value of one unit in the last printed digit of each column
    /// (`2,701` → 1 s, `276.6M` → 100,000 waits, `1` ms → 1 ms).
    pub time_resolution_s: Option<f64>,
    pub waits_resolution: Option<f64>,
    pub avg_resolution_ms: Option<f64>,
}

/// An event's average wait: time ÷ waits where the row has both, unless
/// Oracle's printed average agrees with it and is the more precise of the
/// two (12c prints `420.51us` beside a time of `116.3` s); else Oracle's
/// printed one. With the decimals the inputs support, and Oracle's
/// printed average where it differs by more than its rounding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Average {
    pub ms: f64,
    pub decimals: usize,
    /// Time ÷ waits (true) or Oracle's printed average (false).
    pub computed: bool,
    /// Oracle's printed average, kept where it disagrees with time ÷ waits
    /// beyond the rounding of both.
    pub oracle_ms: Option<f64>,
    /// How far `ms` may be from the truth, from the printed rounding.
    pub uncertainty_ms: f64,
}

impl WaitEvent {
    /// The average wait in ms: time ÷ waits, else Oracle's printed one.
    pub fn average_ms(&self) -> Option<f64> {
        self.average().map(|average| average.ms)
    }

    /// The average wait with its precision; see [`Average`].
    pub fn average(&self) -> Option<Average> {
        match (self.time_s, self.waits) {
            (Some(time_s), Some(waits)) if waits > 0.0 && time_s > 0.0 => {
                Some(self.computed_average(time_s, waits))
            }
            _ => {
                let printed = self.avg_ms?;
                let resolution = self.avg_resolution_ms.unwrap_or(0.001);
                Some(Average {
                    ms: printed,
                    decimals: decimals_for(resolution).min(decimals_supported(printed, 0.0)),
                    computed: false,
                    oracle_ms: None,
                    uncertainty_ms: resolution / 2.0,
                })
            }
        }
    }

    fn computed_average(&self, time_s: f64, waits: f64) -> Average {
        let ms = time_s * 1000.0 / waits;
        let relative = self.time_resolution_s.unwrap_or(0.0) / 2.0 / time_s
            + self.waits_resolution.unwrap_or(0.0) / 2.0 / waits;
        let uncertainty_ms = ms * relative;
        let rounding = self.avg_resolution_ms.unwrap_or(0.0) / 2.0;
        let oracle_ms = self
            .avg_ms
            .filter(|printed| (printed - ms).abs() > rounding + uncertainty_ms + 1e-9);
        if let Some(printed) = self.avg_ms.filter(|_| oracle_ms.is_none()) {
            if rounding > 0.0 && rounding < uncertainty_ms {
                return Average {
                    ms: printed,
                    decimals: decimals_for(rounding * 2.0).min(decimals_supported(printed, 0.0)),
                    computed: false,
                    oracle_ms: None,
                    uncertainty_ms: rounding,
                };
            }
        }
        Average {
            ms,
            decimals: decimals_supported(ms, relative),
            computed: true,
            oracle_ms,
            uncertainty_ms,
        }
    }
}

/// The most significant digits an average is shown with: a column of
/// averages reads alike (1.43, 0.102, 0.842), not 1.43 beside 0.1016.
const MOST_SIGNIFICANT_DIGITS: f64 = 3.0;

/// Decimals that show the significant digits a value of this relative
/// uncertainty has, at most [`MOST_SIGNIFICANT_DIGITS`] and four decimals;
/// none where even the units digit is uncertain.
pub fn decimals_supported(value: f64, relative: f64) -> usize {
    let significant = if relative > 0.0 {
        (1.0 / relative)
            .log10()
            .floor()
            .clamp(1.0, MOST_SIGNIFICANT_DIGITS)
    } else {
        MOST_SIGNIFICANT_DIGITS
    };
    let magnitude = value.abs().max(1e-9).log10().floor();
    (significant - 1.0 - magnitude).clamp(0.0, 4.0) as usize
}

/// Decimals that show a value printed with this resolution.
pub fn decimals_for(resolution: f64) -> usize {
    if resolution >= 1.0 {
        0
    } else {
        (-resolution.log10()).round().clamp(0.0, 4.0) as usize
    }
}

/// A row of IOStat by Function or by Filetype, per second over the
/// interval. Data is in MiB: Oracle's IOStat 'Data' columns are binary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IoRow {
    /// The function or file type, in full ("Buffer Cache Reads", "Data
    /// File"); the totals row is "TOTAL".
    pub name: String,
    pub read_requests_per_s: Option<f64>,
    pub read_mib_per_s: Option<f64>,
    pub write_requests_per_s: Option<f64>,
    pub write_mib_per_s: Option<f64>,
    /// By function: wait count and average wait.
    pub waits: Option<f64>,
    pub avg_wait_ms: Option<f64>,
    /// By file type: average service time of small (single-block) and
    /// large (multiblock) reads.
    pub small_read_ms: Option<f64>,
    pub large_read_ms: Option<f64>,
}

/// The host's CPUs over the interval (summed over a cluster's hosts).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostCpu {
    pub cpus: Option<f64>,
    pub idle_pct: Option<f64>,
    pub load_begin: Option<f64>,
    pub load_end: Option<f64>,
}

impl AwrReport {
    pub fn new(name: &str, format: Format) -> Self {
        AwrReport {
            name: name.to_string(),
            format,
            header: ReportHeader::default(),
            load_profile: Vec::new(),
            activity: BTreeMap::new(),
            top_events: Vec::new(),
            foreground_events: Vec::new(),
            background_events: Vec::new(),
            other_events: Vec::new(),
            wait_classes: Vec::new(),
            io_by_function: Vec::new(),
            io_by_filetype: Vec::new(),
            rac_per_second: Vec::new(),
            host_cpu: None,
            parameters: BTreeMap::new(),
            problems: Vec::new(),
        }
    }

    /// An instance statistic by its exact name.
    pub fn stat(&self, name: &str) -> Option<&ActivityStat> {
        self.activity.get(name)
    }

    /// The total of a statistic over the interval, from its total or its
    /// per-second rate × elapsed.
    pub fn stat_total(&self, name: &str) -> Option<f64> {
        let stat = self.stat(name)?;
        stat.total
            .or_else(|| Some(stat.per_second? * self.header.elapsed_s?))
    }

    /// A statistic per second, from its rate or its total ÷ elapsed.
    pub fn stat_per_second(&self, name: &str) -> Option<f64> {
        let stat = self.stat(name)?;
        stat.per_second.or_else(|| {
            let elapsed = self.header.elapsed_s.filter(|elapsed| *elapsed > 0.0)?;
            Some(stat.total? / elapsed)
        })
    }

    /// The Load Profile row whose label starts with one of `labels`.
    pub fn profile(&self, labels: &[&str]) -> Option<&ProfileRow> {
        labels.iter().find_map(|label| {
            self.load_profile
                .iter()
                .find(|row| row.label.eq_ignore_ascii_case(label))
        })
    }

    /// A wait event as user sessions waited it: the foreground list, the
    /// top events, then an all-session list (STATSPACK, 10g, RAC), never
    /// a background list. The event's `table` says which it came from.
    pub fn foreground_event(&self, name: &str) -> Option<&WaitEvent> {
        find_event(&self.foreground_events, name)
            .or_else(|| find_event(&self.top_events, name))
            .or_else(|| find_event(&self.other_events, name))
    }

    /// A background wait event (the log writer's): the background list,
    /// then an all-session list, never a foreground one.
    pub fn background_event(&self, name: &str) -> Option<&WaitEvent> {
        find_event(&self.background_events, name).or_else(|| find_event(&self.other_events, name))
    }

    pub fn parameter(&self, name: &str) -> Option<&str> {
        self.parameters.get(name).map(String::as_str)
    }
}

/// Text reports cut event names to the column width, so a name matches
/// when it is the printed (possibly cut) prefix of `name`.
fn find_event<'a>(events: &'a [WaitEvent], name: &str) -> Option<&'a WaitEvent> {
    events
        .iter()
        .find(|event| event.name.eq_ignore_ascii_case(name))
        .or_else(|| {
            events.iter().find(|event| {
                event.name.len() >= 20
                    && name.len() > event.name.len()
                    && name.starts_with(event.name.as_str())
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_show_three_significant_digits_at_most_and_none_they_lack() {
        let shown =
            |value: f64, relative: f64| format!("{value:.*}", decimals_supported(value, relative));
        assert_eq!(shown(1.4321, 1e-5), "1.43");
        assert_eq!(shown(0.101_63, 1e-5), "0.102");
        assert_eq!(shown(0.842, 1e-5), "0.842");
        assert_eq!(shown(20.79, 1e-5), "20.8");
        assert_eq!(shown(1_327.1, 1e-5), "1327");
        // 21 ms − 2 ms, each printed to the ms: the rest has no decimal.
        assert_eq!(shown(19.0, 1.0 / 19.0), "19");
        assert_eq!(shown(7.51, 0.055 / 7.51), "7.5");
    }
}
