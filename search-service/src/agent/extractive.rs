//! The agent that needs no LLM: deterministic, and honest about what it is.
//!
//! 1. Split the question into its parts (separate questions, or clauses joined by
//!    `;`), at most [`Config::max_parts`]. A short follow-up ("and for staff?") is
//!    read together with the previous user message.
//! 2. Search each part, with the reader's own words: the search step the reader
//!    is shown is what they asked. (A second search with the best result's
//!    title added, for weak parts, changed no answer on the six dev sets of
//!    docs/benchmarks/extractive-answers.md and showed the reader a garbled
//!    query; it is gone.)
//! 3. A part is unanswered when search would say "no results" for it (the one
//!    rule of [`search_core::index::relevance`]), when its best result is below
//!    [`Config::abstain_below`], or when that is weak and the part uses a word
//!    no page has (a question about Netflix or a gym, asked of a help desk that
//!    never mentions either, still finds pages about passwords or opening
//!    hours), unless the search's two sides put one page first: a question in
//!    everyday words ("my wallet got nicked…") has words no page uses too, and
//!    the words it shares with its page confirm what the vector found
//!    (docs/benchmarks/no-match.md, "When both sides agree"). Neither cosine
//!    bar holds a part that names an identifier one of its results has
//!    written (MiniLM reads code names poorly). The agent is
//!    the stricter of the two: it must not answer where search shows
//!    nothing, and it declines more than search hides. When every
//!    part is unanswered, abstain: say the knowledge base does not answer, and
//!    name the closest pages.
//! 4. Otherwise answer with what answers it in the best sources: their passages
//!    (sentences, list items with their lead-in, table rows with their header:
//!    [`passages`]) scored against the part by the search's own BM25 terms and
//!    chosen within a budget ([`select`]: a list's steps kept in order, the
//!    platform asked about preferred, an amount for a question about cost).
//!    Each page is cited once, by its best section, and citations are numbered
//!    1, 2, 3 in the order the answer first uses them: the `sources` event, the
//!    `[n]` in the text and the `done` event's citations are the same list.
//!
//! MiniLM cosine similarities are comparable across queries in a way that fused
//! scores are not (those are normalised per result list), which is why the
//! thresholds read the dense side.

use std::collections::{BTreeSet, HashSet};

use super::passages::{self, Kind};
use super::select::{self, Asked, Budget, Candidate, Unit};
use super::words::Words;
use super::{ChatRequest, ChatTimings, Done, Event, Hit, Role, SearchStep, Source};
use crate::service::{Query, Service};
use search_core::index::highlight::{self, Highlighter};
use search_core::index::lang::{Lang, LangTag};
use search_core::index::{analyzer, Mode, Order};

/// Tuning of the extractive agent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Results per search.
    pub k: usize,
    /// Below this best cosine, a part with a word no page uses is unanswered.
    pub weak_below: f32,
    /// Below this best cosine in every part, abstain.
    pub abstain_below: f32,
    pub max_parts: usize,
    /// Passages (sentences, items, rows) in an answer; a list of steps or a
    /// table excerpt may take it two further ([`select::choose`]).
    pub sentences: usize,
    /// Words quoted in an answer, at most (the first passage is quoted whatever
    /// its length, up to [`select::SHOWN_WORDS`]).
    pub words: usize,
    /// Results per part whose passages are read ([`select`]).
    pub sources: usize,
    /// Whether passages are scored with their MiniLM cosine too. Off: on the
    /// six dev sets it changed a question or two either way and made a reply
    /// six times slower (docs/benchmarks/extractive-answers.md); kept to
    /// measure it again.
    pub passage_cosine: bool,
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
            words: 80,
            sources: 4,
            passage_cosine: false,
            unknown_words: true,
        }
    }
}

/// One searched part of the question.
struct Part {
    /// The part as the reader asked it (what was searched), and its vector.
    question: String,
    /// The language it was searched in first, which its passages are read in.
    lang: Option<LangTag>,
    vector: Vec<f32>,
    /// (doc, result), best first.
    hits: Vec<(u32, crate::service::SearchResult)>,
    best: f32,
    /// Whether the part's own words found a good match
    /// ([`search_core::index::relevance`]): the search's "no results" rule.
    matched: bool,
    /// Whether the search's two sides put one page first
    /// ([`search_core::index::relevance::Evidence::agree`]).
    agree: bool,
    /// The part's words that no page uses ([`Service::unknown_words`]).
    unknown: Vec<String>,
    /// The results (places in `hits`) that have an identifier the part names
    /// written ([`naming`]): those pages are about it, whatever the cosine says.
    named: Vec<usize>,
}

impl Part {
    fn unanswered(&self, cfg: &Config) -> bool {
        // A word no page uses does not weaken a part whose search's two sides
        // agree: the words it shares with the page confirm what the vector found.
        let unknown = !self.unknown.is_empty() && !self.agree;
        let weak = self.best < cfg.abstain_below || (self.best < cfg.weak_below && unknown);
        !self.matched || (weak && self.named.is_empty())
    }
}

/// What a question names as an identifier: each code span, each of a span's
/// words that is one by itself (`--diff` in `code --diff`), and each word that
/// [`analyzer::names_identifier`] reads as one.
fn identifiers(question: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (i, piece) in question.split('`').enumerate() {
        if i % 2 == 1 {
            out.push(piece.trim());
        }
        let words =
            piece.split_whitespace().map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_'));
        out.extend(words.filter(|w| analyzer::names_identifier(w)));
    }
    out.retain(|w| w.chars().filter(|c| c.is_alphanumeric()).count() >= 3);
    out.dedup();
    out
}

/// Whether `lower` (a lowercased text) has `name` as a whole (not inside a
/// longer word), ignoring case.
fn written_in(lower: &str, name: &str) -> bool {
    let (text, name) = (lower, name.to_lowercase());
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(&name)
        .any(|(at, _)| !word(text[..at].chars().next_back()) && !word(text[at + name.len()..].chars().next()))
}

/// The places in `hits` whose chunk has an identifier `question` names
/// written. MiniLM reads code names poorly (a question about `SimpleSlug`
/// scored the page that defines it 0.17), so a weak cosine does not mean a
/// page is off topic when it has the very name asked about.
fn naming(svc: &Service, question: &str, hits: &[(u32, crate::service::SearchResult)]) -> Vec<usize> {
    let names = identifiers(question);
    if names.is_empty() {
        return Vec::new();
    }
    let has = |doc: u32| {
        svc.chunk(doc).is_ok_and(|c| {
            let lower = c.text.to_lowercase();
            names.iter().any(|n| written_in(&lower, n))
        })
    };
    hits.iter().enumerate().filter(|(_, (doc, _))| has(*doc)).map(|(i, _)| i).collect()
}

/// The parts of a question: separate sentences that ask something, or clauses
/// split by `;` (the full-width `？` and `；` of Chinese and Japanese too). A
/// question without parts is itself the one part.
pub fn split_question(question: &str, max_parts: usize) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    for c in question.chars() {
        cur.push(c);
        if matches!(c, '?' | ';' | '\n' | '？' | '；') {
            parts.push(std::mem::take(&mut cur));
        }
    }
    parts.push(cur);
    let mut parts: Vec<String> = parts
        .into_iter()
        .map(|p| p.trim().trim_end_matches([';', '；']).trim().to_string())
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
    let end = |c: char| matches!(c, '?' | '.' | '!') || highlight::UNSPACED_ENDS.contains(&c);
    let context = previous.map(|p| p.content.trim().trim_end_matches(end).to_string());
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
    let mut parts = Vec::new();
    for query in contextual_parts(req, cfg.max_parts) {
        let qvec = svc.encoder().encode_query(&query);
        let lang = svc.answer_language(req.lang, &query);
        let mut part = search(svc, &query, &qvec, lang, cfg.k, emit);
        // Only a weak part's words matter ([`Part::unanswered`]). A database
        // that cannot be read leaves them unjudged: the cosine rule decides.
        if cfg.unknown_words && part.best < cfg.weak_below {
            part.unknown = svc.unknown_words(&query).unwrap_or_default();
        }
        if part.best < cfg.weak_below {
            part.named = naming(svc, &query, &part.hits);
        }
        parts.push(part);
    }
    let t_search = clock() - t0;
    let abstain = parts.iter().all(|p| p.unanswered(cfg));
    // The answer's own words in the language it quotes first.
    let say = super::words::words(svc.answer_language(req.lang, req.question()));
    // Nothing worth quoting from the sources found is an abstention too.
    let composed = if abstain { None } else { compose(svc, &parts, cfg, say) };
    let abstain = composed.is_none();
    let (text, sources, cited) = composed.unwrap_or_else(|| abstention(&parts, say));
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
        rounds: parts.len(),
        timings_ms: ChatTimings { search: t_search, llm: 0.0, total },
    };
    emit(Event::Done(done.clone()));
    done
}

/// Searches `query` (embedded as `qvec`) in `lang` first; `best` is the
/// highest cosine of a result with it.
fn search(
    svc: &Service,
    query: &str,
    qvec: &[f32],
    lang: Option<LangTag>,
    k: usize,
    emit: &mut dyn FnMut(Event),
) -> Part {
    let mut p = svc.default_params(k);
    p.mode = Mode::Convex;
    // Evidence by chunk: pages first gives five pages' best sections, and the
    // answer then cites the right page less often (docs/benchmarks/readers-words.md, "Pages first").
    p.order = Order::Chunks;
    // Pages in the reader's language first, others when it has none.
    p.lang = lang;
    let q = Query { text: query, params: p, offset: 0, vector: Some(qvec), count_more: false };
    // The stages are timed by the caller, per part. A backend that cannot be
    // read finds nothing (the answer abstains) and says why.
    let (ranked, matched, agree, mut hl) = match svc.rank_in_language(&q, &|| 0.0) {
        Ok((r, _)) => {
            let hl = r.highlighter(query);
            (r.hits, r.evidence.matched(), r.evidence.agree, hl)
        }
        Err(e) => {
            emit(Event::Error { message: format!("search is unavailable: {e}") });
            (Vec::new(), false, false, Highlighter::new(query))
        }
    };
    let hits: Vec<_> = ranked
        .into_iter()
        .enumerate()
        .filter_map(|(i, h)| svc.result(i + 1, &h, &mut hl).ok().map(|r| (h.doc, r)))
        .collect();
    let best = hits.iter().map(|(_, r)| r.dense.unwrap_or(0.0)).fold(0.0f32, f32::max);
    emit(Event::Search(SearchStep {
        query: query.to_string(),
        k,
        hits: hits.iter().map(|(_, r)| Hit::from(r)).collect(),
    }));
    Part {
        question: query.to_string(),
        lang,
        vector: qvec.to_vec(),
        hits,
        best,
        matched,
        agree,
        unknown: Vec::new(),
        named: Vec::new(),
    }
}

/// Where a page is in a source list: its id, or its URL without the anchor.
fn page_key(r: &crate::service::SearchResult) -> String {
    if r.page_id.is_empty() {
        r.url.split('#').next().unwrap_or_default().to_string()
    } else {
        r.page_id.clone()
    }
}

/// The closest pages, for an abstention: each page once (its best section),
/// in the order the searches found them, at most three, numbered 1, 2, 3.
fn closest(parts: &[Part]) -> Vec<Source> {
    let mut out: Vec<Source> = Vec::new();
    let mut pages: Vec<String> = Vec::new();
    for part in parts {
        for (_, r) in part.hits.iter().take(2) {
            let key = page_key(r);
            if out.len() < 3 && !pages.contains(&key) {
                pages.push(key);
                out.push(Source::from_result(out.len() + 1, r));
            }
        }
    }
    out
}

fn abstention(parts: &[Part], say: &Words) -> (String, Vec<Source>, BTreeSet<usize>) {
    let closest = closest(parts);
    let mut unknown: Vec<&str> = Vec::new();
    for w in parts.iter().flat_map(|p| &p.unknown) {
        if !unknown.iter().any(|u| u.eq_ignore_ascii_case(w)) {
            unknown.push(w);
        }
    }
    let mut text = if unknown.is_empty() {
        format!("{}\n", say.no_page)
    } else {
        format!("{}\n", say.no_page_mentions.replace("{named}", &say.named(&unknown)))
    };
    if !closest.is_empty() {
        text.push_str(&format!("\n{}\n", say.closest));
        for s in &closest {
            text.push_str(&format!("- {} [{}]\n", s.title, s.n));
        }
    }
    let cited = closest.iter().map(|s| s.n).collect();
    (text, closest, cited)
}

/// What one part quotes: its sources' passages and the units chosen from them.
struct Quoted<'p> {
    part: &'p Part,
    asked: Asked,
    pool: Vec<Candidate>,
    units: Vec<Unit>,
}

/// The passages of a part's sources: the results whose cosine passes the
/// abstention bar or that have the identifier asked about, at most
/// [`Config::sources`] of them.
fn pool(svc: &Service, part: &Part, cfg: &Config) -> Vec<Candidate> {
    // `hit` is the result's place in the part's hits, which the answer cites.
    let good = part
        .hits
        .iter()
        .enumerate()
        .filter(|(i, (_, r))| r.dense.unwrap_or(0.0) >= cfg.abstain_below || part.named.contains(i))
        .take(cfg.sources);
    let mut pool = Vec::new();
    // Chunks overlap: a passage two of them have is read once, in the better.
    let mut seen: HashSet<String> = HashSet::new();
    for (hit, (doc, _)) in good {
        // A record that cannot be read is a source with nothing to quote.
        let Ok(meta) = svc.chunk(*doc) else { continue };
        let heading = meta.headers.last().map_or("", String::as_str);
        for passage in passages::split(&meta.text, heading) {
            if seen.insert(passage.text.clone()) {
                pool.push(Candidate { hit, passage });
            }
        }
    }
    pool
}

/// The cosine (on the reference scale) of each candidate that shares a word with the question
/// (the only ones [`select::choose`] may start from), 0 for the others: one
/// encoder pass over those passages, a row or item read with its lead.
fn cosines(svc: &Service, question: &[f32], pool: &[Candidate], lexical: &[f32]) -> Vec<f32> {
    let mut wanted: Vec<usize> = (0..pool.len()).filter(|&i| lexical[i] > 0.0).collect();
    wanted.sort_by(|&a, &b| lexical[b].total_cmp(&lexical[a]).then(a.cmp(&b)));
    wanted.truncate(MAX_EMBEDDED);
    let enc = svc.encoder();
    let seqs: Vec<Vec<u32>> = wanted
        .iter()
        .map(|&i| {
            let p = &pool[i].passage;
            match p.kind {
                Kind::Sentence => enc.tokenize_passage(&p.text),
                _ => enc.tokenize_passage(&format!("{}: {}", p.lead, p.text)),
            }
        })
        .collect();
    let mut out = vec![0.0; pool.len()];
    if seqs.is_empty() {
        return out;
    }
    let vectors = enc.embed_tokens(&seqs);
    let scale = svc.cosine_scale();
    for (row, &i) in vectors.chunks(question.len().max(1)).zip(&wanted) {
        out[i] = scale.apply(row.iter().zip(question).map(|(a, b)| a * b).sum());
    }
    out
}

/// Passages embedded per part at most, the best by their words: the
/// encoder's time is the answer's (8 passages add about 30 ms natively, a
/// reply that took 5; docs/benchmarks/extractive-answers.md).
const MAX_EMBEDDED: usize = 8;

fn quote<'p>(svc: &Service, part: &'p Part, cfg: &Config, budget: Budget) -> Quoted<'p> {
    let pool = pool(svc, part, cfg);
    // English when the part has no language or this build does not read it.
    let lang = part.lang.and_then(|l| Lang::from_tag(l.as_str())).unwrap_or(Lang::EN);
    let asked = Asked::new(&part.question, lang);
    let params = svc.default_params(cfg.k);
    let lexical = select::lexical(&asked, &pool, params.k1, params.b);
    let cos = cfg.passage_cosine.then(|| cosines(svc, &part.vector, &pool, &lexical));
    let scores = select::score(&asked, &pool, &lexical, cos.as_deref());
    let units = select::choose(&asked, &pool, &lexical, &scores, budget);
    Quoted { part, asked, pool, units }
}

/// The answer: each part's quotes, a page's together (pages in the order of
/// their best quote, a page's quotes in its reading order), each page cited
/// once by the number of its first appearance, so citations run 1, 2, 3 in
/// the text and the sources are exactly the pages cited.
fn compose(svc: &Service, parts: &[Part], cfg: &Config, say: &Words) -> Option<(String, Vec<Source>, BTreeSet<usize>)> {
    let share = |n: usize| n.div_ceil(parts.len().max(1));
    let budget = Budget { lines: share(cfg.sentences).max(2), words: share(cfg.words).max(40) };
    let quoted: Vec<Quoted> = parts.iter().map(|p| quote(svc, p, cfg, budget)).collect();
    if quoted.iter().all(|q| q.units.is_empty()) {
        return None;
    }
    let mut sources: Vec<Source> = Vec::new();
    let mut pages: Vec<String> = Vec::new();
    let mut text = format!("{}\n\n", say.from_the_knowledge_base);
    for q in &quoted {
        for (hit, units) in by_page(q) {
            let Some((_, r)) = q.part.hits.get(hit) else { continue };
            let key = page_key(r);
            let n = match pages.iter().position(|p| *p == key) {
                Some(i) => i + 1,
                None => {
                    pages.push(key);
                    sources.push(Source::from_result(pages.len(), r));
                    pages.len()
                }
            };
            for u in units {
                render(&mut text, q, u, n, &r.title);
            }
        }
    }
    let text = text.trim_end().to_string() + "\n";
    let mut text = text.replace("\n\n\n", "\n\n");
    if let Some(s) = sources.first() {
        text.push_str(&format!("\n{} {} [{}]\n", say.read_more, s.title, s.n));
    }
    let cited = sources.iter().map(|s| s.n).collect();
    Some((text, sources, cited))
}

/// A part's units grouped by page: pages in the order of their best unit, each
/// page's units in reading order; each page with the source (hit) of its best
/// unit, whose section the citation links to.
fn by_page<'q>(q: &'q Quoted) -> Vec<(usize, Vec<&'q Unit>)> {
    let mut out: Vec<(String, usize, Vec<&Unit>)> = Vec::new();
    // Units come best first, so a page's first unit is its best.
    for u in &q.units {
        let hit = q.pool[u.members[0]].hit;
        let Some((_, r)) = q.part.hits.get(hit) else { continue };
        let key = page_key(r);
        match out.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, _, units)) => units.push(u),
            None => out.push((key, hit, vec![u])),
        }
    }
    let docs = |u: &Unit| {
        let hit = q.pool[u.members[0]].hit;
        (q.part.hits.get(hit).map_or(u32::MAX, |h| h.0), u.members[0])
    };
    out.into_iter()
        .map(|(_, hit, mut units)| {
            units.sort_by_key(|u| docs(u));
            (hit, units)
        })
        .collect()
}

/// Most words of a group's lead line.
const LEAD_WORDS: usize = 25;

/// Writes one unit cited `[n]`: a passage as a bullet; a group as its lead
/// (the lead-in sentence, or the heading and label; the page's title if it
/// has neither) over its items, numbered as in the page when they are steps.
fn render(text: &mut String, q: &Quoted, u: &Unit, n: usize, title: &str) {
    let first = &q.pool[u.members[0]].passage;
    if !u.group {
        text.push_str(&format!("- {} [{n}]\n", select::shown(first, &q.asked)));
        return;
    }
    let (lead, items) = match first.kind {
        Kind::Sentence => (first.text.trim_end_matches(':').to_string(), &u.members[1..]),
        _ => (first.lead.trim_end_matches(':').to_string(), &u.members[..]),
    };
    let lead = if lead.is_empty() { title.to_string() } else { highlight::cut_words(&lead, LEAD_WORDS) };
    text.push_str(&format!("\n{lead} [{n}]:\n"));
    for &m in items {
        let p = &q.pool[m].passage;
        match p.kind {
            Kind::Item { ordered: true } => {
                // The step's number in its list, counted over the list's items.
                let step =
                    (0..m).filter(|&o| q.pool[o].hit == q.pool[m].hit && q.pool[o].passage.block == p.block).count();
                text.push_str(&format!("{}. {}\n", step + 1, select::shown(p, &q.asked)));
            }
            _ => text.push_str(&format!("- {}\n", select::shown(p, &q.asked))),
        }
    }
    text.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use search_core::container::AlignedBytes;
    use search_core::Chunk;

    /// Section `anchor` of `page`, as the build chunks it.
    fn section(page: &str, title: &str, n: u32, anchor: &str, text: &str) -> Chunk {
        let mut c = search_core::testing::chunk(&format!("{page}_chunk_{n}"), page, title, text);
        c.n = n;
        c.anchor = anchor.into();
        c.headers = vec![title.into()];
        c
    }

    /// A small help desk: a parking page of three sections, the VPN page and a
    /// page of known issues that also names the VPN error.
    fn help_desk() -> (AlignedBytes, AlignedBytes) {
        search_core::testing::files(&[
            section("parking", "Buying a parking permit", 0, "permit-types", "## Permit types\n\nCommuter permits are for students living off campus. Resident permits are for students in university housing."),
            section("parking", "Buying a parking permit", 1, "prices", "## Prices for 2026–2027\n\n| Permit | Academic year | Fall only | Spring only |\n| --- | --- | --- | --- |\n| Commuter | $420 | $230 | $230 |\n| Resident | $510 | $280 | $280 |\n\nPermits bought after January 15 are charged the spring-only price."),
            section("parking", "Buying a parking permit", 2, "visitors", "## Temporary parking\n\nAdd a rental car as a temporary vehicle for up to 14 days per semester in the parking portal."),
            section("vpn", "Using the VPN", 0, "troubleshooting", "## Troubleshooting\n\n| Symptom | Try |\n| --- | --- |\n| `VPN-401 Authentication failed` | Check your password |\n| `VPN-504 Gateway unreachable` | Your network may block UDP port 4443; run `nbvpn connect --profile student --tcp` |"),
            section("issues", "Known issues", 0, "maintenance", "## Planned maintenance\n\nThe VPN gateways are upgraded on Sunday night. `nbvpn connect` returns `VPN-504 Gateway unreachable` during this window."),
        ])
    }

    /// Every bar down: the synthetic encoder's cosines mean nothing.
    fn open() -> Config {
        Config { abstain_below: -1.0, weak_below: -1.0, ..Config::default() }
    }

    /// The composed answer to `question`: its text and sources.
    fn compose_for(svc: &Service, question: &str) -> (String, Vec<Source>) {
        let qvec = svc.encoder().encode_query(question);
        let part = search(svc, question, &qvec, None, 5, &mut |_| {});
        let (text, sources, cited) =
            compose(svc, &[part], &open(), super::super::words::words(None)).expect("something to quote");
        assert_eq!(cited, sources.iter().map(|s| s.n).collect(), "every source is cited: {text}");
        (text, sources)
    }

    /// The `[n]` markers of `text`, in order.
    fn markers(text: &str) -> Vec<usize> {
        text.split('[').filter_map(|s| s.split_once(']').and_then(|(n, _)| n.parse().ok())).collect()
    }

    #[test]
    fn identifiers_are_code_spans_and_words_that_read_as_code() {
        assert_eq!(identifiers("What does `code --diff` do?"), vec!["code --diff", "--diff"]);
        assert_eq!(identifiers("What is a `SimpleSlug`?"), vec!["SimpleSlug"]);
        assert_eq!(identifiers("Error VPN-504 when I connect"), vec!["VPN-504"]);
        assert!(identifiers("How do I reset my password?").is_empty());
        // Too short to tell a name from a piece of a word.
        assert!(identifiers("What does `ls` do?").is_empty());
    }

    #[test]
    fn a_name_is_written_in_a_text_only_as_a_whole() {
        assert!(written_in("- `simpleslug`: a slug with no leading slash", "SimpleSlug"));
        assert!(written_in("run code --diff a b", "--diff"));
        assert!(!written_in("simpleslugs are plural", "SimpleSlug"));
        assert!(!written_in("my_vpn-504x", "VPN-504"));
    }

    #[test]
    fn a_weak_part_whose_result_has_the_name_it_asks_about_is_answered() {
        let (idx, enc) = help_desk();
        let svc = Service::open(idx.as_slice(), enc.as_slice()).unwrap();
        let question = "What does `VPN-504` mean?";
        let qvec = svc.encoder().encode_query(question);
        let mut part = search(&svc, question, &qvec, None, 5, &mut |_| {});
        assert!(part.matched);
        // A cosine under every bar, as MiniLM gives many code names.
        part.best = 0.1;
        assert!(part.unanswered(&Config::default()));
        part.named = naming(&svc, question, &part.hits);
        assert!(!part.unanswered(&Config::default()));
        // The troubleshooting table and the maintenance notice both name it;
        // their passages are read however weak the cosine.
        let urls: Vec<&str> = part.named.iter().map(|&i| part.hits[i].1.url.as_str()).collect();
        assert_eq!(urls.len(), 2, "{urls:?}");
        let pool = pool(&svc, &part, &Config::default());
        assert!(pool.iter().any(|c| c.passage.text.contains("UDP port 4443")), "{:?}", pool.len());
        // A name no result has changes nothing.
        assert!(naming(&svc, "What does `VPN-999` mean?", &part.hits).is_empty());
    }

    #[test]
    fn a_word_no_page_uses_does_not_weaken_a_part_whose_sides_agree() {
        let (idx, enc) = help_desk();
        let svc = Service::open(idx.as_slice(), enc.as_slice()).unwrap();
        let question = "my wallet got nicked with the card in it, how do I get a new student card?";
        let qvec = svc.encoder().encode_query(question);
        let mut part = search(&svc, question, &qvec, None, 5, &mut |_| {});
        assert!(part.matched);
        // As e5 reads a question in everyday words: weak, with words no page has.
        part.best = 0.35;
        part.unknown = svc.unknown_words(question).unwrap();
        assert!(part.unknown.iter().any(|w| w == "nicked"), "{:?}", part.unknown);
        part.agree = false;
        assert!(part.unanswered(&Config::default()));
        // Both sides put one page first: the words it shares confirm it.
        part.agree = true;
        assert!(!part.unanswered(&Config::default()));
        // The cosine floor still holds, agreeing or not.
        part.best = 0.25;
        assert!(part.unanswered(&Config::default()));
    }

    #[test]
    fn a_table_row_read_with_its_header_answers_the_price_question() {
        let (idx, enc) = help_desk();
        let svc = Service::open(idx.as_slice(), enc.as_slice()).unwrap();
        let (text, sources) = compose_for(&svc, "How much is a parking permit for a semester?");
        assert!(text.contains("Permit: Commuter; Academic year: $420; Fall only: $230; Spring only: $230"), "{text}");
        assert!(text.contains("Prices for 2026–2027 [1]:"), "{text}");
        // The parking page once, linked to the section with the prices.
        assert_eq!(sources.len(), 1, "{sources:?}");
        assert_eq!(sources[0].url, "parking.html#prices");
    }

    #[test]
    fn citations_run_from_one_and_each_page_is_cited_once() {
        let (idx, enc) = help_desk();
        let svc = Service::open(idx.as_slice(), enc.as_slice()).unwrap();
        let (text, sources) = compose_for(&svc, "VPN-504 gateway unreachable");
        assert!(
            text.contains("Try: Your network may block UDP port 4443; run `nbvpn connect --profile student --tcp`"),
            "{text}"
        );
        let used = markers(&text);
        let mut first_uses: Vec<usize> = Vec::new();
        for n in &used {
            if !first_uses.contains(n) {
                first_uses.push(*n);
            }
        }
        // Numbered in the order the text first uses them, with no gap.
        assert_eq!(first_uses, (1..=first_uses.len()).collect::<Vec<_>>(), "{text}");
        assert_eq!(sources.iter().map(|s| s.n).collect::<Vec<_>>(), first_uses, "{text}");
        let pages: HashSet<&str> = sources.iter().map(|s| s.page_id.as_str()).collect();
        assert_eq!(pages.len(), sources.len(), "a page is cited once: {sources:?}");
        // Several sections of the parking page are quoted under one number.
        let (text, sources) = compose_for(&svc, "parking permit price semester visitors");
        assert_eq!(sources.iter().filter(|s| s.page_id == "parking").count(), 1, "{text}");
    }

    /// The reader's language (`lang` of the request) decides which page a
    /// keyword question quotes: German on a German page, English on an English one.
    #[test]
    fn the_answer_quotes_the_readers_language_first() {
        let german = |mut c: Chunk| {
            c.lang = "de".into();
            c
        };
        let (idx, enc) = search_core::testing::files(&[
            section(
                "wifi",
                "Wi-Fi",
                0,
                "connect",
                "## Connect\n\nConnect to eduroam with your university account and password.",
            ),
            german(section(
                "wlan",
                "WLAN",
                0,
                "verbinden",
                "## Verbinden\n\nVerbinden Sie sich mit eduroam, Ihrem Konto und Ihrem Passwort.",
            )),
        ]);
        let svc = Service::open(idx.as_slice(), enc.as_slice()).unwrap();
        let ask = |lang: &str| {
            let body = format!(r#"{{"messages":[{{"role":"user","content":"eduroam password"}}],"lang":"{lang}"}}"#);
            let req = ChatRequest::parse(body.as_bytes()).unwrap();
            answer(&svc, &req, &open(), false, &|| 0.0, &mut |_| {})
        };
        let cited = |lang: &str| ask(lang).citations.first().map(|c| (c.page_id.clone(), c.lang.clone()));
        assert_eq!(cited("de"), Some(("wlan".into(), "de".into())), "each source says its page's language");
        assert_eq!(cited("en"), Some(("wifi".into(), "en".into())));
        // Its own words in that language too.
        assert!(ask("de").answer.starts_with("Aus der Wissensdatenbank:\n\n"), "{}", ask("de").answer);
        assert!(ask("en").answer.starts_with("From the knowledge base:\n\n"), "{}", ask("en").answer);
        // And so is an abstention.
        let req = ChatRequest::parse(
            r#"{"messages":[{"role":"user","content":"Apfelstrudel backen"}],"lang":"de"}"#.as_bytes(),
        )
        .unwrap();
        let done = answer(&svc, &req, &Config::default(), false, &|| 0.0, &mut |_| {});
        assert!(done.abstained, "{}", done.answer);
        assert!(
            done.answer.starts_with("Die Wissensdatenbank scheint diese Frage nicht zu beantworten"),
            "{}",
            done.answer
        );
        // A language the corpus lacks: the question's words decide (none here:
        // every language, the best page first).
        assert!(cited("fi").is_some_and(|(page, _)| ["wifi", "wlan"].contains(&page.as_str())));
    }

    #[test]
    fn the_search_step_shown_is_the_question_asked() {
        let (idx, enc) = help_desk();
        let svc = Service::open(idx.as_slice(), enc.as_slice()).unwrap();
        let mut searched = Vec::new();
        let mut sources = Vec::new();
        let req =
            ChatRequest::parse(br#"{"messages":[{"role":"user","content":"VPN-504 gateway unreachable"}]}"#).unwrap();
        let done = answer(&svc, &req, &open(), false, &|| 0.0, &mut |e| match e {
            Event::Search(step) => searched.push(step.query),
            Event::Sources { sources: s } => sources = s,
            _ => {}
        });
        assert_eq!(searched, vec!["VPN-504 gateway unreachable"]);
        assert_eq!(done.rounds, 1);
        // The sources event is the citations, numbered as the text uses them.
        assert_eq!(sources, done.citations);
    }

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
        // Chinese and Japanese end a question with the full-width mark and no space.
        assert_eq!(split_question("如何重置密码？打印机在哪里？", 3), vec!["如何重置密码？", "打印机在哪里？"]);
        assert_eq!(split_question("パスワード；プリンター", 3), vec!["パスワード", "プリンター"]);
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
