//! The one retry loop of every request ingestion makes (the Confluence REST API,
//! robots.txt, sitemaps, web pages). An attempt that failed in a way worth
//! repeating (a 429 or a 5xx answer, a dropped connection) is made again,
//! [`MAX_ATTEMPTS`] in all, after waiting what the server's `Retry-After` asks
//! (seconds or an HTTP date), else an exponential backoff with full jitter: a
//! uniformly random wait between zero and 200 ms, 400 ms, 800 ms, … . The jitter
//! is there so that requests that failed together (a server that dropped every
//! connection at once, `concurrency` requests answered 503 in the same second) do
//! not all come back in the same instant and fail together again. No wait is
//! longer than [`MAX_WAIT`].
//!
//! What is worth retrying, and what a final failure becomes, is the caller's: each
//! attempt says whether it is done or to be retried ([`Step`]).

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, RETRY_AFTER};

/// Attempts per request, the first included.
pub const MAX_ATTEMPTS: u32 = 5;
/// The longest wait between attempts, whatever `Retry-After` asks for.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(30);
/// The backoff ceiling after the first failed attempt; it doubles after each.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);

/// How a request is retried.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Policy {
    pub max_attempts: u32,
    pub first_backoff: Duration,
    pub max_wait: Duration,
    /// A fraction in `[0, 1]` drawn for each backoff: the part of its ceiling to
    /// wait. A field so that a test can fix it and expect exact waits.
    pub jitter: fn() -> f64,
}

impl Policy {
    /// What every request of a run uses.
    pub(crate) const DEFAULT: Policy = Policy {
        max_attempts: MAX_ATTEMPTS,
        first_backoff: FIRST_BACKOFF,
        max_wait: MAX_WAIT,
        jitter: random_fraction,
    };

    /// The backoff ceiling after failed attempt `attempt` (1, 2, 3, …): 200 ms,
    /// 400 ms, 800 ms, …, never above [`Policy::max_wait`].
    pub(crate) fn ceiling(&self, attempt: u32) -> Duration {
        self.first_backoff.saturating_mul(1 << attempt.saturating_sub(1).min(10)).min(self.max_wait)
    }

    /// How long to wait after failed attempt `attempt`: what `Retry-After` asks,
    /// else a jittered part of the backoff ceiling; at most [`Policy::max_wait`].
    pub(crate) fn wait(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            // Not jittered: the server said when it takes requests again, and
            // asking sooner would only be refused again.
            Some(asked) => asked.min(self.max_wait),
            None => {
                let f = (self.jitter)();
                // A draw outside [0, 1] (NaN included) would make `mul_f64` panic
                // or overshoot: it waits the whole ceiling instead.
                let f = if (0.0..=1.0).contains(&f) { f } else { 1.0 };
                self.ceiling(attempt).mul_f64(f)
            }
        }
    }
}

/// A uniformly distributed fraction in `[0, 1)`.
///
/// From std's `RandomState` rather than an RNG crate: a backoff needs a few
/// unpredictable bits per retry, not a fast or reproducible stream, and std keys
/// each `RandomState` afresh (random keys per thread, stepped on every `new`), so
/// hashing nothing with a new one gives a new SipHash output on every call. The
/// workspace already draws its randomness this way (`search-fn`), and no
/// dependency is added for it.
fn random_fraction() -> f64 {
    let bits = RandomState::new().build_hasher().finish();
    // The top 53 bits: every value exactly representable, 1.0 never reached.
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// Whether an answer's status is worth asking again for: 429 (Too Many Requests)
/// and the 5xx server errors, which say "not now" rather than "not this".
pub(crate) fn retryable(status: u16) -> bool {
    status == 429 || status >= 500
}

/// How long `Retry-After` asks to wait: delay-seconds or an HTTP date (RFC 9110
/// §10.2.3); a date in the past means now. `None` when absent or unreadable.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// One attempt of a request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attempt {
    /// 1 for the first.
    pub number: u32,
    /// Whether no attempt follows this one: an answer that would be retried is
    /// then the final one, for the caller to report as it is.
    pub last: bool,
}

/// What an attempt came to.
pub(crate) enum Step<T> {
    /// The request's outcome, success or failure: returned as it is.
    Done(T),
    /// Worth another attempt: why this one failed, and the wait the server asked for.
    Retry { why: String, retry_after: Option<Duration> },
}

/// Every attempt asked to be retried.
#[derive(Debug)]
pub(crate) struct Exhausted {
    pub attempts: u32,
    /// Why the last attempt failed.
    pub why: String,
}

/// Makes `attempt` until it is done or `policy.max_attempts` were made, waiting
/// [`Policy::wait`] between them; `on_retry` is called before each wait (the
/// callers count their retries for the summary).
pub(crate) async fn run<T, F, Fut>(policy: &Policy, mut on_retry: impl FnMut(), mut attempt: F) -> Result<T, Exhausted>
where
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Step<T>>,
{
    let mut number = 0;
    loop {
        number += 1;
        let this = Attempt { number, last: number >= policy.max_attempts };
        match attempt(this).await {
            Step::Done(outcome) => return Ok(outcome),
            Step::Retry { why, .. } if this.last => return Err(Exhausted { attempts: number, why }),
            Step::Retry { retry_after, .. } => {
                on_retry();
                tokio::time::sleep(policy.wait(number, retry_after)).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime").block_on(f)
    }

    fn fixed(jitter: fn() -> f64) -> Policy {
        Policy { jitter, ..Policy::DEFAULT }
    }

    #[test]
    fn retry_after_takes_seconds_or_a_date() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2026 07:28:00 GMT").expect("date");
        let at = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(RETRY_AFTER, v.parse().expect("header value"));
            retry_after(&h, now)
        };
        assert_eq!(at("120"), Some(Duration::from_secs(120)));
        assert_eq!(at(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(at("Wed, 21 Oct 2026 07:28:30 GMT"), Some(Duration::from_secs(30)));
        assert_eq!(at("Wed, 21 Oct 2026 07:00:00 GMT"), Some(Duration::ZERO), "a past date means now");
        assert_eq!(at("soon"), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn backoff_doubles_under_a_cap_and_is_jittered() {
        let ms = Duration::from_millis;
        let whole = fixed(|| 1.0);
        let waits: Vec<Duration> = (1..=4).map(|a| whole.wait(a, None)).collect();
        assert_eq!(waits, [ms(200), ms(400), ms(800), ms(1600)]);
        assert_eq!(whole.wait(40, None), MAX_WAIT, "capped, and no overflow");
        let half = fixed(|| 0.5);
        assert_eq!(half.wait(1, None), ms(100));
        assert_eq!(half.wait(3, None), ms(400));
        assert_eq!(fixed(|| 0.0).wait(4, None), Duration::ZERO, "full jitter reaches zero");
        assert_eq!(fixed(|| f64::NAN).wait(2, None), ms(400), "a bad draw waits the ceiling");
        assert_eq!(fixed(|| -1.0).wait(2, None), ms(400));
    }

    #[test]
    fn retry_after_is_honoured_as_asked() {
        let p = fixed(|| 0.0);
        assert_eq!(p.wait(1, Some(Duration::from_secs(3))), Duration::from_secs(3), "not jittered");
        assert_eq!(p.wait(1, Some(Duration::from_secs(600))), MAX_WAIT, "capped");
        assert_eq!(p.wait(4, Some(Duration::ZERO)), Duration::ZERO);
    }

    #[test]
    fn random_fractions_are_spread_over_the_unit_interval() {
        let draws: Vec<f64> = (0..1000).map(|_| random_fraction()).collect();
        assert!(draws.iter().all(|f| (0.0..1.0).contains(f)));
        // 1000 uniform draws all in one half has probability 2^-999.
        assert!(draws.iter().any(|f| *f < 0.5) && draws.iter().any(|f| *f >= 0.5));
    }

    #[test]
    fn attempts_stop_when_done_or_exhausted() {
        let p = fixed(|| 0.0);
        let mut retries = 0;
        let mut seen = Vec::new();
        let done = block_on(run(
            &p,
            || retries += 1,
            |a| {
                seen.push((a.number, a.last));
                std::future::ready(if a.number < 3 {
                    Step::Retry { why: format!("try {}", a.number), retry_after: None }
                } else {
                    Step::Done("answer")
                })
            },
        ));
        assert_eq!(done.ok(), Some("answer"));
        assert_eq!(retries, 2);
        assert_eq!(seen, [(1, false), (2, false), (3, false)]);

        let mut retries = 0;
        let gave_up = block_on(run(
            &p,
            || retries += 1,
            |a| std::future::ready(Step::<()>::Retry { why: format!("try {}", a.number), retry_after: None }),
        ));
        let gave_up = gave_up.expect_err("every attempt failed");
        assert_eq!((gave_up.attempts, gave_up.why.as_str()), (MAX_ATTEMPTS, "try 5"));
        assert_eq!(retries, MAX_ATTEMPTS as usize - 1, "no wait after the last attempt");
    }
}
