//! Where Tender may send webhooks (and connector calls): the addresses it refuses (private,
//! loopback, link-local, cloud metadata services, and their IPv6 translations) in live mode, or
//! always, and the host names of metadata services refused when a URL is given (CONTRACT §17).

use std::net::IpAddr;

/// Host names of cloud providers' instance-metadata services (credentials live there). A URL
/// naming one is refused when it is given, in both modes (CONTRACT §17), whether or not the
/// name resolves where Tender runs; their addresses are refused at every connection anyway.
const METADATA_HOSTS: [&str; 10] = [
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "metadata.azure.com",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.ec2.internal",
    "metadata.tencentyun.com",
    "metadata.platformequinix.com",
    "metadata.packet.net",
];

/// Whether host name `name` is a cloud metadata service's ([`METADATA_HOSTS`]), in any case,
/// with or without a trailing dot, or any name under `metadata.google.internal`.
pub fn is_metadata_host(name: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    METADATA_HOSTS.contains(&name.as_str()) || name.ends_with(".metadata.google.internal")
}

/// Alibaba Cloud's metadata service: inside the shared 100.64/10 range that private targets
/// may otherwise reach.
const ALIBABA_METADATA: std::net::Ipv4Addr = std::net::Ipv4Addr::new(100, 100, 100, 200);

/// Whether a webhook in this mode may connect to `ip` (CONTRACT §5): live mode only to public
/// addresses ([`is_forbidden_address`]); test mode also to loopback (local development), to
/// private ranges (RFC 1918, unique-local, shared 100.64/10) only when the operator allowed them,
/// and never to link-local (cloud metadata lives there), multicast or reserved ranges.
pub fn webhook_address_allowed(ip: IpAddr, livemode: bool, allow_private: bool) -> bool {
    if !is_forbidden_address(ip) {
        return true;
    }
    if livemode {
        return false;
    }
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || (allow_private
                    && v4 != ALIBABA_METADATA
                    && (v4.is_private() || (o[0] == 100 && (64..128).contains(&o[1]))))
        }
        IpAddr::V6(v6) => {
            // AWS's instance metadata service sits inside the unique-local range.
            let metadata = v6 == std::net::Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254);
            v6.is_loopback()
                || (allow_private && !metadata && (v6.segments()[0] & 0xfe00) == 0xfc00)
        }
    }
}

/// Addresses a live-mode endpoint may not reach: loopback, private, link-local, multicast,
/// unspecified, broadcast, documentation/shared/benchmark ranges, and IPv4-mapped forms of them.
pub fn is_forbidden_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_multicast()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1])) // shared address space
                || (o[0] == 198 && (o[1] == 18 || o[1] == 19)) // benchmarking
                || o[0] >= 240
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_forbidden_address(IpAddr::V4(v4));
            }
            let seg = v6.segments();
            let o = v6.octets();
            // Translation prefixes reach the IPv4 address they embed (found by fuzzing): NAT64
            // 64:ff9b::/96 and 6to4 2002::/16 are judged by that address; local-use NAT64
            // 64:ff9b:1::/48 and Teredo 2001::/32 (an obfuscated IPv4 inside) are refused.
            if seg[0] == 0x64 && seg[1] == 0xff9b && seg[2..6] == [0, 0, 0, 0] {
                let v4 = std::net::Ipv4Addr::new(o[12], o[13], o[14], o[15]);
                return is_forbidden_address(IpAddr::V4(v4));
            }
            if seg[0] == 0x2002 {
                let v4 = std::net::Ipv4Addr::new(o[2], o[3], o[4], o[5]);
                return is_forbidden_address(IpAddr::V4(v4));
            }
            if (seg[0] == 0x64 && seg[1] == 0xff9b && seg[2] == 1)
                || (seg[0] == 0x2001 && seg[1] == 0)
            {
                return true;
            }
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (seg[0] & 0xfe00) == 0xfc00 // unique local
                || (seg[0] & 0xffc0) == 0xfe80 // link-local
                || (seg[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
                || (seg[0] == 0x0100 && seg[1..4] == [0, 0, 0]) // discard-only
                || (seg[0] == 0x2001 && seg[1] == 0x0db8) // documentation
                || (seg[0] == 0 && seg[1] == 0 && seg[2] == 0 && seg[3] == 0 && seg[4] == 0 && seg[5] == 0)
            // IPv4-compatible
        }
    }
}

/// Resolves host names for the live-mode address rules (the server supplies DNS).
#[async_trait::async_trait]
pub trait HostResolver: Send + Sync + 'static {
    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<IpAddr>, String>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_host_names_are_known_in_any_spelling() {
        for name in [
            "metadata.google.internal",
            "METADATA.google.internal.",
            "computeMetadata.metadata.google.internal",
            "metadata.azure.com",
            "metadata",
            "instance-data.ec2.internal",
        ] {
            assert!(is_metadata_host(name), "{name}");
        }
        for name in [
            "example.com",
            "metadata.example.com",
            "google.internal",
            "localhost",
        ] {
            assert!(!is_metadata_host(name), "{name}");
        }
        assert!(!webhook_address_allowed(
            IpAddr::V4(ALIBABA_METADATA),
            false,
            true
        ));
    }
    #[test]
    fn test_mode_reaches_loopback_private_only_when_allowed_and_never_metadata() {
        let allowed =
            |a: &str, live, private| webhook_address_allowed(a.parse().unwrap(), live, private);
        for a in ["127.0.0.1", "::1", "::ffff:127.0.0.1"] {
            assert!(allowed(a, false, false), "{a}");
            assert!(!allowed(a, true, true), "{a} live");
        }
        for a in [
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.1",
            "fd00::1",
            "100.64.0.1",
        ] {
            assert!(!allowed(a, false, false), "{a}");
            assert!(allowed(a, false, true), "{a} opted in");
            assert!(!allowed(a, true, true), "{a} live");
        }
        for a in [
            "169.254.169.254",
            "fe80::1",
            "fd00:ec2::254",
            "224.0.0.1",
            "0.0.0.0",
        ] {
            assert!(!allowed(a, false, false), "{a}");
            assert!(!allowed(a, false, true), "{a} opted in");
        }
        for a in ["8.8.8.8", "2606:4700::1111"] {
            assert!(allowed(a, false, false) && allowed(a, true, false), "{a}");
        }
    }
    #[test]
    fn forbidden_addresses_cover_the_private_world() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "224.0.0.1",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "ff02::1",
        ] {
            assert!(is_forbidden_address(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "8.8.8.8", "2606:4700::1111"] {
            assert!(!is_forbidden_address(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn translated_ipv6_forms_of_forbidden_ipv4_are_forbidden() {
        for a in [
            "64:ff9b::7f00:1",
            "64:ff9b::a00:1",
            "64:ff9b:1::8.8.8.8",
            "2002:7f00:1::1",
            "2002:c0a8:101::",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "fec0::1",
            "100::1",
        ] {
            assert!(is_forbidden_address(a.parse().unwrap()), "{a}");
        }
        for a in ["64:ff9b::808:808", "2002:808:808::1", "2606:4700::1111"] {
            assert!(!is_forbidden_address(a.parse().unwrap()), "{a}");
        }
    }
}
