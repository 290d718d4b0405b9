//! Agents behind what node_exporter's `web-config.yml` offers a fleet:
//! HTTPS with a certificate from a private certificate authority, and
//! HTTP Basic auth (a bcrypt hash in the config). The real node_exporter
//! serves; strata scrapes it with the credentials from the URL, a file or
//! the environment, and the password appears in no output, Recording or
//! report. A wrong password, an unknown certificate authority and options
//! that would be ignored are refused by name.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const USER: &str = AGENT_USER;
const PASSWORD: &str = AGENT_PASSWORD;

/// A certificate authority and a server certificate for 127.0.0.1 it
/// signed, made with openssl: (CA file, certificate, key).
fn certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let path = |name: &str| dir.join(name);
    let openssl = |args: &[&str]| {
        let output = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl");
        assert!(output.status.success(), "openssl {args:?}: {output:?}");
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let authority = [
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=strata test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign",
    ];
    openssl(&[&["req", "-x509"][..], &ec, &authority].concat());
    let server = [
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
    ];
    openssl(&[&["req"][..], &ec, &server].concat());
    std::fs::write(
        path("server.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "server.ext",
    ]);
    (path("ca.pem"), path("server.pem"), path("server.key"))
}

/// node_exporter on a free port of 127.0.0.1 with `web_config`, and its
/// port once it answers.
fn node_exporter_with(web_config: &Path) -> (Killed, u16) {
    let port = strata_testkit::process::free_port();
    let child = Command::new("prometheus-node-exporter")
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg(format!("--web.config.file={}", web_config.display()))
        .arg("--collector.diskstats.device-exclude=^ram[0-9]+$")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("prometheus-node-exporter: run scripts/install-test-deps");
    strata_testkit::process::wait_until(
        std::time::Duration::from_secs(20),
        "node_exporter",
        || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
    );
    (Killed(child), port)
}

/// The Recording at `record` and every report of it hold no password.
fn assert_nowhere_in_recording_or_reports(record: &Path, dir: &Path) {
    assert_secret_nowhere_in_recording_or_reports(PASSWORD, record, dir);
}

#[test]
fn an_https_node_exporter_with_basic_auth_is_scraped_and_no_output_shows_the_password() {
    let dir = scratch();
    let (ca, certificate, key) = certificates(dir.path());
    let web_config = dir.path().join("web.yml");
    std::fs::write(
        &web_config,
        format!(
            "tls_server_config:\n  cert_file: {}\n  key_file: {}\nbasic_auth_users:\n  {USER}: {AGENT_PASSWORD_BCRYPT}\n",
            certificate.display(),
            key.display()
        ),
    )
    .unwrap();
    let (_exporter, port) = node_exporter_with(&web_config);
    let auth_file = dir.path().join("agent.auth");
    std::fs::write(&auth_file, format!("{USER}:{PASSWORD}\n")).unwrap();
    let (ca, auth_file) = (ca.to_str().unwrap(), auth_file.to_str().unwrap());
    let record = dir.path().join("observed.strata");
    let record_path = record.to_str().unwrap();
    let bare = format!("https://127.0.0.1:{port}");
    let with_user = format!("https://{USER}@127.0.0.1:{port}");
    let with_password = format!("https://{USER}:{PASSWORD}@127.0.0.1:{port}");
    let observe = |agent: &str, more: &[&str], env: Option<&str>| {
        let _ = std::fs::remove_file(&record);
        let mut command = strata();
        command.args([
            "observe",
            "--count",
            "2",
            "--interval",
            "500ms",
            "--agent",
            agent,
        ]);
        command.args(more).current_dir(dir.path());
        if let Some(pair) = env {
            command.env("STRATA_AGENT_BASIC_AUTH", pair);
        }
        command.output().unwrap()
    };
    let pair = format!("{USER}:{PASSWORD}");
    let ways: [(&str, Vec<&str>, Option<&str>); 3] = [
        (&with_user, vec!["--agent-basic-auth-file", auth_file], None),
        (&bare, vec![], Some(&pair)),
        (&with_password, vec![], None),
    ];
    for (agent, mut more, env) in ways {
        more.extend(["--agent-ca-file", ca, "--record", record_path, "--json"]);
        let output = observe(agent, &more, env);
        assert!(
            output.status.success(),
            "{agent} {more:?}: {}",
            everything(&output)
        );
        assert!(!everything(&output).contains(PASSWORD), "{agent}");
        let recording = strata_recording::Recording::read(&record).unwrap();
        let hosts = &recording.header.environment.other_hosts;
        assert_eq!(
            hosts[0].agent,
            format!("https://{USER}:***@127.0.0.1:{port}/metrics")
        );
        assert_eq!(
            hosts[0].transport.as_deref(),
            Some(format!("https, Basic auth as {USER}").as_str())
        );
        let host = &hosts[0].name;
        let sampled = recording
            .layers()
            .filter(|sample| sample.values(&format!("device@{host}")).is_some())
            .count();
        let samples = recording.layers().count();
        assert!(samples >= 2, "{samples} samples");
        assert_eq!(
            sampled, samples,
            "{agent}: every sample has the agent's devices"
        );
        assert_nowhere_in_recording_or_reports(&record, dir.path());
    }

    let insecure = observe(
        &with_password,
        &["--agent-insecure", "--record", record_path],
        None,
    );
    assert!(insecure.status.success(), "{}", everything(&insecure));
    let report = run(&["report", record_path], dir.path());
    let shown = String::from_utf8_lossy(&report.stdout);
    assert!(
        shown.contains("certificate not verified (--agent-insecure)") && !shown.contains(PASSWORD),
        "{shown}"
    );

    let wrong = observe(
        &format!("https://{USER}:wrong-pw@127.0.0.1:{port}"),
        &["--agent-ca-file", ca],
        None,
    );
    let said = everything(&wrong);
    assert_eq!(wrong.status.code(), Some(2), "{said}");
    assert!(
        said.contains("401") && said.contains(&format!("https://{USER}:***@127.0.0.1:{port}")),
        "{said}"
    );
    assert!(!said.contains("wrong-pw"), "{said}");

    let unknown_authority = observe(&with_password, &[], None);
    let said = everything(&unknown_authority);
    assert_eq!(unknown_authority.status.code(), Some(2), "{said}");
    assert!(
        said.contains("--agent-ca-file") && said.contains("--agent-insecure"),
        "{said}"
    );
    assert!(!said.contains(PASSWORD), "{said}");
}

#[test]
fn access_options_that_would_be_ignored_or_do_not_read_are_refused_before_any_work() {
    let dir = scratch();
    let auth_file = dir.path().join("bad.auth");
    std::fs::write(&auth_file, "no colon here\n").unwrap();
    let auth_file = auth_file.to_str().unwrap();
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &[
                "--agent",
                "http://127.0.0.1:9",
                "--agent-ca-file",
                "/etc/hostname",
            ],
            &["--agent-ca-file", "https://"],
        ),
        (
            &["--agent", "http://127.0.0.1:9", "--agent-insecure"],
            &["--agent-insecure", "https://"],
        ),
        (
            &[
                "--agent",
                "http://127.0.0.1:9",
                "--agent-basic-auth-file",
                auth_file,
            ],
            &["--agent-basic-auth-file", "USER:PASSWORD"],
        ),
        (
            &[
                "--agent",
                "https://127.0.0.1:9",
                "--agent-ca-file",
                "/etc/hostname",
            ],
            &["--agent-ca-file /etc/hostname", "PEM"],
        ),
        (
            &[
                "--agent",
                "http://other@127.0.0.1:9",
                "--agent-basic-auth-file",
                "/nonexistent/auth",
            ],
            &["--agent-basic-auth-file /nonexistent/auth", "cannot read"],
        ),
    ];
    for (args, said) in cases {
        for command in ["observe", "run"] {
            let mut all = vec![command];
            all.extend(args);
            let output = run(&all, dir.path());
            let text = everything(&output);
            assert_eq!(output.status.code(), Some(2), "{all:?}: {text}");
            for words in said {
                assert!(text.contains(words), "{all:?} names {words:?}: {text}");
            }
            assert_nothing_left_behind(dir.path());
        }
    }
}

/// An agent that cannot be reached is an error naming it, its password
/// masked; an agent on IPv6 (its address in brackets) is reached.
#[test]
fn an_unreachable_agent_is_named_without_its_password_and_ipv6_agents_answer() {
    let dir = scratch();
    let port = strata_testkit::process::free_port();
    let unreachable = format!("http://{AGENT_USER}:{AGENT_PASSWORD}@127.0.0.1:{port}");
    for command in [
        &["observe", "--count", "1"][..],
        &["run", "--db", "postgres://u@127.0.0.1:1/x"],
    ] {
        let mut args = command.to_vec();
        args.extend(["--agent", &unreachable]);
        let output = run(&args, dir.path());
        let said = everything(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {said}");
        assert!(!said.contains(AGENT_PASSWORD), "{args:?}: {said}");
    }
    let output = run(
        &["observe", "--count", "1", "--agent", &unreachable],
        dir.path(),
    );
    let said = everything(&output);
    assert!(
        said.contains(&format!(
            "--agent http://{AGENT_USER}:***@127.0.0.1:{port}/metrics"
        )),
        "{said}"
    );

    let mut args = vec!["observe", "--prometheus", "[::1]:0"];
    args.extend(["--host", "v6host"]);
    let (child, lines) = spawn_with_stderr_lines(&args, dir.path());
    let _agent = Killed(child);
    let announced = lines
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the agent says where it serves");
    let url = announced
        .split("http://")
        .nth(1)
        .unwrap_or_else(|| panic!("{announced}"))
        .trim_end_matches("/metrics")
        .to_string();
    assert!(url.starts_with("[::1]:"), "{announced}");
    let record = dir.path().join("v6.strata");
    let agent = format!("http://{url}");
    let output = run(
        &[
            "observe",
            "--count",
            "1",
            "--agent",
            &agent,
            "--record",
            record.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(output.status.success(), "{}", everything(&output));
    let recording = strata_recording::Recording::read(&record).unwrap();
    assert!(
        recording
            .layers()
            .any(|sample| sample.values("cpu@v6host").is_some()),
        "the IPv6 agent's CPU is sampled"
    );
}
