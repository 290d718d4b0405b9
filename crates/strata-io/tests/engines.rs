//! Both engines against a real file opened with O_DIRECT.

use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use strata_io::target::open_target;
use strata_io::{IoCompletion, IoEngineKind, IoRequest, Operation};

const BLOCK: usize = 8192;

fn patterned_file(dir: &std::path::Path, blocks: usize) -> std::path::PathBuf {
    let path = dir.join("data");
    let bytes: Vec<u8> = (0..blocks * BLOCK)
        .map(|i| (i / BLOCK) as u8 ^ (i % 251) as u8)
        .collect();
    std::fs::write(&path, bytes).unwrap();
    path
}

fn run_requests(kind: IoEngineKind, fd: i32, requests: &[IoRequest]) -> Vec<IoCompletion> {
    let mut engine = kind.open(fd.into(), requests.len(), BLOCK).unwrap();
    for request in requests {
        engine.queue(*request).unwrap();
    }
    let mut completions = Vec::new();
    engine
        .submit_and_reap(requests.len(), &mut completions)
        .unwrap();
    completions
}

#[test]
fn both_engines_read_the_right_bytes_with_o_direct() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = patterned_file(dir.path(), 16);
    let expected = std::fs::read(&path).unwrap();
    let file = open_target(&path, true, false, false).unwrap();
    for kind in [IoEngineKind::IoUring, IoEngineKind::Psync] {
        let mut engine = kind.open(file.as_raw_fd().into(), 4, BLOCK).unwrap();
        for (slot, block) in [3u64, 0, 15, 7].iter().enumerate() {
            engine
                .queue(IoRequest {
                    slot: slot as u32,
                    operation: Operation::Read,
                    offset: block * BLOCK as u64,
                    len: BLOCK as u32,
                    datasync: false,
                })
                .unwrap();
        }
        let mut completions = Vec::new();
        engine.submit_and_reap(4, &mut completions).unwrap();
        assert_eq!(completions.len(), 4, "{kind}");
        for completion in completions {
            assert_eq!(completion.result, BLOCK as i64, "{kind}");
            let block = [3usize, 0, 15, 7][completion.slot as usize];
            assert_eq!(
                &engine.buffer(completion.slot)[..BLOCK],
                &expected[block * BLOCK..(block + 1) * BLOCK],
                "{kind} slot {}",
                completion.slot
            );
        }
    }
}

#[test]
fn durable_writes_complete_once_and_land() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = patterned_file(dir.path(), 8);
    let file = open_target(&path, true, true, false).unwrap();
    for kind in [IoEngineKind::IoUring, IoEngineKind::Psync] {
        let requests: Vec<IoRequest> = (0..2)
            .map(|slot| IoRequest {
                slot,
                operation: Operation::Write,
                offset: u64::from(slot) * BLOCK as u64,
                len: BLOCK as u32,
                datasync: true,
            })
            .collect();
        let completions = run_requests(kind, file.as_raw_fd(), &requests);
        assert_eq!(
            completions.len(),
            2,
            "{kind}: one completion per durable write"
        );
        assert!(
            completions.iter().all(|c| c.result == BLOCK as i64),
            "{kind}: {completions:?}"
        );
    }
    let mut first = vec![0u8; BLOCK];
    std::fs::File::open(&path)
        .unwrap()
        .read_exact_at(&mut first, 0)
        .unwrap();
    assert!(
        first.iter().enumerate().any(|(i, &b)| b != (i % 251) as u8),
        "random data was written"
    );
}

#[test]
fn a_read_past_the_end_is_reported_not_hidden() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = patterned_file(dir.path(), 2);
    let file = open_target(&path, true, false, false).unwrap();
    for kind in [IoEngineKind::IoUring, IoEngineKind::Psync] {
        let request = IoRequest {
            slot: 0,
            operation: Operation::Read,
            offset: 64 * BLOCK as u64,
            len: BLOCK as u32,
            datasync: false,
        };
        let completions = run_requests(kind, file.as_raw_fd(), &[request]);
        assert_eq!(completions[0].result, 0, "{kind}: EOF reads return 0 bytes");
    }
}
