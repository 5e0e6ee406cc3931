//! Snippets for results: the most query-dense window of a chunk's display text,
//! Markdown stripped, HTML-escaped, query terms wrapped in `<mark>`.

use std::collections::HashMap;

use super::analyzer;
use super::lang::Lang;

/// Words of a snippet window.
const WINDOW: usize = 40;
/// Units of a window over Chinese or Japanese text, a character each: about
/// as much text as [`WINDOW`] words (two characters read as a word).
const UNSPACED_WINDOW: usize = 2 * WINDOW;

/// Markdown → plain text: links and images keep their text, emphasis, code,
/// heading, table and blockquote markers go. Used for snippets here and for page
/// summaries by the site builder.
pub fn plain_text(text: &str) -> String {
    // Blockquote markers only count at the start of a line.
    let unquoted: String = text.lines().map(|l| l.trim_start().trim_start_matches('>')).collect::<Vec<_>>().join("\n");
    let mut out = String::with_capacity(text.len());
    let mut chars = unquoted.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ']' if chars.peek() == Some(&'(') => {
                for c in chars.by_ref() {
                    if c == ')' {
                        break;
                    }
                }
            }
            '!' if chars.peek() == Some(&'[') => {}
            '[' | ']' | '*' | '`' | '#' | '|' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// What a snippet is cut from and marked in: a word written between spaces,
/// or one character of a script written without them (Chinese, Japanese,
/// whose runs the analyzer reads in pairs), with the rest of its word (the
/// Latin word or the punctuation beside it) as units of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Unit<'a> {
    text: &'a str,
    /// It begins a line (a heading, an item, a row).
    line_start: bool,
    /// It follows the unit before with no space (the pieces of one word).
    glued: bool,
    /// One character read in pairs with its neighbours.
    paired: bool,
}

/// The units of `plain` (from [`plain_text`]), without rule-like runs
/// (`---`, `===`).
fn plain_words(plain: &str) -> Vec<Unit<'_>> {
    let mut out = Vec::new();
    for line in plain.lines() {
        for (i, w) in line.split_whitespace().enumerate() {
            if w.chars().all(|c| c == '-' || c == '=' || c == ':') {
                continue;
            }
            if w.is_ascii() || !w.chars().any(analyzer::is_paired) {
                out.push(Unit { text: w, line_start: i == 0, glued: false, paired: false });
            } else {
                split_unspaced(w, i == 0, &mut out);
            }
        }
    }
    out
}

/// Pushes word `w`'s units: each character read in pairs alone, each run of
/// the others together, all but the first glued to the one before.
fn split_unspaced<'a>(w: &'a str, line_start: bool, out: &mut Vec<Unit<'a>>) {
    let first = out.len();
    let mut run: Option<usize> = None;
    for (at, c) in w.char_indices() {
        // Punctuation stands alone too: `,Pod` is a comma and a word.
        let alone = analyzer::is_paired(c) || !(c.is_alphanumeric() || analyzer::IDENT_PUNCT.contains(&c));
        if alone {
            if let Some(r) = run.take() {
                out.push(Unit { text: &w[r..at], line_start: false, glued: true, paired: false });
            }
            let paired = analyzer::is_paired(c);
            out.push(Unit { text: &w[at..at + c.len_utf8()], line_start: false, glued: true, paired });
        } else if run.is_none() {
            run = Some(at);
        }
    }
    if let Some(r) = run {
        out.push(Unit { text: &w[r..], line_start: false, glued: true, paired: false });
    }
    if let Some(u) = out.get_mut(first) {
        u.line_start = line_start;
        u.glued = false;
    }
}

/// Whether `unit` is a hiragana character.
fn hiragana(unit: &str) -> bool {
    unit.chars().all(|c| ('\u{3041}'..='\u{309F}').contains(&c))
}

/// The marks that end a sentence in Chinese and Japanese, full-width and with
/// no space after them (`。`, `！`, `？`): what every reader of sentences in
/// the workspace splits at besides `. `, `! ` and `? `.
pub const UNSPACED_ENDS: [char; 3] = ['。', '！', '？'];

/// Whether `word` ends a sentence (or the clause before a colon).
fn ends_sentence(word: &str) -> bool {
    let ends = word.ends_with(['.', '!', '?', ':', '：']) || word.ends_with(UNSPACED_ENDS);
    ends && !word.ends_with("..")
}

/// How far before the window's first match a snippet may start, to begin at
/// the start of that match's sentence.
const LEAD: usize = 16;

/// `start`, moved to the start of the sentence or line that holds the
/// window's first match when that is at most [`LEAD`] words before the match
/// and the window keeps every match it had (a window at the text's start
/// stays there): "Drops after 23:59 on September 8
/// are treated…" rather than "… 8 are treated…".
fn sentence_start(words: &[Unit], hit: &[Option<usize>], start: usize, window: usize) -> usize {
    if start == 0 {
        // The text's own beginning (its heading) is the best start there is.
        return 0;
    }
    let end = (start + window).min(words.len());
    let Some(first) = (start..end).find(|&i| hit[i].is_some()) else { return start };
    let last = (start..end).rev().find(|&i| hit[i].is_some()).unwrap_or(first);
    let begins = |i: usize| i == 0 || words[i].line_start || ends_sentence(words[i - 1].text);
    // A sentence of Chinese or Japanese is counted in characters.
    let lead = if window == UNSPACED_WINDOW { 2 * LEAD } else { LEAD };
    match (first.saturating_sub(lead)..=first).rev().find(|&i| begins(i)) {
        Some(s) if last < s + window => s,
        _ => start,
    }
}

/// Whether `text` has characters of a script written without spaces between
/// words (Chinese characters, Japanese kana).
pub fn has_unspaced(text: &str) -> bool {
    text.chars().any(unspaced)
}

/// Whether `c` is of a script written without spaces between words
/// (Chinese characters, Japanese kana). Narrower than
/// [`analyzer::is_paired`], which also reads hangul in pairs: Korean writes
/// spaces between its words, so they are counted as words are.
fn unspaced(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xf900..=0xfaff | 0xff66..=0xff9f)
}

/// Half-words of `s` up to each of its characters: a word written between
/// spaces counts 2 where it starts, a character of a script written without
/// spaces 1 (two such characters read as a word).
fn half_words(s: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut prev_spaced_word = false;
    let mut n = 0;
    s.char_indices().map(move |(i, c)| {
        if unspaced(c) {
            n += 1;
            prev_spaced_word = false;
        } else if c.is_whitespace() || is_unspaced_punctuation(c) {
            prev_spaced_word = false;
        } else if !prev_spaced_word {
            n += 2;
            prev_spaced_word = true;
        }
        (i, n)
    })
}

/// The full-width punctuation of Chinese and Japanese text, which separates
/// words as a space does.
fn is_unspaced_punctuation(c: char) -> bool {
    matches!(c as u32, 0x3000..=0x303f | 0xff01..=0xff0f | 0xff1a..=0xff20)
}

/// The words of `s` as a reader counts them: those between spaces, and two
/// characters of Chinese or Japanese for one (those scripts put no space
/// between words, so a sentence would otherwise count as one word and be
/// dropped as too short to quote).
pub fn word_count(s: &str) -> usize {
    if !has_unspaced(s) {
        return s.split_whitespace().count();
    }
    half_words(s).last().map_or(0, |(_, n)| n.div_ceil(2))
}

/// `text` cut to its first `n` [`word_count`] words, with `…` where cut.
pub fn cut_words(text: &str, n: usize) -> String {
    if !has_unspaced(text) {
        let words: Vec<&str> = text.split_whitespace().collect();
        return if words.len() > n { format!("{} …", words[..n].join(" ")) } else { text.to_string() };
    }
    match half_words(text).find(|&(_, h)| h > 2 * n) {
        Some((at, _)) => format!("{}…", text[..at].trim_end()),
        None => text.to_string(),
    }
}

/// HTML-escapes `s` by the workspace's one rule (`&`, `<`, `>`, `"` and `'`):
/// the `html-escape` crate's `encode_quoted_attribute`, which the build and the
/// dialects call. The engine writes the loop itself because the crate costs the
/// browser engine 434 bytes (lexical) and 1,371 (semantic); a test checks that
/// the two agree.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}

/// A snippet of `text` for `query`: at most 40 words, `…` where cut, matches marked.
/// For several texts and one query (a page of results), [`Highlighter`] does
/// the query's work once.
pub fn snippet(text: &str, query: &str) -> String {
    Highlighter::new(query).snippet(text)
}

/// Cuts snippets for one query: the query analysed once, and every word met in
/// any of its texts judged once.
///
/// Snippets were most of what a BM25 query cost at the edge (ten per page of
/// results, each word of each chunk through the analyzer and its stemmer), so
/// most words are dismissed without the analyzer (`may_match`),
/// and whether a word matches is remembered across the page. The window is
/// found in one sliding pass over counts rather than a set built per window.
/// (docs/benchmarks/edge-load.md, "Snippets judged before the analyzer".)
pub struct Highlighter {
    /// The query's terms, each with its number.
    query: HashMap<String, usize>,
    /// What a term is worth in a window (its number's place): 1 each, or the
    /// weights [`Highlighter::weighted`] was given, in thousandths.
    weights: Vec<u32>,
    /// How the query's ASCII terms begin.
    heads: Heads,
    /// Whether the query has exact (identifier) terms, `=` and the piece.
    exact: bool,
    /// Whether a word, as written in a text of a language, yields a query
    /// term: the best one's number.
    judged: HashMap<(Lang, String), Option<usize>>,
}

impl Highlighter {
    /// A highlighter whose windows count the query's distinct terms.
    pub fn new(query: &str) -> Highlighter {
        Highlighter::weighted(query, |_| 1.0)
    }

    /// [`Highlighter::weighted`] by the ranking's own term weights
    /// ([`super::Candidates::weights`]: (term, idf) of the terms the chunks
    /// have); a term without one is worth the least.
    ///
    /// The terms marked are the ranking's, as it read the query: a German
    /// question's in German, where *die* and *des* are stop words (read in
    /// English, *die* is a word, and every German snippet marked it). With no
    /// weights (a dense search reads no words), the query's English reading.
    pub fn by_idf(query: &str, idf: &[(String, f32)]) -> Highlighter {
        let weight = |t: &str| idf.iter().find(|w| w.0 == t).map_or(0.0, |w| w.1);
        if idf.is_empty() {
            return Highlighter::weighted(query, weight);
        }
        // The query's English terms keep their order (it breaks ties) where
        // the ranking has them; the ranking's others follow.
        let mut terms: Vec<String> = analyzer::terms(query).into_iter().filter(|t| weight(t) > 0.0).collect();
        let rest: Vec<String> = idf.iter().map(|w| w.0.clone()).filter(|t| !terms.contains(t)).collect();
        terms.extend(rest);
        Highlighter::of_terms(terms, weight)
    }

    /// A highlighter whose windows are worth the `weight` of the distinct query
    /// terms they hold: with the terms' idf, a window with the query's rare word
    /// beats one with two common ones ("drop a class and get my money back" is
    /// about `drop`, not `get` and `class`).
    pub fn weighted(query: &str, weight: impl Fn(&str) -> f32) -> Highlighter {
        Highlighter::of_terms(analyzer::terms(query), weight)
    }

    /// A highlighter of `terms`, numbered in their order, each worth its
    /// `weight`.
    fn of_terms(terms: Vec<String>, weight: impl Fn(&str) -> f32) -> Highlighter {
        let mut numbered: HashMap<String, usize> = HashMap::new();
        for t in terms {
            let next = numbered.len();
            numbered.entry(t).or_insert(next);
        }
        let mut weights = vec![0u32; numbered.len()];
        for (t, &i) in &numbered {
            // Thousandths, at least one: windows compare exact integer sums, and
            // a term that matched still counts for something.
            weights[i] = (weight(t).clamp(0.0, 1e6) * 1000.0).round().max(1.0) as u32;
        }
        let mut heads = Heads { single: [false; 128], pairs: [0; 256] };
        for t in numbered.keys().map(|t| t.as_bytes()) {
            match *t {
                [a] if a.is_ascii() => heads.single[usize::from(a)] = true,
                [a, b, ..] if a.is_ascii() && b.is_ascii() => {
                    heads.add(a, b);
                    // Snowball's exceptions spell "dying" "die" (also lying, tying).
                    if b == b'i' {
                        heads.add(a, b'y');
                    }
                }
                _ => {}
            }
        }
        let exact = numbered.keys().any(|t| t.starts_with('='));
        Highlighter { query: numbered, weights, heads, exact, judged: HashMap::new() }
    }

    /// False when `word` cannot yield a query term, judged without the analyzer.
    ///
    /// Most words of a page match nothing, and the analyzer (folding, the word
    /// rules, the stemmer) is most of a snippet's cost. For an ASCII word every
    /// term the analyzer makes begins at a word start (the first character, or
    /// one after a character that is not a letter or digit) with that word's
    /// first two characters, lowercased: the word rules never start a word
    /// inside a run of letters and digits, and Snowball leaves words of two
    /// letters alone and only rewrites a longer word's end (its initial `y` is
    /// marked and restored; but "dying", "lying" and "tying" are exceptions
    /// stemmed "die", "lie", "tie"). A term of one character is looked for as one.
    /// Exact terms (`=` and the whole piece) are left to the analyzer whenever
    /// the word has identifier punctuation, and non-ASCII words always are. A
    /// unit test checks this against the analyzer on random words.
    fn may_match(&self, word: &str) -> bool {
        let b = word.as_bytes();
        if !word.is_ascii() || (self.exact && b.iter().any(|c| analyzer::IDENT_PUNCT.contains(&char::from(*c)))) {
            return true;
        }
        (0..b.len()).any(|i| {
            let c = b[i].to_ascii_lowercase();
            (c.is_ascii_alphanumeric() || c == b'_')
                && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
                && (self.heads.single[usize::from(c)]
                    || b.get(i + 1).is_some_and(|&d| self.heads.pair(c, d.to_ascii_lowercase())))
        })
    }

    /// The number of the most weighty query term `word` (of a text in
    /// `lang`) yields, if any. Only English reading (Latin words of Chinese,
    /// Japanese and Korean texts included) is judged before the analyzer: the
    /// other languages' rules (elision, folding, Finnish gradation) are not
    /// held to [`Highlighter::may_match`]'s promise.
    fn matches(&mut self, word: &str, lang: Lang) -> Option<usize> {
        if (lang == Lang::EN || lang.is_cjk()) && !self.may_match(word) {
            return None;
        }
        let key = (lang, word.to_string());
        if let Some(&m) = self.judged.get(&key) {
            return m;
        }
        let m = analyzer::terms_in(word, lang)
            .iter()
            .filter_map(|t| self.query.get(t).copied())
            .max_by_key(|&i| (self.weights[i], std::cmp::Reverse(i)));
        self.judged.insert(key, m);
        m
    }

    /// A snippet of `text`: at most 40 words, `…` where cut, matches marked.
    pub fn snippet(&mut self, text: &str) -> String {
        self.snippet_in(text, Lang::EN)
    }

    /// A snippet of `text`, written in `lang` and read as the index read it.
    pub fn snippet_in(&mut self, text: &str, lang: Lang) -> String {
        let plain = plain_text(text);
        let words = plain_words(&plain);
        let mut hit: Vec<Option<usize>> =
            words.iter().map(|u| if u.paired { None } else { self.matches(u.text, lang) }).collect();
        self.match_pairs(&words, &mut hit, lang);
        render(&words, &hit, &self.weights)
    }

    /// Marks the characters of runs read in pairs: both characters of each
    /// pair that is a query term (a run of one character, itself), but for
    /// hiragana, which writes Japanese particles and endings (`の`, `して`):
    /// `データとして` marks `データ`, though the question's `タと` and `して`
    /// are pairs the page has too.
    fn match_pairs(&mut self, words: &[Unit], hit: &mut [Option<usize>], lang: Lang) {
        let mut i = 0;
        while i < words.len() {
            if !words[i].paired {
                i += 1;
                continue;
            }
            let mut end = i + 1;
            while end < words.len() && words[end].paired && words[end].glued {
                end += 1;
            }
            if end - i == 1 {
                hit[i] = self.matches(words[i].text, lang);
            }
            for a in i..end.saturating_sub(1) {
                let pair = [words[a].text, words[a + 1].text].concat();
                let Some(m) = self.matches(&pair, lang) else { continue };
                for (h, u) in hit[a..a + 2].iter_mut().zip(&words[a..a + 2]) {
                    if !hiragana(u.text) && h.is_none_or(|o| self.weights[m] > self.weights[o]) {
                        *h = Some(m);
                    }
                }
            }
            i = end;
        }
    }
}

/// The first characters of a query's ASCII terms: terms of one character, and
/// the first two of longer ones (a bit per pair of ASCII characters).
struct Heads {
    single: [bool; 128],
    pairs: [u64; 256],
}

impl Heads {
    fn add(&mut self, a: u8, b: u8) {
        let i = usize::from(a & 0x7f) << 7 | usize::from(b & 0x7f);
        self.pairs[i / 64] |= 1 << (i % 64);
    }

    fn pair(&self, a: u8, b: u8) -> bool {
        let i = usize::from(a & 0x7f) << 7 | usize::from(b & 0x7f);
        self.pairs[i / 64] & (1 << (i % 64)) != 0
    }
}

/// The best window of `words` as HTML, its matching words marked (a run of
/// matching characters of Chinese or Japanese in one mark).
fn render(words: &[Unit], hit: &[Option<usize>], weights: &[u32]) -> String {
    let paired = words.iter().filter(|u| u.paired).count();
    let window = if 2 * paired > words.len() { UNSPACED_WINDOW } else { WINDOW };
    let start = sentence_start(words, hit, best_window(hit, weights, window), window);
    let end = (start + window).min(words.len());
    let mut out = String::new();
    if start > 0 {
        out.push_str("… ");
    }
    // Whether a mark over characters read in pairs is open.
    let mut open = false;
    for i in start..end {
        let u = words[i];
        if open && !(u.paired && u.glued && hit[i].is_some()) {
            out.push_str("</mark>");
            open = false;
        }
        if i > start && !u.glued {
            out.push(' ');
        }
        if hit[i].is_some() && u.paired {
            if !open {
                out.push_str("<mark>");
                open = true;
            }
            out.push_str(&escape(u.text));
        } else if hit[i].is_some() {
            push_marked(&mut out, u.text);
        } else {
            out.push_str(&escape(u.text));
        }
    }
    if open {
        out.push_str("</mark>");
    }
    if end < words.len() {
        out.push_str(" …");
    }
    out
}

/// Pushes `w` marked. Sentence punctuation around the word stays outside the
/// mark ("<mark>permit</mark>."); a word that is all punctuation, or an
/// identifier's inner punctuation ("--gres=…"), is marked whole.
fn push_marked(out: &mut String, w: &str) {
    let core = w.trim_start_matches(['(', '"', '\'']).trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '"', '\'']);
    let (lead, core, trail) = match w.find(core) {
        Some(at) if !core.is_empty() => (&w[..at], core, &w[at + core.len()..]),
        _ => ("", w, ""),
    };
    out.push_str(&escape(lead));
    out.push_str("<mark>");
    out.push_str(&escape(core));
    out.push_str("</mark>");
    out.push_str(&escape(trail));
}

/// The start of the `window`-unit window whose distinct query terms weigh
/// the most, earliest on a tie; `hit[i]` is the number of the query term unit
/// `i` yields, `weights` what each number is worth. Windows start at
/// 0 .. len − window (a single window when the text is short).
fn best_window(hit: &[Option<usize>], weights: &[u32], window: usize) -> usize {
    let starts = hit.len().saturating_sub(window).max(1).min(hit.len().max(1));
    let mut count = vec![0u32; weights.len()];
    let mut worth = 0u64;
    // Word `i` enters (+1) or leaves (−1) the window.
    let mut slide = |i: usize, enter: bool, worth: &mut u64| {
        if let Some(&Some(id)) = hit.get(i) {
            let w = u64::from(weights.get(id).copied().unwrap_or(0));
            if enter {
                count[id] += 1;
                *worth += if count[id] == 1 { w } else { 0 };
            } else {
                count[id] -= 1;
                *worth -= if count[id] == 0 { w } else { 0 };
            }
        }
    };
    for i in 0..window.min(hit.len()) {
        slide(i, true, &mut worth);
    }
    let mut best = (0usize, worth);
    for start in 1..starts {
        slide(start - 1, false, &mut worth);
        slide(start + window - 1, true, &mut worth);
        if worth > best.1 {
            best = (start, worth);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// A German question's snippet marks its words as German reads them (a
    /// noun without its case ending), not its stop words, which English reads
    /// as words ("die").
    #[cfg(feature = "languages")]
    #[test]
    fn a_german_query_marks_german_words_not_its_stop_words() {
        let de = Lang::from_tag("de").unwrap();
        let q = "Wo speichert Kubernetes die Daten des Clusters";
        let weights: Vec<(String, f32)> = analyzer::terms_in(q, de).into_iter().map(|t| (t, 1.0)).collect();
        let text = "Die Daten des Clusters liegen in etcd. Kubernetes speichert die Zustände der Cluster dort.";
        let s = Highlighter::by_idf(q, &weights).snippet_in(text, de);
        assert!(!s.contains(">Die<") && !s.contains(">die<") && !s.contains(">des<"), "{s}");
        assert!(s.contains("<mark>speichert</mark>") && s.contains("<mark>Cluster</mark>"), "{s}");
        assert!(snippet(text, q).contains("<mark>die</mark>"), "read in English, as before");
    }

    #[test]
    fn the_sliding_window_finds_what_a_set_per_window_finds() {
        // Pseudo-random texts of 0..150 words, 1..6 query terms of random worth.
        let mut seed = 7u32;
        let mut next = |m: u32| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) % m
        };
        for _ in 0..2_000 {
            let (n, terms) = (next(150) as usize, next(6) as usize + 1);
            let weights: Vec<u32> = (0..terms).map(|_| next(5_000) + 1).collect();
            let hit: Vec<Option<usize>> = (0..n).map(|_| (next(4) == 0).then(|| next(terms as u32) as usize)).collect();
            let starts = n.saturating_sub(WINDOW).max(1).min(n.max(1));
            let mut want = (0, 0);
            for start in 0..starts {
                let d: HashSet<usize> = hit[start..(start + WINDOW).min(n)].iter().flatten().copied().collect();
                let worth: u32 = d.iter().map(|&i| weights[i]).sum();
                if worth > want.1 {
                    want = (start, worth);
                }
            }
            assert_eq!(best_window(&hit, &weights, WINDOW), want.0, "{hit:?} {weights:?}");
        }
    }

    #[test]
    fn a_rare_word_outweighs_common_ones() {
        let text = format!(
            "{} get a class schedule class get {} a full refund when you drop {}",
            "filler ".repeat(60),
            "filler ".repeat(60),
            "tail ".repeat(60)
        );
        let q = "drop a class and get my money back";
        // Counted, the window with `get` and `class` wins (two terms to one)…
        assert!(snippet(&text, q).contains("<mark>class</mark>"));
        // …weighted by rarity, the one with `drop`.
        let rare = |t: &str| if t == "drop" { 3.0 } else { 0.5 };
        let s = Highlighter::weighted(q, rare).snippet(&text);
        assert!(s.contains("<mark>drop</mark>") && !s.contains("<mark>class</mark>"), "{s}");
    }

    #[test]
    fn the_quick_judgement_never_drops_a_match() {
        // Every term the analyzer makes of a word must pass the quick check of
        // a query made of that term alone. Words from letters (with the
        // stemmer's favourite endings), digits and the punctuation the word
        // rules care about, and a few non-ASCII ones.
        let pieces = [
            "a", "e", "i", "y", "s", "t", "n", "x", "z", "ies", "ied", "ing", "ly", "ed", "'s", "'", "sses", "eed",
            "ation", "ness", "7", "0", "_", "-", "=", ":", ".", "/", "@", "#", ",", ";", "(", ")", "\"", "é", "ß", "’",
            "日", "Y", "Sk", "Dy", "gen", "tly", "o'", "ab", "ss", "us", "L", "T", "be", "id", "ug", "ear", "on",
            "sing",
        ];
        let mut seed = 11u32;
        let mut next = |m: u32| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) % m
        };
        let mut checked = 0;
        for _ in 0..60_000 {
            let n = next(5) + 1;
            let word: String = (0..n).map(|_| pieces[next(pieces.len() as u32) as usize]).collect();
            for t in analyzer::terms(&word) {
                let h = Highlighter::new(&t);
                // A term the analyzer changes when analysed again (a stem that is
                // a stop word, say) cannot be a query term on its own.
                if h.query.contains_key(&t) {
                    assert!(h.may_match(&word), "{word:?} yields {t:?}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
        // And the words of real prose, each against its own terms.
        let prose = "Skies dying lying tying early only gently ugly news yelling Yes you're don't e.g. \
            3.14 1,000 q_fiqci --gres=nvme:100 (virtual) permit. Permits re-run __init__ _private";
        for word in prose.split_whitespace() {
            for t in analyzer::terms(word) {
                let h = Highlighter::new(&t);
                if h.query.contains_key(&t) {
                    assert!(h.may_match(word), "{word:?} yields {t:?}");
                }
            }
        }
    }

    #[test]
    fn one_highlighter_cuts_what_a_snippet_each_cuts() {
        let texts = [
            "Every car needs a valid permit. Permits (virtual) are read daily.",
            "## Set up\n\nConnect to **eduroam** with your [NetID](id.md) <b>now</b>.",
            "Use `--gres=nvme:100` to get a permit for local disk on the nodes",
        ];
        for q in ["permit virtual", "eduroam netid", "--gres=nvme:100 disk", "daily permits now"] {
            let mut h = Highlighter::new(q);
            for t in texts {
                assert_eq!(h.snippet(t), snippet(t, q), "{q} / {t}");
            }
        }
    }

    #[test]
    fn hostile_queries_and_texts_stay_text() {
        // Markup in a matched word (the quick judgement lets `<script>…` through
        // to the analyzer), in the query, and in the rest of the window; then
        // inside Chinese or Japanese text, cut by the character.
        let latin = "Never paste <script>alert(1)</script> or \"><img src=x onerror=alert(1)> into the form.";
        let unspaced = "日本語<script>alert(1)</script>の説明、\"><img src=x onerror=alert(1)>を貼らないでください。";
        for (text, queries) in [
            (latin, ["<script>alert(1)</script>", "script onerror", "\"><img src=x>", "paste"]),
            (unspaced, ["日本語", "説明", "<script>", "貼らない"]),
        ] {
            for q in queries {
                let s = snippet(text, q);
                assert!(s.contains("<mark>"), "{q}: {s}");
                let bare = s.replace("<mark>", "").replace("</mark>", "");
                assert!(!bare.contains('<') && !bare.contains('>') && !bare.contains('"'), "{q}: {s}");
            }
        }
        let text = latin;
        // Malformed and oversized queries cut a plain snippet.
        for q in ["", "\u{0}\u{1b}[31m", "\u{fffd}\u{200b}", &"a".repeat(10_000), &"é日-_=".repeat(500)] {
            let s = snippet(text, q);
            assert!(!s.contains("<mark>") && s.starts_with("Never paste &lt;script&gt;"), "{s}");
        }
    }

    #[test]
    fn marks_query_terms_and_escapes() {
        let s = snippet("## Set up\n\nConnect to **eduroam** with your [NetID](id.md) <b>now</b>.", "eduroam netid");
        assert_eq!(s, "Set up Connect to <mark>eduroam</mark> with your <mark>NetID</mark> &lt;b&gt;now&lt;/b&gt;.");
        // Both quotes too: a snippet is safe in an attribute of either kind.
        let s = snippet("Ask O'Brien about \"eduroam\" & more", "eduroam");
        assert_eq!(s, "Ask O&#x27;Brien about &quot;<mark>eduroam</mark>&quot; &amp; more");
    }

    #[test]
    fn the_escape_is_the_workspaces_one_rule() {
        let specials = ['&', '<', '>', '"', '\'', '/', '=', '`', ' ', 'é', '日', '\u{0}', '\u{1f600}', 'a'];
        let mut state = 7u32;
        for len in 0..200 {
            let text: String = (0..len)
                .map(|_| {
                    state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    specials[(state >> 16) as usize % specials.len()]
                })
                .collect();
            assert_eq!(escape(&text), html_escape::encode_quoted_attribute(&text), "{text:?}");
        }
    }

    #[test]
    fn picks_the_window_with_the_matches() {
        let text = format!("{} the quota command shows disk usage {}", "filler ".repeat(100), "tail ".repeat(100));
        let s = snippet(&text, "quota usage");
        assert!(s.starts_with("… ") && s.ends_with(" …"), "{s}");
        assert!(s.contains("<mark>quota</mark>") && s.contains("<mark>usage</mark>"), "{s}");
        assert!(s.split(' ').count() <= WINDOW + 2);
    }

    #[test]
    fn a_snippet_starts_with_the_sentence_of_its_first_match() {
        let text = format!(
            "{} Drops after 23:59 on September 8 are treated as withdrawals and refunded by the schedule. {}",
            "Filler words here. ".repeat(30),
            "More filler words. ".repeat(30)
        );
        let s = snippet(&text, "refund");
        assert!(s.starts_with("… Drops after 23:59"), "{s}");
        assert!(s.contains("<mark>refunded</mark>"), "{s}");
        // A line (a heading, an item, a row) starts a sentence too.
        let text = format!("{}\n| Drop with 100% refund | September 8 |\n{}", "cell ".repeat(80), "tail ".repeat(80));
        assert!(
            snippet(&text, "refund").starts_with("… Drop with 100% <mark>refund</mark>"),
            "{}",
            snippet(&text, "refund")
        );
        // Never at the cost of a match the window had.
        let text = format!(
            "{}. {} permit {} virtual plate {}",
            "a".repeat(3),
            "x ".repeat(15),
            "y ".repeat(22),
            "z ".repeat(50)
        );
        let s = snippet(&text, "permit virtual plate");
        assert!(s.contains("<mark>permit</mark>") && s.contains("<mark>plate</mark>"), "{s}");
    }

    #[test]
    fn chinese_and_japanese_count_two_characters_a_word() {
        assert_eq!(word_count("Kubernetesのドキュメント"), 5);
        assert_eq!(word_count("一貫性、高可用性"), 4);
        assert_eq!(word_count("three plain words"), 3);
        // English is cut as before; Japanese at the character where the count passes.
        assert_eq!(cut_words("one two three", 2), "one two …");
        assert_eq!(cut_words("あいうえおかきくけこ", 2), "あいうえ…");
        assert_eq!(cut_words("あいう", 2), "あいう");
    }

    #[test]
    fn japanese_is_cut_and_marked_by_the_character() {
        let filler = "オペレーターを使い自動化できるいくつかのことは、下記のようなものがあります。".repeat(4);
        let text = format!(
            "{filler}etcdをデータストアとして使用する場合、必ずデータのバックアッププランを作成して下さい。{filler}"
        );
        let s = snippet(&text, "バックアップ");
        assert_eq!(snippet("データとして使用します", "データとして"), "<mark>データ</mark>として使用します");
        // One mark over the word, not the sentence or the text around it.
        assert!(s.contains("<mark>バックアップ</mark>プラン"), "{s}");
        assert_eq!(s.matches("<mark>").count(), 1, "{s}");
        // A window about as long as forty words, started at the sentence.
        assert!(s.starts_with("… etcdを"), "{s}");
        assert!(s.ends_with(" …") && s.chars().count() <= UNSPACED_WINDOW + 30, "{} {s}", s.chars().count());
    }

    #[test]
    fn chinese_pairs_mark_both_characters_and_latin_words_keep_their_spaces() {
        let s = snippet("在 Kubernetes 中,Pod 是可以创建和管理的最小部署单元。", "最小 部署 Pod");
        assert_eq!(s, "在 Kubernetes 中,<mark>Pod</mark> 是可以创建和管理的<mark>最小部署</mark>单元。");
    }

    #[test]
    fn punctuation_stays_outside_the_mark() {
        let s = snippet("Every car needs a valid permit. Permits (virtual) are read daily.", "permit virtual");
        assert!(s.contains("<mark>permit</mark>. <mark>Permits</mark> (<mark>virtual</mark>)"), "{s}");
    }

    #[test]
    fn identifiers_are_marked() {
        assert!(snippet("Use `--gres=nvme:100` please", "--gres=nvme:100").contains("<mark>--gres=nvme:100</mark>"));
    }
}
