//! The chat outcomes ring: answered, abstained and answered by the fallback, as
//! segments of a circle with a legend.

use search_service::insights::report::Report;
use serde::Serialize;

use super::format::{count, percent, plural, r2, ratio};

#[derive(Debug, Clone, Serialize)]
struct Segment {
    kind: &'static str,
    /// `stroke-dasharray` on a circle of circumference 100.
    dash: String,
    offset: f64,
    title: String,
}

#[derive(Debug, Clone, Serialize)]
struct LegendItem {
    kind: &'static str,
    label: &'static str,
    value: String,
    share: String,
}

/// Chat outcomes: answered, abstained, answered by the fallback.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Outcomes {
    segments: Vec<Segment>,
    legend: Vec<LegendItem>,
    chats: String,
    aria: String,
}

/// The ring of a report's chats; `None` when there were none.
pub(super) fn chart(r: &Report) -> Option<Outcomes> {
    let t = &r.totals;
    if t.chats == 0 {
        return None;
    }
    let abstained = t.abstained.min(t.chats);
    let degraded = t.degraded.min(t.chats - abstained);
    let answered = t.chats - abstained - degraded;
    let parts = [
        ("answered", "Answered", answered),
        ("abstained", "Abstained", abstained),
        ("degraded", "Answered by the fallback", degraded),
    ];
    let mut segments = Vec::new();
    let mut at = 0.0;
    for (kind, label, n) in parts {
        if n == 0 {
            continue;
        }
        let share = n as f64 / t.chats as f64 * 100.0;
        segments.push(Segment {
            kind,
            dash: format!("{} {}", r2(share), r2(100.0 - share)),
            offset: r2(-at),
            title: format!("{label}: {} ({})", plural(n, "chat", "chats"), percent(share / 100.0)),
        });
        at += share;
    }
    let legend = parts
        .iter()
        .map(|&(kind, label, n)| LegendItem { kind, label, value: count(n), share: percent(ratio(n, t.chats)) })
        .collect();
    Some(Outcomes {
        segments,
        legend,
        chats: count(t.chats),
        aria: format!(
            "Chat outcomes of {}: {} answered, {} abstained, {} answered by the fallback.",
            plural(t.chats, "chat", "chats"),
            percent(ratio(answered, t.chats)),
            percent(ratio(abstained, t.chats)),
            percent(ratio(degraded, t.chats)),
        ),
    })
}
