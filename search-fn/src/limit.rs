//! Per-client rate limits: which bucket a request draws from, who the client is,
//! and the counting protocol, over any store with an atomic increment
//! ([`Counters`]). `component.rs` runs it on Spin's key-value store `default`
//! through `wasi:keyvalue/atomics`, so every instance of the function, on every
//! node the platform runs, counts against the same numbers; the tests here run it
//! on a map.
//!
//! The window is a sliding minute, estimated from two fixed one-minute counters
//! (the current minute's, and the previous minute's weighted by how much of it
//! still overlaps the last 60 s), as Cloudflare and NGINX-style limiters do: a
//! client cannot double its allowance by straddling a minute boundary.
//!
//! **Why an atomic increment, and what it promises.** Spin's `spin:key-value`
//! interface has only get and set: a check would be a read, then a write, and
//! requests of one client in flight at once on different instances would read
//! the same count and lose increments (measured: 53 of 80 requests passed a limit
//! of 20 at 8 in flight, on a loaded two-core machine). `wasi:keyvalue/atomics`,
//! which Spin offers over the same stores, has `increment`: each request adds
//! itself first and sees a count no other request saw, then a request the
//! estimate refuses takes itself back out. So a client never gets more than the
//! limit through, however many requests it keeps in flight; the only error is
//! the other way, while a refused request has not yet taken itself out a
//! concurrent one may see its count and be refused too (conservative, and only
//! when the client is already at its limit).

/// Which allowance a request draws from: each limited endpoint has its own, so
/// one endpoint's traffic never spends another's budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bucket {
    /// `GET /api/search`.
    Search,
    /// `POST /api/chat`: each may cost LLM calls.
    Chat,
    /// `POST /api/feedback`: each is a write to the insights store.
    Feedback,
    /// `GET /api/insights`: each computes the report, and its token is worth guessing.
    Insights,
}

impl Bucket {
    /// Every bucket, in the order of [`Limits`]' fields.
    pub const ALL: [Bucket; 4] = [Bucket::Search, Bucket::Chat, Bucket::Feedback, Bucket::Insights];

    /// The bucket's segment of a counter key.
    pub fn name(self) -> &'static str {
        match self {
            Bucket::Search => "search",
            Bucket::Chat => "chat",
            Bucket::Feedback => "feedback",
            Bucket::Insights => "insights",
        }
    }

    /// The endpoint it limits, as a 429's message names it.
    pub fn path(self) -> &'static str {
        match self {
            Bucket::Search => "/api/search",
            Bucket::Chat => "/api/chat",
            Bucket::Feedback => "/api/feedback",
            Bucket::Insights => "/api/insights",
        }
    }

    /// The Spin variable that sets its limit (declared in `spin.toml`).
    pub fn variable(self) -> &'static str {
        match self {
            Bucket::Search => "search_rate_limit",
            Bucket::Chat => "chat_rate_limit",
            Bucket::Feedback => "feedback_rate_limit",
            Bucket::Insights => "insights_rate_limit",
        }
    }
}

/// Requests per minute per client for each endpoint; `0` turns a limit off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub search: u32,
    pub chat: u32,
    pub feedback: u32,
    pub insights: u32,
}

impl Default for Limits {
    /// `spin.toml`'s defaults: searches are cheap and come as the reader types;
    /// a chat may cost LLM calls; the widget sends at most a thumb and a comment
    /// per answer; the report is for the knowledge-base team.
    fn default() -> Self {
        Limits { search: 600, chat: 20, feedback: 60, insights: 20 }
    }
}

/// The largest limit a variable may set.
pub const MAX_LIMIT: u32 = 1_000_000;

/// A rate-limit variable whose value is not a limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{variable}: `{value}` is not a number of requests per minute from 0 (no limit) to {MAX_LIMIT}")]
pub struct LimitError {
    pub variable: &'static str,
    pub value: String,
}

impl Limits {
    /// Sets `bucket`'s limit from its variable's value (empty: the default); an
    /// error names the variable.
    pub fn set_from_variable(&mut self, bucket: Bucket, value: &str) -> Result<(), LimitError> {
        let limit = match value.trim() {
            "" => Limits::default().of(bucket),
            t => t
                .parse::<u32>()
                .ok()
                .filter(|n| *n <= MAX_LIMIT)
                .ok_or_else(|| LimitError { variable: bucket.variable(), value: t.into() })?,
        };
        *self.of_mut(bucket) = limit;
        Ok(())
    }

    pub fn of(&self, bucket: Bucket) -> u32 {
        match bucket {
            Bucket::Search => self.search,
            Bucket::Chat => self.chat,
            Bucket::Feedback => self.feedback,
            Bucket::Insights => self.insights,
        }
    }

    fn of_mut(&mut self, bucket: Bucket) -> &mut u32 {
        match bucket {
            Bucket::Search => &mut self.search,
            Bucket::Chat => &mut self.chat,
            Bucket::Feedback => &mut self.feedback,
            Bucket::Insights => &mut self.insights,
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

/// Prefix of every counter key (for the sweep of stale counters).
pub const KEY_PREFIX: &str = "ratelimit/";

const WINDOW_MS: u64 = 60_000;

/// The key of a client's counter in a bucket for one minute (minutes since the
/// Unix epoch): `ratelimit/chat/192.0.2.1/29000000`.
pub fn key(bucket: Bucket, client: &str, minute: u64) -> String {
    format!("{KEY_PREFIX}{}/{client}/{minute}", bucket.name())
}

/// Whether `key` is a counter older than anything [`admit`] still reads at
/// `now_ms` (or a counter key this version cannot read): the sweep deletes it.
pub fn is_stale(key: &str, now_ms: u64) -> bool {
    let Some(rest) = key.strip_prefix(KEY_PREFIX) else {
        return false;
    };
    match rest.rsplit_once('/').and_then(|(_, minute)| minute.parse::<u64>().ok()) {
        Some(minute) => minute + 1 < now_ms / WINDOW_MS,
        None => true,
    }
}

/// The key of the count of a client's refused requests in a bucket for one
/// minute: `ratelimit/chat.refused/192.0.2.1/29000000`. Swept as the counters
/// are ([`is_stale`] reads only the minute at the end).
pub fn refused_key(bucket: Bucket, client: &str, minute: u64) -> String {
    format!("{KEY_PREFIX}{}.refused/{client}/{minute}", bucket.name())
}

/// Up to this many refusals of a client's minute each one is written: a few
/// readers over the limit (a class behind one address) are counted exactly.
pub const EXACT_REFUSALS: u64 = 8;

/// Counts one refused request of `client` in `bucket` at `now_ms`, and says
/// which rows insights should write: `(minute, requests refused in it)`.
///
/// **Why a count of its own, and not the limiter's.** A refused request takes
/// itself back out of the limiter's counter ([`admit`]), so every refused
/// request sees the same count there (limit + 1) and none can tell it was the
/// first; and the sliding window refuses some requests below that count
/// anyway. One more atomic increment, on refusals only, numbers them: the
/// increment that returns 1 is the minute's first, whichever instance made it.
///
/// What to write, so that a flood costs a handful of writes, not one a request:
/// - the minute's 1st refusal: the minute at 1, and the client's previous
///   minute at its final count if it had refusals (its last write may have
///   been below it; the minute is over, so now it is exact);
/// - the 2nd to [`EXACT_REFUSALS`]th refusal, then the 16th, 32nd, 64th, …:
///   the minute at that count;
/// - any other: nothing.
///
/// A run of refusals is therefore counted exactly but for its last minute,
/// which is exact up to [`EXACT_REFUSALS`] and at least half its true count
/// past it; `N` refusals in a minute cost at most `EXACT_REFUSALS + log2 N`
/// writes (a flood of 200 requests against a limit of 5, 195 refused: one row,
/// written 12 times, left at 128 until the client's next refusal).
pub fn refused<C: Counters>(store: &C, bucket: Bucket, client: &str, now_ms: u64) -> Result<Vec<(u64, u64)>, C::Error> {
    let minute = now_ms / WINDOW_MS;
    let n = store.increment(&refused_key(bucket, client, minute), 1)?.max(0) as u64;
    let mut rows = Vec::new();
    if n == 1 {
        rows.push((minute, 1));
        if let Some(previous) = minute.checked_sub(1) {
            let before = store.increment(&refused_key(bucket, client, previous), 0)?;
            if before > 0 {
                rows.push((previous, before as u64));
            }
        }
    } else if n <= EXACT_REFUSALS || n.is_power_of_two() {
        rows.push((minute, n));
    }
    Ok(rows)
}

/// A store of counters with an atomic increment (`wasi:keyvalue/atomics`).
pub trait Counters {
    type Error: std::fmt::Debug;
    /// Adds `delta` to the counter at `key` (absent: 0) and returns the new value,
    /// as one atomic step.
    fn increment(&self, key: &str, delta: i64) -> Result<i64, Self::Error>;
}

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Serve it (it is counted).
    Allow,
    /// Refuse it (it is not counted); the client may retry after this many
    /// seconds (at least 1).
    Deny { retry_after_secs: u64 },
}

/// Counts one request of `client` in `bucket` at `now_ms` (Unix milliseconds)
/// against `limit` per sliding minute. An error is the store's: the caller
/// decides whether to serve anyway.
pub fn admit<C: Counters>(
    store: &C,
    bucket: Bucket,
    client: &str,
    now_ms: u64,
    limit: u32,
) -> Result<Decision, C::Error> {
    let minute = now_ms / WINDOW_MS;
    let current_key = key(bucket, client, minute);
    let current = store.increment(&current_key, 1)?;
    // Read through `increment(key, 0)`: the one read whose value is a number on
    // every Spin store (SQLite keeps 8 bytes, Redis a decimal string).
    let previous = match minute.checked_sub(1) {
        Some(m) => store.increment(&key(bucket, client, m), 0)?,
        None => 0,
    };
    let decision = decide(current, previous, now_ms, limit);
    if decision != Decision::Allow {
        // A refused request does not count: a client that keeps knocking still
        // gets `limit` per minute through, no fewer.
        store.increment(&current_key, -1)?;
    }
    Ok(decision)
}

/// Word pieces one unit of a bucket's budget pays for. A request is counted as
/// one unit when it is let in ([`admit`]); what it then cost beyond an ordinary
/// one is charged after it is served ([`charge`]), so a limit counts work, not
/// bare requests: a 1,000-character query of distinct words makes the encoder
/// read 8 times the pieces of an ordinary question (it stops at 256) and takes
/// 50 to 100 times as long, and is counted as 8 searches. A search question is
/// rarely over 32 pieces; a chat's searches together (the question, its
/// rewrites and parts) rarely over 128.
pub fn pieces_per_unit(bucket: Bucket) -> Option<usize> {
    match bucket {
        Bucket::Search => Some(32),
        Bucket::Chat => Some(128),
        Bucket::Feedback | Bucket::Insights => None,
    }
}

/// The units of `bucket`'s budget a request that gave the encoder `pieces`
/// word pieces costs: at least 1.
pub fn units(bucket: Bucket, pieces: usize) -> u32 {
    let units = pieces_per_unit(bucket).map_or(1, |per| pieces.div_ceil(per));
    u32::try_from(units).unwrap_or(u32::MAX).max(1)
}

/// Charges `client` what a request served at `now_ms` cost beyond the one unit
/// [`admit`] counted (`units - 1`; nothing for an ordinary request). Never
/// refuses: the request is done; the client's next ones wait longer.
pub fn charge<C: Counters>(store: &C, bucket: Bucket, client: &str, now_ms: u64, units: u32) -> Result<(), C::Error> {
    if units > 1 {
        store.increment(&key(bucket, client, now_ms / WINDOW_MS), i64::from(units - 1))?;
    }
    Ok(())
}

/// Whether a request that made this minute's count `current` (itself included)
/// fits under `limit`, with `previous` counted in the minute before.
fn decide(current: i64, previous: i64, now_ms: u64, limit: u32) -> Decision {
    // Counts are never negative in a store only this code writes; clamp in case
    // another writer disagreed.
    let (current, previous) = (current.max(0) as f64, previous.max(0) as f64);
    let elapsed = (now_ms % WINDOW_MS) as f64 / WINDOW_MS as f64;
    let limit = f64::from(limit);
    if previous * (1.0 - elapsed) + current <= limit {
        return Decision::Allow;
    }
    // When does one more fit? Within this minute, as the previous minute's weight
    // fades; or else in the next minute, as this minute's does. `before` is the
    // count without this request (it takes itself back out).
    let before = (current - 1.0).max(0.0);
    let room = limit - 1.0;
    let wait_fraction = if before <= room && previous > 0.0 {
        // previous × (1 - t) + before ≤ room  ⇒  t ≥ 1 - (room - before) / previous
        (1.0 - (room - before) / previous) - elapsed
    } else if before > 0.0 {
        (1.0 - elapsed) + (1.0 - room / before).max(0.0)
    } else {
        // Only with a limit of 0, which the caller treats as no limit; never a
        // zero wait either way.
        1.0 - elapsed
    };
    let secs = (wait_fraction.max(0.0) * (WINDOW_MS / 1000) as f64).ceil() as u64;
    Decision::Deny { retry_after_secs: secs.clamp(1, 120) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The store as a map; `RefCell` because the trait takes `&self`, as the
    /// key-value store's handle does.
    #[derive(Default)]
    struct Map(std::cell::RefCell<std::collections::HashMap<String, i64>>);

    impl Counters for Map {
        type Error = ();
        fn increment(&self, key: &str, delta: i64) -> Result<i64, ()> {
            let mut m = self.0.borrow_mut();
            let v = m.entry(key.to_string()).or_insert(0);
            *v += delta;
            Ok(*v)
        }
    }

    /// Runs `n` requests at `now_ms`, returning how many passed and the last advice.
    fn burst(store: &Map, now_ms: u64, n: u32, limit: u32) -> (u32, Option<u64>) {
        let mut passed = 0;
        let mut retry = None;
        for _ in 0..n {
            match admit(store, Bucket::Search, "192.0.2.1", now_ms, limit).unwrap() {
                Decision::Allow => passed += 1,
                Decision::Deny { retry_after_secs } => retry = Some(retry_after_secs),
            }
        }
        (passed, retry)
    }

    #[test]
    fn long_queries_are_counted_as_the_work_they_are() {
        assert_eq!((units(Bucket::Search, 0), units(Bucket::Search, 12), units(Bucket::Search, 32)), (1, 1, 1));
        assert_eq!((units(Bucket::Search, 33), units(Bucket::Search, 256)), (2, 8));
        assert_eq!((units(Bucket::Chat, 100), units(Bucket::Chat, 6 * 256)), (1, 12));
        assert_eq!(units(Bucket::Feedback, 10_000), 1);
        // 600 searches a minute: ordinary questions all pass; 1,000-character
        // ones (256 pieces, 8 units) pass 75 times, the rest are refused.
        let t0 = 1_000 * WINDOW_MS + 1_000;
        for (pieces, want) in [(20, 600), (256, 75)] {
            let c = Map::default();
            let mut passed = 0;
            for _ in 0..700 {
                if admit(&c, Bucket::Search, "192.0.2.1", t0, 600).unwrap() == Decision::Allow {
                    passed += 1;
                    charge(&c, Bucket::Search, "192.0.2.1", t0, units(Bucket::Search, pieces)).unwrap();
                }
            }
            assert_eq!(passed, want, "{pieces} pieces");
        }
        // A single request dearer than the whole limit is still served once.
        let c = Map::default();
        assert_eq!(admit(&c, Bucket::Chat, "192.0.2.1", t0, 5).unwrap(), Decision::Allow);
        charge(&c, Bucket::Chat, "192.0.2.1", t0, 12).unwrap();
        assert!(matches!(admit(&c, Bucket::Chat, "192.0.2.1", t0, 5).unwrap(), Decision::Deny { .. }));
    }

    #[test]
    fn a_burst_gets_exactly_the_limit_and_a_retry_time() {
        let c = Map::default();
        let t0 = 1_000 * WINDOW_MS;
        let (passed, retry) = burst(&c, t0 + 1_000, 50, 20);
        assert_eq!(passed, 20);
        let retry = retry.unwrap();
        assert!((1..=120).contains(&retry), "{retry}");
        // Refused requests were not counted.
        assert_eq!(c.increment(&key(Bucket::Search, "192.0.2.1", 1_000), 0), Ok(20));
        // Another client and the other bucket have their own counts.
        assert_eq!(admit(&c, Bucket::Search, "192.0.2.2", t0 + 1_000, 20), Ok(Decision::Allow));
        assert_eq!(admit(&c, Bucket::Chat, "192.0.2.1", t0 + 1_000, 20), Ok(Decision::Allow));
        // After the advised wait, one more request fits; just before it, it did not
        // (the advice is not too generous).
        let later = t0 + 1_000 + retry * 1000;
        if retry > 1 {
            assert!(matches!(burst(&c, later - 1500, 1, 20), (0, Some(_))));
        }
        assert_eq!(burst(&c, later, 1, 20).0, 1, "retry after {retry}s");
    }

    #[test]
    fn straddling_a_minute_boundary_does_not_double_the_allowance() {
        let c = Map::default();
        let t0 = 5_000 * WINDOW_MS;
        let (a, _) = burst(&c, t0 + 59_000, 100, 20);
        let (b, _) = burst(&c, t0 + 61_000, 100, 20);
        assert_eq!(a, 20);
        assert!(b <= 1, "{b} more passed one second into the next minute");
        // A minute later the previous minute has faded entirely.
        let (d, _) = burst(&c, t0 + 2 * WINDOW_MS + 59_000, 100, 20);
        assert!(d >= 19, "{d}");
    }

    #[test]
    fn a_steady_rate_under_the_limit_is_never_refused() {
        let c = Map::default();
        let t0 = 7_000 * WINDOW_MS;
        // 18 per minute, evenly spread, for ten minutes. (At 19 the estimate can
        // touch 20 just after a minute boundary: the previous minute is assumed
        // spread evenly, and the current one has just counted a request.)
        for i in 0..180u64 {
            let (p, _) = burst(&c, t0 + i * WINDOW_MS / 18, 1, 20);
            assert_eq!(p, 1, "request {i}");
        }
    }

    #[test]
    fn a_client_that_keeps_knocking_still_gets_its_allowance_each_minute() {
        let c = Map::default();
        let t0 = 9_000 * WINDOW_MS;
        // 10 requests a second for three minutes against 60 a minute.
        let passed: u32 = (0..1800u64).map(|i| burst(&c, t0 + i * 100, 1, 60).0).sum();
        assert!((150..=180).contains(&passed), "{passed} passed in three minutes");
    }

    #[test]
    fn refusals_are_written_each_then_at_powers_of_two_and_settled_the_next_minute() {
        let c = Map::default();
        let t0 = 13_000 * WINDOW_MS + 1_000;
        // A flood: 100 requests against a limit of 5 in one minute.
        let mut writes = Vec::new();
        for _ in 0..100 {
            if admit(&c, Bucket::Search, "192.0.2.1", t0, 5).unwrap() != Decision::Allow {
                writes.extend(refused(&c, Bucket::Search, "192.0.2.1", t0).unwrap());
            }
        }
        let m = t0 / WINDOW_MS;
        let counts: Vec<u64> = writes.iter().map(|&(minute, n)| if minute == m { n } else { 0 }).collect();
        assert_eq!(counts, [1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64], "a few writes, not 95");
        // Its next minute's first refusal settles the flood's minute at 95, exactly.
        let t1 = t0 + WINDOW_MS;
        assert_eq!(refused(&c, Bucket::Search, "192.0.2.1", t1).unwrap(), [(m + 1, 1), (m, 95)]);
        for n in 2..=EXACT_REFUSALS {
            assert_eq!(refused(&c, Bucket::Search, "192.0.2.1", t1).unwrap(), [(m + 1, n)]);
        }
        assert!(refused(&c, Bucket::Search, "192.0.2.1", t1).unwrap().is_empty(), "the 9th is not written");
        // Each client and bucket is counted apart; a quiet previous minute is not written.
        assert_eq!(refused(&c, Bucket::Chat, "192.0.2.1", t1).unwrap(), [(m + 1, 1)]);
        assert_eq!(refused(&c, Bucket::Search, "192.0.2.2", t1).unwrap(), [(m + 1, 1)]);
        // The counts are swept with the counters.
        assert!(!is_stale(&refused_key(Bucket::Search, "192.0.2.1", m), t1));
        assert!(is_stale(&refused_key(Bucket::Search, "2001:db8:1:2::/64", m), t1 + WINDOW_MS));
        // The variable a report tells the operator to raise is the bucket's.
        for b in Bucket::ALL {
            assert_eq!(search_service::insights::record::rate_limit_variable(b.name()), b.variable());
        }
    }

    #[test]
    fn stale_counters_are_those_the_window_no_longer_reads() {
        let now = 29_000_000 * WINDOW_MS + 5_000;
        assert!(!is_stale(&key(Bucket::Chat, "192.0.2.1", 29_000_000), now));
        assert!(!is_stale(&key(Bucket::Chat, "2001:db8:1:2::/64", 28_999_999), now));
        assert!(is_stale(&key(Bucket::Chat, "2001:db8:1:2::/64", 28_999_998), now));
        // A counter of an older layout (no minute) is swept; other keys never are.
        assert!(is_stale("ratelimit/chat/192.0.2.1", now));
        assert!(!is_stale("feedback/1", now));
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
        assert_eq!(key(Bucket::Chat, "192.0.2.1", 7), "ratelimit/chat/192.0.2.1/7");
    }

    #[test]
    fn limits_parse_with_defaults_and_name_the_variable() {
        let set = |pairs: &[(Bucket, &str)]| {
            let mut limits = Limits::default();
            for (bucket, value) in pairs {
                limits.set_from_variable(*bucket, value)?;
            }
            Ok::<_, LimitError>(limits)
        };
        assert_eq!(Limits::default(), Limits { search: 600, chat: 20, feedback: 60, insights: 20 });
        assert_eq!(set(&[(Bucket::Chat, "")]), Ok(Limits::default()), "empty is the default");
        assert_eq!(
            set(&[
                (Bucket::Chat, " 5 "),
                (Bucket::Search, "0"),
                (Bucket::Feedback, "7"),
                (Bucket::Insights, "1000000")
            ]),
            Ok(Limits { search: 0, chat: 5, feedback: 7, insights: 1_000_000 })
        );
        for bucket in Bucket::ALL {
            for bad in ["-1", "lots", "1000001", "1e3", "2.5"] {
                let e = Limits::default().set_from_variable(bucket, bad).unwrap_err().to_string();
                assert!(e.starts_with(bucket.variable()) && e.contains(bad), "{e}");
            }
        }
    }

    #[test]
    fn every_endpoint_has_its_own_budget() {
        let c = Map::default();
        let t0 = 11_000 * WINDOW_MS + 1_000;
        // Spending one endpoint's budget leaves every other's whole.
        for spent in Bucket::ALL {
            let c = Map::default();
            for _ in 0..3 {
                admit(&c, spent, "192.0.2.1", t0, 3).unwrap();
            }
            assert!(matches!(admit(&c, spent, "192.0.2.1", t0, 3), Ok(Decision::Deny { .. })));
            for other in Bucket::ALL.into_iter().filter(|b| *b != spent) {
                assert_eq!(admit(&c, other, "192.0.2.1", t0, 3), Ok(Decision::Allow), "{other:?} after {spent:?}");
            }
        }
        // Each has its own key, variable and path, and no two share one.
        for (i, a) in Bucket::ALL.iter().enumerate() {
            admit(&c, *a, "192.0.2.1", t0, 3).unwrap();
            assert_eq!(c.increment(&key(*a, "192.0.2.1", t0 / WINDOW_MS), 0), Ok(1));
            assert!(a.path().ends_with(a.name()) && a.variable() == format!("{}_rate_limit", a.name()));
            for b in &Bucket::ALL[i + 1..] {
                assert!(a.name() != b.name() && a.path() != b.path() && a.variable() != b.variable());
            }
        }
    }
}
