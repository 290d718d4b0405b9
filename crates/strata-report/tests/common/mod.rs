//! A report with one of everything the renderers must lay out: every chart
//! kind, a log axis, marks, missing values, an empty series, a table wider
//! than 100 columns, long notes, findings of both severities and problems.

use strata_output::document::{
    Axis, Cell, Chart, ChartKind, Column, Evidence, Fact, Finding, Mark, Report, Section, Series,
    Severity, Table, Window,
};

pub fn rich_report() -> Report {
    let mut report = Report::new(
        "strata report — run <slob> & \"friends\"",
        "run",
        vec!["/var/tmp/strata/2024-05-01-run-with-a-rather-long-file-name.strata".into()],
    );
    report.source.window = Some(Window {
        from_s: 120.0,
        to_s: 480.0,
    });
    report.about = vec![
        Fact::new("host", "db01.example"),
        Fact::new("database", "PostgreSQL 16.2"),
        Fact::new(
            "command",
            "strata run --sessions 64 --scale 4GiB --duration 600s ".repeat(4),
        ),
    ];
    report.sections = vec![load_profile(), latency(), over_time()];
    report.findings = findings();
    report.problems = vec!["iostat samples 17–19: truncated line".into()];
    report
}

fn load_profile() -> Section {
    let mut wide = Table::new(
        Some("Device I/O per layer, every counter read"),
        vec![
            Column::text("layer"),
            Column::number("read requests", Some("requests/s")),
            Column::number("write requests", Some("requests/s")),
            Column::number("read bytes", Some("MB/s")),
            Column::number("write bytes", Some("MB/s")),
            Column::number("average request size", Some("KiB")),
            Column::number("queue", None),
            Column::number("busy", Some("%")),
        ],
    );
    for (layer, scale) in [
        ("PostgreSQL (blocks read)", 1.0),
        ("device nvme0n1 behind dm-crypt", 0.5),
    ] {
        wide.push(vec![
            Cell::text(layer),
            Cell::number(8047.3 * scale, 0, "requests/s"),
            Cell::number(1234.5 * scale, 0, "requests/s"),
            Cell::number(62.9 * scale, 1, "MB/s"),
            Cell::number(9.6 * scale, 1, "MB/s"),
            Cell::number_as(8.0, "KiB", "8.0 KiB"),
            Cell::number(31.75 * scale, 2, "requests"),
            Cell::number(99.5, 1, "%"),
        ]);
    }
    wide.push(
        vec![Cell::text("page cache"); 1]
            .into_iter()
            .chain(vec![Cell::empty(); 7])
            .collect(),
    );
    Section::new("load_profile", "Load profile")
        .note("Blocks read are counted by PostgreSQL; a block served from the kernel's page cache is never seen by the device, so the two rows need not agree. ".repeat(2))
        .table(wide)
}

fn latency() -> Section {
    let histogram = Chart {
        id: "read_latency_histogram".into(),
        title: "Read latency histogram".into(),
        kind: ChartKind::Bars,
        x: Axis {
            label: "latency".into(),
            unit: "ms".into(),
            log: true,
        },
        y: Axis {
            label: "reads".into(),
            unit: "%".into(),
            log: false,
        },
        series: vec![Series {
            name: "reads".into(),
            points: vec![
                [0.05, 2.0],
                [0.1, 10.0],
                [0.2, 40.0],
                [0.5, 30.0],
                [1.0, 12.0],
                [2.0, 4.0],
                [5.0, 1.5],
                [20.0, 0.5],
            ],
        }],
        marks: vec![Mark {
            x: 0.2,
            y: 40.0,
            label: "mode".into(),
        }],
    };
    let knee = Chart {
        id: "iops_vs_outstanding".into(),
        title: "IOPS vs outstanding I/Os".into(),
        kind: ChartKind::Scatter,
        x: Axis {
            label: "outstanding I/Os".into(),
            unit: "requests".into(),
            log: true,
        },
        y: Axis {
            label: "IOPS".into(),
            unit: "requests/s".into(),
            log: false,
        },
        series: vec![
            Series {
                name: "random 8 KiB reads".into(),
                points: [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]
                    .iter()
                    .map(|depth| [*depth, 90_000.0 * depth / (depth + 12.0)])
                    .collect(),
            },
            Series {
                name: "sequential <1 MiB> reads".into(),
                points: vec![[1.0, 900.0], [4.0, f64::NAN], [16.0, 2500.0]],
            },
        ],
        marks: vec![Mark {
            x: 16.0,
            y: 90_000.0 * 16.0 / 28.0,
            label: "knee".into(),
        }],
    };
    Section::new("latency", "Latency and the knee")
        .chart(histogram)
        .chart(knee)
}

fn over_time() -> Section {
    let seconds = (0..240).map(|i| f64::from(i) * 2.0);
    let iops: Vec<[f64; 2]> = seconds
        .clone()
        .map(|t| {
            [
                t,
                8000.0 + 1500.0 * (t / 37.0).sin() + if t == 300.0 { 9000.0 } else { 0.0 },
            ]
        })
        .collect();
    let mut with_gap = iops.iter().map(|[t, v]| [*t, v * 0.4]).collect::<Vec<_>>();
    with_gap[100][1] = f64::NAN;
    with_gap[101][1] = f64::INFINITY;
    let chart = Chart {
        id: "device_iops_over_time".into(),
        title: "Device IOPS over time".into(),
        kind: ChartKind::Line,
        x: Axis {
            label: "time".into(),
            unit: "s".into(),
            log: false,
        },
        y: Axis {
            label: "IOPS".into(),
            unit: "requests/s".into(),
            log: false,
        },
        series: vec![
            Series {
                name: "reads".into(),
                points: iops,
            },
            Series {
                name: "writes".into(),
                points: with_gap,
            },
            Series {
                name: "discards".into(),
                points: vec![],
            },
        ],
        marks: vec![Mark {
            x: 300.0,
            y: 17_000.0,
            label: "spike".into(),
        }],
    };
    let empty = Chart {
        id: "temp_spills_over_time".into(),
        title: "Temporary file writes over time".into(),
        kind: ChartKind::Line,
        x: Axis {
            label: "time".into(),
            unit: "s".into(),
            log: false,
        },
        y: Axis {
            label: "temp writes".into(),
            unit: "MB/s".into(),
            log: true,
        },
        series: vec![Series {
            name: "temp".into(),
            points: vec![[0.0, f64::NAN]],
        }],
        marks: vec![],
    };
    Section::new("time_series", "Over time")
        .chart(chart)
        .chart(empty)
}

fn findings() -> Vec<Finding> {
    vec![
        Finding {
            id: "blocks_not_requests".into(),
            severity: Severity::Warning,
            title: "Blocks read are not device requests: the device saw half of them".into(),
            evidence: vec![
                Evidence::new("blocks read", 8047.0, 0, "blocks/s"),
                Evidence::new("device read requests", 4023.0, 0, "requests/s"),
                Evidence::new("absorbed by the page cache", 50.0, 1, "%"),
            ],
            why: "A benchmark that counts blocks as I/Os overstates what the storage delivered, and sizing storage from it buys too little. ".repeat(2),
        },
        Finding {
            id: "not_steady".into(),
            severity: Severity::Info,
            title: "Throughput was not steady".into(),
            evidence: vec![Evidence::new("coefficient of variation", 13.2, 1, "%")],
            why: "An average over an unsteady window hides the spikes <and> the dips.".into(),
        },
    ]
}

/// Finite points of a chart: what the HTML page must draw.
pub fn finite_points(chart: &Chart) -> usize {
    chart
        .series
        .iter()
        .flat_map(|series| series.points.iter())
        .filter(|[x, y]| x.is_finite() && y.is_finite())
        .count()
}
