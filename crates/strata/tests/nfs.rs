//! `strata calibrate --target nfs://…` against a real filer: nfs-ganesha on
//! another host (a network namespace), reached by strata's own NFS client.

mod common;

use common::{
    assert_promtool_accepts, metrics_body, run, run_json, scrape_until_up, scratch,
    spawn_with_stderr_lines, stderr_of, strata, wait_for_phase,
};
use std::process::Stdio;
use strata_testkit::host::NamespaceHost;
use strata_testkit::nfs::HostedFiler;

/// A filer on host `index`, exporting a new directory.
fn filer(index: u8) -> (NamespaceHost, HostedFiler, tempfile::TempDir) {
    let mut host = NamespaceHost::create(index);
    let export = scratch();
    let filer = HostedFiler::start(&mut host, export.path());
    (host, filer, export)
}

/// What in `document` docs/`schema` does not take.
fn errors_against(schema: &str, document: &serde_json::Value) -> Vec<String> {
    let path = format!("{}/../../docs/{schema}", env!("CARGO_MANIFEST_DIR"));
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    validator
        .iter_errors(document)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect()
}

/// `args` refused as bad input (exit 2) with an error that says `said`;
/// the error.
fn refused_before_any_work(args: &[&str], said: &str, dir: &std::path::Path) -> String {
    let output = run(args, dir);
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains(said), "{args:?}: {stderr}");
    stderr
}

/// 64 reads of 1 MiB at a transfer size of 32 KiB: exactly 32 READ calls
/// each, every one answered, the records' bytes beyond the data a few %;
/// the file strata made is marked as strata's, and the matrix with RPC
/// figures, a verdict and a Recording `strata report` renders.
#[test]
fn calibrate_reads_a_filer_with_its_own_client_and_counts_every_call() {
    let (host, filer, export) = filer(0);
    let dir = scratch();
    let url = filer.url("strata.dat");
    let document = run_json(
        &[
            "calibrate",
            "--target",
            &url,
            "--size",
            "16MiB",
            "--workload",
            "large-read",
        ],
        dir.path(),
    );
    let _ = document;
    let counted = run_json(
        &[
            "calibrate",
            "--target",
            &url,
            "--workload",
            "large-read",
            "--ios",
            "64",
            "--nfs-transfer",
            "32KiB",
        ],
        dir.path(),
    );
    let nfs = &counted["points"][0]["nfs"];
    assert_eq!(nfs["calls"], 64 * 32, "{nfs}");
    assert_eq!(nfs["replies"], 64 * 32, "{nfs}");
    assert_eq!(nfs["calls_per_io"], 32.0, "{nfs}");
    assert_eq!(nfs["transfer_bytes"], 32768, "{nfs}");
    assert_eq!(nfs["data_bytes"], 64 << 20, "{nfs}");
    let overhead = nfs["protocol_overhead_pct"].as_f64().unwrap();
    assert!(overhead > 0.0 && overhead < 5.0, "{nfs}");
    assert_eq!(nfs["interface"], host.interface(), "{nfs}");
    let records = nfs["bytes_received"].as_u64().unwrap();
    let on_the_veth = nfs["interface_bytes_received"].as_u64().unwrap();
    assert!(on_the_veth >= records, "{nfs}");
    assert!(on_the_veth <= records * 115 / 100 + (1 << 20), "{nfs}");
    assert_eq!(counted["target"]["kind"], "nfs_file");
    let errors = errors_against("calibrate.schema.json", &counted);
    assert!(
        errors.is_empty(),
        "against docs/calibrate.schema.json: {errors:?}"
    );
    let size = std::fs::metadata(export.path().join("strata.dat"))
        .unwrap()
        .len();
    assert_eq!(size, 16 << 20);
    assert!(export.path().join(".strata.dat.strata").exists());
    let sweep = run(
        &[
            "calibrate",
            "--target",
            &url,
            "--sweep",
            "--max-qd",
            "2",
            "--max-streams",
            "1",
            "--duration",
            "1s",
            "--ramp",
            "500ms",
            "--nfs-connections",
            "2",
            "--record",
            "s.strata",
        ],
        dir.path(),
    );
    assert!(sweep.status.success(), "{}", stderr_of(&sweep));
    let text = String::from_utf8_lossy(&sweep.stdout);
    assert!(text.contains("NFS — strata's own calls"), "{text}");
    assert!(
        text.contains("whose devices strata did not watch"),
        "{text}"
    );
    let filesystems = std::fs::read_to_string("/proc/filesystems").unwrap();
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let module = format!("/lib/modules/{}/kernel/fs/nfs", release.trim());
    let kernel_client = filesystems.split_whitespace().any(|name| name == "nfs")
        || std::path::Path::new(&module).exists();
    assert_eq!(
        text.contains("has no NFS client: no nfs in /proc/filesystems"),
        !kernel_client,
        "where the kernel has no NFS client, the target's line says so: {text}"
    );
    model_checked_against_the_sweep(dir.path());
    own_client_layer_counts_the_points_calls(&dir.path().join("s.strata"));
    let report = run(&["report", "s.strata"], dir.path());
    assert!(report.status.success(), "{}", stderr_of(&report));
    let shown = String::from_utf8_lossy(&report.stdout);
    assert!(shown.contains("nfs_file"), "{shown}");
    assert!(shown.contains("READ requests (requests/s)"), "{shown}");
}

/// The Recording's `nfs` layer, sampled each second, has strata's own
/// client as a mount of the export: its READ calls at the last sample are
/// at least those of the points' measured windows (the ramps' and the
/// fill's come on top), each answered, with bytes and round trips.
fn own_client_layer_counts_the_points_calls(record: &std::path::Path) {
    let recording = strata_recording::Recording::read(record).unwrap();
    let measured: f64 = recording
        .point_results()
        .filter_map(|record| record.point.nfs.as_ref())
        .map(|nfs| nfs.calls as f64)
        .sum();
    let read = |sample: &strata_recording::layers::Sample, name: &str| {
        let (metrics, _) = sample.values("nfs")?;
        metrics
            .iter()
            .find(|metric| {
                metric.name == name
                    && metric.labels.get("op").map(String::as_str) == Some("READ")
                    && metric.labels["mount"].ends_with("(strata's own client)")
            })
            .map(|metric| metric.value)
    };
    let samples: Vec<_> = recording
        .layers()
        .filter(|sample| read(sample, "ops").is_some())
        .collect();
    assert!(
        samples.len() >= 3,
        "{} samples of strata's client",
        samples.len()
    );
    let last = samples.last().unwrap();
    let ops = read(last, "ops").unwrap();
    assert!(
        measured > 0.0 && ops >= measured,
        "{ops} READ calls in the layer, {measured} in the points"
    );
    assert!(read(last, "bytes_received").unwrap() > ops * 100.0);
    assert!(read(last, "rtt_ms").unwrap() > 0.0);
    assert_eq!(read(last, "errors"), Some(0.0));
}

/// `strata model nfs --from` the sweep: each point of one group (the
/// small reads at 1 and 2 in flight, the large stream) predicted from the
/// least-loaded point of its call size, whose own prediction is its
/// measured rate; the two points of small reads and a stream together
/// left out.
fn model_checked_against_the_sweep(dir: &std::path::Path) {
    let document = run_json(&["model", "nfs", "--from", "s.strata"], dir);
    let errors = errors_against("model.schema.json", &document);
    assert!(
        errors.is_empty(),
        "against docs/model.schema.json: {errors:?}"
    );
    let rows = document.as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|row| row["measured"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["small=1 large=0", "small=2 large=0", "small=0 large=1"],
        "{rows:?}"
    );
    for row in rows {
        let measured = &row["measured"];
        let calls_per_io =
            measured["io_bytes"].as_f64().unwrap() / measured["transfer_bytes"].as_f64().unwrap();
        assert_eq!(row["model"]["calls_per_io"], calls_per_io.ceil(), "{row}");
        let error = row["calls_error_pct"].as_f64().unwrap();
        assert!(error.is_finite(), "{row}");
        if row["base_point"] == measured["name"] {
            assert!(
                error.abs() < 0.01,
                "the base point is its own measure: {row}"
            );
        }
    }
    assert_eq!(rows[1]["base_point"], "small=1 large=0");
    let text = run(&["model", "nfs", "--from", "s.strata", "--explain"], dir);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("2 left out") && text.contains("calls/s = min("),
        "{text}"
    );
}

/// A file strata did not make is only read; options that need an nfs://
/// target, another engine, a path under no export: each a named error
/// before any work, and nothing made on the export.
#[test]
fn what_strata_may_not_do_on_a_filer_is_refused_before_any_work() {
    let (_host, filer, export) = filer(1);
    let dir = scratch();
    let theirs = export.path().join("theirs.dat");
    std::fs::write(&theirs, vec![7u8; 1 << 20]).unwrap();
    let url = filer.url("theirs.dat");
    let refused = [
        (
            vec!["--target", url.as_str(), "--workload", "random-write"],
            "was not created by strata",
        ),
        (
            vec!["--nfs-connections", "2", "--workload", "large-read"],
            "--nfs-connections needs an nfs://",
        ),
        (
            vec!["--target", url.as_str(), "--engine", "psync"],
            "--engine psync does not reach an nfs://",
        ),
        (
            vec!["--target", url.as_str(), "--buffered"],
            "--buffered does not apply",
        ),
    ];
    for (args, said) in refused {
        refused_before_any_work(&[&["calibrate"][..], &args].concat(), said, dir.path());
    }
    let elsewhere = format!("nfs://{}/not/exported/f", filer.address);
    let output = run(&["calibrate", "--target", &elsewhere], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr_of(&output).contains("no export of"),
        "{}",
        stderr_of(&output)
    );
    let read = run_json(
        &[
            "calibrate",
            "--target",
            &url,
            "--workload",
            "small-random-read",
            "--ios",
            "200",
        ],
        dir.path(),
    );
    assert_eq!(read["points"][0]["nfs"]["calls"], 200);
    assert!(std::fs::read(&theirs).unwrap() == vec![7u8; 1 << 20]);
    let names: Vec<String> = std::fs::read_dir(export.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["theirs.dat"]);
}

/// Two addresses of one filer, each on a network path of its own (a veth
/// each): the connections take them in turn, every call is counted on the
/// path it went on, and each path's interface carried at least its calls'
/// bytes. Addresses given twice, fewer connections than addresses, an
/// address where no filer answers: each a named error before any I/O,
/// and nothing left on the export.
#[test]
fn connections_spread_over_the_filer_s_addresses_each_path_counted() {
    let (mut host, filer, export) = filer(3);
    let (second, second_interface) = host.add_path(4);
    let dir = scratch();
    let url = filer.url("strata.dat");
    let (first, second) = (filer.address.to_string(), second.to_string());
    let nowhere = host.peer_address.to_string();
    let refused = [
        (vec![&first, &first], "2", "is given twice"),
        (
            vec![&first, &second],
            "1",
            "at least one connection per address",
        ),
        (vec![&first, &nowhere], "2", "--nfs-address"),
    ];
    for (addresses, connections, said) in refused {
        let mut args = vec![
            "calibrate",
            "--target",
            &url,
            "--nfs-connections",
            connections,
        ];
        for address in addresses {
            args.extend(["--nfs-address", address.as_str()]);
        }
        let stderr = refused_before_any_work(&args, said, dir.path());
        assert!(stderr.contains(&nowhere) || said != "--nfs-address");
        assert_eq!(
            std::fs::read_dir(export.path()).unwrap().count(),
            0,
            "{args:?}"
        );
    }
    let spread = [
        "calibrate",
        "--target",
        &url,
        "--size",
        "8MiB",
        "--workload",
        "large-read",
        "--qd",
        "2",
        "--ios",
        "64",
        "--nfs-transfer",
        "32KiB",
        "--nfs-address",
        &first,
        "--nfs-address",
        &second,
    ];
    let document = run_json(&spread, dir.path());
    let nfs = &document["points"][0]["nfs"];
    assert_eq!(
        (nfs["connections"].as_u64(), nfs["calls"].as_u64()),
        (Some(2), Some(2048)),
        "{nfs}"
    );
    let interfaces = [host.interface().to_string(), second_interface];
    assert_eq!(nfs["interface"], interfaces.join("+"), "{nfs}");
    let paths = nfs["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 2, "{nfs}");
    for ((path, address), interface) in paths.iter().zip([&first, &second]).zip(&interfaces) {
        assert_eq!(path["address"], address.as_str(), "{path}");
        assert_eq!(path["interface"], interface.as_str(), "{path}");
        assert_eq!(
            (path["connections"].as_u64(), path["calls"].as_u64()),
            (Some(1), Some(1024)),
            "{path}"
        );
        assert_eq!(path["calls_pct"], 50.0, "{path}");
        let records = path["bytes_received"].as_u64().unwrap();
        let on_its_veth = path["interface_bytes_received"].as_u64().unwrap();
        assert!(records >= 32 << 20 && on_its_veth >= records, "{path}");
        assert!(on_its_veth <= records * 115 / 100 + (1 << 20), "{path}");
    }
    let text = run(&spread[..spread.len() - 4], dir.path());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(!text.contains("NFS paths"), "{text}");
    let text = run(&spread, dir.path());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("NFS paths") && text.contains(&format!("reached at {first} (")),
        "{text}"
    );
}

/// 8 KiB random reads, 8 in flight, over one connection and over four,
/// both recorded: each point with the connections asked, its calls and
/// replies apart by no more than the calls in flight at the window's
/// edges, and the interface to the filer carrying at least the RPC
/// records of each. The two rates are printed side by side (bench/nfs measures).
#[test]
fn one_connection_against_four_at_the_same_depth_both_recorded() {
    let (host, filer, _export) = filer(5);
    let dir = scratch();
    let url = filer.url("strata.dat");
    let mut rates = Vec::new();
    for connections in ["1", "4"] {
        let record = format!("c{connections}.strata");
        let args = [
            "calibrate",
            "--target",
            &url,
            "--size",
            "16MiB",
            "--workload",
            "small-random-read",
            "--qd",
            "8",
            "--duration",
            "2s",
            "--ramp",
            "500ms",
            "--nfs-connections",
            connections,
            "--record",
            &record,
        ];
        let document = run_json(&args, dir.path());
        let nfs = &document["points"][0]["nfs"];
        assert_eq!(nfs["connections"].to_string(), connections, "{nfs}");
        let (calls, replies) = (
            nfs["calls"].as_i64().unwrap(),
            nfs["replies"].as_i64().unwrap(),
        );
        assert!(
            (calls - replies).abs() <= 8,
            "at most the depth in flight at an edge: {nfs}"
        );
        assert_eq!(nfs["interface"], host.interface(), "{nfs}");
        // Read at the same moments; a reply on its way in at an edge is on
        // the interface before strata reads it: at most the 8 in flight.
        let records = nfs["bytes_received"].as_u64().unwrap();
        let on_the_veth = nfs["interface_bytes_received"].as_u64().unwrap();
        assert!(on_the_veth + 8 * 8300 >= records, "{nfs}");
        let recording = strata_recording::Recording::read(&dir.path().join(&record)).unwrap();
        let point = &recording.point_results().next().unwrap().point;
        assert_eq!(
            point.nfs.as_ref().unwrap().connections.to_string(),
            connections
        );
        rates.push(nfs["calls_per_s"].as_f64().unwrap());
    }
    eprintln!(
        "8 KiB reads at 8 in flight: {:.0} calls/s on 1 connection, {:.0} on 4",
        rates[0], rates[1]
    );
    assert!(rates.iter().all(|rate| *rate > 100.0), "{rates:?}");
}

/// The server's own view of a point: 2,048 sequential 8 KiB reads of
/// strata's 16 MiB file, its page cache dropped first (the filer's VFS
/// backend reads through this machine's kernel). The export's device read
/// the file once (readahead reads the same bytes, in larger requests), as
/// many bytes as strata counted of data, and the veth carried at least the
/// RPC records strata counted.
#[test]
fn the_filer_s_device_and_interface_agree_with_strata_s_counts() {
    let (mut host, filer, export) = filer(6);
    let dir = scratch();
    let url = filer.url("strata.dat");
    let agent = serve_the_filer_s_agent(&mut host, &filer);
    let nowhere = format!("http://{}:9", host.address);
    let refused = ["calibrate", "--target", &url, "--agent", &nowhere];
    refused_before_any_work(&refused, "--agent", dir.path());
    let make = [
        "calibrate",
        "--target",
        &url,
        "--size",
        "16MiB",
        "--workload",
        "large-read",
        "--ios",
        "1",
    ];
    run_json(&make, dir.path());
    let path = export.path().join("strata.dat");
    drop_from_the_page_cache(&path);
    let device = strata_probe::blockdev::device_of_path(&path).unwrap().name;
    let read_bytes = || {
        let stats = strata_probe::diskstats::read_diskstats().unwrap();
        let stat = stats.iter().find(|stat| stat.name == device).unwrap();
        stat.read_sectors * 512
    };
    let before = read_bytes();
    let read = [
        "calibrate",
        "--target",
        &url,
        "--bs",
        "8KiB",
        "--rw",
        "read",
        "--qd",
        "1",
        "--ios",
        "2048",
        "--agent",
        &agent,
    ];
    let document = run_json(&read, dir.path());
    let on_device = read_bytes() - before;
    let nfs = &document["points"][0]["nfs"];
    let data = nfs["data_bytes"].as_u64().unwrap();
    assert_eq!(data, 16 << 20, "{nfs}");
    assert_eq!(nfs["calls"], 2048, "{nfs}");
    assert!(
        on_device >= data * 95 / 100 && on_device <= data + (8 << 20),
        "{device} read {on_device} bytes for strata's {data} bytes of data"
    );
    assert_eq!(nfs["interface"], host.interface(), "{nfs}");
    let records = nfs["bytes_received"].as_u64().unwrap();
    assert!(
        nfs["interface_bytes_received"].as_u64().unwrap() >= records,
        "{nfs}"
    );
    eprintln!(
        "{device}: {on_device} bytes read for {data} bytes of data; {records} bytes of records"
    );
    let filer_side = &nfs["filer"];
    assert!(filer_side["missing"].is_null(), "{filer_side}");
    let theirs = filer_side["devices"].as_array().unwrap();
    let seen = theirs.iter().find(|seen| seen["device"] == device.as_str());
    let seen = seen.unwrap_or_else(|| panic!("the agent counts {device}: {filer_side}"));
    let read_there = seen["read_bytes"].as_u64().unwrap();
    assert!(
        read_there >= data * 95 / 100 && read_there <= data + (8 << 20),
        "{filer_side}"
    );
    let inside = format!("{}i", host.interface());
    let interfaces = filer_side["interfaces"].as_array().unwrap();
    let veth = interfaces
        .iter()
        .find(|seen| seen["interface"] == inside.as_str());
    let veth = veth.unwrap_or_else(|| panic!("the filer's {inside}: {filer_side}"));
    assert!(
        veth["transmit_bytes"].as_u64().unwrap() >= records,
        "{filer_side}"
    );
    the_server_counted_strata_s_reads(filer_side, nfs);
    let errors = errors_against("calibrate.schema.json", &document);
    assert!(errors.is_empty(), "{errors:#?}");
    let checked = &document["points"][0]["verification"];
    // The filer's disk is this machine's: other tests' reads on it can
    // make it move more than strata's bytes, never less.
    let verdict = checked["verdict"].as_str().unwrap();
    assert!(
        ["consistent", "device_saw_more"].contains(&verdict),
        "{checked}"
    );
    assert_eq!(checked["device_read_bytes"], read_there, "{checked}");
    let reasons = document["verdict"].to_string();
    assert!(!reasons.contains("no_device_checked"), "{reasons}");
    let text = run(&read[..read.len()], dir.path());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Filer — through its agent") && text.contains(&inside),
        "{text}"
    );
    assert!(
        text.contains("Filer's NFS server") && text.contains("nfs-ganesha NFSv3 READ"),
        "{text}"
    );
    observe_follows_the_server_live(&filer, &url, dir.path());
}

/// A calibration of the filer serving its layers (`--prometheus`), and
/// `strata observe --agent` on it with `--nfs-server ganesha`: a sample
/// holds strata's own READ calls (`nfs@HOST`, the calibration's client as
/// a mount) and nfs-ganesha's count of them (`nfs_server`) live, each
/// line as docs/observe.schema.json says.
fn observe_follows_the_server_live(filer: &HostedFiler, url: &str, dir: &std::path::Path) {
    let read = ["calibrate", "--target", url, "--bs", "8KiB", "--rw", "read"];
    let serve = [
        "--duration",
        "6s",
        "--ramp",
        "0s",
        "--prometheus",
        "127.0.0.1:0",
    ];
    let (calibration, lines) = spawn_with_stderr_lines(&[&read[..], &serve].concat(), dir);
    let said = wait_for_phase(&lines, "serving Prometheus metrics");
    let address = said
        .split("http://")
        .nth(1)
        .unwrap()
        .trim_end_matches("/metrics\n");
    let observe = strata()
        .args(["observe", "--nfs-server", "ganesha", "--json"])
        .args(["--agent", &format!("http://{address}")])
        .args(["--interval", "500ms", "--count", "4"])
        .env("DBUS_SYSTEM_BUS_ADDRESS", filer.bus_address())
        .current_dir(dir)
        .output()
        .unwrap();
    let calibrated = calibration.wait_with_output().unwrap();
    assert!(calibrated.status.success(), "{}", stderr_of(&calibrated));
    let stdout = String::from_utf8_lossy(&observe.stdout);
    assert!(observe.status.success(), "{}", stderr_of(&observe));
    let (mut server_reads, mut client_reads) = (0.0f64, 0.0f64);
    for line in stdout.lines() {
        let sample: serde_json::Value = serde_json::from_str(line).unwrap();
        let errors = errors_against("observe.schema.json", &sample);
        assert!(errors.is_empty(), "{errors:#?}");
        let layers = sample["layers"].as_object().unwrap();
        let rates = |layer: &str| {
            layers
                .get(layer)
                .and_then(|layer| layer["rates"].as_object())
        };
        let server = rates("nfs_server").unwrap_or_else(|| panic!("no nfs_server: {line}"));
        let export = filer.export.display();
        let key = format!("ops{{export={export},op=READ,protocol=NFSv3,server=nfs-ganesha}}");
        let rate = server
            .get(&key)
            .unwrap_or_else(|| panic!("no {key}: {line}"));
        server_reads = server_reads.max(rate.as_f64().unwrap());
        // A sample the calibration's endpoint did not answer in time goes
        // without its layer (named as a gap).
        let client = (layers.keys())
            .find(|layer| layer.starts_with("nfs@"))
            .and_then(|layer| rates(layer));
        let own_reads = client.into_iter().flatten().filter(|(key, _)| {
            key.starts_with("ops{") && key.contains("op=READ") && key.contains("own client")
        });
        for (_, rate) in own_reads {
            client_reads = client_reads.max(rate.as_f64().unwrap());
        }
    }
    assert!(server_reads > 100.0 && client_reads > 100.0, "{stdout}");
    eprintln!(
        "observe: strata's own client up to {client_reads:.0} READ calls/s, nfs-ganesha up to \
         {server_reads:.0}"
    );
}

/// `path`'s pages out of this machine's page cache (the filer's VFS
/// backend reads through it), so that reads of it reach its device.
fn drop_from_the_page_cache(path: &std::path::Path) {
    let file = std::fs::File::open(path).unwrap();
    file.sync_all().unwrap();
    let dropped = unsafe {
        libc::posix_fadvise(
            std::os::fd::AsRawFd::as_raw_fd(&file),
            0,
            0,
            libc::POSIX_FADV_DONTNEED,
        )
    };
    assert_eq!(dropped, 0, "posix_fadvise DONTNEED");
}

/// A strata agent on the filer's host, following the export's devices and
/// nfs-ganesha's own count on its bus; its URL once it serves both, in
/// text promtool has nothing to say of.
fn serve_the_filer_s_agent(host: &mut NamespaceHost, filer: &HostedFiler) -> String {
    let agent = format!("{}:9477", host.address);
    let bus = format!("DBUS_SYSTEM_BUS_ADDRESS={}", filer.bus_address());
    let exported = filer.export.to_str().unwrap();
    let observe = ["observe", "--prometheus", &agent, "--path", exported];
    let ganesha = ["--nfs-server", "ganesha"];
    let strata_binary = env!("CARGO_BIN_EXE_strata");
    let command = [&[bus.as_str(), strata_binary][..], &observe, &ganesha].concat();
    host.spawn("env", &command, None, Stdio::null());
    let agent = format!("http://{agent}");
    scrape_until_up(&agent);
    let served = metrics_body(&agent);
    assert!(
        served.contains("strata_nfs_server_ops_total{")
            && served.contains("strata_nfs_server_latency_seconds_total{"),
        "{served}"
    );
    assert_promtool_accepts(&served);
    agent
}

/// nfs-ganesha's own count (through the filer's strata agent) of the
/// point's READ calls is strata's, byte for byte, and its time on them is
/// a part of strata's round trip.
fn the_server_counted_strata_s_reads(filer_side: &serde_json::Value, nfs: &serde_json::Value) {
    let server = filer_side["server"].as_array().unwrap();
    let reads = server.iter().find(|op| op["op"] == "READ");
    let reads = reads.unwrap_or_else(|| panic!("nfs-ganesha's READ calls: {filer_side}"));
    assert_eq!(reads["server"], "nfs-ganesha", "{reads}");
    assert_eq!(reads["protocol"], "NFSv3", "{reads}");
    assert_eq!(reads["calls"], nfs["calls"], "{reads}");
    assert_eq!(reads["bytes"], nfs["data_bytes"], "{reads}");
    assert_eq!(reads["errors"], 0, "{reads}");
    let served = reads["server_mean_us"].as_f64().unwrap();
    let round_trip = reads["round_trip_mean_us"].as_f64().unwrap();
    let outside = reads["outside_server_us"].as_f64().unwrap();
    assert!(served > 0.0 && served < round_trip, "{reads}");
    assert!((served + outside - round_trip).abs() < 1e-6, "{reads}");
    eprintln!(
        "nfs-ganesha: {} READ calls, {served:.1} us of its own each, of strata's {round_trip:.1} \
         us round trip",
        reads["calls"]
    );
}

/// With `--nfs-server ganesha` and no ganesha on the bus, observe refuses
/// to start, naming the option.
#[test]
fn observe_without_the_nfs_server_it_was_asked_for_is_refused() {
    let dir = scratch();
    let output = strata()
        .args(["observe", "--nfs-server", "ganesha", "--count", "1"])
        .env(
            "DBUS_SYSTEM_BUS_ADDRESS",
            "unix:path=/nonexistent/strata-bus",
        )
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("--nfs-server ganesha") && stderr.contains("D-Bus"),
        "{stderr}"
    );
}

/// The filer goes away in the middle of a timed point: a named error, and
/// the Recording keeps what was measured before.
#[test]
fn a_filer_that_goes_away_is_a_named_error_and_the_recording_is_kept() {
    let (mut host, filer, _export) = filer(2);
    let dir = scratch();
    let url = filer.url("strata.dat");
    let child = strata()
        .args([
            "calibrate",
            "--target",
            &url,
            "--size",
            "8MiB",
            "--workload",
            "small-random-read",
        ])
        .args([
            "--duration",
            "30s",
            "--ramp",
            "0s",
            "--record",
            "gone.strata",
        ])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(4));
    filer.stop(&mut host);
    let output = child.wait_with_output().unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let text = String::from_utf8_lossy(&output.stdout);
    // A server killed with requests of ours unread resets the connection;
    // one killed between them closes it.
    assert!(
        text.contains("Connection reset by peer")
            || text.contains("the server closed the connection"),
        "{text}"
    );
    assert!(
        text.contains(&filer.address.to_string()),
        "{text}\n{stderr}"
    );
    assert!(dir.path().join("gone.strata").exists());
}
