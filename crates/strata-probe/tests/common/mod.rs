//! What the probe's integration tests need beyond strata-testkit: an MBR
//! writer for the loop devices they partition, and deterministic bytes.
#![allow(dead_code)]

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};

/// Writes a classic MBR with one Linux (0x83) partition entry.
pub fn write_mbr(file: &mut File, first_sector: u32, sector_count: u32) {
    let mut sector = [0u8; 512];
    let entry = &mut sector[446..462];
    entry[4] = 0x83;
    entry[8..12].copy_from_slice(&first_sector.to_le_bytes());
    entry[12..16].copy_from_slice(&sector_count.to_le_bytes());
    sector[510] = 0x55;
    sector[511] = 0xAA;
    file.seek(SeekFrom::Start(0)).unwrap();
    file.write_all(&sector).expect("writing MBR");
}

/// Deterministic pseudo-random bytes (xorshift64).
pub fn pseudo_random_bytes(length: usize, mut state: u64) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(length + 8);
    while bytes.len() < length {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bytes.extend_from_slice(&state.to_le_bytes());
    }
    bytes.truncate(length);
    bytes
}
