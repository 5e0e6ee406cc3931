//! The most cited pages: two horizontal bars a page (citations, retrievals),
//! each title linked when its URL may be.

use search_service::insights::report::Report;
use serde::Serialize;

use super::format::{count, plural, r2, truncate};
use super::links::Link;

#[derive(Debug, Clone, Serialize)]
struct HBar {
    w: f64,
    value: String,
    /// Where the value is written.
    tx: f64,
}

#[derive(Debug, Clone, Serialize)]
struct PageRow {
    y: f64,
    label: String,
    tip: String,
    link: Link,
    citations: HBar,
    retrievals: HBar,
}

/// The most cited pages: citations and retrievals, two bars a page.
#[derive(Debug, Clone, Serialize)]
pub(super) struct CitedChart {
    width: f64,
    height: f64,
    label_x: f64,
    bar_x: f64,
    rows: Vec<PageRow>,
    aria: String,
}

/// The chart of the 15 most cited pages; `None` when no page was cited or retrieved.
pub(super) fn chart(r: &Report) -> Option<CitedChart> {
    let pages: Vec<_> = r.cited_pages.iter().filter(|p| p.citations + p.retrievals > 0).take(15).collect();
    if pages.is_empty() {
        return None;
    }
    let max = pages.iter().map(|p| p.citations.max(p.retrievals)).max().unwrap_or(1).max(1);
    let (width, label_x, bar_x, bar_max, row_h) = (1000.0, 300.0, 312.0, 600.0, 36.0);
    let bar = |v: u64| {
        let w = if v == 0 { 0.0 } else { (v as f64 / max as f64 * bar_max).max(2.0) };
        HBar { w: r2(w), value: count(v), tx: r2(bar_x + w + 6.0) }
    };
    let rows = pages
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let link = Link::page(&p.page);
            let y = 6.0 + i as f64 * row_h;
            PageRow {
                y,
                label: truncate(&link.title, 42).0,
                tip: format!(
                    "{}: {}, {}",
                    link.title,
                    plural(p.citations, "citation", "citations"),
                    plural(p.retrievals, "retrieval", "retrievals")
                ),
                citations: bar(p.citations),
                retrievals: bar(p.retrievals),
                link,
            }
        })
        .collect();
    let first = &pages[0];
    Some(CitedChart {
        width,
        height: 12.0 + pages.len() as f64 * row_h,
        label_x,
        bar_x,
        rows,
        aria: format!(
            "The {} most cited pages; first: {}, {}, {}.",
            pages.len(),
            Link::page(&first.page).title,
            plural(first.citations, "citation", "citations"),
            plural(first.retrievals, "retrieval", "retrievals")
        ),
    })
}
