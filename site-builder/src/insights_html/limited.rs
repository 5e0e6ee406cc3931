//! "Rate limited": the requests the per-address rate limit refused, so that a
//! limit that locks out a computer lab behind one campus address is noticed,
//! with the variable to raise ([`crate::insights::rate_limit_advice`]).

use search_service::insights::report::RateLimits;
use serde::Serialize;

use super::dates::When;
use super::format::{count, percent, plural, ratio};

#[derive(Debug, Clone, Serialize)]
pub(super) struct LimitedView {
    /// `37 requests refused (at least) from 3 clients, in 5 minutes.`
    headline: String,
    /// The busiest minute and its numbers, when known.
    busiest: Option<Busiest>,
    /// `One client was refused 30 of them (81%).` (with more than one client)
    concentration: Option<String>,
    advice: String,
    buckets: Vec<BucketView>,
}

#[derive(Debug, Clone, Serialize)]
struct Busiest {
    time: When,
    /// `30 refused, 1 client`
    text: String,
}

#[derive(Debug, Clone, Serialize)]
struct BucketView {
    bucket: String,
    variable: String,
    /// `600 a minute`
    limit: String,
    refused: String,
    clients: String,
}

/// The section's view; `None` when nothing was refused.
pub(super) fn view(r: &RateLimits) -> Option<LimitedView> {
    let advice = crate::insights::rate_limit_advice(r)?;
    Some(LimitedView {
        headline: format!(
            "{} refused (at least) from {}, in {}.",
            plural(r.refused, "request", "requests"),
            plural(r.clients, "client", "clients"),
            plural(r.minutes, "minute", "minutes")
        ),
        busiest: r.busiest_minute.as_ref().map(|m| Busiest {
            time: When::new(&m.start),
            text: format!("{} refused, {}", count(m.refused), plural(m.clients, "client", "clients")),
        }),
        concentration: (r.clients > 1).then(|| {
            format!(
                "The client refused most accounts for {} of them ({}).",
                count(r.busiest_client_refused),
                percent(ratio(r.busiest_client_refused, r.refused))
            )
        }),
        advice,
        buckets: r
            .buckets
            .iter()
            .map(|b| BucketView {
                bucket: b.bucket.clone(),
                variable: b.variable.clone(),
                limit: format!("{} a minute", count(b.limit)),
                refused: count(b.refused),
                clients: count(b.clients),
            })
            .collect(),
    })
}
