//! strata-nfs against a real filer: nfs-ganesha on another host (a network
//! namespace), exporting a directory this machine also sees, so that every
//! byte strata writes or reads over NFS is checked against the file itself.

use nfs3_types::nfs3::{stable_how, READ3res, NFS_PROGRAM};
use std::collections::BTreeMap;
use strata_nfs::file::{answered, procedure};
use strata_nfs::{NfsFile, NfsUrl};
use strata_testkit::host::NamespaceHost;
use strata_testkit::nfs::HostedFiler;

/// A filer on host `index`, exporting a new directory.
fn filer(index: u8) -> (NamespaceHost, HostedFiler, tempfile::TempDir) {
    let mut host = NamespaceHost::create(index);
    let export = tempfile::tempdir_in("/tmp").unwrap();
    let filer = HostedFiler::start(&mut host, export.path());
    (host, filer, export)
}

/// 8 KiB blocks of a pattern that names each block.
fn blocks(count: usize) -> Vec<u8> {
    (0..count * 8192)
        .map(|at| ((at / 8192) as u8).wrapping_mul(31) ^ (at as u8))
        .collect()
}

#[test]
fn strata_makes_writes_reads_and_removes_only_its_own_file() {
    let (_host, filer, export) = filer(0);
    let url = NfsUrl::parse(&filer.url("strata.dat")).unwrap();
    let file =
        NfsFile::open(&url, true).unwrap_or_else(|error| panic!("{error:#}\n{}", filer.log()));
    assert!(file.strata_made);
    assert_eq!(file.size_bytes, 0);
    assert!(
        file.transfer.read_preferred_bytes >= 8192,
        "{:?}",
        file.transfer
    );
    let data = blocks(64);
    let mut connection = file.connect_at(&filer.address.to_string()).unwrap();
    for (index, block) in data.chunks(8192).enumerate() {
        let written = file
            .write_at(
                &mut connection,
                index as u64 * 8192,
                block,
                stable_how::FILE_SYNC,
            )
            .unwrap();
        assert_eq!(written.bytes, 8192);
        assert_eq!(written.committed, stable_how::FILE_SYNC);
    }
    let on_disk = std::fs::read(export.path().join("strata.dat")).unwrap();
    assert!(
        on_disk == data,
        "the export's file differs from what strata wrote"
    );
    assert!(export.path().join(".strata.dat.strata").exists());
    let back = file.read_at(&mut connection, 8192 * 10, 8192 * 3).unwrap();
    assert!(
        back == data[8192 * 10..8192 * 13],
        "a READ differs from the file"
    );
    let unstable = file
        .write_at(&mut connection, 0, &data[..8192], stable_how::UNSTABLE)
        .unwrap();
    assert_eq!(unstable.bytes, 8192);
    file.commit(&mut connection).unwrap();
    let counters = connection.counters();
    assert_eq!(
        (counters.calls, counters.replies),
        (68, 68),
        "a GETATTR when connecting, 64 WRITEs, a READ, a WRITE and a COMMIT"
    );
    let address = filer.address.to_string();
    let mut file = file;
    file.identity.1 ^= 1;
    let Err(error) = file.connect_at(&address) else {
        panic!("an address answering for another file is taken");
    };
    let text = format!("{error:#}");
    assert!(text.contains("not an address of the same server"), "{text}");
    file.identity.1 ^= 1;
    assert!(file.remove().unwrap());
    assert!(!export.path().join("strata.dat").exists());
    assert!(!export.path().join(".strata.dat.strata").exists());
}

#[test]
fn a_file_strata_did_not_make_is_never_written_or_removed() {
    let (_host, filer, export) = filer(1);
    let theirs = export.path().join("theirs.dat");
    std::fs::write(&theirs, blocks(2)).unwrap();
    let url = NfsUrl::parse(&filer.url("theirs.dat")).unwrap();
    let file = NfsFile::open(&url, true).unwrap();
    assert!(!file.strata_made);
    assert_eq!(file.size_bytes, 16384);
    let refused = file.write_args(0, &[0u8; 8192], stable_how::FILE_SYNC);
    let text = format!("{:#}", refused.unwrap_err());
    assert!(text.contains("strata did not make this file"), "{text}");
    let mut connection = file.connect().unwrap();
    assert!(file.read_at(&mut connection, 0, 16384).unwrap() == blocks(2));
    assert!(!file.remove().unwrap());
    assert!(std::fs::read(&theirs).unwrap() == blocks(2));
}

#[test]
fn a_wrong_export_or_a_missing_file_is_a_named_error() {
    let (_host, filer, export) = filer(2);
    let elsewhere = format!("nfs://{}/not/exported/f", filer.address);
    let error = NfsFile::open(&NfsUrl::parse(&elsewhere).unwrap(), true).unwrap_err();
    let text = format!("{error:#}");
    assert!(text.contains("no export of"), "{text}");
    assert!(
        text.contains(&export.path().display().to_string()),
        "{text}"
    );
    let missing = NfsUrl::parse(&filer.url("missing.dat")).unwrap();
    let text = format!("{:#}", NfsFile::open(&missing, false).unwrap_err());
    assert!(text.contains("no such file"), "{text}");
    assert!(std::fs::read_dir(export.path()).unwrap().next().is_none());
}

/// 32 READs of 32 KiB sent back to back on one connection, then their
/// replies matched by XID: a 1 MiB read the way a mount with rsize=32768
/// makes it, 32 RPCs in flight.
#[test]
fn reads_are_pipelined_on_one_connection_and_counted() {
    let (_host, filer, export) = filer(3);
    let data = blocks(128);
    std::fs::write(export.path().join("strata.dat"), &data).unwrap();
    std::fs::write(export.path().join(".strata.dat.strata"), b"").unwrap();
    let url = NfsUrl::parse(&filer.url("strata.dat")).unwrap();
    let file = NfsFile::open(&url, false).unwrap();
    let mut connection = file.connect().unwrap();
    let mut offsets = BTreeMap::new();
    for call in 0..32u64 {
        let arguments = file.read_args(call * 32768, 32768);
        let xid = connection
            .send(procedure(NFS_PROGRAM::NFSPROC3_READ), &arguments)
            .unwrap();
        offsets.insert(xid, call * 32768);
    }
    assert_eq!(connection.counters().replies, 0);
    let mut read = vec![0u8; data.len()];
    for _ in 0..32 {
        let reply = connection.receive().unwrap();
        let offset = offsets.remove(&reply.xid).expect("a reply to a call sent") as usize;
        let result: READ3res = reply.decode().unwrap();
        let ok = answered(result, || "READ".to_string()).unwrap();
        assert_eq!(ok.count, 32768);
        read[offset..offset + 32768].copy_from_slice(ok.data.as_ref());
    }
    assert!(offsets.is_empty());
    assert!(read == data, "the pipelined reads differ from the file");
    let counters = connection.counters();
    assert_eq!((counters.calls, counters.replies), (32, 32));
    assert!(counters.bytes_received > 1 << 20, "{counters:?}");
    assert!(file.remove().unwrap());
}
