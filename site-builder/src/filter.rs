//! Filter stage: drops chunks that carry nothing a reader could use.
//!
//! Rule-based filters from the advising paper run first, in a fixed order, each
//! with a name that the build report counts ([`Rule`]). Then the stub check: a chunk
//! whose opening matches a pointer pattern ("This page contains…", "Here you will
//! find…") is a candidate, and a [`StubJudge`] decides whether the rest of the body
//! carries content — by a heuristic by default, by an LLM when one is configured.
//! Nothing is dropped silently: every drop is returned with its rule.

use std::fmt;

/// Why a chunk was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// Nothing left once header lines are removed.
    EmptyBody,
    /// Only hyphens, rules or other punctuation.
    PunctuationOnly,
    /// "FAQ coming soon", "No FAQs have been added yet".
    FaqPlaceholder,
    /// "Lorem ipsum", "under construction", "click here to edit".
    CmsPlaceholder,
    /// The text a "related articles" macro leaves behind.
    RelatedArticles,
    /// "« Previous | Next »" templates.
    PrevNext,
    /// Nothing but links.
    NavigationOnly,
    /// An overview stub: a pointer to other pages with no content of its own.
    Stub,
}

impl Rule {
    /// Rules in the order they are applied (the report keeps this order).
    pub const ALL: [Rule; 8] = [
        Rule::EmptyBody,
        Rule::PunctuationOnly,
        Rule::FaqPlaceholder,
        Rule::CmsPlaceholder,
        Rule::RelatedArticles,
        Rule::PrevNext,
        Rule::NavigationOnly,
        Rule::Stub,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Rule::EmptyBody => "empty_body",
            Rule::PunctuationOnly => "punctuation_only",
            Rule::FaqPlaceholder => "faq_placeholder",
            Rule::CmsPlaceholder => "cms_placeholder",
            Rule::RelatedArticles => "related_articles",
            Rule::PrevNext => "prev_next",
            Rule::NavigationOnly => "navigation_only",
            Rule::Stub => "stub",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The chunk text without its header lines, trimmed.
pub fn body_of(text: &str) -> String {
    let mut lines: Vec<&str> = Vec::new();
    let all: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < all.len() {
        let line = all[i];
        let t = line.trim_start();
        let is_atx = t.starts_with('#') && t.trim_start_matches('#').starts_with([' ', '\t'])
            || t.chars().all(|c| c == '#') && !t.is_empty();
        // A setext heading: a text line underlined by === or ---.
        let next_is_underline = all.get(i + 1).is_some_and(|n| {
            let n = n.trim();
            !t.is_empty() && n.len() >= 2 && (n.chars().all(|c| c == '=') || n.chars().all(|c| c == '-'))
        });
        if is_atx {
            i += 1;
        } else if next_is_underline && (lines.is_empty() || lines.last().is_some_and(|l| l.trim().is_empty())) {
            i += 2;
        } else {
            lines.push(line);
            i += 1;
        }
    }
    lines.join("\n").trim().to_string()
}

/// Lowercase words of the text, punctuation removed.
fn words(text: &str) -> String {
    let cleaned: String =
        text.chars().map(|c| if c.is_alphanumeric() { c.to_ascii_lowercase() } else { ' ' }).collect();
    cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Links found by [`strip_links`].
#[derive(Default)]
struct Links {
    /// Links to other pages of the knowledge base (relative targets).
    internal: usize,
    /// Links to the wider web (`https://…`, `mailto:`, bare URLs).
    external: usize,
}

impl Links {
    fn total(&self) -> usize {
        self.internal + self.external
    }

    fn count(&mut self, target: &str) {
        let t = target.trim().trim_start_matches('<');
        let external = t.starts_with("//")
            || t.split_once(':').is_some_and(|(s, _)| {
                !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            });
        if external {
            self.external += 1;
        } else {
            self.internal += 1;
        }
    }
}

/// Removes Markdown links and images (text and target) and bare URLs; what
/// remains is the prose around the links.
fn strip_links(body: &str) -> (String, Links) {
    let mut out = String::with_capacity(body.len());
    let mut links = Links::default();
    let mut rest = body;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        // `[text](url)` or `[text][ref]`; nested brackets in text are rare enough.
        let Some(close) = after.find(']') else {
            out.push_str(after);
            rest = "";
            break;
        };
        let tail = &after[close + 1..];
        let end = if tail.starts_with('(') {
            tail.find(')').map(|p| (close + 1 + p + 1, &tail[1..p]))
        } else if tail.starts_with('[') {
            // A reference link: where it leads is defined elsewhere; count it as ours.
            tail.find(']').map(|p| (close + 1 + p + 1, ""))
        } else {
            None
        };
        match end {
            Some((end, target)) => {
                links.count(target);
                if out.ends_with('!') {
                    out.pop();
                }
                rest = &after[end..];
            }
            None => {
                out.push('[');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    let mut prose = String::new();
    for word in out.split_whitespace() {
        if word.starts_with("http://") || word.starts_with("https://") || word.starts_with('<') && word.contains("://")
        {
            links.count(word);
        } else {
            prose.push_str(word);
            prose.push(' ');
        }
    }
    (prose, links)
}

fn contains_any(hay: &str, needles: &[&str]) -> bool {
    needles.iter().any(|n| hay.contains(n))
}

/// The first rule (before the stub check) that drops this chunk, if any.
pub fn rule_for(text: &str, headers: &[String]) -> Option<Rule> {
    let body = body_of(text);
    if body.is_empty() {
        return Some(Rule::EmptyBody);
    }
    if !body.chars().any(char::is_alphanumeric) {
        return Some(Rule::PunctuationOnly);
    }
    let w = words(&body);
    let short = body.chars().count() <= 400;
    let heading = headers.last().map(|h| words(h)).unwrap_or_default();

    if short
        && (contains_any(&w, &["faq", "frequently asked"]) || contains_any(&heading, &["faq", "frequently asked"]))
        && contains_any(
            &w,
            &[
                "coming soon",
                "will be added",
                "have been added yet",
                "no faq",
                "none yet",
                "not yet",
                "to be added",
                "tbd",
                "under construction",
            ],
        )
    {
        return Some(Rule::FaqPlaceholder);
    }
    if contains_any(&w, &["lorem ipsum"])
        || short
            && contains_any(
                &w,
                &[
                    "under construction",
                    "content coming soon",
                    "click here to edit",
                    "click to edit this",
                    "placeholder text",
                    "insert content here",
                    "insert text here",
                    "add your content here",
                    "intentionally left blank",
                ],
            )
    {
        return Some(Rule::CmsPlaceholder);
    }
    if short
        && (contains_any(&w, &["related articles", "related pages", "related content"])
            || contains_any(&heading, &["related articles", "related pages", "related content"]))
        && contains_any(&w, &["appear here", "label", "macro", "click to edit", "no related", "will appear"])
    {
        return Some(Rule::RelatedArticles);
    }
    let (prose, links) = strip_links(&body);
    let prose_words = words(&prose);
    if short && links.total() > 0 {
        let leftover = prose_words
            .split(' ')
            .filter(|t| !t.is_empty() && !matches!(*t, "previous" | "prev" | "next" | "back" | "forward" | "up"))
            .count();
        let says_prev = contains_any(&w, &["previous", "prev "]) || body.contains('«') || body.contains('←');
        let says_next = w.contains("next") || body.contains('»') || body.contains('→');
        if says_prev && says_next && links.total() <= 3 && leftover == 0 {
            return Some(Rule::PrevNext);
        }
    }
    // Only links to other pages of the knowledge base: those pages are indexed
    // themselves. A list of outside resources (manuals, homepages) is kept: its
    // link texts and URLs answer "where is the X manual?".
    if links.internal > 0 && links.external == 0 && prose_words.is_empty() {
        return Some(Rule::NavigationOnly);
    }
    None
}

/// Opening phrases of an overview stub.
const STUB_PATTERNS: [&str; 12] = [
    "this page contains",
    "this page provides",
    "this page lists",
    "this page describes",
    "this page gives",
    "this section contains",
    "this section provides",
    "here you will find",
    "here you can find",
    "here you ll find",
    "on this page you will find",
    "in this section you will find",
];

/// Whether the chunk opens like an overview stub (a candidate for the judge).
pub fn is_stub_candidate(text: &str) -> bool {
    let body = body_of(text);
    let opening: String = words(&body).split(' ').take(12).collect::<Vec<_>>().join(" ");
    STUB_PATTERNS.iter().any(|p| opening.contains(p))
}

/// Decides whether a stub candidate is really a stub.
pub trait StubJudge {
    /// `Ok(true)` to drop the chunk; `Err` when the judge could not decide (the
    /// LLM did not answer, or not with a verdict: the caller falls back to the
    /// heuristic and reports why).
    fn is_stub(&self, title: &str, text: &str) -> Result<bool, crate::llm::LlmError>;
    /// Name shown in the report.
    fn name(&self) -> &'static str;
}

/// The default judge: a stub's body, once the pointer sentence, links and list
/// markers are gone, has fewer than `min_words` words of its own.
pub struct HeuristicJudge {
    pub min_words: usize,
}

impl Default for HeuristicJudge {
    fn default() -> Self {
        HeuristicJudge { min_words: 25 }
    }
}

impl HeuristicJudge {
    pub fn judge(&self, text: &str) -> bool {
        let body = body_of(text);
        // Drop the pointer sentence itself.
        let rest = match body.find(['.', '!', '\n']) {
            Some(i) => &body[i + 1..],
            None => "",
        };
        let (prose, _) = strip_links(rest);
        let content_words = words(&prose).split(' ').filter(|w| w.chars().count() >= 2).count();
        content_words < self.min_words
    }
}

impl StubJudge for HeuristicJudge {
    fn is_stub(&self, _title: &str, text: &str) -> Result<bool, crate::llm::LlmError> {
        Ok(self.judge(text))
    }
    fn name(&self) -> &'static str {
        "heuristic"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> Option<Rule> {
        rule_for(text, &[])
    }

    #[test]
    fn empty_body_after_headers() {
        assert_eq!(rule("## Additional information"), Some(Rule::EmptyBody));
        assert_eq!(rule("# Title\n\n## Sub\n\n"), Some(Rule::EmptyBody));
        assert_eq!(rule("Setext\n======\n"), Some(Rule::EmptyBody));
        assert_eq!(rule("## Real\n\nText."), None);
    }

    #[test]
    fn punctuation_only() {
        assert_eq!(rule("## Apostille\n\n-- -- --"), Some(Rule::PunctuationOnly));
        assert_eq!(rule("## H\n\n.....\n***"), Some(Rule::PunctuationOnly));
    }

    #[test]
    fn faq_placeholder() {
        assert_eq!(rule("## FAQ\n\nFAQ coming soon."), Some(Rule::FaqPlaceholder));
        assert_eq!(
            rule("## Frequently asked questions\n\nNo frequently asked questions have been added yet."),
            Some(Rule::FaqPlaceholder)
        );
        assert_eq!(rule("## FAQ\n\nCan I park overnight? Yes, in lot C with a night permit."), None);
    }

    #[test]
    fn cms_placeholder() {
        assert_eq!(rule("## Map\n\nLorem ipsum dolor sit amet, consectetur."), Some(Rule::CmsPlaceholder));
        assert_eq!(rule("## Wires\n\nContent for this section is under construction."), Some(Rule::CmsPlaceholder));
    }

    #[test]
    fn related_articles_placeholder() {
        let t = "## Related articles\n\nRelated articles appear here based on the labels you select. Click to edit the macro.";
        assert_eq!(rule_for(t, &["Related articles".into()]), Some(Rule::RelatedArticles));
    }

    #[test]
    fn prev_next_template() {
        let t = "## Continue\n\n[« Previous: Declaring a major](a.md) | [Next: Probation »](b.md)";
        assert_eq!(rule(t), Some(Rule::PrevNext));
        assert_eq!(rule("[← Prev](a.md) · [Next →](b.md)"), Some(Rule::PrevNext));
    }

    #[test]
    fn navigation_only() {
        let t = "## See also\n\n- [MFA](mfa.md)\n- [VPN](vpn.md#setup)\n- [Top](#top)\n";
        assert_eq!(rule(t), Some(Rule::NavigationOnly));
        let outside = "## More information\n\n- [NAMD manual](https://x.example/ug/)\n- [Tips](tips.md)\n";
        assert_eq!(rule(outside), None);
        assert_eq!(rule("## See also\n\nRead [MFA](mfa.md) before you travel abroad."), None);
    }

    #[test]
    fn stub_candidates_and_heuristic() {
        let stub =
            "# IT services\n\nThis page contains information about IT services.\n\n- [Wi-Fi](wifi.md)\n- [VPN](vpn.md)";
        let real = "# Libraries\n\nThis page contains information about the libraries. The Main Library on Elm Street opens at 7:30 and closes at midnight on weekdays; the Science Library closes at 22:00. Both require a valid student ID card at the gate after 20:00, and guests sign in at the front desk with photo ID.";
        assert!(is_stub_candidate(stub));
        assert!(is_stub_candidate(real));
        assert!(!is_stub_candidate("# Wi-Fi\n\nConnect to eduroam with your NetID."));
        let judge = HeuristicJudge::default();
        assert!(matches!(judge.is_stub("IT", stub), Ok(true)));
        assert!(matches!(judge.is_stub("Libraries", real), Ok(false)));
        assert!(matches!(judge.is_stub("X", "Here you will find everything about registration."), Ok(true)));
    }

    #[test]
    fn rules_have_stable_names() {
        let names: Vec<_> = Rule::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(
            names,
            [
                "empty_body",
                "punctuation_only",
                "faq_placeholder",
                "cms_placeholder",
                "related_articles",
                "prev_next",
                "navigation_only",
                "stub"
            ]
        );
    }
}
