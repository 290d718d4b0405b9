//! A [`Measured`] window turned into the findings' [`WindowFigures`].
//!
//! Not for: deciding what a finding says (`crate::findings`).

use super::measured::{Measured, BLOCK_BYTES};
use crate::findings::{DatabaseIo, NetworkIo, TempFigures, WindowFigures};

pub(crate) fn window_figures(measured: &Measured) -> WindowFigures {
    let database = measured.database.as_ref();
    WindowFigures {
        window_s: measured.window_s,
        block_size_bytes: database.map(|_| BLOCK_BYTES),
        database: DatabaseIo {
            blocks_read: database.map(|database| database.blocks_read),
            read_requests: None,
            read_bytes: None,
            through_page_cache: database.is_some(),
            scans: measured
                .workload
                .as_ref()
                .is_some_and(|workload| workload.scans > 0.0),
        },
        devices: measured.devices.clone(),
        network: network(measured),
        commit: measured.commit.clone(),
        cpu: measured.cpu.clone(),
        temp: database.map(|database| TempFigures {
            files: database.temp_files,
            bytes: database.temp_bytes,
        }),
        steadiness: measured.steadiness.clone(),
        outliers: Some(measured.outliers.clone()),
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
