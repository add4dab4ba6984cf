//! PROD-4: where a webhook may be delivered. Unless its endpoint was added
//! with `allow_private`, a URL with userinfo is refused, and so is a host
//! that is or resolves to an address inside the machine or its network:
//! loopback, private, link-local, multicast, unspecified, broadcast,
//! shared (CGNAT) or a cloud provider's metadata service. The check runs
//! at add and again on the addresses each delivery connects to (the
//! worker's resolver, `worker.rs`), so a name that changes what it
//! resolves to after it was added is caught too.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::mpsc;
use std::time::Duration;

use crate::error::ValidationError;

/// Why an address is not one to deliver to without `allow_private`;
/// `None` when it is a public one.
pub(crate) fn refused_address(ip: IpAddr) -> Option<&'static str> {
    // An IPv4-mapped or IPv4-compatible IPv6 address is its IPv4 one.
    let ip = match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => refused_v6(v6),
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip == Ipv4Addr::new(169, 254, 169, 254) || ip == Ipv4Addr::new(169, 254, 170, 2) {
        Some("a cloud metadata address")
    } else if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() || a == 0 {
        Some("an unspecified address")
    } else if ip.is_private() {
        Some("a private network address")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (carrier-grade NAT) address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if ip.is_broadcast() || a >= 240 {
        Some("a broadcast or reserved address")
    } else {
        None
    }
}

fn refused_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    // AWS's IPv6 metadata service (fd00:ec2::254) is also inside fc00::/7;
    // named first so the reason says what it is.
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        Some("a cloud metadata address")
    } else if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an unspecified address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a private network address")
    } else if first & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if ip.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        // NAT64's well-known prefix reaches the IPv4 address it embeds.
        let [.., a, b] = ip.segments();
        refused_v4(Ipv4Addr::from((u32::from(a) << 16) | u32::from(b)))
    } else if let Some(v4) = ip.to_ipv4() {
        // ::a.b.c.d (deprecated IPv4-compatible form) is its IPv4 address.
        refused_v4(v4)
    } else {
        None
    }
}

/// The host and port of an absolute `http`/`https` URL that `check_url`
/// accepted, and whether it carries userinfo.
struct Parts<'a> {
    host: &'a str,
    port: u16,
    userinfo: bool,
}

fn parts(url: &str) -> Option<Parts<'_>> {
    let (scheme, rest) = url.split_once("://")?;
    let default_port = if scheme.eq_ignore_ascii_case("https") {
        443
    } else {
        80
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let (userinfo, host_port) = match authority.rsplit_once('@') {
        Some((_, host_port)) => (true, host_port),
        None => (false, authority),
    };
    let (host, port) = if let Some(bracketed) = host_port.strip_prefix('[') {
        let (host, after) = bracketed.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match host_port.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        }
    };
    let port = match port {
        Some("") | None => default_port,
        Some(port) => port.parse().ok()?,
    };
    Some(Parts {
        host,
        port,
        userinfo,
    })
}

/// PROD-4 at add: the URL's target, unless `allow_private`. A name is
/// resolved now; one that does not resolve is let through (it may be
/// served later) and checked again when it is delivered to.
pub(crate) fn check_target(url: &str, allow_private: bool) -> Result<(), ValidationError> {
    if allow_private {
        return Ok(());
    }
    let refuse = |why: String| ValidationError::new("url", why);
    let parts = parts(url).ok_or_else(|| refuse("must name a host and a valid port".into()))?;
    if parts.userinfo {
        return Err(refuse(
            "must not carry a user name or password unless the endpoint is added with \
             allow_private (--allow-private); a receiver's credentials belong in its own \
             configuration"
                .into(),
        ));
    }
    let host = parts.host.trim_end_matches('.');
    if host.eq_ignore_ascii_case("localhost") || host.to_ascii_lowercase().ends_with(".localhost") {
        return Err(refuse(private_words("localhost", "a loopback address")));
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        return match refused_address(ip) {
            Some(what) => Err(refuse(private_words(host, what))),
            None => Ok(()),
        };
    }
    // IPv4 spelled another way (`http://2130706433/`, `http://0x7f.1/`)
    // reaches the same addresses; the resolver reads it as they would.
    let resolved = resolve(host, parts.port);
    for address in resolved {
        if let Some(what) = refused_address(address.ip()) {
            return Err(refuse(private_words(
                &format!("{host} (resolves to {})", address.ip()),
                what,
            )));
        }
    }
    Ok(())
}

/// How long `webhook_add` waits for the resolver: a name that takes
/// longer is treated as one that does not resolve (checked at delivery).
const RESOLVE_WAIT: Duration = Duration::from_secs(5);

/// The addresses `host` resolves to now; none when it does not resolve
/// within [`RESOLVE_WAIT`]. (The system resolver has no timeout of its
/// own to give it, so it runs on a thread that is left to finish.)
fn resolve(host: &str, port: u16) -> Vec<SocketAddr> {
    let (tx, rx) = mpsc::sync_channel(1);
    let host = host.to_owned();
    let spawned = std::thread::Builder::new()
        .name("clarion-webhook-resolve".into())
        .spawn(move || {
            let resolved: Vec<SocketAddr> = (host.as_str(), port)
                .to_socket_addrs()
                .map(Iterator::collect)
                .unwrap_or_default();
            let _ = tx.send(resolved);
        });
    if spawned.is_err() {
        return Vec::new();
    }
    rx.recv_timeout(RESOLVE_WAIT).unwrap_or_default()
}

fn private_words(host: &str, what: &str) -> String {
    format!(
        "{host} is {what}; webhooks are not delivered inside this machine or its network \
         unless the endpoint is added with allow_private (--allow-private)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        for refused in [
            "169.254.169.254",
            "fd00:ec2::254",
            "0.0.0.0",
            "::",
            "127.0.0.1",
            "127.5.6.7",
            "::1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "100.64.0.1",
            "100.127.255.255",
            "169.254.1.1",
            "fe80::1",
            "fc00::1",
            "fd12:3456::1",
            "224.0.0.1",
            "ff02::1",
            "255.255.255.255",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:10.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
        ] {
            let ip: IpAddr = refused.parse().unwrap();
            assert!(refused_address(ip).is_some(), "{refused}");
        }
        for public in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "100.128.0.1",
            "64:ff9b::808:808",
        ] {
            let ip: IpAddr = public.parse().unwrap();
            assert_eq!(refused_address(ip), None, "{public}");
        }
    }

    #[test]
    fn urls() {
        for refused in [
            "http://169.254.169.254/latest",
            "http://[fd00:ec2::254]/",
            "http://0.0.0.0:9/",
            "http://localhost:9/",
            "http://LOCALHOST./",
            "http://a.localhost/",
            "http://127.0.0.1:9/",
            "http://10.1.2.3/",
            "http://user:pass@example.com/",
            "http://[::ffff:127.0.0.1]/",
            "http://2130706433/",
        ] {
            assert_eq!(
                check_target(refused, false).unwrap_err().field,
                "url",
                "{refused}"
            );
            assert!(check_target(refused, true).is_ok(), "{refused}");
        }
        for public in [
            "https://93.184.216.34/hook",
            "http://[2606:4700::1111]:8080/x",
        ] {
            assert!(check_target(public, false).is_ok(), "{public}");
        }
    }
}
