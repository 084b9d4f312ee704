//! Where webhooks may go: by default only to public addresses, so that a
//! client cannot make tributary's servers post to (or probe) their own
//! network: loopback, private, link-local, shared (CGNAT), unique-local,
//! multicast and unspecified addresses are refused, whether the endpoint's
//! URL names them or a host name resolves to them (checked when the
//! connection is made, so a name cannot switch to a private address after
//! a check). An installation whose receivers are on its own network allows
//! them (`TRIBUTARY_WEBHOOK_ALLOW_PRIVATE_ADDRESSES`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Whether `address` is one webhooks may reach when private ones are refused.
pub fn is_public(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(address: Ipv4Addr) -> bool {
    let [first, second, ..] = address.octets();
    let shared = first == 100 && (64..128).contains(&second);
    !(address.is_loopback()
        || address.is_private()
        || address.is_link_local()
        || address.is_unspecified()
        || address.is_broadcast()
        || address.is_multicast()
        || address.is_documentation()
        || shared
        || first == 0
        || first >= 240)
}

fn is_public_v6(address: Ipv6Addr) -> bool {
    let first = address.segments()[0];
    let unique_local = (first & 0xfe00) == 0xfc00;
    let link_local = (first & 0xffc0) == 0xfe80;
    !(address.is_loopback()
        || address.is_unspecified()
        || address.is_multicast()
        || unique_local
        || link_local)
}

/// The setting that lets webhooks reach the installation's own network.
pub const SETTING: &str = "TRIBUTARY_WEBHOOK_ALLOW_PRIVATE_ADDRESSES";

/// The refusal, in the words an attempt records and endpoint creation
/// answers: it names the setting that lifts it.
pub fn refusal(host: &str) -> String {
    format!(
        "{host} is a private, loopback or otherwise non-public address, which webhooks may not reach on this \
         installation; an installation whose receivers are on its own network sets {SETTING}=true on every \
         process"
    )
}

/// The host of `url` when it is one webhooks may not reach without
/// [`SETTING`]: a non-public address literal, or `localhost` (and names
/// under `.localhost`, which resolve to loopback, RFC 6761 §6.3). Other
/// names are checked as they are connected ([`PublicOnly`]).
pub fn refused_host(url: &url::Url) -> Option<String> {
    match url.host()? {
        url::Host::Ipv4(v4) => (!is_public(IpAddr::V4(v4))).then(|| v4.to_string()),
        url::Host::Ipv6(v6) => (!is_public(IpAddr::V6(v6))).then(|| v6.to_string()),
        url::Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            (name == "localhost" || name.ends_with(".localhost")).then_some(name)
        }
    }
}

/// A resolver that keeps only public addresses (the system's resolver underneath).
#[derive(Debug, Clone, Copy, Default)]
pub struct PublicOnly;

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let resolved: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|address| is_public(address.ip()))
                .collect();
            if resolved.is_empty() {
                return Err(refusal(&host).into());
            }
            let addresses: Addrs = Box::new(resolved.into_iter());
            Ok(addresses)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_and_private_literals_are_refused_by_url() {
        let host = |url: &str| refused_host(&url::Url::parse(url).expect("a URL"));
        assert_eq!(host("http://127.0.0.1:9/x").as_deref(), Some("127.0.0.1"));
        assert_eq!(host("http://[::1]:9/x").as_deref(), Some("::1"));
        assert_eq!(host("http://LocalHost.:9/x").as_deref(), Some("localhost"));
        assert_eq!(
            host("http://api.localhost/x").as_deref(),
            Some("api.localhost")
        );
        assert_eq!(host("https://hooks.example.com/x"), None);
        assert_eq!(host("https://notlocalhost.example/x"), None);
        assert_eq!(host("https://93.184.215.14/x"), None);
    }

    #[test]
    fn only_public_addresses_pass() {
        for refused in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(
                !is_public(refused.parse().expect("an address")),
                "{refused}"
            );
        }
        for allowed in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(is_public(allowed.parse().expect("an address")), "{allowed}");
        }
    }

    #[tokio::test]
    async fn a_name_for_loopback_resolves_to_nothing() {
        let name: Name = "localhost".parse().expect("a name");
        let resolved = PublicOnly.resolve(name).await;
        let error = resolved.err().expect("refused").to_string();
        assert!(error.contains("localhost"), "{error}");
    }
}
