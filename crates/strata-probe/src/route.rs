//! Which interface this host reaches an IPv4 address through, from
//! `/proc/net/route` (the main table, as `route -n` prints it): the
//! longest prefix that is up; and that interface's byte counters, as
//! `/sys/class/net/NAME/statistics` keeps them.
//!
//! Not for: every interface's counters over time (the `net` collector).

use std::net::Ipv4Addr;

/// One route: where it goes, for which prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub interface: String,
    pub destination: Ipv4Addr,
    pub mask: Ipv4Addr,
    pub up: bool,
}

/// The routes of `/proc/net/route`'s text; a line that does not read is
/// left out (the header among them).
pub fn parse_routes(text: &str) -> Vec<Route> {
    let address = |hex: &str| {
        u32::from_str_radix(hex, 16)
            .ok()
            .map(|raw| Ipv4Addr::from(raw.to_ne_bytes()))
    };
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (interface, destination, flags, mask) = (
                fields.first()?,
                fields.get(1)?,
                fields.get(3)?,
                fields.get(7)?,
            );
            let flags = u32::from_str_radix(flags, 16).ok()?;
            Some(Route {
                interface: interface.to_string(),
                destination: address(destination)?,
                mask: address(mask)?,
                up: flags & 1 == 1,
            })
        })
        .collect()
}

/// The interface of the longest prefix holding `address` that is up.
pub fn interface_among(routes: &[Route], address: Ipv4Addr) -> Option<String> {
    let holds = |route: &&Route| {
        route.up && u32::from(address) & u32::from(route.mask) == u32::from(route.destination)
    };
    routes
        .iter()
        .filter(holds)
        .max_by_key(|route| u32::from(route.mask).count_ones())
        .map(|route| route.interface.clone())
}

/// The interface this host reaches `address` through now.
pub fn interface_to(address: Ipv4Addr) -> Option<String> {
    let text = std::fs::read_to_string("/proc/net/route").ok()?;
    interface_among(&parse_routes(&text), address)
}

/// `interface`'s bytes received and sent so far.
pub fn interface_bytes(interface: &str) -> Option<(u64, u64)> {
    let counter = |name: &str| {
        let path = format!("/sys/class/net/{interface}/statistics/{name}");
        std::fs::read_to_string(path)
            .ok()?
            .trim()
            .parse::<u64>()
            .ok()
    };
    Some((counter("rx_bytes")?, counter("tx_bytes")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As this machine's kernel printed it, with a veth to a test host.
    const ROUTES: &str =
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
        eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n\
        nvm0\t0000E90A\t00000000\t0001\t0\t0\t0\tFCFFFFFF\t0\t0\t0\n\
        eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n\
        down0\t0000E90A\t00000000\t0000\t0\t0\t0\tFFFFFFFF\t0\t0\t0\n";

    #[test]
    fn the_longest_prefix_that_is_up_names_the_interface() {
        let routes = parse_routes(ROUTES);
        assert_eq!(routes.len(), 4);
        assert_eq!(routes[1].destination, Ipv4Addr::new(10, 233, 0, 0));
        assert_eq!(routes[1].mask, Ipv4Addr::new(255, 255, 255, 252));
        let to = |address: [u8; 4]| interface_among(&routes, Ipv4Addr::from(address));
        assert_eq!(to([10, 233, 0, 2]).as_deref(), Some("nvm0"));
        assert_eq!(to([192, 0, 2, 7]).as_deref(), Some("eth0"));
        assert_eq!(
            to([10, 233, 0, 0]).as_deref(),
            Some("nvm0"),
            "down0 is down"
        );
        assert_eq!(
            to([8, 8, 8, 8]).as_deref(),
            Some("eth0"),
            "the default route"
        );
        assert_eq!(
            interface_among(&routes[1..2], Ipv4Addr::new(8, 8, 8, 8)),
            None
        );
    }
}
