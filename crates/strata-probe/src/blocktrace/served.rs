//! The tracer as a strata agent serves it to a run on another host
//! (`GET /blocktrace`, JSON): everything traced since the agent started,
//! its host's /proc/diskstats read right after the tracer's counts, and
//! the agent's CLOCK_MONOTONIC when the request came and when it answered
//! (NTP's two server times). The run places the
//! snapshot on its own clock ([`ServedTrace::on_this_clock`]) and takes the
//! window's figures with the code it uses for its own host: the same
//! roles, processes, outliers and exact percentiles, not the Prometheus
//! histograms' bucket bounds.
//!
//! Not for: Prometheus (the histograms at `/metrics` are for a fleet), or
//! computing figures (`shared`).

use super::TraceSnapshot;
use crate::diskstats::DiskStat;
use serde::{Deserialize, Serialize};

/// The path an agent serves it at.
pub const PATH: &str = "/blocktrace";

/// What an agent serves at [`PATH`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServedTrace {
    /// Everything its tracer counted since it started, on the agent's
    /// CLOCK_MONOTONIC.
    pub trace: TraceSnapshot,
    /// Its host's /proc/diskstats, read right after the tracer's counts.
    pub disks: Vec<DiskStat>,
    /// The agent's CLOCK_MONOTONIC when the request came, ns.
    pub received_ns: u64,
    /// The agent's CLOCK_MONOTONIC when its answer was written, ns: sent
    /// beside the rest, taken once the rest is written.
    #[serde(skip)]
    pub answered_ns: u64,
    /// Why the processes' roles are not named, where they are not.
    pub roles_unnamed: Option<String>,
    /// Why the host's requests are not traced, where they are not (the
    /// rest is then empty).
    pub unavailable: Option<String>,
}

impl ServedTrace {
    /// What an agent whose host is not traced serves.
    pub fn unavailable(why: String) -> ServedTrace {
        ServedTrace {
            unavailable: Some(why),
            ..ServedTrace::default()
        }
    }

    /// The answer's body: the rest written first, then the moment it was
    /// written, so that the agent's own time is the whole of its time.
    pub fn to_json(&self) -> String {
        let rest = serde_json::to_string(self).unwrap_or_default();
        format!(
            "{{\"served\":{rest},\"answered_ns\":{}}}",
            super::monotonic_ns()
        )
    }

    /// An answer read back; the error says what in it did not read.
    pub fn from_json(body: &[u8]) -> Result<ServedTrace, String> {
        #[derive(Deserialize)]
        struct Answer {
            served: ServedTrace,
            answered_ns: u64,
        }
        let answer: Answer = serde_json::from_slice(body)
            .map_err(|error| format!("its {PATH} answer does not read: {error}"))?;
        Ok(ServedTrace {
            answered_ns: answer.answered_ns,
            ..answer.served
        })
    }

    /// The snapshot moved onto the reader's CLOCK_MONOTONIC, given the
    /// reader's clock when it sent the request and when the answer came
    /// back: NTP's offset, ((received − sent) + (answered − came back)) ÷
    /// 2, and how far off it may be, ns (half the round trip less the
    /// agent's own time).
    pub fn on_this_clock(mut self, (sent_ns, came_back_ns): (u64, u64)) -> (ServedTrace, u64) {
        let wide = |ns: u64| i128::from(ns);
        let agent_ahead = ((wide(self.received_ns) - wide(sent_ns))
            + (wide(self.answered_ns) - wide(came_back_ns)))
            / 2;
        let agent_took = self.answered_ns.saturating_sub(self.received_ns);
        let within_ns = came_back_ns
            .saturating_sub(sent_ns)
            .saturating_sub(agent_took)
            / 2;
        let moved = |ns: u64| u64::try_from((wide(ns) - agent_ahead).max(0)).unwrap_or(0);
        let trace = &mut self.trace;
        trace.taken_ns = moved(trace.taken_ns);
        for outlier in &mut trace.outliers {
            outlier.ended_ns = moved(outlier.ended_ns);
        }
        for start in &mut trace.stale_starts {
            *start = moved(*start);
        }
        self.received_ns = moved(self.received_ns);
        self.answered_ns = moved(self.answered_ns);
        (self, within_ns)
    }
}

/// A map whose keys are not strings, as a list of (key, value) pairs.
pub(crate) mod pairs {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;

    pub fn serialize<K, V, S>(map: &BTreeMap<K, V>, serializer: S) -> Result<S::Ok, S::Error>
    where
        K: Serialize,
        V: Serialize,
        S: Serializer,
    {
        serializer.collect_seq(map.iter())
    }

    pub fn deserialize<'de, K, V, D>(deserializer: D) -> Result<BTreeMap<K, V>, D::Error>
    where
        K: Deserialize<'de> + Ord,
        V: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Ok(Vec::<(K, V)>::deserialize(deserializer)?
            .into_iter()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocktrace::{Buckets, IoOutlier, Kind, Op, ProcessKey, ProcessTotals, SeriesKey};

    fn outlier(ended_ns: u64) -> IoOutlier {
        IoOutlier {
            sequence: 7,
            ended_ns,
            tgid: 41,
            command: "postgres".into(),
            role: 1,
            op: Op::Read,
            major: 7,
            minor: 3,
            sector: 2048,
            bytes: 8192,
            queue_ns: 1_000,
            device_ns: 600_000_000,
            thread: 41,
        }
    }

    #[test]
    fn a_served_trace_reads_back_whole_and_moves_onto_the_reader_s_clock() {
        let mut trace = TraceSnapshot {
            taken_ns: 5_000,
            outliers: vec![outlier(4_000)],
            stale_starts: vec![1_000],
            roles: vec![String::new(), "client backend".into()],
            ..TraceSnapshot::default()
        };
        let key = SeriesKey {
            major: 7,
            minor: 3,
            op: Op::Read,
            kind: Kind::Device,
            role: 1,
        };
        let mut buckets = Buckets::default();
        buckets.counts.insert(300, 2);
        buckets.requests = 2;
        buckets.sum = 9_000;
        trace.series.insert(key, buckets);
        let process = ProcessKey {
            tgid: 41,
            major: 7,
            minor: 3,
            op: Op::Read,
            role: 1,
        };
        trace.processes.insert(process, ProcessTotals::default());
        trace.merges.insert(((7, 3), Op::Read, 1), 3);
        let served = ServedTrace {
            trace,
            received_ns: 5_500,
            ..ServedTrace::default()
        };
        let json = served.to_json();
        let (rest, _) = json.rsplit_once("\"answered_ns\":").unwrap();
        let read = ServedTrace::from_json(format!("{rest}\"answered_ns\":6000}}").as_bytes());
        let read = read.unwrap();
        assert_eq!(read.answered_ns, 6_000);
        let as_served = ServedTrace {
            answered_ns: 0,
            ..read.clone()
        };
        assert_eq!(as_served, served);
        // Sent at 1,000,004,500 here, back at 1,000,009,000: 2,000 ns each
        // way, the agent's 500 ns between.
        let (moved, within_ns) = read.on_this_clock((1_000_004_500, 1_000_009_000));
        assert_eq!(within_ns, 2_000);
        assert_eq!(moved.answered_ns, 1_000_007_000);
        assert_eq!(moved.trace.taken_ns, 1_000_006_000);
        assert_eq!(moved.trace.outliers[0].ended_ns, 1_000_005_000);
        assert_eq!(moved.trace.stale_starts, vec![1_000_002_000]);
        assert_eq!(moved.trace.series, served.trace.series);
        let error = ServedTrace::from_json(b"{\"served\": 1}").unwrap_err();
        assert!(
            error.contains("/blocktrace answer does not read"),
            "{error}"
        );
    }
}
