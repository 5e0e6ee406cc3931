//! Per-client rate limits, as plain data: which bucket a request draws from, who
//! the client is, and whether one more request fits. `component.rs` keeps the
//! counters in Spin's key-value store (store `default`), so every instance of the
//! function, on every node the platform runs, counts against the same numbers.
//!
//! The window is a sliding minute, estimated from two fixed one-minute counters
//! (the current minute's, and the previous minute's weighted by how much of it
//! still overlaps the last 60 s), as Cloudflare and NGINX-style limiters do: a
//! client cannot double its allowance by straddling a minute boundary, and one
//! key per client and bucket holds all the state.
//!
//! **What a key-value store cannot promise.** Spin's key-value interface has no
//! atomic increment, so a check is a read, then a write. Requests of one client
//! that are in flight at the same moment on different instances can read the same
//! count and each write count + 1: those increments are lost. With `c` of a
//! client's requests overlapping, at most `c - 1` increments are lost per
//! overlapping group, so a client that keeps `c` requests in flight can get up to
//! `c ×` the limit through in the worst case (every group counted once). In
//! practice overlapping reads are rare (a read and a write take tens of
//! microseconds) and SECURITY.md records what a burst at concurrency 32 got
//! through. A store with atomic increments (Redis `INCR`, `wasi:keyvalue/atomics`)
//! would close the gap; this one keeps the function portable to every Spin host.

/// Which allowance a request draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bucket {
    /// `POST /api/chat`: each may cost LLM calls.
    Chat,
    /// `GET /api/search` and `POST /api/feedback`.
    Search,
}

impl Bucket {
    pub fn name(self) -> &'static str {
        match self {
            Bucket::Chat => "chat",
            Bucket::Search => "search",
        }
    }
}

/// Requests per minute per client for each bucket; `0` turns a limit off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub chat: u32,
    pub search: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { chat: 20, search: 600 }
    }
}

impl Limits {
    /// From the variables `chat_rate_limit` and `search_rate_limit` (empty: the default).
    pub fn from_variables(chat: &str, search: &str) -> Result<Limits, String> {
        let d = Limits::default();
        let parse = |name: &str, v: &str, default: u32| match v.trim() {
            "" => Ok(default),
            t => t.parse::<u32>().ok().filter(|n| *n <= 1_000_000).ok_or_else(|| {
                format!("{name}: `{t}` is not a number of requests per minute from 0 (no limit) to 1000000")
            }),
        };
        Ok(Limits {
            chat: parse("chat_rate_limit", chat, d.chat)?,
            search: parse("search_rate_limit", search, d.search)?,
        })
    }

    pub fn of(&self, bucket: Bucket) -> u32 {
        match bucket {
            Bucket::Chat => self.chat,
            Bucket::Search => self.search,
        }
    }
}

/// Who the client is, from the address the platform gives (`spin-client-addr`,
/// `IP:port` or `[IPv6]:port`). The port is dropped (a client opens many
/// connections), and an IPv6 address counts by its /64, the block one subscriber
/// is usually given, so a client cannot rotate through its own addresses.
/// `None` when the platform gave nothing usable: then no limit can be keyed and
/// the request is not limited (the store is not filled with one shared key that
/// would let one client lock out everyone).
pub fn client_id(spin_client_addr: Option<&str>) -> Option<String> {
    let addr = spin_client_addr?.trim();
    if let Ok(sa) = addr.parse::<std::net::SocketAddr>() {
        return Some(ip_id(sa.ip()));
    }
    addr.parse::<std::net::IpAddr>().ok().map(ip_id)
}

fn ip_id(ip: std::net::IpAddr) -> String {
    match ip {
        std::net::IpAddr::V4(v4) => v4.to_string(),
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

/// The key-value key of a client's counter in a bucket.
pub fn key(bucket: Bucket, client: &str) -> String {
    format!("ratelimit/{}/{client}", bucket.name())
}

/// Prefix of every counter key (for the sweep of stale counters).
pub const KEY_PREFIX: &str = "ratelimit/";

const WINDOW_MS: u64 = 60_000;

/// One client's counts: requests in minute `window` and in the minute before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter {
    /// Minutes since the Unix epoch.
    pub window: u64,
    pub current: u32,
    pub previous: u32,
}

impl Counter {
    /// `window current previous` as text (small, readable with any KV tool).
    pub fn encode(&self) -> Vec<u8> {
        format!("{} {} {}", self.window, self.current, self.previous).into_bytes()
    }

    /// `None` for anything that is not a counter (then counting starts afresh).
    pub fn decode(bytes: &[u8]) -> Option<Counter> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut parts = text.split(' ');
        let c = Counter {
            window: parts.next()?.parse().ok()?,
            current: parts.next()?.parse().ok()?,
            previous: parts.next()?.parse().ok()?,
        };
        parts.next().is_none().then_some(c)
    }

    /// The counter as seen in minute `window`.
    fn at(self, window: u64) -> Counter {
        if window == self.window {
            self
        } else if window == self.window + 1 {
            Counter { window, current: 0, previous: self.current }
        } else if window > self.window {
            Counter { window, current: 0, previous: 0 }
        } else {
            // A clock that went backwards (another node's): keep the counts.
            self
        }
    }

    /// Whether the counter is older than anything [`check`] still reads.
    pub fn is_stale(&self, now_ms: u64) -> bool {
        self.window + 1 < now_ms / WINDOW_MS
    }
}

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Serve it, and store this counter.
    Allow(Counter),
    /// Refuse it; the client may retry after this many seconds (at least 1).
    Deny { retry_after_secs: u64 },
}

/// Whether one more request fits under `limit` per sliding minute at `now_ms`
/// (Unix milliseconds), given the stored counter.
pub fn check(stored: Option<Counter>, now_ms: u64, limit: u32) -> Decision {
    let window = now_ms / WINDOW_MS;
    let c = stored.map_or(Counter { window, current: 0, previous: 0 }, |c| c.at(window));
    let elapsed = (now_ms % WINDOW_MS) as f64 / WINDOW_MS as f64;
    let limit_f = f64::from(limit);
    let estimate =
        |previous: u32, current: u32, elapsed: f64| f64::from(previous) * (1.0 - elapsed) + f64::from(current);
    if estimate(c.previous, c.current, elapsed) + 1.0 <= limit_f {
        return Decision::Allow(Counter { current: c.current.saturating_add(1), ..c });
    }
    // When does one more fit? Within this minute, as the previous minute's weight
    // fades; or else in the next minute, as this minute's does.
    let room = limit_f - 1.0;
    let wait_fraction = if f64::from(c.current) <= room && c.previous > 0 {
        // previous × (1 - t) + current ≤ room  ⇒  t ≥ 1 - (room - current) / previous
        (1.0 - (room - f64::from(c.current)) / f64::from(c.previous)) - elapsed
    } else if c.current > 0 {
        (1.0 - elapsed) + (1.0 - room / f64::from(c.current)).max(0.0)
    } else {
        // limit 0 is handled by the caller (no limit); a limit of 1 with nothing
        // counted always fits. Never reached, but never a zero wait either.
        1.0 - elapsed
    };
    let secs = (wait_fraction.max(0.0) * (WINDOW_MS / 1000) as f64).ceil() as u64;
    Decision::Deny { retry_after_secs: secs.clamp(1, 120) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `n` requests at `now_ms` against a counter, returning how many passed.
    fn burst(counter: &mut Option<Counter>, now_ms: u64, n: u32, limit: u32) -> (u32, Option<u64>) {
        let mut passed = 0;
        let mut retry = None;
        for _ in 0..n {
            match check(*counter, now_ms, limit) {
                Decision::Allow(c) => {
                    *counter = Some(c);
                    passed += 1;
                }
                Decision::Deny { retry_after_secs } => retry = Some(retry_after_secs),
            }
        }
        (passed, retry)
    }

    #[test]
    fn a_burst_gets_exactly_the_limit_and_a_retry_time() {
        let mut c = None;
        let t0 = 1_000 * WINDOW_MS;
        let (passed, retry) = burst(&mut c, t0 + 1_000, 50, 20);
        assert_eq!(passed, 20);
        let retry = retry.unwrap();
        assert!((1..=120).contains(&retry), "{retry}");
        // After the advised wait, one more request fits.
        let later = t0 + 1_000 + retry * 1000;
        assert!(matches!(check(c, later, 20), Decision::Allow(_)), "retry after {retry}s");
        // Just before it, it did not (the advice is not too generous).
        if retry > 1 {
            assert!(matches!(check(c, later - 1500, 20), Decision::Deny { .. }));
        }
    }

    #[test]
    fn straddling_a_minute_boundary_does_not_double_the_allowance() {
        let mut c = None;
        let t0 = 5_000 * WINDOW_MS;
        let (a, _) = burst(&mut c, t0 + 59_000, 100, 20);
        let (b, _) = burst(&mut c, t0 + 61_000, 100, 20);
        assert_eq!(a, 20);
        assert!(b <= 1, "{b} more passed one second into the next minute");
        // A minute later the previous minute has faded entirely.
        let (d, _) = burst(&mut c, t0 + 2 * WINDOW_MS + 59_000, 100, 20);
        assert!(d >= 19, "{d}");
    }

    #[test]
    fn a_steady_rate_under_the_limit_is_never_refused() {
        let mut c = None;
        let t0 = 7_000 * WINDOW_MS;
        // 18 per minute, evenly spread, for ten minutes. (At 19 the estimate can
        // touch 20 just after a minute boundary: the previous minute is assumed
        // spread evenly, and the current one has just counted a request.)
        for i in 0..180u64 {
            let (p, _) = burst(&mut c, t0 + i * WINDOW_MS / 18, 1, 20);
            assert_eq!(p, 1, "request {i}");
        }
    }

    #[test]
    fn counters_round_trip_and_garbage_starts_afresh() {
        let c = Counter { window: 29_000_000, current: 7, previous: 3 };
        assert_eq!(Counter::decode(&c.encode()), Some(c));
        for bad in [&b""[..], b"1 2", b"1 2 3 4", b"a b c", b"\xff", b"1 -2 3"] {
            assert_eq!(Counter::decode(bad), None);
        }
        assert!(c.is_stale((c.window + 2) * WINDOW_MS));
        assert!(!c.is_stale((c.window + 1) * WINDOW_MS + 59_999));
    }

    #[test]
    fn clients_are_addresses_without_ports_and_ipv6_by_64() {
        assert_eq!(client_id(Some("203.0.113.9:51234")).as_deref(), Some("203.0.113.9"));
        assert_eq!(client_id(Some("203.0.113.9")).as_deref(), Some("203.0.113.9"));
        assert_eq!(client_id(Some("[2001:db8:1:2:3:4:5:6]:443")).as_deref(), Some("2001:db8:1:2::/64"));
        assert_eq!(client_id(Some("[2001:db8:1:2:ffff::1]:1")), client_id(Some("[2001:db8:1:2::9]:2")));
        assert_eq!(client_id(Some("[::ffff:192.0.2.1]:80")).as_deref(), Some("192.0.2.1"));
        assert_eq!(client_id(Some("not an address")), None);
        assert_eq!(client_id(None), None);
        assert_eq!(key(Bucket::Chat, "192.0.2.1"), "ratelimit/chat/192.0.2.1");
    }

    #[test]
    fn limits_parse_with_defaults_and_name_the_variable() {
        assert_eq!(Limits::from_variables("", "").unwrap(), Limits { chat: 20, search: 600 });
        assert_eq!(Limits::from_variables(" 5 ", "0").unwrap(), Limits { chat: 5, search: 0 });
        assert!(Limits::from_variables("-1", "").unwrap_err().contains("chat_rate_limit"));
        assert!(Limits::from_variables("", "lots").unwrap_err().contains("search_rate_limit"));
    }
}
