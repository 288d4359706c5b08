//! Which hosts the service may reach on a tenant's behalf (the HITL callbacks).
//!
//! A tenant names the URL, so the service must never become its way into the network it
//! runs in: loopback, the private ranges, the cloud metadata services (link-local), NAT64
//! and 6to4 forms of those, and so on. The rule is written as what is allowed, not as a
//! list of what is known to be dangerous: an address is a receiver only if it is *globally
//! routable unicast* ([`is_global_unicast`]). An operator whose receivers live on a private
//! network allows those ranges explicitly ([`ReceiverPolicy`], `AGENTGOV_HITL_CALLBACK_ALLOW_PRIVATE`).
//!
//! The policy is applied twice: when a request names its callback URL (IP literals and
//! names that can only be local, [`ReceiverPolicy::check_url`]), and by the sender on the
//! addresses it actually connects to (every address a name resolves to), which is what
//! defeats DNS rebinding.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// IPv4 ranges that are not globally routable unicast (IANA's special-purpose registry,
/// RFC 6890 and later), with why.
const V4_REFUSED: &[(Ipv4Addr, u8, &str)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8, "this network (0/8, unspecified)"),
    (Ipv4Addr::new(10, 0, 0, 0), 8, "private (RFC 1918)"),
    (Ipv4Addr::new(100, 64, 0, 0), 10, "shared address space (CGNAT, RFC 6598)"),
    (Ipv4Addr::new(127, 0, 0, 0), 8, "loopback"),
    (Ipv4Addr::new(169, 254, 0, 0), 16, "link-local (cloud metadata)"),
    (Ipv4Addr::new(172, 16, 0, 0), 12, "private (RFC 1918)"),
    (Ipv4Addr::new(192, 0, 0, 0), 24, "IETF protocol assignments"),
    (Ipv4Addr::new(192, 0, 2, 0), 24, "documentation (TEST-NET-1)"),
    (Ipv4Addr::new(192, 88, 99, 0), 24, "6to4 relay anycast"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, "private (RFC 1918)"),
    (Ipv4Addr::new(198, 18, 0, 0), 15, "benchmarking"),
    (Ipv4Addr::new(198, 51, 100, 0), 24, "documentation (TEST-NET-2)"),
    (Ipv4Addr::new(203, 0, 113, 0), 24, "documentation (TEST-NET-3)"),
    (Ipv4Addr::new(224, 0, 0, 0), 4, "multicast"),
    (Ipv4Addr::new(240, 0, 0, 0), 4, "reserved (and the broadcast address)"),
];

/// IPv6 ranges inside global unicast (`2000::/3`) that are not globally routable or not a
/// receiver, with why. Everything outside `2000::/3` is refused anyway (unspecified,
/// loopback, IPv4-compatible, discard `100::/64`, local-use NAT64 `64:ff9b:1::/48`, ULA
/// `fc00::/7`, link-local `fe80::/10`, site-local `fec0::/10`, multicast `ff00::/8`), except
/// the forms that embed an IPv4 address, which are judged by that address.
const V6_REFUSED: &[(Ipv6Addr, u8, &str)] = &[
    // Teredo (2001::/32), benchmarking, ORCHID and the other IETF protocol assignments.
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23, "IETF protocol assignments (Teredo, …)"),
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32, "documentation"),
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20, "documentation"),
];

/// Whether `ip` is a globally routable unicast address, the only kind a tenant's receiver
/// may have (unless the operator allows a private range).
///
/// IPv6 forms that carry an IPv4 address are judged by it: IPv4-mapped `::ffff:a.b.c.d`,
/// NAT64 `64:ff9b::a.b.c.d` (RFC 6052) and 6to4 `2002:aabb:ccdd::/48`.
pub fn is_global_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4_global(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => v4_global(v4),
            None => v6_global(v6),
        },
    }
}

fn v4_global(ip: Ipv4Addr) -> bool {
    !V4_REFUSED.iter().any(|&(net, len, _)| v4_in(ip, net, len))
}

fn v6_global(ip: Ipv6Addr) -> bool {
    // Global unicast is 2000::/3; nothing else is ever a receiver.
    v6_in(ip, Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3)
        && !V6_REFUSED.iter().any(|&(net, len, _)| v6_in(ip, net, len))
}

/// The IPv4 address an IPv6 address stands for, when it is one of the forms that reach an
/// IPv4 host: IPv4-mapped, well-known-prefix NAT64, 6to4.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let o = ip.octets();
    if v6_in(ip, Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0), 96)
        || v6_in(ip, Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96)
    {
        return Some(Ipv4Addr::new(o[12], o[13], o[14], o[15]));
    }
    if v6_in(ip, Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16) {
        return Some(Ipv4Addr::new(o[2], o[3], o[4], o[5]));
    }
    None
}

fn v4_in(ip: Ipv4Addr, net: Ipv4Addr, len: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
    u32::from(ip) & mask == u32::from(net) & mask
}

fn v6_in(ip: Ipv6Addr, net: Ipv6Addr, len: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
    u128::from(ip) & mask == u128::from(net) & mask
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is; anything else unchanged.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// An address range, `10.0.0.0/8` or `fd00::/8`; a bare address is a range of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    len: u8,
}

impl Cidr {
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, canonical(ip)) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => v4_in(ip, net, self.len),
            (IpAddr::V6(net), IpAddr::V6(ip)) => v6_in(ip, net, self.len),
            _ => false,
        }
    }
}

impl FromStr for Cidr {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (addr, len) = match s.split_once('/') {
            Some((addr, len)) => (addr, Some(len)),
            None => (s, None),
        };
        let addr: IpAddr = addr.parse().map_err(|_| format!("{s:?} is not an address range like 10.0.0.0/8"))?;
        let addr = canonical(addr);
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let len = match len {
            None => max,
            Some(len) => match len.parse::<u8>() {
                Ok(len) if len <= max => len,
                _ => return Err(format!("{s:?}: the prefix length must be 0 to {max}")),
            },
        };
        Ok(Self { addr, len })
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

/// Top-level names and suffixes that only ever name hosts of a local network (RFC 6761,
/// RFC 6762, RFC 8375, ICANN's `.internal`, and names never delegated that private networks
/// use): `localhost`, `metadata.google.internal`, `printer.local`, `nas.home.arpa`, …
const LOCAL_SUFFIXES: &[&str] =
    &["localhost", "local", "internal", "localdomain", "home.arpa", "intranet", "lan", "home", "corp", "private"];

/// Where a tenant's callbacks may go: globally routable unicast addresses, and the private
/// ranges the operator allows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReceiverPolicy {
    allow_private: Vec<Cidr>,
}

/// Why a receiver was refused (for the 422 and the operator's log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The address is not globally routable unicast and no allowed range holds it.
    Address(IpAddr),
    /// The name can only be a host of a local network.
    LocalName,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Address(_) => f.write_str(
                "must be a public address: loopback, private, link-local, shared (CGNAT), unique-local, \
                 multicast, reserved, documentation and NAT64/6to4 forms of them are refused",
            ),
            Refusal::LocalName => f.write_str(
                "must name a public host: localhost, single-label names and local suffixes \
                 (.local, .internal, .localhost, .home.arpa, …) are refused",
            ),
        }
    }
}

impl ReceiverPolicy {
    /// Public receivers, plus those in `allow_private`.
    pub fn new(allow_private: Vec<Cidr>) -> Self {
        Self { allow_private }
    }

    /// Parses the operator's comma-separated list of ranges (empty: none).
    pub fn parse(list: &str) -> Result<Self, String> {
        let ranges = list.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::parse);
        Ok(Self::new(ranges.collect::<Result<_, _>>()?))
    }

    /// The ranges the operator allows beyond public addresses.
    pub fn allowed_private(&self) -> &[Cidr] {
        &self.allow_private
    }

    /// Whether a receiver at `ip` may be connected to.
    pub fn permits(&self, ip: IpAddr) -> bool {
        is_global_unicast(ip) || self.allow_private.iter().any(|c| c.contains(ip))
    }

    /// `Err` when `ip` may not be connected to.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), Refusal> {
        if self.permits(ip) { Ok(()) } else { Err(Refusal::Address(ip)) }
    }

    /// Checks a URL's host before anything is resolved: an IP literal by [`Self::permits`]
    /// (every spelling the URL standard reads as an address, such as `127.1` or
    /// `0x7f000001`, is one); a name that can only be local is refused unless the operator
    /// allows private ranges (then the addresses it resolves to decide, when sending).
    pub fn check_url(&self, url: &url::Url) -> Result<(), Refusal> {
        match url.host() {
            Some(url::Host::Ipv4(ip)) => self.check_ip(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => self.check_ip(IpAddr::V6(ip)),
            Some(url::Host::Domain(name)) => {
                if self.allow_private.is_empty() && is_local_name(name) {
                    Err(Refusal::LocalName)
                } else {
                    Ok(())
                }
            }
            None => Err(Refusal::LocalName),
        }
    }
}

/// A name that can only be a host of a local network: one label (`intranet`, `localhost`,
/// resolved through search domains), or under one of [`LOCAL_SUFFIXES`].
pub fn is_local_name(name: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if !name.contains('.') {
        return true;
    }
    LOCAL_SUFFIXES
        .iter()
        .any(|suffix| name == *suffix || name.strip_suffix(suffix).is_some_and(|rest| rest.ends_with('.')))
}

#[cfg(test)]
mod tests {

    use super::*;

    fn global(s: &str) -> bool {
        is_global_unicast(s.parse().unwrap())
    }

    fn refused(class: &str, addrs: &[&str]) {
        for a in addrs {
            assert!(!global(a), "{class}: {a} must be refused");
        }
    }

    #[test]
    fn public_addresses_are_receivers() {
        for a in [
            "93.184.216.34",
            "8.8.8.8",
            "1.1.1.1",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.3.1",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.254",
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
            "2001:4860:4860::8888",
        ] {
            assert!(global(a), "{a} is public");
        }
    }

    #[test]
    fn unspecified_and_this_network() {
        refused("unspecified", &["0.0.0.0", "0.1.2.3", "::"]);
    }

    #[test]
    fn loopback_all_of_it() {
        refused("loopback", &["127.0.0.1", "127.1.2.3", "127.255.255.254", "::1"]);
    }

    #[test]
    fn rfc1918() {
        refused("private", &["10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255", "192.168.0.1"]);
    }

    #[test]
    fn cgnat() {
        refused("CGNAT", &["100.64.0.1", "100.127.255.255"]);
    }

    #[test]
    fn link_local_and_metadata() {
        refused("link-local", &["169.254.169.254", "169.254.0.1", "fe80::1", "febf::1", "fe80::a9fe:a9fe"]);
    }

    #[test]
    fn unique_local_including_the_aws_ipv6_metadata_address() {
        refused("ULA", &["fd00:ec2::254", "fc00::1", "fdff:ffff::1"]);
    }

    #[test]
    fn multicast_and_broadcast() {
        refused("multicast", &["224.0.0.1", "239.255.255.250", "ff02::1", "ff0e::1"]);
        refused("broadcast", &["255.255.255.255"]);
    }

    #[test]
    fn reserved_documentation_benchmarking_and_protocol_ranges() {
        refused("IETF", &["192.0.0.1", "192.0.0.170"]);
        refused("documentation", &["192.0.2.1", "198.51.100.7", "203.0.113.9", "2001:db8::1", "3fff::1"]);
        refused("benchmarking", &["198.18.0.1", "198.19.255.255"]);
        refused("reserved", &["240.0.0.1", "250.1.2.3"]);
        refused("6to4 relay", &["192.88.99.1"]);
        refused("discard", &["100::1", "100::ffff:1"]);
    }

    #[test]
    fn nat64_is_judged_by_its_ipv4_and_local_use_nat64_is_refused() {
        refused("NAT64", &["64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b::c0a8:101"]);
        refused("local-use NAT64", &["64:ff9b:1::a9fe:a9fe", "64:ff9b:1::808:808"]);
        assert!(global("64:ff9b::808:808"), "NAT64 of a public address (DNS64 deployments)");
    }

    #[test]
    fn ipv4_mapped_and_compatible_are_judged_by_their_ipv4() {
        refused("mapped", &["::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1", "::ffff:0.0.0.0"]);
        refused("compatible", &["::127.0.0.1", "::169.254.169.254", "::8.8.8.8"]);
        assert!(global("::ffff:8.8.8.8"));
    }

    #[test]
    fn sixtofour_is_judged_by_its_ipv4() {
        refused("6to4", &["2002:7f00:1::1", "2002:a9fe:a9fe::", "2002:c0a8:101::1", "2002:a00:1::"]);
        assert!(global("2002:808:808::1"));
    }

    #[test]
    fn teredo_and_site_local() {
        refused("Teredo", &["2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2"]);
        refused("IETF assignments", &["2001:2::1", "2001:10::1"]);
        refused("site-local", &["fec0::1", "feff::1"]);
    }

    #[test]
    fn outside_global_unicast_nothing_is_a_receiver() {
        refused("reserved v6", &["4000::1", "1::1", "5f00::1", "e000::1"]);
    }

    #[test]
    fn cidrs_parse_and_match_mapped_addresses_as_ipv4() {
        let loopback: Cidr = "127.0.0.0/8".parse().unwrap();
        assert!(loopback.contains("127.0.0.1".parse().unwrap()));
        assert!(loopback.contains("::ffff:127.0.0.1".parse().unwrap()));
        assert!(!loopback.contains("::1".parse().unwrap()));
        let one: Cidr = "::1".parse().unwrap();
        assert_eq!(one.to_string(), "::1/128");
        assert!(one.contains("::1".parse().unwrap()));
        let all: Cidr = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains("10.1.2.3".parse().unwrap()));
        for bad in ["10.0.0.0/33", "::/129", "ten", "10.0.0.0/x", "localhost/8", ""] {
            assert!(bad.parse::<Cidr>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_operator_allows_private_ranges_and_nothing_else() {
        assert_eq!(ReceiverPolicy::parse("").unwrap(), ReceiverPolicy::default());
        let p = ReceiverPolicy::parse(" 10.0.0.0/8, fd00::/8 ,127.0.0.1").unwrap();
        assert_eq!(p.allowed_private().len(), 3);
        for ok in ["10.1.2.3", "fd00:ec2::254", "127.0.0.1", "8.8.8.8"] {
            assert!(p.permits(ok.parse().unwrap()), "{ok}");
        }
        for no in ["127.0.0.2", "169.254.169.254", "192.168.1.1", "::1"] {
            assert!(!p.permits(no.parse().unwrap()), "{no}");
        }
        assert!(ReceiverPolicy::parse("10.0.0.0/8,nope").is_err());
        assert!(!ReceiverPolicy::default().permits("127.0.0.1".parse().unwrap()));
    }

    #[test]
    fn urls_are_checked_by_literal_and_by_name() {
        let p = ReceiverPolicy::default();
        let check = |u: &str| p.check_url(&url::Url::parse(u).unwrap());
        for bad in [
            "http://127.0.0.1:8080/",
            "http://127.1/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[fd00:ec2::254]/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://169.254.169.254/latest/meta-data",
            "http://0.0.0.0/",
        ] {
            assert!(matches!(check(bad), Err(Refusal::Address(_))), "{bad}");
        }
        for bad in [
            "http://localhost:8080/",
            "http://LOCALHOST./",
            "http://api.localhost/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://metadata/",
            "http://intranet/",
            "http://printer.local/",
            "http://nas.home.arpa/",
            "http://db.corp/",
        ] {
            assert_eq!(check(bad), Err(Refusal::LocalName), "{bad}");
        }
        for ok in [
            "https://hooks.example.com/x",
            "http://93.184.216.34/",
            "https://[2606:4700::1111]/",
            "http://local.example.com/",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        // With private ranges allowed, names are left to the addresses they resolve to.
        let allowing = ReceiverPolicy::parse("127.0.0.0/8").unwrap();
        let check = |u: &str| allowing.check_url(&url::Url::parse(u).unwrap());
        assert_eq!(check("http://127.0.0.1:9/"), Ok(()));
        assert_eq!(check("http://localhost:9/"), Ok(()));
        assert!(check("http://[::1]:9/").is_err());
        assert!(check("http://169.254.169.254/").is_err());
    }
}
