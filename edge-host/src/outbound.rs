//! `allowed_outbound_hosts`, enforced as Spin enforces it: the component may send
//! HTTP requests only to the origins its manifest lists, after the manifest's
//! `{{ variable }}` templates are filled in from the Spin variables. A request to
//! any other origin fails inside the guest with `HTTP-request-denied`, before a
//! connection is opened.
//!
//! The patterns are Spin's: `scheme://host[:port]`, where the scheme may be `*`,
//! the host `*` or `*.example.edu`, and the port `*`, a number, or absent (the
//! scheme's default port). `self` and IP ranges (CIDR) are not supported here and
//! are refused with a message rather than silently widened.

use crate::variables::{LookupError, Variables};

/// An `allowed_outbound_hosts` entry that cannot be enforced; each names the
/// entry and what to write instead.
#[derive(Debug, thiserror::Error)]
pub enum OutboundError {
    #[error("allowed_outbound_hosts: `{template}` has an unclosed `{{{{`")]
    Unclosed { template: String },
    #[error("allowed_outbound_hosts: `{template}` uses variable `{name}`: {lookup:?}")]
    Variable { template: String, name: String, lookup: LookupError },
    /// `why` completes the sentence "`entry` …".
    #[error("allowed_outbound_hosts: `{entry}` {why}; write scheme://host[:port], e.g. https://api.openai.com or http://127.0.0.1:11434")]
    Entry { entry: String, why: &'static str },
}

/// The list `spin.toml` gives `search-fn` (a test keeps the two equal): the LLM
/// endpoint's origin and the PostgreSQL server's (`search_backend = postgres`),
/// each from a variable, so a deployment opens exactly the doors it uses.
pub const SEARCH_FN_ALLOWED_OUTBOUND_HOSTS: &[&str] =
    &["{{ llm_allowed_outbound_host }}", "{{ postgres_allowed_outbound_host }}"];

/// One allowed origin pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    /// `None`: any scheme.
    scheme: Option<String>,
    host: Host,
    port: Port,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Host {
    Any,
    /// `*.example.edu`: any subdomain (not `example.edu` itself, as in Spin).
    Subdomain(String),
    Exact(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Port {
    Any,
    /// The scheme's default port.
    Default,
    Exact(u16),
}

/// The parsed allow-list of one component.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AllowedHosts {
    patterns: Vec<Pattern>,
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        "postgres" => Some(5432),
        _ => None,
    }
}

impl AllowedHosts {
    /// Fills `{{ name }}` from `variables` and parses each entry. An entry that is
    /// empty after substitution allows nothing (an LLM-less deployment).
    pub fn resolve(templates: &[impl AsRef<str>], variables: &Variables) -> Result<AllowedHosts, OutboundError> {
        let mut patterns = Vec::new();
        for t in templates {
            let entry = substitute(t.as_ref(), variables)?;
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            patterns.push(parse(entry)?);
        }
        Ok(AllowedHosts { patterns })
    }

    /// Whether a request to `scheme://host:port` may be sent.
    pub fn allows(&self, scheme: &str, host: &str, port: Option<u16>) -> bool {
        let scheme = scheme.to_ascii_lowercase();
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let Some(port) = port.or_else(|| default_port(&scheme)) else { return false };
        self.patterns.iter().any(|p| {
            p.scheme.as_ref().is_none_or(|s| *s == scheme)
                && match &p.host {
                    Host::Any => true,
                    Host::Exact(h) => *h == host,
                    Host::Subdomain(suffix) => {
                        host.len() > suffix.len() + 1
                            && host.ends_with(suffix.as_str())
                            && host.as_bytes()[host.len() - suffix.len() - 1] == b'.'
                    }
                }
                && match p.port {
                    Port::Any => true,
                    Port::Exact(n) => n == port,
                    Port::Default => default_port(&scheme) == Some(port),
                }
        })
    }

    /// Whether a URI (`scheme://authority/...`) may be requested.
    pub fn allows_uri(&self, uri: &http::Uri) -> bool {
        match (uri.scheme_str(), uri.host()) {
            (Some(scheme), Some(host)) => {
                self.allows(scheme, host.trim_start_matches('[').trim_end_matches(']'), uri.port_u16())
            }
            _ => false,
        }
    }
}

fn substitute(template: &str, variables: &Variables) -> Result<String, OutboundError> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find("}}").ok_or_else(|| OutboundError::Unclosed { template: template.into() })?;
        let name = after[..end].trim();
        let value = variables.get(name).map_err(|lookup| OutboundError::Variable {
            template: template.into(),
            name: name.into(),
            lookup,
        })?;
        out.push_str(&value);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

fn parse(entry: &str) -> Result<Pattern, OutboundError> {
    let bad = |why: &'static str| OutboundError::Entry { entry: entry.into(), why };
    let (scheme, rest) = entry.split_once("://").ok_or_else(|| bad("has no scheme"))?;
    let scheme = scheme.to_ascii_lowercase();
    let scheme = match scheme.as_str() {
        "*" => None,
        "http" | "https" | "postgres" => Some(scheme),
        _ => return Err(bad("is not an http(s) or postgres origin")),
    };
    let authority = rest.trim_end_matches('/');
    if authority.contains(['/', '?', '#', '@']) {
        return Err(bad("has a path, query or user part"));
    }
    if authority == "self" || authority.contains('/') {
        return Err(bad("uses a form this host does not support (self, CIDR)"));
    }
    // IPv6 literals: [::1]:8080.
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or_else(|| bad("has an unclosed `[`"))?;
        (h.to_string(), after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    let host = host.to_ascii_lowercase();
    let host = if host == "*" {
        Host::Any
    } else if let Some(suffix) = host.strip_prefix("*.") {
        if suffix.is_empty() || suffix.contains('*') {
            return Err(bad("has a wildcard in the wrong place"));
        }
        Host::Subdomain(suffix.to_string())
    } else if host.is_empty() || host.contains('*') {
        return Err(bad("has an empty host or a wildcard in the wrong place"));
    } else {
        Host::Exact(host)
    };
    let port = match port {
        None => {
            if scheme.is_none() {
                return Err(bad("needs a port when the scheme is `*`"));
            }
            Port::Default
        }
        Some("*") => Port::Any,
        Some(p) => Port::Exact(p.parse().map_err(|_| bad("has a port that is not a number from 1 to 65535"))?),
    };
    Ok(Pattern { scheme, host, port })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(list: &[&str]) -> AllowedHosts {
        AllowedHosts::resolve(list, &Variables::defaults()).unwrap()
    }

    #[test]
    fn patterns_match_as_in_spin() {
        let a = hosts(&["https://api.openai.com", "http://127.0.0.1:*", "https://*.example.edu:8443"]);
        assert!(a.allows("https", "api.openai.com", None));
        assert!(a.allows("https", "API.openai.com", Some(443)));
        assert!(!a.allows("https", "api.openai.com", Some(8443)));
        assert!(!a.allows("http", "api.openai.com", None));
        assert!(!a.allows("https", "evil.com", None));
        assert!(!a.allows("https", "api.openai.com.evil.com", None));
        assert!(a.allows("http", "127.0.0.1", Some(11434)));
        assert!(!a.allows("http", "localhost", Some(11434)));
        assert!(a.allows("https", "llm.example.edu", Some(8443)));
        assert!(!a.allows("https", "example.edu", Some(8443)));
        assert!(!a.allows("https", "badexample.edu", Some(8443)));
        assert!(a.allows_uri(&"https://api.openai.com/v1/chat/completions".parse().unwrap()));
        assert!(!a.allows_uri(&"https://169.254.169.254/latest".parse().unwrap()));
        assert!(!a.allows_uri(&"/relative".parse().unwrap()));
    }

    #[test]
    fn templates_are_filled_from_variables_and_empty_allows_nothing() {
        let mut v = Variables::defaults();
        v.set("llm_allowed_outbound_host", "http://127.0.0.1:11434").unwrap();
        let a = AllowedHosts::resolve(SEARCH_FN_ALLOWED_OUTBOUND_HOSTS, &v).unwrap();
        assert!(a.allows("http", "127.0.0.1", Some(11434)));
        assert!(!a.allows("http", "127.0.0.1", Some(22)));
        // The PostgreSQL server's origin, default port 5432.
        assert!(a.allows("postgres", "127.0.0.1", Some(5432)));
        assert!(a.allows("postgres", "127.0.0.1", None));
        assert!(!a.allows("postgres", "127.0.0.1", Some(5433)));
        assert!(!a.allows("postgres", "db.example.edu", None));
        v.set("postgres_allowed_outbound_host", "postgres://db.example.edu:6432").unwrap();
        let a = AllowedHosts::resolve(SEARCH_FN_ALLOWED_OUTBOUND_HOSTS, &v).unwrap();
        assert!(a.allows("postgres", "db.example.edu", Some(6432)));
        assert!(!a.allows("http", "db.example.edu", Some(6432)));
        v.set("llm_allowed_outbound_host", "").unwrap();
        v.set("postgres_allowed_outbound_host", "").unwrap();
        let none = AllowedHosts::resolve(SEARCH_FN_ALLOWED_OUTBOUND_HOSTS, &v).unwrap();
        assert!(!none.allows("https", "api.openai.com", None));
        assert!(!none.allows("postgres", "127.0.0.1", None));
    }

    #[test]
    fn bad_templates_name_the_entry() {
        let e = AllowedHosts::resolve(&["{{ llm_allowed_outbound_host"], &Variables::defaults()).unwrap_err();
        assert_eq!(e.to_string(), "allowed_outbound_hosts: `{{ llm_allowed_outbound_host` has an unclosed `{{`");
        let e = AllowedHosts::resolve(&["{{ no_such }}"], &Variables::defaults()).unwrap_err();
        assert!(matches!(&e, OutboundError::Variable { name, .. } if name == "no_such"), "{e}");
    }

    #[test]
    fn bad_entries_say_what_to_write() {
        for bad in
            ["api.openai.com", "ftp://x", "https://x/path", "https://a:b@x", "*://x", "https://x:99999", "https://self"]
        {
            let e = AllowedHosts::resolve(&[bad], &Variables::defaults()).unwrap_err().to_string();
            assert!(e.contains(bad) && e.contains("scheme://host"), "{bad}: {e}");
        }
    }
}
