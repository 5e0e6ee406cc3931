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

use minijinja::{Environment, Value};
use search_service::insights::report::{Asked, Bucket, FeedbackItem, Gap, PageRef, Report};
use serde::Serialize;

pub use crate::site::escape;
use crate::site::{describe, html_formatter, Context, TemplateError};

/// The template's file name (in `templates/`).
pub const TEMPLATE_FILE: &str = "insights.html";
/// The template compiled into the binary.
pub const TEMPLATE: &str = include_str!("../../templates/insights.html");
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

/// The URL as it may go into an `href`: a relative path (`it/vpn.html`,
/// `/reset.html`, `#x`) or an `http:`/`https:` URL that passes the build's URL
/// check ([`kb_common::safe_url`]); `None` for anything else (`javascript:`,
/// `data:`, `mailto:`, control characters, an empty URL), which is then shown as
/// text without a link.
pub fn link_href(url: &str) -> Option<String> {
    if url.trim().is_empty() || !kb_common::safe_url::is_safe(url) {
        return None;
    }
    // Cleaned the way `safe_url` (and a browser) reads the scheme.
    let cleaned: String =
        url.trim_matches(|c: char| c <= ' ').chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect();
    // Backslashes are slashes to a browser (`/\host` is another host): no real
    // page URL holds one.
    if cleaned.contains('\\') {
        return None;
    }
    let before_path = cleaned.split(['/', '?', '#']).next().unwrap_or("");
    let lower = cleaned.to_ascii_lowercase();
    if !before_path.contains(':') || lower.starts_with("http:") || lower.starts_with("https:") {
        Some(url.to_string())
    } else {
        None
    }
}

// ---------------------------------------------------------------------------
// Dates

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/// An RFC 3339 time as the report writes them (`2026-12-01T14:00:00Z`), shown
/// in its own offset, to the minute.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stamp(time::OffsetDateTime);

impl Stamp {
    fn parse(s: &str) -> Option<Stamp> {
        time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok().map(Stamp)
    }

    fn hour(&self) -> u8 {
        self.0.hour()
    }

    fn year(&self) -> i32 {
        self.0.year()
    }

    /// The (local) calendar date.
    fn day(&self) -> time::Date {
        self.0.date()
    }

    fn unix(&self) -> i64 {
        self.0.unix_timestamp()
    }

    fn weekday(&self) -> &'static str {
        WEEKDAYS[usize::from(self.0.weekday().number_days_from_sunday())]
    }

    fn month_name(&self) -> &'static str {
        MONTHS[usize::from(u8::from(self.0.month()) - 1)]
    }

    /// `1 Dec`
    fn day_month(&self) -> String {
        format!("{} {}", self.0.day(), self.month_name())
    }

    /// `1 Dec 2026`
    fn date(&self) -> String {
        format!("{} {} {}", self.0.day(), self.month_name(), self.0.year())
    }

    /// `14:00`
    fn clock(&self) -> String {
        format!("{:02}:{:02}", self.0.hour(), self.0.minute())
    }

    fn zone(&self) -> String {
        let minutes = self.0.offset().whole_minutes();
        if minutes == 0 {
            "UTC".into()
        } else {
            let sign = if minutes < 0 { '-' } else { '+' };
            format!("UTC{sign}{:02}:{:02}", minutes.abs() / 60, minutes.abs() % 60)
        }
    }
}

/// A time, readable: `iso` for `<time datetime>`, `date` (`1 Dec 2026`), `full`
/// (`Tue 1 Dec 2026, 14:00 UTC`), `short` (`1 Dec, 14:00`). A time that does not
/// parse is shown as it is.
#[derive(Debug, Clone, Serialize)]
pub struct When {
    iso: String,
    date: String,
    full: String,
    short: String,
}

impl When {
    fn new(s: &str) -> When {
        match Stamp::parse(s) {
            Some(t) => When {
                iso: s.to_string(),
                date: t.date(),
                full: format!("{} {}, {} {}", t.weekday(), t.date(), t.clock(), t.zone()),
                short: format!("{}, {}", t.day_month(), t.clock()),
            },
            None => When { iso: s.to_string(), date: s.to_string(), full: s.to_string(), short: s.to_string() },
        }
    }
}

// ---------------------------------------------------------------------------
// Numbers

/// `1234567` → `1,234,567`.
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Axis numbers: `950`, `1,500`, `12k`.
fn compact(n: u64) -> String {
    if n >= 10_000 && n.is_multiple_of(1000) {
        format!("{}k", count(n / 1000))
    } else {
        count(n)
    }
}

/// A ratio as a percentage: `0%`, `3.4%`, `33%`.
fn percent(ratio: f64) -> String {
    if !ratio.is_finite() || ratio <= 0.0 {
        return "0%".into();
    }
    let p = ratio * 100.0;
    let s = if p >= 10.0 { format!("{p:.0}") } else { format!("{p:.1}") };
    format!("{}%", s.strip_suffix(".0").unwrap_or(&s))
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// `42 ms`, `1.3 s`.
fn millis(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else {
        format!("{ms:.0} ms")
    }
}

/// Chart coordinates, to the hundredth.
fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

/// At most `max` characters, with `…` when cut.
fn truncate(s: &str, max: usize) -> (String, bool) {
    if s.chars().count() <= max {
        return (s.to_string(), false);
    }
    let cut: String = s.chars().take(max.saturating_sub(1)).collect();
    (format!("{}…", cut.trim_end()), true)
}

// ---------------------------------------------------------------------------
// The context

/// A title, linked when its URL may be (see [`link_href`]).
#[derive(Debug, Clone, Serialize)]
pub struct Link {
    title: String,
    href: Option<String>,
    /// The URL as recorded, for a tooltip (also when it is not linked).
    url: String,
}

impl Link {
    fn page(p: &PageRef) -> Link {
        let title = if p.title.trim().is_empty() { p.page_id.clone() } else { p.title.clone() };
        Link { title, href: link_href(&p.url), url: p.url.clone() }
    }

    fn url(url: &str) -> Link {
        Link { title: url.to_string(), href: link_href(url), url: url.to_string() }
    }
}

/// `insights.html`: the whole page. Its fields are described at the top of the template.
#[derive(Debug, Clone, Serialize)]
pub struct InsightsContext {
    title: &'static str,
    generated: When,
    period: PeriodView,
    recording: RecordingView,
    /// Any search or chat in the period.
    has_questions: bool,
    gaps: GapsView,
    kpis: Vec<Kpi>,
    activity: Option<ActivityChart>,
    outcomes: Option<Outcomes>,
    top_questions: Vec<AskedView>,
    pages: PagesView,
    feedback: FeedbackView,
}

impl Context for InsightsContext {
    const TEMPLATE: &'static str = TEMPLATE_FILE;
}

#[derive(Debug, Clone, Serialize)]
struct PeriodView {
    since: When,
    until: When,
    /// `30 days`, `12 hours`; empty when the times do not parse.
    span: String,
    /// `hour`, `day` or `week`.
    bucket: String,
    /// Whether times of day matter (hourly buckets).
    hourly: bool,
}

#[derive(Debug, Clone, Serialize)]
struct RecordingView {
    enabled: bool,
    retention: String,
    oldest: Option<When>,
}

#[derive(Debug, Clone, Serialize)]
struct Badge {
    /// `abstained`, `none`, `weak` or `down` (its style).
    kind: &'static str,
    text: String,
    title: &'static str,
}

#[derive(Debug, Clone, Serialize)]
struct AskedView {
    question: String,
    count: String,
    unanswered: u64,
    unanswered_text: String,
    last: When,
}

impl AskedView {
    fn new(a: &Asked) -> AskedView {
        AskedView {
            question: a.question.clone(),
            count: count(a.count),
            unanswered: a.unanswered,
            unanswered_text: count(a.unanswered),
            last: When::new(&a.last),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
struct GapView {
    rank: usize,
    label: String,
    /// `7×`
    asked: String,
    questions: String,
    badges: Vec<Badge>,
    closest: Vec<Link>,
    examples: Vec<AskedView>,
}

impl GapView {
    fn new(rank: usize, g: &Gap) -> GapView {
        let mut badges = Vec::new();
        for (n, kind, what, title) in [
            (g.abstained, "abstained", "abstained", "Chats the assistant could not answer"),
            (g.no_results, "none", "no results", "Searches that found nothing"),
            (g.weak, "weak", "weak match", "Answered from pages that barely match the question"),
            (g.thumbs_down, "down", "thumbs down", "Answers rated down"),
        ] {
            if n > 0 {
                badges.push(Badge { kind, text: format!("{what} {}", count(n)), title });
            }
        }
        GapView {
            rank,
            label: g.label.clone(),
            asked: format!("{}×", count(g.count)),
            questions: plural(g.questions as u64, "question", "questions"),
            badges,
            closest: g.closest_pages.iter().map(|p| Link::page(&p.page)).collect(),
            examples: g.examples.iter().map(AskedView::new).collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
struct GapsView {
    top: Vec<GapView>,
    rest: Vec<GapView>,
    /// `412 of 530`: distinct unanswered questions grouped, of all of them.
    clustered: String,
    questions: String,
    /// Whether only the most asked were grouped.
    partial: bool,
}

#[derive(Debug, Clone, Serialize)]
struct Kpi {
    label: &'static str,
    value: String,
    detail: Option<String>,
    /// `warn` when the number deserves a look, else empty.
    tone: &'static str,
}

/// A rectangle of a chart.
#[derive(Debug, Clone, Serialize)]
struct Rect {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

#[derive(Debug, Clone, Serialize)]
struct Tick {
    y: f64,
    label: String,
}

#[derive(Debug, Clone, Serialize)]
struct Slot {
    /// The whole column (hover target, tooltip).
    hit: Rect,
    tip: String,
    searches: Option<Rect>,
    chats: Option<Rect>,
}

#[derive(Debug, Clone, Serialize)]
struct XLabel {
    x: f64,
    line1: String,
    line2: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
struct Point {
    x: f64,
    y: f64,
}

#[derive(Debug, Clone, Serialize)]
struct Overlay {
    /// `x,y x,y …` for a `<polyline>`.
    points: String,
    markers: Vec<Point>,
    r: f64,
}

#[derive(Debug, Clone, Serialize)]
struct SeriesRow {
    when: String,
    searches: String,
    chats: String,
    abstained: String,
    degraded: String,
}

/// Questions over time: stacked bars (searches, chats), abstained chats as a line.
#[derive(Debug, Clone, Serialize)]
struct ActivityChart {
    width: f64,
    height: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    grid: Vec<Tick>,
    slots: Vec<Slot>,
    labels: Vec<XLabel>,
    label_y1: f64,
    label_y2: f64,
    abstained: Option<Overlay>,
    aria: String,
    rows: Vec<SeriesRow>,
}

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
struct Outcomes {
    segments: Vec<Segment>,
    legend: Vec<LegendItem>,
    chats: String,
    aria: String,
}

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
struct CitedChart {
    width: f64,
    height: f64,
    label_x: f64,
    bar_x: f64,
    rows: Vec<PageRow>,
    aria: String,
}

#[derive(Debug, Clone, Serialize)]
struct NeverView {
    count: String,
    /// `of 120 pages`, when the index size is known.
    total: Option<String>,
    shown: Vec<Link>,
    more: Vec<Link>,
}

#[derive(Debug, Clone, Serialize)]
struct PagesView {
    cited: Option<CitedChart>,
    /// `None`: the pages cannot be listed (the PostgreSQL backend).
    never: Option<NeverView>,
}

#[derive(Debug, Clone, Serialize)]
struct FeedbackCard {
    /// `up`, `down`, or `other` (a rating this page does not know).
    kind: &'static str,
    rating: String,
    time: When,
    question: Option<String>,
    comment: Option<String>,
    answer: Option<String>,
    answer_cut: bool,
    citations: Vec<Link>,
}

#[derive(Debug, Clone, Serialize)]
struct FeedbackView {
    items: Vec<FeedbackCard>,
    summary: String,
}

impl InsightsContext {
    /// The context of a report.
    pub fn new(r: &Report) -> InsightsContext {
        let t = &r.totals;
        let since = Stamp::parse(&r.period.since);
        let until = Stamp::parse(&r.period.until);
        let span = match (since, until) {
            (Some(a), Some(b)) if b.unix() >= a.unix() => {
                let secs = (b.unix() - a.unix()) as u64;
                if secs < 2 * 86_400 {
                    plural(secs.div_ceil(3600), "hour", "hours")
                } else {
                    plural((secs + 43_200) / 86_400, "day", "days")
                }
            }
            _ => String::new(),
        };
        let questions = t.searches + t.chats;
        let gaps_top: Vec<GapView> =
            r.gaps.iter().take(ANSWER_NEXT).enumerate().map(|(i, g)| GapView::new(i + 1, g)).collect();
        let gaps_rest: Vec<GapView> =
            r.gaps.iter().enumerate().skip(ANSWER_NEXT).map(|(i, g)| GapView::new(i + 1, g)).collect();
        InsightsContext {
            title: "Knowledge-base insights",
            generated: When::new(&r.generated),
            period: PeriodView {
                since: When::new(&r.period.since),
                until: When::new(&r.period.until),
                span,
                bucket: r.period.bucket.clone(),
                hourly: r.period.bucket == "hour",
            },
            recording: RecordingView {
                enabled: r.recording.enabled,
                retention: plural(u64::from(r.recording.retention_days), "day", "days"),
                oldest: r.recording.oldest.as_deref().map(When::new),
            },
            has_questions: questions > 0,
            gaps: GapsView {
                top: gaps_top,
                rest: gaps_rest,
                clustered: count(r.gap_questions_clustered as u64),
                questions: count(r.gap_questions as u64),
                partial: r.gap_questions_clustered < r.gap_questions,
            },
            kpis: kpis(r),
            activity: activity(r),
            outcomes: outcomes(r),
            top_questions: r.top_questions.iter().map(AskedView::new).collect(),
            pages: PagesView {
                cited: cited(r),
                never: r.never_retrieved.as_ref().map(|all| NeverView {
                    count: count(all.len() as u64),
                    total: r.pages_total.map(|n| plural(n as u64, "page", "pages")),
                    shown: all.iter().take(NEVER_SHOWN).map(Link::page).collect(),
                    more: all.iter().skip(NEVER_SHOWN).map(Link::page).collect(),
                }),
            },
            feedback: FeedbackView {
                items: r.feedback.iter().map(feedback_card).collect(),
                summary: format!(
                    "{} rated: {} up, {} down ({} down), {}.",
                    plural(t.thumbs_up + t.thumbs_down, "answer", "answers"),
                    count(t.thumbs_up),
                    count(t.thumbs_down),
                    percent(t.thumbs_down_rate),
                    plural(t.comments, "comment", "comments"),
                ),
            },
        }
    }
}

fn kpis(r: &Report) -> Vec<Kpi> {
    let t = &r.totals;
    let kpi = |label, value: String, detail: Option<String>| Kpi { label, value, detail, tone: "" };
    let mut out = vec![
        kpi("Questions", count(t.searches + t.chats), Some("searches and chats".into())),
        kpi(
            "Searches",
            count(t.searches),
            Some(format!("{} found nothing", count(t.no_results))).filter(|_| t.searches > 0),
        ),
        kpi("Chats", count(t.chats), None),
        kpi(
            "Weak matches",
            count(t.weak),
            Some("answered from pages that barely match".into()).filter(|_| t.searches + t.chats > 0),
        ),
        kpi("Visitors", count(t.visitors), Some("distinct browsers".into())),
        Kpi {
            label: "Abstention rate",
            value: percent(t.abstention_rate),
            detail: Some(format!("{} of {} unanswered", count(t.abstained), plural(t.chats, "chat", "chats"))),
            tone: if t.abstention_rate >= 0.2 { "warn" } else { "" },
        },
        Kpi {
            label: "Degraded rate",
            value: percent(t.degraded_rate),
            detail: Some(format!("{} answered by the fallback", plural(t.degraded, "chat", "chats"))),
            tone: if t.degraded_rate >= 0.1 { "warn" } else { "" },
        },
        Kpi {
            label: "Thumbs up / down",
            value: format!("{} / {}", count(t.thumbs_up), count(t.thumbs_down)),
            detail: Some(format!(
                "{} rated down · {}",
                percent(t.thumbs_down_rate),
                plural(t.comments, "comment", "comments")
            )),
            tone: if t.thumbs_down_rate >= 0.3 && t.thumbs_down > 0 { "warn" } else { "" },
        },
    ];
    for (label, p50, p95) in [
        ("Search latency", t.search_latency_p50_ms, t.search_latency_p95_ms),
        ("Chat latency", t.chat_latency_p50_ms, t.chat_latency_p95_ms),
    ] {
        match (p50, p95) {
            (None, None) => {}
            (p50, p95) => out.push(kpi(
                label,
                p50.map_or_else(|| "—".into(), |v| format!("{} p50", millis(v))),
                p95.map(|v| format!("{} p95", millis(v))),
            )),
        }
    }
    out
}

/// A step of 1, 2, 2.5 or 5 × 10ⁿ (whole numbers) that divides `max` into at most
/// four intervals, and the axis top (at least two intervals).
fn y_scale(max: u64) -> (u64, u64) {
    let max = max.max(1);
    let mut magnitude = 1u64;
    loop {
        for m in [10, 20, 25, 50] {
            let step = magnitude * m / 10;
            if step == 0 || (m == 25 && magnitude < 10) {
                continue;
            }
            let n = max.div_ceil(step);
            if n <= 4 {
                return (step, n.max(2) * step);
            }
        }
        magnitude = magnitude.saturating_mul(10);
    }
}

/// Every how many buckets an axis label goes, about ten labels in all.
fn label_step(n: usize, bucket: &str) -> usize {
    let raw = n.div_ceil(10).max(1);
    let nice: &[usize] = match bucket {
        "hour" => &[1, 2, 3, 4, 6, 8, 12, 24, 48, 72, 168],
        "day" => &[1, 2, 3, 7, 14, 28, 56, 91],
        "week" => &[1, 2, 4, 8, 13, 26, 52, 104],
        _ => &[],
    };
    nice.iter().copied().find(|&s| s >= raw).unwrap_or(raw)
}

/// The bucket, for a tooltip: `Tue 1 Dec 2026, 14:00–15:00 UTC`, `Tue 1 Dec 2026`,
/// `Week of 1 Dec 2026`.
fn bucket_name(b: &Bucket, bucket: &str) -> String {
    match Stamp::parse(&b.start) {
        Some(t) => match bucket {
            "hour" => {
                format!("{} {}, {}–{:02}:00 {}", t.weekday(), t.date(), t.clock(), (t.hour() + 1) % 24, t.zone())
            }
            "week" => format!("Week of {}", t.date()),
            _ => format!("{} {}", t.weekday(), t.date()),
        },
        None => b.start.clone(),
    }
}

fn activity(r: &Report) -> Option<ActivityChart> {
    let series = &r.series;
    let max = series.iter().map(|b| b.searches + b.chats).max().unwrap_or(0);
    if max == 0 {
        return None;
    }
    let bucket = r.period.bucket.as_str();
    let f = Frame::new(series.len(), max);
    let grid = (0..=f.y_top / f.step).map(|i| Tick { y: f.y(i * f.step), label: compact(i * f.step) }).collect();
    let rows = series
        .iter()
        .map(|b| SeriesRow {
            when: bucket_name(b, bucket),
            searches: count(b.searches),
            chats: count(b.chats),
            abstained: count(b.abstained),
            degraded: count(b.degraded),
        })
        .collect();
    Some(ActivityChart {
        width: 1000.0,
        height: 280.0,
        left: f.left,
        right: f.right,
        top: f.top,
        bottom: f.bottom,
        grid,
        slots: activity_slots(&f, series, bucket),
        labels: x_labels(&f, series, bucket),
        label_y1: f.bottom + 20.0,
        label_y2: f.bottom + 38.0,
        abstained: abstained_overlay(&f, series),
        aria: activity_aria(r, bucket),
        rows,
    })
}

/// The activity chart's geometry: the plot area in a 1000 × 280 view box, one
/// slot per bucket, and the y scale up to a round `y_top` in steps of `step`.
struct Frame {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    slot_w: f64,
    bar_w: f64,
    step: u64,
    y_top: u64,
}

impl Frame {
    fn new(n: usize, max: u64) -> Frame {
        let (left, right, top, bottom) = (56.0, 976.0, 16.0, 228.0);
        let (step, y_top) = y_scale(max);
        let slot_w = (right - left) / n as f64;
        Frame { left, right, top, bottom, slot_w, bar_w: (slot_w * 0.72).min(56.0), step, y_top }
    }

    /// The height of value `v`.
    fn y(&self, v: u64) -> f64 {
        r2(self.bottom - v as f64 / self.y_top as f64 * (self.bottom - self.top))
    }

    /// The middle of slot `i`.
    fn center(&self, i: usize) -> f64 {
        self.left + self.slot_w * (i as f64 + 0.5)
    }

    /// The bar of slot `i` from value `from` up to `to` (none when empty).
    fn bar(&self, i: usize, from: u64, to: u64) -> Option<Rect> {
        (to > from).then(|| Rect {
            x: r2(self.center(i) - self.bar_w / 2.0),
            y: self.y(to),
            w: r2(self.bar_w),
            h: r2(self.y(from) - self.y(to)),
        })
    }
}

/// Each bucket's stacked bars (searches, then chats) and its hover target.
fn activity_slots(f: &Frame, series: &[Bucket], bucket: &str) -> Vec<Slot> {
    series
        .iter()
        .enumerate()
        .map(|(i, b)| Slot {
            hit: Rect { x: r2(f.left + f.slot_w * i as f64), y: f.top, w: r2(f.slot_w), h: f.bottom - f.top },
            tip: format!(
                "{}: {} ({}, {}; {} abstained, {} by the fallback)",
                bucket_name(b, bucket),
                plural(b.searches + b.chats, "question", "questions"),
                plural(b.searches, "search", "searches"),
                plural(b.chats, "chat", "chats"),
                count(b.abstained),
                count(b.degraded),
            ),
            searches: f.bar(i, 0, b.searches),
            chats: f.bar(i, b.searches, b.searches + b.chats),
        })
        .collect()
}

/// Axis labels, thinned out; the second line when the day (hourly) or the year changes.
fn x_labels(f: &Frame, series: &[Bucket], bucket: &str) -> Vec<XLabel> {
    let every = label_step(series.len(), bucket);
    let aligned_hours = bucket == "hour" && 24usize.is_multiple_of(every);
    let mut labels = Vec::new();
    let mut previous: Option<Stamp> = None;
    for (i, b) in series.iter().enumerate() {
        let stamp = Stamp::parse(&b.start);
        let shown = match stamp {
            Some(t) if aligned_hours => usize::from(t.hour()).is_multiple_of(every),
            _ => i.is_multiple_of(every),
        };
        if !shown {
            continue;
        }
        let (line1, line2) = match stamp {
            Some(t) if bucket == "hour" => {
                let new_day = previous.is_none_or(|p| p.day() != t.day());
                (t.clock(), new_day.then(|| t.day_month()))
            }
            Some(t) => (t.day_month(), previous.is_none_or(|p| p.year() != t.year()).then(|| t.year().to_string())),
            None => (b.start.clone(), None),
        };
        previous = stamp.or(previous);
        labels.push(XLabel { x: r2(f.center(i)), line1, line2 });
    }
    labels
}

/// The abstentions as a line over the bars (markers while they stay legible).
fn abstained_overlay(f: &Frame, series: &[Bucket]) -> Option<Overlay> {
    let n = series.len();
    series.iter().any(|b| b.abstained > 0).then(|| {
        let pts: Vec<Point> =
            series.iter().enumerate().map(|(i, b)| Point { x: r2(f.center(i)), y: f.y(b.abstained) }).collect();
        Overlay {
            points: pts.iter().map(|p| format!("{},{}", p.x, p.y)).collect::<Vec<_>>().join(" "),
            r: if n <= 31 { 3.5 } else { 2.5 },
            markers: if n <= 60 { pts } else { Vec::new() },
        }
    })
}

/// What a screen reader says of the chart: the totals and the busiest bucket.
fn activity_aria(r: &Report, bucket: &str) -> String {
    let (t, series) = (&r.totals, &r.series);
    let busiest = series.iter().max_by_key(|b| (b.searches + b.chats, std::cmp::Reverse(b.start.clone())));
    format!(
        "Questions per {bucket}, {} bars: {}, {}, {} abstained.{}",
        series.len(),
        plural(t.searches, "search", "searches"),
        plural(t.chats, "chat", "chats"),
        count(t.abstained),
        busiest
            .map(|b| format!(
                " Busiest: {}, {}.",
                bucket_name(b, bucket),
                plural(b.searches + b.chats, "question", "questions")
            ))
            .unwrap_or_default()
    )
}

fn outcomes(r: &Report) -> Option<Outcomes> {
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

fn cited(r: &Report) -> Option<CitedChart> {
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

fn feedback_card(f: &FeedbackItem) -> FeedbackCard {
    let (kind, rating) = match f.rating.as_str() {
        "up" => ("up", "Thumbs up".to_string()),
        "down" => ("down", "Thumbs down".to_string()),
        other => ("other", other.to_string()),
    };
    let answer = f.answer.as_deref().filter(|a| !a.trim().is_empty()).map(|a| truncate(a.trim(), ANSWER_EXCERPT_CHARS));
    FeedbackCard {
        kind,
        rating,
        time: When::new(&f.time),
        question: f.question.clone().filter(|q| !q.trim().is_empty()),
        comment: f.comment.clone().filter(|c| !c.trim().is_empty()),
        answer_cut: answer.as_ref().is_some_and(|a| a.1),
        answer: answer.map(|a| a.0),
        citations: f.citations.iter().map(|c| Link::url(c)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use search_service::insights::report::{Bucket, Period, Recording, Totals};

    fn sample() -> Report {
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
            ]
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
        }
    }

    /// The text of the section with this id (to the next section).
    fn section<'a>(html: &'a str, id: &str) -> &'a str {
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
    }

    #[test]
    fn an_empty_report_renders_its_empty_states() {
        let html = render(&empty());
        assert!(html.contains("Knowledge-base insights"));
        assert!(section(&html, "answer-next").contains("Nothing to answer next"));
        assert!(section(&html, "activity").contains("No questions in this period"));
        assert!(section(&html, "activity").contains("No chats in this period"));
        assert!(section(&html, "feedback").contains("No feedback in this period"));
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

    #[test]
    fn charts_take_one_bucket_and_hundreds() {
        let mut r = sample();
        r.series.truncate(1);
        let html = render(&r);
        let activity = section(&html, "activity");
        assert_eq!(activity.matches("<rect class=\"bar bar--search\"").count(), 1);
        assert!(activity.contains("width=\"56.0\""), "one bar is not the chart's width");

        r.period.bucket = "hour".into();
        r.series = (0..100)
            .map(|h| Bucket {
                start: search_service::service::rfc3339(1_796_083_200 + h * 3600),
                searches: h % 7,
                chats: h % 3,
                abstained: u64::from(h % 5 == 0),
                degraded: 0,
            })
            .collect();
        let html = render(&r);
        let activity = section(&html, "activity");
        assert_eq!(activity.matches("class=\"slot\"").count(), 100);
        let labels = activity.matches("class=\"x-label\"").count();
        assert!((5..=13).contains(&labels), "{labels} labels");
        assert!(activity.contains(">00:00<") && activity.contains(">12:00<"), "hourly labels on round hours");
        assert!(!activity.contains("<circle class=\"marker"), "no markers on 100 bars");
    }

    #[test]
    fn urls_link_only_when_they_can_only_navigate() {
        for ok in ["reset.html", "/it/vpn.html", "../a.html", "#top", "https://x.example/a", "HTTP://x.example"] {
            assert_eq!(link_href(ok).as_deref(), Some(ok), "{ok}");
        }
        for bad in [
            "",
            " ",
            "javascript:alert(1)",
            " java\tscript:x",
            "data:text/html,x",
            "mailto:a@b",
            "/\\evil",
            "vbscript:x",
        ] {
            assert_eq!(link_href(bad), None, "{bad}");
        }
    }

    #[test]
    fn numbers_dates_and_scales_read_well() {
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(999), "999");
        assert_eq!(
            (percent(0.0), percent(0.034), percent(0.2609), percent(1.0)),
            ("0%".into(), "3.4%".into(), "26%".into(), "100%".into())
        );
        assert_eq!((millis(12.4), millis(2400.0)), ("12 ms".into(), "2.4 s".into()));
        let w = When::new("2026-12-01T14:05:00Z");
        assert_eq!(
            (w.date.as_str(), w.full.as_str(), w.short.as_str()),
            ("1 Dec 2026", "Tue 1 Dec 2026, 14:05 UTC", "1 Dec, 14:05")
        );
        assert_eq!(When::new("2026-12-01T14:05:00.5+02:00").full, "Tue 1 Dec 2026, 14:05 UTC+02:00");
        assert_eq!(When::new("not a date").date, "not a date");
        assert_eq!(Stamp::parse("2026-12-01T00:00:00Z").unwrap().unix(), 1_796_083_200);
        for max in [1, 2, 3, 4, 5, 7, 9, 10, 17, 28, 99, 100, 101, 1234, 99_999] {
            let (step, top) = y_scale(max);
            assert!(top >= max && (2..=4).contains(&(top / step)), "{max}: {step} {top}");
        }
        assert_eq!(truncate("abcdef", 4), ("abc…".into(), true));
    }
}
