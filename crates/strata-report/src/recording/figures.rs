//! A [`Measured`] window turned into the findings' [`WindowFigures`].
//!
//! Not for: deciding what a finding says (`crate::findings`).

use super::measured::Measured;
use crate::findings::{DatabaseIo, NetworkIo, TempFigures, WindowFigures};

pub(crate) fn window_figures(measured: &Measured) -> WindowFigures {
    let database = measured.database.as_ref();
    WindowFigures {
        window_s: measured.window_s,
        block_size_bytes: database.map(|_| measured.block_bytes),
        database: DatabaseIo {
            blocks_read: database.map(|database| database.blocks_read),
            read_requests: database.and_then(|database| database.read_requests),
            read_bytes: database.and_then(|database| database.read_bytes),
            through_page_cache: database.is_some_and(|database| database.through_page_cache),
            scans: measured
                .workload
                .as_ref()
                .is_some_and(|workload| workload.scans > 0.0),
        },
        devices: measured.devices.clone(),
        network: network(measured),
        commit: measured.commit.clone(),
        cpu: measured.cpu.clone(),
        temp: database
            .filter(|database| database.temp_files.is_finite() && database.temp_bytes.is_finite())
            .map(|database| TempFigures {
                files: database.temp_files,
                bytes: database.temp_bytes,
            }),
        steadiness: measured.steadiness.clone(),
        outliers: Some(measured.outliers.clone()),
        outlier_submitters: measured.outlier_submitters.clone(),
    }
}

fn network(measured: &Measured) -> Option<NetworkIo> {
    if measured.nfs.is_none() && measured.nic.is_none() {
        return None;
    }
    Some(NetworkIo {
        nfs_read_bytes: measured.nfs.as_ref().map(|nfs| nfs.read_bytes),
        nic_receive_bytes: measured.nic.as_ref().map(|nic| nic.receive_bytes),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::measured::DatabaseTotals;
    use strata_output::document::Window;

    #[test]
    fn the_database_read_requests_of_postgresql_18_reach_the_findings() {
        let mut measured = Measured::empty(Window {
            from_s: 0.0,
            to_s: 3.0,
        });
        measured.database = Some(DatabaseTotals {
            blocks_read: 1000.0,
            read_requests: Some(400.0),
            read_bytes: Some(8192e3),
            ..DatabaseTotals::default()
        });
        let database = window_figures(&measured).database;
        assert_eq!(database.read_requests, Some(400.0));
        assert_eq!(database.read_bytes, Some(8192e3));
        measured.database = Some(DatabaseTotals::default());
        assert_eq!(window_figures(&measured).database.read_requests, None);
    }
}
