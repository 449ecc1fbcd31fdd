//! The webhook URL checker's pure parts: `check_endpoint_url_syntax` (length, URL syntax,
//! scheme, host; in live mode https and IP-literal hosts) on arbitrary text, and
//! `is_forbidden_address` on arbitrary IPv4 and IPv6 addresses. (The live-mode DNS step needs a
//! resolver; what it returns goes through the same `is_forbidden_address`.)
//!
//! Invariants: nothing panics; an accepted URL is http(s) with a host and at most 2,048 bytes
//! of input; in live mode it is https and an IP-literal host is allowed; an IPv6 address that
//! embeds an IPv4 one (mapped, compatible, NAT64 64:ff9b::/96, 6to4 2002::/16) is forbidden
//! whenever the IPv4 one is; loopback, private and link-local addresses are always forbidden.

#![no_main]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use libfuzzer_sys::fuzz_target;
use tender_core::webhooks::address::is_forbidden_address;
use tender_core::webhooks::service::check_endpoint_url_syntax;

fn check_ip(ip: IpAddr) {
    let forbidden = is_forbidden_address(ip);
    match ip {
        IpAddr::V4(v4) => {
            if v4.is_loopback() || v4.is_private() || v4.is_link_local() || v4.is_unspecified() {
                assert!(forbidden, "{ip} allowed");
            }
            let embedded = [
                v4.to_ipv6_mapped(),
                v4.to_ipv6_compatible(),
                nat64(v4),
                six_to_four(v4),
            ];
            for v6 in embedded {
                if forbidden {
                    assert!(
                        is_forbidden_address(IpAddr::V6(v6)),
                        "{v6} (embeds {v4}) allowed"
                    );
                }
            }
        }
        IpAddr::V6(v6) => {
            if v6.is_loopback() || v6.is_unspecified() || v6.is_multicast() {
                assert!(forbidden, "{ip} allowed");
            }
            if let Some(v4) = v6.to_ipv4_mapped() {
                assert_eq!(forbidden, is_forbidden_address(IpAddr::V4(v4)), "{v6}");
            }
        }
    }
}

/// `64:ff9b::a.b.c.d`, the well-known NAT64 prefix (RFC 6052).
fn nat64(v4: Ipv4Addr) -> Ipv6Addr {
    let [a, b, c, d] = v4.octets();
    Ipv6Addr::new(
        0x64,
        0xff9b,
        0,
        0,
        0,
        0,
        u16::from_be_bytes([a, b]),
        u16::from_be_bytes([c, d]),
    )
}

/// `2002:aabb:ccdd::`, 6to4 (RFC 3056).
fn six_to_four(v4: Ipv4Addr) -> Ipv6Addr {
    let [a, b, c, d] = v4.octets();
    Ipv6Addr::new(
        0x2002,
        u16::from_be_bytes([a, b]),
        u16::from_be_bytes([c, d]),
        0,
        0,
        0,
        0,
        1,
    )
}

fuzz_target!(|data: &[u8]| {
    if data.len() >= 4 {
        check_ip(IpAddr::V4(Ipv4Addr::new(
            data[0], data[1], data[2], data[3],
        )));
    }
    if data.len() >= 16 {
        let mut b = [0u8; 16];
        b.copy_from_slice(&data[..16]);
        check_ip(IpAddr::V6(Ipv6Addr::from(b)));
    }
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    for live in [false, true] {
        let Ok(url) = check_endpoint_url_syntax(raw, live) else {
            continue;
        };
        assert!(raw.len() <= 2048);
        assert!(matches!(url.scheme(), "http" | "https"));
        let host = url.host().expect("an accepted URL has a host");
        if live {
            assert_eq!(url.scheme(), "https");
            match host {
                url::Host::Ipv4(ip) => assert!(!is_forbidden_address(IpAddr::V4(ip))),
                url::Host::Ipv6(ip) => assert!(!is_forbidden_address(IpAddr::V6(ip))),
                url::Host::Domain(_) => {}
            }
        }
        // What is stored (the normalised text) parses again to the same URL.
        if url.as_str().len() <= 2048 {
            let again =
                check_endpoint_url_syntax(url.as_str(), live).expect("a stored URL re-checks");
            assert_eq!(again, url);
        }
    }
});
