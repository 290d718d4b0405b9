//! Every reader of a file from elsewhere holds no more than it must and
//! says at once that a file is not what it should be: `strata awr`,
//! `strata report` and `observe --replay` on `/dev/zero` (no end, no
//! newline) and on a file of random bytes.

mod common;

use common::*;
use std::io::Write;
use std::time::{Duration, Instant};

/// The most memory any of these readers may reach (the binary itself and
/// its libraries take about 20 MiB).
const MOST_RSS_KIB: i64 = 200 << 10;

/// The largest resident set of the children waited for so far.
fn children_max_rss_kib() -> i64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    usage.ru_maxrss
}

#[test]
fn readers_refuse_what_is_not_their_input_at_once_in_bounded_memory() {
    let dir = scratch();
    let random = dir.path().join("random.bin");
    let mut file = std::fs::File::create(&random).unwrap();
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut block = vec![0u8; 1 << 20];
    for _ in 0..128 {
        for byte in block.iter_mut() {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            *byte = rng as u8;
        }
        file.write_all(&block).unwrap();
    }
    drop(file);
    let random = random.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["awr", "/dev/zero"], "not an AWR or STATSPACK report"),
        (&["awr", random], "not an AWR or STATSPACK report"),
        (&["report", "/dev/zero"], "not a strata Recording"),
        (&["report", random], "line 1"),
        (
            &["observe", "--replay", "/dev/zero"],
            "not a strata Recording",
        ),
        (&["observe", "--replay", random], "line 1"),
    ];
    for (args, said) in cases {
        let began = Instant::now();
        let output = run(args, dir.path());
        let elapsed = began.elapsed();
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(said), "{args:?}: {stderr}");
        assert!(
            elapsed < Duration::from_secs(1),
            "{args:?} took {elapsed:?}"
        );
    }
    let rss = children_max_rss_kib();
    assert!(rss < MOST_RSS_KIB, "a reader reached {rss} KiB");
}
