//! NFS throughput from the round trip, the transfer size and the calls in
//! flight on each connection, the way a Direct NFS client loads a filer:
//! an I/O larger than the transfer size is several calls, all in flight at
//! once; the I/Os in flight are spread over the connections (at most one
//! connection per I/O in flight); and the calls per second are the least
//! of three bounds — Little's law at the unloaded round trip (calls in
//! flight ÷ round trip), each connection's own ceiling (one client thread
//! per connection: 1 ÷ its CPU per call), and the link (its bytes per
//! second ÷ the bytes of a call). The loaded round trip is then Little's
//! law read backwards: calls in flight ÷ calls per second.
//!
//! Not for: reading the measured figures (strata-run's `measured`) or
//! laying out the result (`command::nfs`).

use crate::{require_positive, ModelError};
use serde::Serialize;

/// A client's channels to a filer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NfsChannels {
    /// One call's round trip with nothing else in flight, seconds.
    pub round_trip_s: f64,
    /// The most bytes one READ or WRITE call carries.
    pub transfer_bytes: f64,
    /// The database's I/O.
    pub io_bytes: f64,
    pub connections: u32,
    /// The most calls per second one connection makes, when known.
    pub connection_calls_per_s: Option<f64>,
    /// The link's bytes per second, when known.
    pub link_bytes_per_s: Option<f64>,
}

/// Which bound sets the calls per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NfsBound {
    /// Too few calls in flight to fill the round trip.
    RoundTrip,
    /// The connections' own ceiling: more of them would go further.
    Connections,
    /// The link's bandwidth.
    Link,
}

impl NfsBound {
    pub fn name(self) -> &'static str {
        match self {
            NfsBound::RoundTrip => "round trip",
            NfsBound::Connections => "connections",
            NfsBound::Link => "link",
        }
    }
}

/// The model at one count of I/Os in flight.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NfsPrediction {
    pub outstanding_ios: u32,
    /// Connections with at least one I/O in flight.
    pub connections_used: u32,
    pub calls_per_io: f64,
    pub calls_in_flight: f64,
    pub calls_per_s: f64,
    pub ios_per_s: f64,
    /// Decimal MB/s of the I/Os' data.
    pub mb_per_s: f64,
    /// calls in flight ÷ calls per second.
    pub round_trip_s: f64,
    pub bound: NfsBound,
}

impl NfsChannels {
    /// The inputs checked, each named by its option.
    pub fn checked(self) -> Result<NfsChannels, ModelError> {
        require_positive("round-trip", self.round_trip_s)?;
        require_positive("transfer", self.transfer_bytes)?;
        require_positive("io-size", self.io_bytes)?;
        require_positive("connections", f64::from(self.connections))?;
        if let Some(ceiling) = self.connection_calls_per_s {
            require_positive("connection-calls", ceiling)?;
        }
        if let Some(link) = self.link_bytes_per_s {
            require_positive("link-gbit", link)?;
        }
        Ok(self)
    }

    /// Calls per I/O: an I/O larger than the transfer size is several.
    pub fn calls_per_io(&self) -> f64 {
        (self.io_bytes / self.transfer_bytes).ceil()
    }

    /// The model with `outstanding_ios` I/Os in flight (at least one).
    pub fn predict(&self, outstanding_ios: u32) -> NfsPrediction {
        let outstanding_ios = outstanding_ios.max(1);
        let connections_used = self.connections.min(outstanding_ios);
        let calls_per_io = self.calls_per_io();
        let calls_in_flight = f64::from(outstanding_ios) * calls_per_io;
        let call_bytes = self.transfer_bytes.min(self.io_bytes);
        let bounds = [
            (calls_in_flight / self.round_trip_s, NfsBound::RoundTrip),
            (
                self.connection_calls_per_s
                    .map_or(f64::INFINITY, |ceiling| {
                        ceiling * f64::from(connections_used)
                    }),
                NfsBound::Connections,
            ),
            (
                self.link_bytes_per_s
                    .map_or(f64::INFINITY, |link| link / call_bytes),
                NfsBound::Link,
            ),
        ];
        let (calls_per_s, bound) =
            bounds
                .into_iter()
                .fold((f64::INFINITY, NfsBound::RoundTrip), |least, bound| {
                    if bound.0 < least.0 {
                        bound
                    } else {
                        least
                    }
                });
        let ios_per_s = calls_per_s / calls_per_io;
        NfsPrediction {
            outstanding_ios,
            connections_used,
            calls_per_io,
            calls_in_flight,
            calls_per_s,
            ios_per_s,
            mb_per_s: ios_per_s * self.io_bytes / 1e6,
            round_trip_s: calls_in_flight / calls_per_s,
            bound,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channels() -> NfsChannels {
        NfsChannels {
            round_trip_s: 500e-6,
            transfer_bytes: 32768.0,
            io_bytes: 1048576.0,
            connections: 2,
            connection_calls_per_s: Some(10_000.0),
            link_bytes_per_s: Some(1.25e9),
        }
    }

    #[test]
    fn a_large_read_is_its_calls_and_the_round_trip_bounds_one_in_flight() {
        let one = channels().predict(1);
        assert_eq!(one.calls_per_io, 32.0);
        assert_eq!(one.connections_used, 1);
        // 32 calls in flight over 500 µs would be 64,000 calls/s; one
        // connection makes 10,000.
        assert_eq!(one.bound, NfsBound::Connections);
        assert_eq!(one.calls_per_s, 10_000.0);
        assert!((one.round_trip_s - 0.0032).abs() < 1e-12);
        assert!((one.mb_per_s - 10_000.0 / 32.0 * 1.048576).abs() < 1e-9);
    }

    #[test]
    fn small_reads_are_bound_by_the_round_trip_then_the_connections_then_the_link() {
        let small = NfsChannels {
            io_bytes: 8192.0,
            ..channels()
        };
        let one = small.predict(1);
        assert_eq!((one.calls_per_io, one.bound), (1.0, NfsBound::RoundTrip));
        assert_eq!(one.calls_per_s, 2000.0);
        assert_eq!(one.round_trip_s, 500e-6);
        let sixteen = small.predict(16);
        assert_eq!(sixteen.bound, NfsBound::Connections);
        assert_eq!(sixteen.calls_per_s, 20_000.0);
        assert!((sixteen.round_trip_s - 800e-6).abs() < 1e-12);
        let thin_link = NfsChannels {
            link_bytes_per_s: Some(8192.0 * 5000.0),
            ..small
        };
        assert_eq!(thin_link.predict(16).bound, NfsBound::Link);
        assert_eq!(thin_link.predict(16).calls_per_s, 5000.0);
    }

    #[test]
    fn nonsense_is_refused_naming_the_option() {
        let zero = NfsChannels {
            round_trip_s: 0.0,
            ..channels()
        };
        assert_eq!(zero.checked().unwrap_err().input, "round-trip");
        let none = NfsChannels {
            connections: 0,
            ..channels()
        };
        assert_eq!(none.checked().unwrap_err().input, "connections");
    }
}
