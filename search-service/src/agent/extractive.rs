//! The agent that needs no LLM: deterministic, and honest about what it is.
//!
//! 1. Split the question into its parts (separate questions, or clauses joined by
//!    `;`), at most [`Config::max_parts`]. A short follow-up ("and for staff?") is
//!    read together with the previous user message.
//! 2. Search each part. When the best result is weak (its cosine similarity with
//!    the query is below [`Config::weak_below`]), search again with the part's
//!    content words plus the best result's title, and keep the better of the two.
//! 3. A part is unanswered when search would say "no results" for it (the one
//!    rule of [`search_core::index::relevance`]), when its best result is below
//!    [`Config::abstain_below`], or when that is weak and the part uses a word
//!    no page has (a question about Netflix or a gym, asked of a help desk that
//!    never mentions either, still finds pages about passwords or opening
//!    hours). The agent is the stricter of the two: it must not answer where
//!    search shows nothing, and it declines more than search hides. When every
//!    part is unanswered, abstain: say the knowledge base does not answer, and
//!    name the closest pages.
//! 4. Otherwise answer with the sentences of the best sources that share the most
//!    query terms, each cited `[n]`, and point to the page to read.
//!
//! MiniLM cosine similarities are comparable across queries in a way that fused
//! scores are not (those are normalised per result list), which is why the
//! thresholds read the dense side.

use std::collections::{BTreeSet, HashSet};

use super::{ChatRequest, ChatTimings, Done, Event, Hit, Role, SearchStep, Source};
use crate::service::{Query, Service};
use search_core::index::highlight::{self, Highlighter};
use search_core::index::{analyzer, Mode, Order};

/// Tuning of the extractive agent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Results per search.
    pub k: usize,
    /// Below this best cosine, search again with an expanded query; and below it,
    /// a part with a word no page uses is unanswered.
    pub weak_below: f32,
    /// Below this best cosine in every part, abstain.
    pub abstain_below: f32,
    pub max_parts: usize,
    /// Sentences in an answer.
    pub sentences: usize,
    /// Whether a weak part with a word no page uses is unanswered (off: the
    /// cosine bar alone decides, as before; kept to measure the difference).
    pub unknown_words: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            k: 5,
            weak_below: search_core::index::relevance::WEAK_COSINE,
            abstain_below: 0.30,
            max_parts: 3,
            sentences: 4,
            unknown_words: true,
        }
    }
}

/// One searched part of the question.
struct Part {
    query: String,
    /// (doc, result), best first.
    hits: Vec<(u32, crate::service::SearchResult)>,
    best: f32,
    /// Whether the part's own words found a good match
    /// ([`search_core::index::relevance`]): the search's "no results" rule.
    matched: bool,
    /// The part's words that no page uses ([`Service::unknown_words`]).
    unknown: Vec<String>,
}

impl Part {
    fn unanswered(&self, cfg: &Config) -> bool {
        !self.matched || self.best < cfg.abstain_below || (self.best < cfg.weak_below && !self.unknown.is_empty())
    }
}

/// The parts of a question: separate sentences that ask something, or clauses
/// split by `;`. A question without parts is itself the one part.
pub fn split_question(question: &str, max_parts: usize) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    for c in question.chars() {
        cur.push(c);
        if c == '?' || c == ';' || c == '\n' {
            parts.push(std::mem::take(&mut cur));
        }
    }
    parts.push(cur);
    let mut parts: Vec<String> = parts
        .into_iter()
        .map(|p| p.trim().trim_end_matches(';').trim().to_string())
        .filter(|p| !analyzer::terms(p).is_empty())
        .collect();
    if parts.is_empty() {
        parts.push(question.trim().to_string());
    }
    // Beyond the limit, the rest is searched together as the last part.
    if parts.len() > max_parts {
        let rest = parts.split_off(max_parts - 1).join(" ");
        parts.push(rest);
    }
    parts
}

/// Words that open a follow-up ("and for visitors?", "what about Mahti?").
const CONNECTIVES: &[&str] = &["and", "or", "but", "also", "plus", "then", "so", "what about", "how about", "same"];

/// Words that point back at something said before ("how much does it cost?").
const ANAPHORA: &[&str] = &["it", "its", "that", "this", "these", "those", "they", "them", "their", "there", "one"];

/// Whether `part` continues the previous question rather than asking a new one:
/// it opens with a connective, or it is short (at most three content terms) and
/// points back with a pronoun, or it is a bare word or two ("Mahti?"). A short
/// question of its own ("How do I bake banana bread?") is not a follow-up: read
/// with the previous question, it would find that question's pages.
pub fn is_follow_up(part: &str) -> bool {
    let lower = part.trim().to_lowercase();
    let words: Vec<&str> =
        lower.split(|c: char| !(c.is_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).collect();
    let opens = |c: &str| {
        let n = c.split(' ').count();
        words.len() >= n && words[..n].join(" ") == c
    };
    let content = analyzer::terms(part).len();
    CONNECTIVES.iter().any(|c| opens(c))
        || (content <= 3 && words.iter().any(|w| ANAPHORA.contains(w)))
        || (content <= 1 && words.len() <= 2)
}

/// The parts to search for the latest user message: a follow-up part
/// ([`is_follow_up`]) is read with the previous user message, so it stays about
/// what the conversation is about.
pub fn contextual_parts(req: &ChatRequest, max_parts: usize) -> Vec<String> {
    let previous = req.messages.iter().rev().skip(1).find(|m| m.role == Role::User);
    let context = previous.map(|p| p.content.trim().trim_end_matches(['?', '.', '!']).to_string());
    split_question(req.question(), max_parts)
        .into_iter()
        .map(|part| match &context {
            Some(c) if is_follow_up(&part) => format!("{c} {part}"),
            _ => part,
        })
        .collect()
}

/// Answers `req` from the index, reporting each step through `emit`; returns the
/// `done` event's content (also emitted). `degraded`: this stands in for an LLM
/// that failed.
pub fn answer(
    svc: &Service,
    req: &ChatRequest,
    cfg: &Config,
    degraded: bool,
    clock: &dyn Fn() -> f64,
    emit: &mut dyn FnMut(Event),
) -> Done {
    let t0 = clock();
    let mut rounds = 0;
    let mut parts = Vec::new();
    for query in contextual_parts(req, cfg.max_parts) {
        let qvec = svc.encoder().embed(&query);
        let mut part = search(svc, &query, &qvec, &qvec, cfg.k, emit);
        rounds += 1;
        if part.best < cfg.weak_below {
            if let Some(expanded) = expand(&query, &part) {
                // The expanded results are judged by the original question: the
                // expansion contains the top result's title, so it would always
                // look closer to that result than the question is.
                let evec = svc.encoder().embed(&expanded);
                let second = search(svc, &expanded, &evec, &qvec, cfg.k, emit);
                rounds += 1;
                if second.best > part.best {
                    // Whether the question has a match is the question's own.
                    part = Part { matched: part.matched, ..second };
                }
            }
        }
        // Only a weak part's words matter ([`Part::unanswered`]). A database
        // that cannot be read leaves them unjudged: the cosine rule decides.
        if cfg.unknown_words && part.best < cfg.weak_below {
            part.unknown = svc.unknown_words(&query).unwrap_or_default();
        }
        parts.push(part);
    }
    let t_search = clock() - t0;
    let abstain = parts.iter().all(|p| p.unanswered(cfg));
    let (text, sources, cited) = if abstain { abstention(&parts) } else { compose(svc, &parts, cfg) };
    emit(Event::Sources { sources: sources.clone() });
    for piece in text.split_inclusive('\n') {
        emit(Event::Token { text: piece.to_string() });
    }
    let citations: Vec<Source> = sources.into_iter().filter(|s| cited.contains(&s.n)).collect();
    let total = clock() - t0;
    let done = Done {
        id: String::new(),
        answer: text,
        citations,
        abstained: abstain,
        extractive: true,
        degraded,
        rounds,
        timings_ms: ChatTimings { search: t_search, llm: 0.0, total },
    };
    emit(Event::Done(done.clone()));
    done
}

/// Searches `query` (embedded as `qvec`); `best` is the highest cosine of a
/// result with `judge`, the vector of the question being answered.
fn search(svc: &Service, query: &str, qvec: &[f32], judge: &[f32], k: usize, emit: &mut dyn FnMut(Event)) -> Part {
    let mut p = svc.default_params(k);
    p.mode = Mode::Convex;
    // Evidence by chunk: pages first gives five pages' best sections, and the
    // answer then cites the right page less often (docs/benchmarks/readers-words.md, "Pages first").
    p.order = Order::Chunks;
    let q = Query { text: query, params: p, offset: 0, vector: Some(qvec), count_more: false };
    // The stages are timed by the caller, per part. A backend that cannot be
    // read finds nothing (the answer abstains) and says why.
    let (ranked, matched) = match svc.rank(&q, &|| 0.0) {
        Ok(r) => (r.hits, r.evidence.matched()),
        Err(e) => {
            emit(Event::Error { message: format!("search is unavailable: {e}") });
            (Vec::new(), false)
        }
    };
    let mut hl = Highlighter::new(query);
    let hits: Vec<_> = ranked
        .into_iter()
        .enumerate()
        .filter_map(|(i, h)| svc.result(i + 1, &h, &mut hl).ok().map(|r| (h.doc, r)))
        .collect();
    let docs: Vec<u32> = hits.iter().map(|(doc, _)| *doc).collect();
    // The judge is the query's own vector on the first search: those cosines are
    // already in the hits.
    let cosines = if std::ptr::eq(judge, qvec) {
        Ok(hits.iter().map(|(_, r)| r.dense.unwrap_or(0.0)).collect())
    } else {
        svc.dense_scores(judge, &docs)
    };
    let best = cosines.unwrap_or_default().into_iter().fold(0.0f32, f32::max);
    emit(Event::Search(SearchStep {
        query: query.to_string(),
        k,
        hits: hits.iter().map(|(_, r)| Hit::from(r)).collect(),
    }));
    Part { query: query.to_string(), hits, best, matched, unknown: Vec::new() }
}

/// The part's content words with the best result's title: pseudo-relevance
/// feedback of the simplest kind, for questions worded unlike the pages.
fn expand(query: &str, part: &Part) -> Option<String> {
    let (_, top) = part.hits.first()?;
    let words: Vec<&str> = query.split_whitespace().filter(|w| !analyzer::terms(w).is_empty()).collect();
    let expanded = format!("{} {}", words.join(" "), top.title);
    (expanded.trim() != query.trim()).then_some(expanded)
}

/// A numbered source with the part that found it and its chunks (several chunks
/// of one section are one source).
struct Numbered {
    part: usize,
    source: Source,
    docs: Vec<u32>,
}

/// Numbers sources in order of first appearance across parts, one per section URL.
fn number(parts: &[Part], per_part: usize, min_dense: f32) -> Vec<Numbered> {
    let mut out: Vec<Numbered> = Vec::new();
    for (pi, part) in parts.iter().enumerate() {
        let good = part.hits.iter().filter(|(_, r)| r.dense.unwrap_or(0.0) >= min_dense).take(per_part);
        for (doc, r) in good {
            if let Some(existing) = out.iter_mut().find(|s| s.source.url == r.url) {
                if !existing.docs.contains(doc) {
                    existing.docs.push(*doc);
                }
                continue;
            }
            out.push(Numbered { part: pi, source: Source::from_result(out.len() + 1, r), docs: vec![*doc] });
        }
    }
    out
}

fn abstention(parts: &[Part]) -> (String, Vec<Source>, BTreeSet<usize>) {
    let closest: Vec<Source> = number(parts, 2, f32::MIN).into_iter().map(|s| s.source).take(3).collect();
    let mut unknown: Vec<&str> = Vec::new();
    for w in parts.iter().flat_map(|p| &p.unknown) {
        if !unknown.iter().any(|u| u.eq_ignore_ascii_case(w)) {
            unknown.push(w);
        }
    }
    let mut text = if unknown.is_empty() {
        String::from("The knowledge base does not seem to answer this question; I found no page about it.\n")
    } else {
        let mut named: Vec<String> = unknown.iter().map(|w| format!("\u{201c}{w}\u{201d}")).collect();
        let last = named.pop().unwrap_or_default();
        let named = if named.is_empty() { last } else { format!("{} or {last}", named.join(", ")) };
        format!("The knowledge base does not seem to answer this question: no page mentions {named}.\n")
    };
    if !closest.is_empty() {
        text.push_str("\nThe closest pages, in case they help:\n");
        for s in &closest {
            text.push_str(&format!("- {} [{}]\n", s.title, s.n));
        }
    }
    let cited = closest.iter().map(|s| s.n).collect();
    (text, closest, cited)
}

/// Sentences of a chunk's display text, Markdown stripped, in order. Headings and
/// table rows are left out (they label or list; they do not answer), and so are
/// fragments under five words.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in text.lines() {
        let raw = raw.trim();
        if raw.starts_with('#') || raw.starts_with('|') || raw.starts_with("```") {
            continue;
        }
        let plain = highlight::plain_text(raw);
        let line = plain.trim().trim_start_matches(['-', '+', '*']).trim();
        // Numbered list markers ("3.") are not sentence ends.
        let line = line.split_once(". ").filter(|(n, _)| n.chars().all(|c| c.is_ascii_digit())).map_or(line, |x| x.1);
        let mut cur = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            cur.push(c);
            if matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|n| n.is_whitespace()) {
                out.push(std::mem::take(&mut cur).trim().to_string());
            }
        }
        if !cur.trim().is_empty() {
            out.push(cur.trim().to_string());
        }
    }
    out.into_iter()
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| s.split_whitespace().count() >= 5)
        .collect()
}

fn compose(svc: &Service, parts: &[Part], cfg: &Config) -> (String, Vec<Source>, BTreeSet<usize>) {
    let numbered = number(parts, 3, cfg.abstain_below);
    // Candidate sentences: (score, source n, position, text).
    let mut cands: Vec<(f32, usize, usize, String)> = Vec::new();
    for src in &numbered {
        let q: HashSet<String> = analyzer::terms(&parts[src.part].query).into_iter().collect();
        let mut pos = 0;
        for doc in &src.docs {
            let Ok(meta) = svc.chunk(*doc) else { continue };
            for s in sentences(&meta.text) {
                pos += 1;
                let terms: HashSet<String> = analyzer::terms(&s).into_iter().collect();
                let overlap = terms.intersection(&q).count() as f32;
                // Shared terms, per square root of length; earlier sentences and
                // better-ranked sources win ties.
                let score =
                    overlap / (terms.len().max(1) as f32).sqrt() + 0.05 / pos as f32 - 0.02 * src.source.n as f32;
                if overlap > 0.0 && !cands.iter().any(|c| c.3 == s) {
                    cands.push((score, src.source.n, pos, s));
                }
            }
        }
    }
    cands.sort_by(|a, b| b.0.total_cmp(&a.0));
    cands.truncate(cfg.sentences);
    if cands.is_empty() {
        return abstention(parts);
    }
    // Read in source order, then in the order the page tells it.
    cands.sort_by_key(|c| (c.1, c.2));
    let cited: BTreeSet<usize> = cands.iter().map(|c| c.1).collect();
    let mut text = String::from("From the knowledge base:\n\n");
    for (_, n, _, s) in &cands {
        text.push_str(&format!("- {s} [{n}]\n"));
    }
    let first = cited.iter().next().copied().unwrap_or(1);
    if let Some(s) = numbered.iter().find(|s| s.source.n == first) {
        text.push_str(&format!("\nRead more: {} [{}]\n", s.source.title, s.source.n));
    }
    let sources = numbered.into_iter().map(|s| s.source).collect();
    (text, sources, cited)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_part_questions_split_into_parts() {
        assert_eq!(
            split_question("How do I buy a parking permit? And where can I print?", 3),
            vec!["How do I buy a parking permit?", "And where can I print?"]
        );
        assert_eq!(
            split_question("reset password; eduroam certificate", 3),
            vec!["reset password", "eduroam certificate"]
        );
        assert_eq!(split_question("vpn", 3), vec!["vpn"]);
        let many = split_question("wifi vpn? print scan? mail box? card pin?", 3);
        assert_eq!(many.len(), 3);
        assert_eq!(many[2], "mail box? card pin?");
    }

    #[test]
    fn sentences_skip_fragments() {
        let s = sentences("# Buying a parking permit today\n\nPermits are virtual. Your plate is your permit, and lots are **read** daily.\n- Short one.\n3. Pay online in the portal before 9:00.\n| Lot | Who can park here |");
        assert_eq!(
            s,
            vec!["Your plate is your permit, and lots are read daily.", "Pay online in the portal before 9:00."]
        );
    }

    #[test]
    fn only_follow_ups_read_the_previous_question() {
        for q in ["and for visitors?", "What about Mahti?", "How much does it cost?", "Is that free?", "Quotas?"] {
            assert!(is_follow_up(q), "{q}");
        }
        for q in [
            "How do I bake banana bread?",
            "Who is the president of Finland?",
            "How do I apply for a parking permit?",
            "Where is the library?",
            "How do I reset my password for eduroam and the VPN?",
        ] {
            assert!(!is_follow_up(q), "{q}");
        }
        let req = ChatRequest::parse(
            br#"{"messages":[{"role":"user","content":"How do I buy a parking permit?"},{"role":"assistant","content":"..."},{"role":"user","content":"How do I bake banana bread?"}]}"#,
        )
        .unwrap();
        assert_eq!(contextual_parts(&req, 3), vec!["How do I bake banana bread?"]);
    }

    #[test]
    fn short_follow_ups_read_the_previous_question() {
        let req = ChatRequest::parse(
            br#"{"messages":[{"role":"user","content":"How do I buy a parking permit?"},{"role":"assistant","content":"..."},{"role":"user","content":"and for visitors?"}]}"#,
        )
        .unwrap();
        assert_eq!(contextual_parts(&req, 3), vec!["How do I buy a parking permit and for visitors?"]);
    }
}
