//! The template's context, [`InsightsContext`]: the report turned into what
//! `templates/insights.html` prints (the period, recording, gap groups, the KPI
//! tiles, the top questions, the pages, the feedback cards), every number and
//! date already written, every URL checked, the charts' geometry from their own
//! modules.

use search_service::insights::report::{Asked, FeedbackItem, Gap, Report};
use serde::Serialize;

use super::dates::{Stamp, When};
use super::format::{count, millis, percent, plural, truncate};
use super::links::Link;
use super::{activity, cited, limited, outcomes, rated, ANSWER_EXCERPT_CHARS, ANSWER_NEXT, NEVER_SHOWN, TEMPLATE_FILE};
use crate::site::Context;

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
    activity: Option<activity::ActivityChart>,
    outcomes: Option<outcomes::Outcomes>,
    top_questions: Vec<AskedView>,
    pages: PagesView,
    feedback: FeedbackView,
    pages_rated: rated::RatedView,
    /// `None` when the rate limit refused nothing.
    rate_limited: Option<limited::LimitedView>,
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
    cited: Option<cited::CitedChart>,
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
            activity: activity::chart(r),
            outcomes: outcomes::chart(r),
            top_questions: r.top_questions.iter().map(AskedView::new).collect(),
            pages: PagesView {
                cited: cited::chart(r),
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
            pages_rated: rated::view(r),
            rate_limited: limited::view(&r.rate_limited),
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
