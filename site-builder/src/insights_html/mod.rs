//! The insights report as one self-contained HTML page (`site-builder insights`):
//! what readers ask, what the knowledge base fails to answer, and what they thought
//! of the answers, for the help-desk lead.
//!
//! The page is `templates/insights.html`, compiled into the binary like the site's
//! templates (see [`crate::site`]); [`render_with_template`] renders a template of
//! your own instead (same context). This module turns a [`Report`] into the
//! template's context, [`InsightsContext`]: every number formatted, every date made
//! readable, every URL checked, and the charts' geometry computed, so that the
//! template only lays things out. The charts are inline SVG drawn from that
//! geometry; their colours are CSS variables, so they follow the light or dark theme.
//!
//! Everything in a report that readers typed (questions, comments) or that the
//! knowledge base holds (titles, answers) is hostile text: the template escapes
//! every value it prints (HTML auto-escaping, never `|safe`), and a URL reaches an
//! `href` only when it is a relative path or `http(s)` ([`link_href`]). The page
//! loads nothing and runs nothing: its Content-Security-Policy allows inline styles
//! only.
//!
//! The module, one job a file:
//!
//! | module | its job |
//! | --- | --- |
//! | `mod.rs` | the template and its limits, [`render`], [`render_with_template`] |
//! | `context` | [`InsightsContext`]: the report as the template's context (period, gaps, KPIs, questions, pages, feedback) |
//! | `activity` | the activity chart: questions per bucket as stacked bars, abstentions as a line |
//! | `outcomes` | the chat outcomes ring: answered, abstained, answered by the fallback |
//! | `cited` | the most cited pages: citations and retrievals, two bars a page |
//! | `rated` | the pages readers rated ("Was this helpful?"): yes, no, the helpful share, the latest comments |
//! | `limited` | the requests the rate limit refused, the busiest minute, and the variable to raise |
//! | `dates` | the report's times read once and shown readably ([`When`]) |
//! | `format` | numbers and text as the page writes them (counts, percentages, durations, plurals) |
//! | `links` | which URLs may reach an `href` ([`link_href`]), and [`Link`] |

mod activity;
mod cited;
mod context;
mod dates;
mod format;
mod limited;
mod links;
mod outcomes;
mod rated;

use minijinja::{Environment, Value};
use search_service::insights::report::Report;

pub use self::context::InsightsContext;
pub use self::dates::When;
pub use self::links::{link_href, Link};
pub use crate::site::escape;
use crate::site::{describe, html_formatter, TemplateError};

/// The template's file name (in `templates/`).
pub const TEMPLATE_FILE: &str = "insights.html";
/// The template compiled into the binary.
pub const TEMPLATE: &str = include_str!("../../../templates/insights.html");
/// Gap groups shown first, as what to answer next.
pub const ANSWER_NEXT: usize = 5;
/// Never-retrieved pages listed before the rest is folded away.
pub const NEVER_SHOWN: usize = 50;
/// Characters of an answer shown under its feedback.
pub const ANSWER_EXCERPT_CHARS: usize = 1200;

/// The report as a complete HTML page, with the template compiled into the binary.
///
/// That template is tested, so it renders; if it ever did not, the page says why
/// instead of being empty.
pub fn render(report: &Report) -> String {
    render_with_template(TEMPLATE, report).unwrap_or_else(|e| {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"robots\" content=\"noindex\">\
             <title>Knowledge-base insights</title></head><body><h1>Knowledge-base insights</h1>\
             <p>The report could not be rendered: {}</p></body></html>\n",
            escape(&e.to_string())
        )
    })
}

/// The report rendered with a template of your own (the context is
/// [`InsightsContext`], documented at the top of `templates/insights.html`).
pub fn render_with_template(source: &str, report: &Report) -> Result<String, TemplateError> {
    let err = |e: minijinja::Error| TemplateError::Render { name: TEMPLATE_FILE.to_string(), message: describe(&e) };
    let mut env = Environment::new();
    // A misspelt field is an error, not an empty string: the context is typed.
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.set_formatter(html_formatter);
    env.add_template(TEMPLATE_FILE, source).map_err(err)?;
    let ctx = InsightsContext::new(report);
    env.get_template(TEMPLATE_FILE).map_err(err)?.render(Value::from_serialize(&ctx)).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use search_service::insights::report::{Bucket, Period, Recording, Totals};

    pub(super) fn sample() -> Report {
        serde_json::from_value(serde_json::json!({
            "generated": "2026-12-01T12:00:00Z",
            "period": {"since": "2026-11-28T00:00:00Z", "until": "2026-12-01T12:00:00Z", "bucket": "day"},
            "recording": {"enabled": true, "retention_days": 90, "oldest": "2026-10-03T08:15:00Z"},
            "totals": {
                "searches": 41, "chats": 23, "abstained": 6, "degraded": 2, "no_results": 4, "weak": 3, "visitors": 17,
                "thumbs_up": 5, "thumbs_down": 3, "comments": 2,
                "abstention_rate": 0.2609, "degraded_rate": 0.087, "thumbs_down_rate": 0.375,
                "search_latency_p50_ms": 12.4, "search_latency_p95_ms": 48.0,
                "chat_latency_p50_ms": 820.0, "chat_latency_p95_ms": 2400.0
            },
            "series": [
                {"start": "2026-11-28T00:00:00Z", "searches": 9, "chats": 4, "abstained": 1, "degraded": 0},
                {"start": "2026-11-29T00:00:00Z", "searches": 3, "chats": 1, "abstained": 0, "degraded": 0},
                {"start": "2026-11-30T00:00:00Z", "searches": 17, "chats": 11, "abstained": 3, "degraded": 2},
                {"start": "2026-12-01T00:00:00Z", "searches": 12, "chats": 7, "abstained": 2, "degraded": 0}
            ],
            "gaps": [
                gap("Can I borrow a laptop?", 7, 3, 0, 0, &[("laptops", "Laptop loans", "it/laptops.html")]),
                gap("How do I print from my phone?", 5, 1, 2, 1, &[("print", "Printing", "/print.html")]),
                gap("eduroam on linux", 4, 0, 4, 0, &[]),
                gap("<img src=x onerror=alert(2)>", 3, 1, 0, 1, &[("evil", "Evil \"page\"", "javascript:alert(3)")]),
                gap("VPN keeps disconnecting", 3, 2, 0, 1, &[("vpn", "VPN", "https://help.example.edu/vpn.html")]),
                gap("Where is the parking office?", 2, 2, 0, 0, &[]),
                gap("Reset MFA device", 2, 0, 1, 1, &[("mfa", "Multi-factor authentication", "it/mfa.html")])
            ],
            "gap_questions": 31,
            "gap_questions_clustered": 31,
            "top_questions": [
                {"question": "How do I reset my password?", "count": 9, "last": "2026-12-01T11:02:00Z", "unanswered": 0},
                {"question": "Can I borrow a laptop?", "count": 4, "last": "2026-12-01T10:40:00Z", "unanswered": 4}
            ],
            "cited_pages": [
                {"page_id": "reset", "title": "Passwords", "url": "reset.html", "citations": 12, "retrievals": 40},
                {"page_id": "wifi", "title": "Eduroam and the guest Wi-Fi for visitors on campus and in halls", "url": "wifi.html", "citations": 5, "retrievals": 22},
                {"page_id": "gone", "title": "gone", "url": "", "citations": 0, "retrievals": 3}
            ],
            "never_retrieved": [
                {"page_id": "print", "title": "Printing", "url": "print.html"},
                {"page_id": "fax", "title": "Fax <b>machines</b>", "url": "data:text/html,<script>alert(4)</script>"}
            ],
            "pages_total": 120,
            "feedback": [
                {
                    "time": "2026-12-01T11:59:00Z", "answer_id": "a9", "rating": "down",
                    "comment": "<script>alert(1)</script>", "question": "How do I print?",
                    "answer": "Open the print portal & choose a printer.",
                    "citations": ["/print.html", "javascript:alert(5)", " JaVa\tScRiPt:alert(6)"]
                },
                {
                    "time": "2026-11-30T09:00:00Z", "answer_id": "a7", "rating": "up",
                    "question": "reset password", "answer": "Go to the account page.", "citations": ["reset.html"]
                }
            ],
            "pages_rated": [
                {
                    "page_id": "print", "title": "Printing", "url": "it/print.html", "yes": 1, "no": 3, "helpful": 0.25,
                    "last": "2026-12-01T11:00:00Z",
                    "comments": [
                        {"time": "2026-12-01T11:00:00Z", "rating": "down", "comment": "<script>alert(7)</script> step 2 is gone"},
                        {"time": "2026-11-30T10:00:00Z", "rating": "down", "comment": "Which building?"}
                    ]
                },
                {
                    "page_id": "", "title": "javascript:alert(8)", "url": "javascript:alert(8)", "yes": 4, "no": 0,
                    "helpful": 1.0, "last": "2026-11-29T10:00:00Z", "comments": []
                }
            ],
            "rate_limited": {
                "refused": 37, "clients": 3, "minutes": 5,
                "busiest_minute": {"start": "2026-12-01T14:03:00Z", "refused": 30, "clients": 1},
                "busiest_client_refused": 30,
                "buckets": [
                    {"bucket": "search", "variable": "search_rate_limit", "limit": 600, "refused": 33, "clients": 2},
                    {"bucket": "chat", "variable": "chat_rate_limit", "limit": 20, "refused": 4, "clients": 1}
                ]
            }
        }))
        .unwrap()
    }

    fn gap(
        label: &str,
        n: u64,
        abstained: u64,
        none: u64,
        down: u64,
        pages: &[(&str, &str, &str)],
    ) -> serde_json::Value {
        serde_json::json!({
            "label": label, "count": n, "questions": 2, "abstained": abstained, "no_results": none, "weak": 0, "thumbs_down": down,
            "examples": [
                {"question": label, "count": n - 1, "last": "2026-12-01T10:00:00Z", "unanswered": n - 1},
                {"question": format!("{label} (again)"), "count": 1, "last": "2026-11-30T10:00:00Z", "unanswered": 1}
            ],
            "closest_pages": pages.iter().map(|(id, title, url)| serde_json::json!({
                "page_id": id, "title": title, "url": url, "citations": 2, "retrievals": 2
            })).collect::<Vec<_>>()
        })
    }

    fn empty() -> Report {
        Report {
            generated: "2026-12-01T12:00:00Z".into(),
            period: Period {
                since: "2026-11-01T00:00:00Z".into(),
                until: "2026-12-01T12:00:00Z".into(),
                bucket: "day".into(),
            },
            recording: Recording { enabled: false, retention_days: 30, oldest: None },
            totals: Totals::default(),
            series: vec![Bucket { start: "2026-12-01T00:00:00Z".into(), ..Bucket::default() }],
            gaps: vec![],
            gap_questions: 0,
            gap_questions_clustered: 0,
            top_questions: vec![],
            cited_pages: vec![],
            never_retrieved: None,
            pages_total: None,
            feedback: vec![],
            pages_rated: vec![],
            rate_limited: Default::default(),
        }
    }

    /// The text of the section with this id (to the next section).
    pub(super) fn section<'a>(html: &'a str, id: &str) -> &'a str {
        let start = html.find(&format!("<section id=\"{id}\"")).unwrap_or_else(|| panic!("no section {id}"));
        let end = html[start + 1..].find("<section").map_or(html.len(), |e| start + 1 + e);
        &html[start..end]
    }

    /// Every `href` value of the page.
    fn hrefs(html: &str) -> Vec<&str> {
        html.split("href=\"").skip(1).map(|s| &s[..s.find('"').unwrap()]).collect()
    }

    #[test]
    fn the_sample_report_renders_escaped_and_in_order() {
        let html = render(&sample());
        // For a look at the page (a screenshot); not needed by the test.
        let _ = std::fs::write(std::env::temp_dir().join("insights-sample.html"), &html);
        assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
        assert!(html.contains("<title>Knowledge-base insights</title>"));
        assert!(html.contains(r#"<meta name="robots" content="noindex">"#));
        assert!(html.contains("default-src 'none'; style-src 'unsafe-inline'; img-src data:"));
        assert!(!html.contains("<script"), "reader input or the page itself must never add a script");
        assert!(!html.contains("<link") && !html.contains(" src=\""), "the page loads nothing");

        // Reader input, escaped.
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("&lt;img src=x onerror=alert(2)&gt;"));
        assert!(!html.contains("<img"));
        assert!(html.contains("Fax &lt;b&gt;machines&lt;/b&gt;"));
        assert!(html.contains("Evil &quot;page&quot;"));
        // Only relative and http(s) links.
        let links = hrefs(&html);
        for h in &links {
            let lower = h.to_ascii_lowercase().replace(['\t', ' '], "");
            assert!(!lower.contains("javascript:") && !lower.contains("data:"), "{h}");
            assert!(h.starts_with('#') || h.starts_with('/') || h.starts_with("https://") || !h.contains(':'), "{h}");
        }
        assert!(links.contains(&"it/laptops.html") && links.contains(&"/print.html"), "{links:?}");
        assert!(links.contains(&"https://help.example.edu/vpn.html"));
        // An unlinkable URL is still shown, as text.
        assert!(html.contains("javascript:alert(5)"));

        // What to answer next comes first, with the biggest gap in it.
        let next = section(&html, "answer-next");
        let start = html.find("<section id=\"answer-next\"").unwrap();
        let first_other = html.find("<section").unwrap();
        assert_eq!(start, first_other, "Answer next is the first section");
        assert!(next.contains("Answer next"));
        assert!(next.contains("Can I borrow a laptop?") && next.contains("asked 7×"));
        assert!(next.contains("closest:") && next.contains(">Laptop loans</a>"));
        assert!(next.contains("31 of 31"));
        assert_eq!(next.matches("class=\"gap-card\"").count(), 5);
        assert!(!next.contains("Where is the parking office?"), "the sixth gap is not one of the five");
        assert!(section(&html, "more-gaps").contains("Where is the parking office?"));
        assert!(html.find("Can I borrow a laptop?").unwrap() < html.find("<section id=\"overview\"").unwrap());

        // The KPIs, the charts, the tables.
        let overview = section(&html, "overview");
        assert!(overview.contains(">64<"), "questions = searches + chats");
        assert!(overview.contains("26%") && overview.contains("12 ms p50") && overview.contains("2.4 s p95"));
        assert_eq!(html.matches("<svg class=\"chart").count(), 3, "three charts");
        assert!(html.matches("<svg").count() >= 5, "and the thumbs");
        assert!(html.contains("role=\"img\" aria-label=\"Questions per day"));
        assert!(section(&html, "activity").matches("<rect class=\"bar bar--search\"").count() == 4);
        assert!(section(&html, "activity").contains("<polyline"));
        assert!(section(&html, "top-questions").contains("<th scope=\"col\">Question</th>"));

        // Feedback: newest first, the answer folded away.
        let fb = section(&html, "feedback");
        assert!(fb.find("How do I print?").unwrap() < fb.find("reset password").unwrap());
        assert!(fb.contains("<details") && fb.contains("Open the print portal &amp; choose a printer."));

        // Pages.
        let pages = section(&html, "pages");
        assert!(pages.contains("2 of 120 pages"), "{pages}");
        assert!(!pages.contains("data:text"), "the data: URL is not linked");

        // Pages readers rated: worst first, the comments escaped, a hostile URL as text.
        let rated = section(&html, "pages-rated");
        assert!(rated.contains("2 pages rated: 5 yes, 3 no."), "{rated}");
        assert!(rated.find(">Printing</a>").unwrap() < rated.find("javascript:alert(8)").unwrap());
        assert!(rated.contains("&lt;script&gt;alert(7)&lt;/script&gt; step 2 is gone"));
        assert!(rated.contains("<td class=\"num warn\">25%</td>"), "{rated}");
        assert!(!rated.contains("href=\"javascript"), "{rated}");

        // Rate limited: the numbers, the busiest minute, the variable to raise.
        let limited = section(&html, "rate-limited");
        assert!(limited.contains("37 requests refused (at least) from 3 clients, in 5 minutes."), "{limited}");
        assert!(limited.contains("Tue 1 Dec 2026, 14:03 UTC</time>, 30 refused, 1 client."), "{limited}");
        assert!(limited.contains("accounts for 30 of them (81%)"), "{limited}");
        assert!(limited.contains("raise `search_rate_limit` (now 600 a minute per address) or `chat_rate_limit`"));
        assert!(limited.contains("<code>search_rate_limit</code>"));
    }

    #[test]
    fn an_empty_report_renders_its_empty_states() {
        let html = render(&empty());
        assert!(html.contains("Knowledge-base insights"));
        assert!(section(&html, "answer-next").contains("Nothing to answer next"));
        assert!(section(&html, "activity").contains("No questions in this period"));
        assert!(section(&html, "activity").contains("No chats in this period"));
        assert!(section(&html, "feedback").contains("No feedback in this period"));
        assert!(section(&html, "pages-rated").contains("No page was rated in this period"));
        assert!(section(&html, "rate-limited").contains("No request was refused"));
        assert!(section(&html, "pages").contains("not available for the PostgreSQL backend"));
        assert!(html.contains("Recording is off"));
        assert!(!html.contains("<svg class=\"chart"));
        assert!(!html.contains("latency"), "no latency tiles without latencies");
        // No series at all, and times that do not parse: still a page.
        let mut r = empty();
        r.series.clear();
        r.period.since = "yesterday".into();
        r.never_retrieved = Some(vec![]);
        let html = render(&r);
        assert!(html.contains("yesterday"));
        assert!(section(&html, "pages").contains("Every page"));
    }
}
