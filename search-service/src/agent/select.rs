//! What an extractive answer quotes: the passages of a part's sources
//! ([`super::passages`]) scored against the question, and the best of them
//! chosen within a budget, a list's steps kept together and in order.
//!
//! The score is the search's own, at passage level: BM25 over the analyzer's
//! terms in the language the part was searched in ([`analyzer::terms_in`]:
//! German stems and stop words for a German question and its German
//! passages; [`bm25::idf`], [`bm25::bm25_tf`]) with the
//! passages of the sources as the collection, so a word every passage shares
//! ("eduroam" on the eduroam page) weighs little and the word that tells them
//! apart weighs most; the passage's MiniLM cosine with the question when the
//! caller asks for it (the agent does not by default:
//! [`super::extractive::Config::passage_cosine`]); and two rules over the
//! question's words: a question naming one platform (a MacBook, Windows, an
//! iPhone) prefers the passages for it and leaves out those for another, and
//! a question about cost ("how much is…") reads "price", "cost" and "fee" into
//! its words and prefers passages with an amount of money, which is how a
//! price table's rows answer it.

use std::collections::{HashMap, HashSet};

use super::passages::{Kind, Passage};
use search_core::index::lang::Lang;
use search_core::index::{analyzer, bm25, highlight};

/// A passage of one of a part's sources.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The source: its position in the part's results (0 is the best).
    pub hit: usize,
    pub passage: Passage,
}

/// A platform a question or passage may be about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Mac,
    Windows,
    Linux,
    Ios,
    Android,
}

/// The words naming each platform, lower case. `mac` and `windows` count
/// only capitalised (`Mac`, `Windows`): "open windows" and a MAC address are
/// not platforms.
const PLATFORMS: &[(Platform, &[&str])] = &[
    (Platform::Mac, &["mac", "macos", "macbook", "imac", "osx", "macs"]),
    (Platform::Windows, &["windows", "win10", "win11"]),
    (Platform::Linux, &["linux", "ubuntu", "debian", "fedora", "centos", "rhel"]),
    (Platform::Ios, &["ios", "iphone", "ipad", "ipados"]),
    (Platform::Android, &["android"]),
];

/// The platforms `text` names.
pub fn platforms(text: &str) -> Vec<Platform> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let lower = word.to_lowercase();
        let capitalised = word.chars().next().is_some_and(char::is_uppercase) && word != word.to_uppercase();
        for (p, names) in PLATFORMS {
            let needs_capital = matches!(lower.as_str(), "mac" | "macs" | "windows");
            if names.contains(&lower.as_str()) && (!needs_capital || capitalised) && !out.contains(p) {
                out.push(*p);
            }
        }
    }
    out
}

/// Words of a question about cost.
const COST_WORDS: &[&str] =
    &["cost", "costs", "price", "prices", "fee", "fees", "charge", "charged", "pay", "expensive"];

/// Verbs after "how much" in a question about a price.
const MUCH_VERBS: &[&str] = &["is", "are", "was", "does", "do", "did", "will", "would", "should", "can"];

/// Whether `text` names an amount of money: a currency sign or code next to a number.
fn names_money(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    let sign = |c: char| matches!(c, '$' | '€' | '£' | '¥');
    let digit_near =
        |i: usize| chars.get(i + 1).is_some_and(char::is_ascii_digit) || i > 0 && chars[i - 1].is_ascii_digit();
    (0..chars.len()).any(|i| sign(chars[i]) && digit_near(i))
        || text.split_whitespace().collect::<Vec<_>>().windows(2).any(|w| {
            w[0].chars().any(|c| c.is_ascii_digit())
                && matches!(w[1].trim_end_matches([',', '.', ';']), "EUR" | "euros" | "USD" | "dollars")
        })
}

/// What the question asks, read once.
#[derive(Debug, Clone)]
pub struct Asked {
    /// The language its words and the passages' are read in.
    lang: Lang,
    /// Its analysed terms, each once.
    terms: Vec<String>,
    platforms: Vec<Platform>,
    /// It asks what something costs.
    cost: bool,
}

impl Asked {
    /// `question` read in `lang`, the language the answer quotes first.
    pub fn new(question: &str, lang: Lang) -> Asked {
        let mut terms = analyzer::terms_in(question, lang);
        // An identifier asked about is also read as its words: a page says
        // what `Component.ConditionalRender` does in a sentence about "the
        // `ConditionalRender` component", where no part of the identifier
        // meets a word of the sentence.
        if analyzer::names_identifier(question) {
            terms.extend(analyzer::word_terms(question));
        }
        terms.sort();
        terms.dedup();
        let lower = question.to_lowercase();
        let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
        // "How much is…" asks a price; "how much memory…" a quantity.
        let how_much_is = words.windows(3).any(|w| w[0] == "how" && w[1] == "much" && MUCH_VERBS.contains(&w[2]));
        let cost = how_much_is || words.iter().any(|w| COST_WORDS.contains(w));
        if cost {
            // "How much is a permit?" asks its price: the pages say "price",
            // "cost" or "fee" where the question says "how much".
            terms.extend(analyzer::terms_in("price cost fee", lang));
            terms.sort();
            terms.dedup();
        }
        Asked { lang, terms, platforms: platforms(question), cost }
    }

    /// The terms of a passage's `text`, read as the question is.
    fn terms_of(&self, text: &str) -> Vec<String> {
        analyzer::terms_in(text, self.lang)
    }
}

/// Weight of a context word (heading, label, lead-in) against a word of the
/// passage itself: it says what the passage is about, not what it says.
const CONTEXT_WEIGHT: f32 = 0.5;

/// BM25 of each candidate for the question, the candidates as the collection
/// (text terms count 1, context terms [`CONTEXT_WEIGHT`]), over the best of
/// them: 1 for the best, 0 for one that shares no word with the question.
pub fn lexical(asked: &Asked, pool: &[Candidate], k1: f32, b: f32) -> Vec<f32> {
    let wanted: HashSet<&str> = asked.terms.iter().map(String::as_str).collect();
    let docs: Vec<(HashMap<String, f32>, f32)> = pool
        .iter()
        .map(|c| {
            let text = asked.terms_of(&c.passage.text);
            let len = text.len() as f32;
            let mut tf: HashMap<String, f32> = HashMap::new();
            for t in text.into_iter().filter(|t| wanted.contains(t.as_str())) {
                *tf.entry(t).or_default() += 1.0;
            }
            for t in asked.terms_of(&c.passage.context).into_iter().filter(|t| wanted.contains(t.as_str())) {
                *tf.entry(t).or_default() += CONTEXT_WEIGHT;
            }
            (tf, len)
        })
        .collect();
    let n = docs.len();
    let avg = (docs.iter().map(|d| d.1).sum::<f32>() / n.max(1) as f32).max(1.0);
    let mut scores = vec![0.0f32; n];
    for t in &asked.terms {
        let df = docs.iter().filter(|d| d.0.contains_key(t)).count();
        if df == 0 {
            continue;
        }
        let idf = bm25::idf(df, n);
        for (s, (tf, len)) in scores.iter_mut().zip(&docs) {
            if let Some(&f) = tf.get(t) {
                *s += idf * bm25::bm25_tf(f, *len, avg, k1, b);
            }
        }
    }
    let best = scores.iter().copied().fold(0.0f32, f32::max);
    if best > 0.0 {
        scores.iter_mut().for_each(|s| *s /= best);
    }
    scores
}

/// Weights of the score's parts (see [`score`]).
const W_COSINE: f32 = 1.0;
/// Per rank of the source: a passage of the search's best section wins a tie.
const W_RANK: f32 = 0.05;
const W_PLATFORM: f32 = 0.5;
/// As much as the words: an answer to "how much is it?" names an amount.
const W_COST: f32 = 1.0;

/// Each candidate's score: its [`lexical`] score, plus its cosine with the
/// question (when `cosines` has it), less a little per rank of its source,
/// plus the platform and cost rules; minus infinity for a passage about
/// another platform than the one the question names.
pub fn score(asked: &Asked, pool: &[Candidate], lexical: &[f32], cosines: Option<&[f32]>) -> Vec<f32> {
    pool.iter()
        .enumerate()
        .map(|(i, c)| {
            let mut s = lexical[i] - W_RANK * c.hit as f32;
            s += W_COSINE * cosines.and_then(|v| v.get(i)).copied().unwrap_or(0.0);
            // A question naming two platforms compares them ("Windows and
            // macOS instructions in tabs"); it asks for neither's steps.
            if asked.platforms.len() == 1 {
                let named = platforms(&format!("{} {}", c.passage.context, c.passage.text));
                if named.iter().any(|p| asked.platforms.contains(p)) {
                    s += W_PLATFORM;
                } else if !named.is_empty() {
                    // Steps for another platform are no answer at all.
                    return f32::NEG_INFINITY;
                }
            }
            if asked.cost && names_money(&c.passage.text) {
                s += W_COST;
            }
            s
        })
        .collect()
}

/// What an answer quotes from one source: one passage, or several of one list
/// or table in reading order (`group`).
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    /// Indices into the pool, in reading order.
    pub members: Vec<usize>,
    pub group: bool,
}

/// What a passage loses for each share of its question words that the answer
/// already says: the next passage should add something (maximal marginal
/// relevance of the simplest kind; 0.3 was the best of 0, 0.3, 0.5 and 1 over
/// the six dev sets together, docs/benchmarks/extractive-answers.md).
const W_REPEAT: f32 = 0.3;

/// Most lines a group may add (a list of steps, a table excerpt).
pub const MAX_GROUP: usize = 6;
/// A row or unordered item joins a group when its lexical score is at least
/// this share of the block's best: the rows that answer alike (a price table's
/// rows), not every row of the table (the one error code asked about).
const GROUP_SHARE: f32 = 0.75;

/// How much an answer (or a part of it) quotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Passages; a group (steps, rows) may take the answer two further.
    pub lines: usize,
    /// Words shown ([`shown`]); only the first unit may pass it (a passage of
    /// up to [`SHOWN_WORDS`], a group's first two lines).
    pub words: usize,
}

/// The units to quote, best first, within `budget`. Only passages that share
/// a word with the question (in their text or context) are quoted, each once.
pub fn choose(asked: &Asked, pool: &[Candidate], lexical: &[f32], scores: &[f32], budget: Budget) -> Vec<Unit> {
    let quotable = |i: usize| lexical[i] > 0.0 && scores[i].is_finite() && !looks_like_code(&pool[i].passage.text);
    let mut left: Vec<usize> = (0..pool.len()).filter(|&i| quotable(i)).collect();
    let wanted: HashSet<&str> = asked.terms.iter().map(String::as_str).collect();
    // The question's words each candidate says (in its text: its context is
    // shared with its neighbours).
    let said: Vec<HashSet<String>> = pool
        .iter()
        .map(|c| asked.terms_of(&c.passage.text).into_iter().filter(|t| wanted.contains(t.as_str())).collect())
        .collect();
    let mut covered: HashSet<&str> = HashSet::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut units = Vec::new();
    let (mut lines, mut words) = (0, 0);
    while lines < budget.lines && words < budget.words {
        // The best of the rest, less what it would only repeat.
        let gain = |i: usize| {
            let repeated = said[i].iter().filter(|t| covered.contains(t.as_str())).count();
            scores[i] - W_REPEAT * repeated as f32 / said[i].len().max(1) as f32
        };
        let Some(at) =
            (0..left.len()).max_by(|&a, &b| gain(left[a]).total_cmp(&gain(left[b])).then(left[b].cmp(&left[a])))
        else {
            break;
        };
        let i = left.remove(at);
        if seen.contains(pool[i].passage.text.as_str()) {
            continue;
        }
        let members: Vec<usize> =
            group_of(pool, lexical, i).into_iter().filter(|&m| !seen.contains(pool[m].passage.text.as_str())).collect();
        let (members, size) = fit(asked, pool, members, budget.words.saturating_sub(words));
        let too_long = !units.is_empty() && words + size > budget.words;
        // A lead-in without what it leads ("use these settings:") says nothing.
        let dangling = members.len() == 1 && pool[members[0]].passage.text.ends_with(':');
        if members.is_empty() || lines + members.len() > budget.lines + 2 || too_long || dangling {
            continue;
        }
        lines += members.len();
        words += size;
        for &m in &members {
            seen.insert(pool[m].passage.text.as_str());
            covered.extend(said[m].iter().map(String::as_str));
        }
        let group = members.len() > 1;
        units.push(Unit { members, group });
    }
    units
}

/// A group cut to the `room` left in words, keeping its first items (at least
/// two lines: a lead-in and a step, or two rows); with its size in words.
fn fit(asked: &Asked, pool: &[Candidate], mut members: Vec<usize>, room: usize) -> (Vec<usize>, usize) {
    let sizes: Vec<usize> = members.iter().map(|&m| highlight::word_count(&shown(&pool[m].passage, asked))).collect();
    let mut size = 0;
    let fitting = sizes.iter().take_while(|&&w| {
        size += w;
        size <= room
    });
    let keep = fitting.count().max(2).min(members.len());
    members.truncate(keep);
    (members, sizes[..keep].iter().sum())
}

/// Whether `text` is code that lost its fence (a JSX object, a config line):
/// outside `code` spans, more than one character in ten is a bracket, quote
/// or operator. Prose quotes code in spans, where it stays readable, and
/// names a placeholder (`{publisherName}`) now and then, which is not code.
fn looks_like_code(text: &str) -> bool {
    let (mut code, mut symbols, mut all) = (false, 0, 0);
    for c in text.chars() {
        if c == '`' {
            code = !code;
        } else if !code && !c.is_whitespace() {
            all += 1;
            let symbol =
                matches!(c, '{' | '}' | '[' | ']' | '(' | ')' | '=' | ';' | '<' | '>' | '\'' | '"' | '/' | '|');
            symbols += usize::from(symbol);
        }
    }
    symbols * 10 > all.max(1)
}

/// Most words a passage shows.
pub const SHOWN_WORDS: usize = 50;

/// A passage as the answer shows it: a wide row by its first cell (what the
/// row is about) and the cells that share a word with the question, anything
/// longer than [`SHOWN_WORDS`] cut with `…`.
pub fn shown(p: &Passage, asked: &Asked) -> String {
    let text = if p.kind == Kind::Row && highlight::word_count(&p.text) > SHOWN_WORDS {
        let wanted: HashSet<&str> = asked.terms.iter().map(String::as_str).collect();
        let cells: Vec<&str> = p
            .cells
            .iter()
            .enumerate()
            .filter(|(i, c)| *i == 0 || asked.terms_of(c).iter().any(|t| wanted.contains(t.as_str())))
            .map(|(_, c)| c.as_str())
            .collect();
        cells.join("; ")
    } else {
        p.text.clone()
    };
    highlight::cut_words(&text, SHOWN_WORDS)
}

/// The passages quoted with candidate `i`, in reading order: a numbered list's
/// steps (at most [`MAX_GROUP`], from the step before `i`), or the rows or
/// bullets of a table or list that match as well as the best of them, after
/// the lead-in when `i` is the sentence that opens them; otherwise `i` alone.
fn group_of(pool: &[Candidate], lexical: &[f32], i: usize) -> Vec<usize> {
    let p = &pool[i].passage;
    let in_block = |m: usize, block: usize| pool[m].hit == pool[i].hit && pool[m].passage.block == block;
    let members: Vec<usize> = match (p.kind, p.opens) {
        // The list a lead-in opens; when the chunk ends before it, its items
        // where another (overlapping) chunk has them, by their lead.
        (_, Some(b)) => {
            let here: Vec<usize> = (0..pool.len()).filter(|&m| in_block(m, b)).collect();
            if here.is_empty() {
                (0..pool.len())
                    .filter(|&m| pool[m].passage.kind != Kind::Sentence && pool[m].passage.lead == p.text)
                    .collect()
            } else {
                here
            }
        }
        (Kind::Item { .. } | Kind::Row, _) => (0..pool.len()).filter(|&m| in_block(m, p.block)).collect(),
        (Kind::Sentence, None) => return vec![i],
    };
    let opener = p.opens.is_some();
    if members.is_empty() {
        return vec![i];
    }
    // Steps are quoted in order around the one chosen; rows and bullets that
    // answer alike, whichever they are.
    let ordered = p.kind == Kind::Item { ordered: true }
        || opener && members.iter().any(|&m| pool[m].passage.kind == Kind::Item { ordered: true });
    let best = members.iter().map(|&m| lexical[m]).fold(0.0f32, f32::max);
    let mut chosen: Vec<usize> = if ordered || best == 0.0 {
        // (A lead-in's bullets that share no word with the question: its first.)
        let at = members.iter().position(|&m| m == i).unwrap_or(0).saturating_sub(1);
        let start = at.min(members.len().saturating_sub(MAX_GROUP));
        members.iter().copied().skip(start).take(MAX_GROUP).collect()
    } else {
        let mut like: Vec<usize> = members.into_iter().filter(|&m| lexical[m] >= GROUP_SHARE * best).collect();
        like.sort_by(|&a, &b| lexical[b].total_cmp(&lexical[a]).then(a.cmp(&b)));
        like.truncate(MAX_GROUP);
        like.sort_unstable();
        like
    };
    if opener {
        chosen.insert(0, i);
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::passages::split;

    fn pool(chunks: &[&str]) -> Vec<Candidate> {
        chunks
            .iter()
            .enumerate()
            .flat_map(|(hit, text)| split(text, "").into_iter().map(move |passage| Candidate { hit, passage }))
            .collect()
    }

    fn quoted(question: &str, pool: &[Candidate], cosines: Option<&[f32]>, budget: usize) -> Vec<Vec<String>> {
        quoted_in(question, Lang::EN, pool, cosines, budget)
    }

    fn quoted_in(
        question: &str,
        lang: Lang,
        pool: &[Candidate],
        cosines: Option<&[f32]>,
        budget: usize,
    ) -> Vec<Vec<String>> {
        let asked = Asked::new(question, lang);
        let lex = lexical(&asked, pool, 1.2, 0.75);
        let scores = score(&asked, pool, &lex, cosines);
        choose(&asked, pool, &lex, &scores, Budget { lines: budget, words: 200 })
            .into_iter()
            .map(|u| u.members.iter().map(|&m| pool[m].passage.text.clone()).collect())
            .collect()
    }

    const PARKING: &str = "## Prices for 2026–2027\n\n| Permit | Academic year | Fall only | Spring only |\n| --- | --- | --- | --- |\n| Commuter | $420 | $230 | $230 |\n| Resident | $510 | $280 | $280 |\n\nPermits bought after January 15 are charged the spring-only price regardless of type.\n";
    const VISITORS: &str = "## Temporary parking\n\nIf you drive a rental car for a few days, add it as a temporary vehicle for up to 14 days per semester.\n";

    #[test]
    fn a_price_table_answers_what_a_permit_costs() {
        let pool = pool(&[VISITORS, PARKING]);
        let q = quoted("How much is a parking permit for a semester?", &pool, None, 4);
        assert_eq!(
            q[0],
            vec![
                "Permit: Commuter; Academic year: $420; Fall only: $230; Spring only: $230",
                "Permit: Resident; Academic year: $510; Fall only: $280; Spring only: $280"
            ],
            "{q:?}"
        );
    }

    #[test]
    fn the_row_of_the_error_asked_about_is_quoted_with_its_header() {
        let vpn = "## Troubleshooting\n\n| Symptom | Try |\n| --- | --- |\n| `VPN-401 Authentication failed` | Check your password |\n| `VPN-504 Gateway unreachable` | Your network may block UDP port 4443; run `nbvpn connect --profile student --tcp` |\n";
        let pool = pool(&["## Planned maintenance\n\nThe VPN gateways are upgraded on Sunday night.\n", vpn]);
        let q = quoted("VPN-504 gateway unreachable", &pool, None, 4);
        assert_eq!(
            q[0],
            vec!["Symptom: `VPN-504 Gateway unreachable`; Try: Your network may block UDP port 4443; run `nbvpn connect --profile student --tcp`"],
            "{q:?}"
        );
    }

    #[test]
    fn a_german_question_and_its_passages_are_read_in_german() {
        let pool = pool(&[
            "## Sicherung\n\nWie Sie Ihre Daten sichern, steht im nächsten Abschnitt dieser Seite.\n",
            "## Skalierung\n\nEine Anwendung skaliert man mit einem Deployment und mehreren Replikaten.\n",
        ]);
        let question = "Wie skaliere ich Anwendungen?";
        let de = Lang::from_tag("de").expect("German is read");
        // Read as English, `wie` is a word both share and `Anwendungen` no
        // word of the other's; read as German, `wie` is a stop word and both
        // forms of `Anwendung` are one term.
        assert_eq!(
            quoted(question, &pool, None, 1)[0],
            vec!["Wie Sie Ihre Daten sichern, steht im nächsten Abschnitt dieser Seite."]
        );
        assert_eq!(
            quoted_in(question, de, &pool, None, 1)[0],
            vec!["Eine Anwendung skaliert man mit einem Deployment und mehreren Replikaten."]
        );
    }

    #[test]
    fn a_dotted_identifier_finds_the_sentence_that_names_its_last_part() {
        let layout = "## `ConditionalRender` Component\n\nThe `ConditionalRender` component is a wrapper that renders its child only when a condition holds.\n\nThe example above would hide breadcrumbs on the root `index.md` page.\n";
        let pool = pool(&[layout]);
        let q = quoted("What does `Component.ConditionalRender` do?", &pool, None, 1);
        assert_eq!(
            q.first().map(Vec::as_slice),
            Some(
                &["The `ConditionalRender` component is a wrapper that renders its child only when a condition holds."
                    .to_string()][..]
            ),
            "{q:?}"
        );
    }

    const EDUROAM: &str = "## Setting up your device\n\nDownload the installer for your system.\n\n**Windows**\n\n1. Run the downloaded installer.\n2. Choose eduroam in the Wi-Fi menu of the taskbar.\n\n**macOS**\n\n1. Open the downloaded profile.\n2. Install the profile in System Settings.\n3. Select eduroam from the Wi-Fi menu.\n\n**Linux**\n\n1. Run the Python installer from a terminal.\n2. Connect to eduroam with nmcli.\n";

    #[test]
    fn the_platform_asked_about_gets_its_steps_in_order() {
        let pool = pool(&[EDUROAM]);
        let q = quoted("How do I connect my MacBook to eduroam?", &pool, None, 4);
        assert_eq!(
            q[0],
            vec![
                "Open the downloaded profile.",
                "Install the profile in System Settings.",
                "Select eduroam from the Wi-Fi menu."
            ],
            "{q:?}"
        );
        assert!(q.iter().flatten().all(|s| !s.contains("taskbar") && !s.contains("nmcli")), "{q:?}");
        // Without a platform, no list is preferred over another for its platform.
        let q = quoted("How do I connect to eduroam?", &pool, None, 4);
        assert!(q.iter().flatten().any(|s| s.contains("taskbar") || s.contains("nmcli")), "{q:?}");
    }

    #[test]
    fn a_lead_in_is_quoted_with_what_it_leads_or_not_at_all() {
        let pool = pool(&["## Connection settings\n\nUse these eduroam settings if your device asks:\n\n```text\nNetwork (SSID): eduroam\nSecurity: WPA2/WPA3-Enterprise\nEAP method: PEAP\nPhase 2 auth: MSCHAPv2\n```\n\nYour eduroam identity must include the domain.\n"]);
        let q = quoted("eduroam settings", &pool, None, 4);
        assert_eq!(q, vec![vec!["Your eduroam identity must include the domain.".to_string()]], "{q:?}");
    }

    #[test]
    fn platforms_are_named_by_their_words_not_by_look_alikes() {
        assert_eq!(platforms("my MacBook Pro"), vec![Platform::Mac]);
        assert_eq!(platforms("Ubuntu 24.04 or Windows 11"), vec![Platform::Linux, Platform::Windows]);
        assert!(platforms("my open windows and the device's MAC address").is_empty());
        assert_eq!(platforms("on an iPhone"), vec![Platform::Ios]);
    }

    #[test]
    fn code_without_its_fence_is_not_quoted() {
        // A Docusaurus page's config that reached a chunk as prose.
        assert!(looks_like_code(
            "{ className: 'theme-code-block-highlighted-line', line: 'highlight-next-line', block: {start: 'highlight-start', end: 'highlight-end'}, }, // highlight-start { className: 'code-block-error-line', line: 'This will error', }, // highlight-end, }, }, };"
        ));
        assert!(!looks_like_code("Use `{ className: 'x', line: 'y' }` in the config (see the docs)."));
        assert!(!looks_like_code("Symptom: `VPN-504 Gateway unreachable`; Try: run `nbvpn connect --tcp`"));
        assert!(!looks_like_code(
            "The command creates a file where you can add a list of extensions identifiers ({publisherName}.{extensionName})."
        ));
    }

    #[test]
    fn money_is_an_amount_with_a_currency() {
        assert!(names_money("Fall only: $230"));
        assert!(names_money("costs 15 EUR per month"));
        assert!(!names_money("Lot C2 and level 3"));
    }

    #[test]
    fn the_budget_holds_and_nothing_is_quoted_twice() {
        let pool = pool(&[PARKING, PARKING, VISITORS]);
        let q = quoted("parking permit price semester", &pool, None, 4);
        let all: Vec<&String> = q.iter().flatten().collect();
        assert!(all.len() <= 6, "{q:?}");
        let unique: HashSet<&&String> = all.iter().collect();
        assert_eq!(unique.len(), all.len(), "{q:?}");
    }
}
