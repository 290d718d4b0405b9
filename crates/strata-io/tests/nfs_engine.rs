//! The NFS engine against a real filer: nfs-ganesha on another host (a
//! network namespace) exporting a directory this machine also sees, so
//! that what the engine wrote and read is checked against the file, its
//! calls against the transfer size, and its bytes against the veth's.

use std::sync::Arc;
use strata_io::nfs::{NfsChannel, NfsEngine};
use strata_io::{IoCompletion, IoEngine, IoRequest, Operation, WireCounters};
use strata_nfs::{DurableWrites, NfsFile, NfsUrl};
use strata_testkit::host::NamespaceHost;
use strata_testkit::nfs::HostedFiler;

struct Filer {
    host: NamespaceHost,
    filer: HostedFiler,
    export: tempfile::TempDir,
}

fn filer(index: u8) -> Filer {
    let mut host = NamespaceHost::create(index);
    let export = tempfile::tempdir_in("/tmp").unwrap();
    let filer = HostedFiler::start(&mut host, export.path());
    Filer {
        host,
        filer,
        export,
    }
}

impl Filer {
    /// strata's file on the export (made and marked over NFS), holding
    /// `bytes` of a pattern written here.
    fn strata_file(&self, bytes: usize) -> (Arc<NfsFile>, Vec<u8>) {
        let url = NfsUrl::parse(&self.filer.url("strata.dat")).unwrap();
        let file = NfsFile::open(&url, true).unwrap();
        let data: Vec<u8> = (0..bytes).map(|at| (at / 8192 * 7 + at) as u8).collect();
        std::fs::write(self.export.path().join("strata.dat"), &data).unwrap();
        (Arc::new(file), data)
    }

    /// This side's veth counter `name` (rx_bytes, tx_bytes).
    fn counter(&self, name: &str) -> u64 {
        let path = format!("/sys/class/net/{}/statistics/{name}", self.host.interface());
        std::fs::read_to_string(path)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }
}

fn request(slot: u32, operation: Operation, offset: u64, len: u32) -> IoRequest {
    IoRequest {
        slot,
        operation,
        offset,
        len,
        datasync: operation == Operation::Write,
    }
}

/// A channel to `file` at its URL's host.
fn channel(file: Arc<NfsFile>, transfer_bytes: u32, durable: DurableWrites) -> NfsChannel {
    NfsChannel {
        file,
        address: None,
        transfer_bytes,
        durable,
        client: Default::default(),
    }
}

#[test]
fn durable_writes_reach_the_file_file_sync_or_committed() {
    let filer = filer(0);
    let (file, _) = filer.strata_file(0);
    let sync = NfsEngine::open(channel(file, 8192, DurableWrites::FileSync), 4, 8192).unwrap();
    assert_eq!(write_four_blocks(&filer, sync).calls, 4);
    let url = NfsUrl::parse(&filer.filer.url("strata.dat")).unwrap();
    let file = Arc::new(NfsFile::open(&url, false).unwrap());
    let by_commit = NfsEngine::open(channel(file, 8192, DurableWrites::Commit), 4, 8192).unwrap();
    let wire = write_four_blocks(&filer, by_commit);
    assert_eq!(
        (wire.calls, wire.replies),
        (8, 8),
        "an UNSTABLE WRITE and a COMMIT each"
    );
}

/// Four durable writes of 8 KiB at the file's start, all in flight: each
/// completes whole and the file holds each one's buffer. What the engine
/// put on the wire.
fn write_four_blocks(filer: &Filer, mut engine: NfsEngine) -> WireCounters {
    for slot in 0..4 {
        let write = request(slot, Operation::Write, u64::from(slot) * 8192, 8192);
        engine.queue(write).unwrap();
    }
    let mut completions = Vec::new();
    engine.submit_and_reap(4, &mut completions).unwrap();
    assert_eq!(completions.len(), 4);
    assert!(completions
        .iter()
        .all(|completion| completion.result == 8192));
    let on_disk = std::fs::read(filer.export.path().join("strata.dat")).unwrap();
    for slot in 0..4u32 {
        let at = slot as usize * 8192;
        assert!(
            on_disk[at..at + 8192] == *engine.buffer(slot),
            "block {slot}"
        );
    }
    engine.wire().unwrap()
}

#[test]
fn a_large_read_is_the_calls_its_transfer_size_makes() {
    let filer = filer(1);
    let (file, data) = filer.strata_file(1 << 20);
    let channel = channel(file, 32768, DurableWrites::FileSync);
    let mut engine = NfsEngine::open(channel.clone(), 1, 1 << 20).unwrap();
    engine
        .queue(request(0, Operation::Read, 0, 1 << 20))
        .unwrap();
    let mut completions = Vec::new();
    engine.submit_and_reap(1, &mut completions).unwrap();
    assert_eq!(completions[0].result, 1 << 20);
    assert!(
        *engine.buffer(0) == data[..],
        "the read differs from the file"
    );
    let wire = engine.wire().unwrap();
    assert_eq!((wire.calls, wire.replies), (32, 32));
    let [(read, by_op), (write, writes), (commit, commits)] = channel.client.totals();
    assert_eq!((read, write, commit), ("READ", "WRITE", "COMMIT"));
    assert_eq!(by_op.ops, 32, "{by_op:?}");
    assert_eq!(
        (by_op.bytes_sent, by_op.bytes_received),
        (wire.bytes_sent, wire.bytes_received),
        "the client's counters by operation are the connection's"
    );
    assert_eq!(by_op.round_trip_ns, wire.round_trip_ns);
    assert_eq!((writes.ops, commits.ops, by_op.errors), (0, 0, 0));
}

/// 2,000 random 8 KiB reads, 16 in flight on one connection: every one the
/// file's bytes, one call each, and the veth saw at least every byte the
/// engine counted and no more than the TCP/IP headers add.
#[test]
fn pipelined_reads_are_counted_as_the_interface_counts_them() {
    let filer = filer(2);
    let (file, data) = filer.strata_file(4 << 20);
    let mut engine =
        NfsEngine::open(channel(file, 8192, DurableWrites::FileSync), 16, 8192).unwrap();
    let (rx_before, tx_before) = (filer.counter("rx_bytes"), filer.counter("tx_bytes"));
    let mut offsets = [0u64; 16];
    let mut next = 0u64;
    let mut issue = |engine: &mut NfsEngine, slot: u32| {
        next = (next
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407))
            >> 1;
        offsets[slot as usize] = next % 512 * 8192;
        let read = request(slot, Operation::Read, offsets[slot as usize], 8192);
        engine.queue(read).unwrap();
        offsets[slot as usize]
    };
    let mut expected = [0u64; 16];
    for slot in 0..16 {
        expected[slot as usize] = issue(&mut engine, slot);
    }
    let (mut issued, mut done) = (16, 0);
    let mut completions: Vec<IoCompletion> = Vec::new();
    while done < 2000 {
        completions.clear();
        engine.submit_and_reap(1, &mut completions).unwrap();
        for completion in &completions {
            let at = expected[completion.slot as usize] as usize;
            assert_eq!(completion.result, 8192);
            assert!(
                *engine.buffer(completion.slot) == data[at..at + 8192],
                "read at {at}"
            );
            done += 1;
            if issued < 2000 {
                expected[completion.slot as usize] = issue(&mut engine, completion.slot);
                issued += 1;
            }
        }
    }
    let wire = engine.wire().unwrap();
    assert_eq!((wire.calls, wire.replies), (2000, 2000));
    let received = filer.counter("rx_bytes") - rx_before;
    let sent = filer.counter("tx_bytes") - tx_before;
    assert!(received >= wire.bytes_received, "{received} < {wire:?}");
    assert!(
        received <= wire.bytes_received * 115 / 100 + (64 << 10),
        "{received} vs {wire:?}"
    );
    assert!(sent >= wire.bytes_sent, "{sent} < {wire:?}");
    assert!(wire.round_trip_ns > 0);
}
