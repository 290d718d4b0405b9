//! The top processes of one interval as a text section beside the layers:
//! device MB/s read and written (10^6 bytes, from /proc/PID/io's
//! storage-layer bytes), read and write system calls per second, % of one
//! CPU, run-queue delay in ms per second, the database role and the
//! command line; where the block layer is traced, the block requests each
//! submitted per second, read and written, and their mean device time. A
//! figure the kernel would not show is "—", never 0.
//!
//! Not for: computing the figures (`top`) or the layers' sections (`view`).

use crate::layer_table::LayerTable;
use crate::top::{TopProcess, TopProcesses};

/// Characters of the command line shown in the table (the JSON line keeps
/// up to 120).
const COMMAND_SHOWN: usize = 60;

/// The section of `top`: a note first when some processes' I/O could not
/// be read, then one row per process, busiest first.
pub fn section(top: &TopProcesses) -> LayerTable {
    let header = format!(
        "{:>8} {:>10} {:>10} {:>15} {:>16} {:>10} {:>10} {:>8} {:>6} {:>9}  {:<24} command",
        "pid",
        "read MB/s",
        "write MB/s",
        "read syscalls/s",
        "write syscalls/s",
        "blk rd/s",
        "blk wr/s",
        "D2C ms",
        "% CPU",
        "runq ms/s",
        "database role",
    );
    let mut rows = Vec::new();
    if top.io_unreadable > 0 {
        rows.push(format!(
            "I/O of {} of {} could not be read (run as root or with CAP_SYS_PTRACE): shown as —",
            top.io_unreadable,
            strata_core::units::counted(top.processes_seen as u64, "process", "processes")
        ));
    }
    rows.extend(top.processes.iter().map(row));
    LayerTable {
        layer: "top".to_string(),
        header,
        rows,
        active: true,
    }
}

fn row(process: &TopProcess) -> String {
    let role = match (&process.database, &process.role) {
        (Some(database), Some(role)) => format!("{database} {role}"),
        _ => "-".to_string(),
    };
    format!(
        "{:>8} {:>10} {:>10} {:>15} {:>16} {:>10} {:>10} {:>8} {:>6.1} {:>9}  {:<24} {}",
        process.pid,
        figure(process.read_mb_per_s, 2),
        figure(process.write_mb_per_s, 2),
        figure(process.read_syscalls_per_s, 1),
        figure(process.write_syscalls_per_s, 1),
        figure(process.traced_read_requests_per_s, 1),
        figure(process.traced_write_requests_per_s, 1),
        figure(process.traced_device_time_mean_ms, 3),
        process.cpu_pct,
        figure(process.run_delay_ms_per_s, 1),
        role,
        shortened(&process.command),
    )
}

/// A figure with `decimals`, or "—" when there is none.
fn figure(value: Option<f64>, decimals: usize) -> String {
    value.map_or("—".to_string(), |value| format!("{value:.decimals$}"))
}

fn shortened(command: &str) -> String {
    match command.char_indices().nth(COMMAND_SHOWN - 1) {
        Some((cut, _)) => format!("{}…", &command[..cut]),
        None => command.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(pid: u32, read: Option<f64>) -> TopProcess {
        TopProcess {
            pid,
            start_ticks: 1,
            command: "postgres: 15/main: user db [local] SELECT".into(),
            database: Some("postgresql".into()),
            role: Some("backend".into()),
            read_mb_per_s: read,
            write_mb_per_s: read.map(|_| 0.0),
            read_syscalls_per_s: read.map(|_| 12.0),
            write_syscalls_per_s: None,
            cpu_pct: 3.25,
            run_delay_ms_per_s: Some(0.5),
            traced_read_requests_per_s: read.map(|_| 250.0),
            traced_write_requests_per_s: read.map(|_| 0.0),
            traced_device_time_mean_ms: read.map(|_| 0.125),
        }
    }

    #[test]
    fn unreadable_io_is_a_dash_and_said_once_at_the_top() {
        let top = TopProcesses {
            t_s: 2.0,
            interval_s: 1.0,
            limit: 2,
            processes_seen: 40,
            io_unreadable: 7,
            processes: vec![process(10, Some(125.5)), process(11, None)],
            ranked_by: String::new(),
        };
        let section = section(&top);
        assert!(section.header.contains("read MB/s") && section.header.contains("syscalls/s"));
        assert!(section.rows[0].starts_with("I/O of 7 of 40 processes could not be read"));
        assert_eq!(
            section
                .rows
                .iter()
                .filter(|r| r.contains("could not"))
                .count(),
            1
        );
        let readable: Vec<&str> = section.rows[1].split_whitespace().collect();
        assert_eq!(
            &readable[..11],
            [
                "10",
                "125.50",
                "0.00",
                "12.0",
                "—",
                "250.0",
                "0.0",
                "0.125",
                "3.2",
                "0.5",
                "postgresql"
            ]
        );
        let hidden: Vec<&str> = section.rows[2].split_whitespace().collect();
        assert_eq!(&hidden[1..8], ["—"; 7], "{}", section.rows[2]);
        assert!(section.rows[2].contains("backend"));
    }
}
