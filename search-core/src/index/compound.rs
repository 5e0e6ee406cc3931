//! Compound words of a query read as the words they are made of: German
//! `Netzwerkrouten`, Dutch `wachtwoordbeheer`, Swedish `lösenordsbyte`, Finnish
//! `salasanapolitiikka`.
//!
//! German, Dutch, the Nordic languages, Finnish, Estonian and Hungarian write
//! compounds as one word, and a reader coins them where the pages do not: a
//! question about *Netzwerkrouten* or a *Verwaltungsserver* over pages that say
//! *Netzwerk*, *Routen*, *Verwaltung* and *Server*. Read whole, the word is one
//! no chunk has: BM25 scores nothing for it, and the lexical "no results" rule
//! counts it against the question (German k8s questions in `bm25`).
//!
//! Splitting goes by the vocabulary, as Koehn and Knight's corpus splitter and
//! Lucene's dictionary decompounder do, with the knowledge base's own terms as
//! the dictionary (no word list to ship): a word of at least [`MIN_LEN`]
//! letters that no chunk has is read as a head and a tail when the head's
//! term (less a linking element: German *Verwaltung·s·server*) and the tail's
//! term are both terms some chunk has; of several splits, the one whose parts
//! are commonest (the geometric mean of their document frequencies).
//!
//! Only the query is split ([`decompound`], in [`super::bm25::read_query`]),
//! and only its words no chunk has: a word some chunk has is searched as
//! written. The browser engine then fetches the shards of a word's possible
//! parts ([`candidates`]) for those words alone, and all three readers (the
//! index, the browser's fragments, the PostgreSQL tier) split alike. Splitting
//! the pages' compounds too (each chunk carrying its compounds' parts beside
//! them, as Lucene's decompounder does at indexing) was measured and left
//! out: on the k8s German sets it found one more page in the top 5 of 30 and
//! moved five others down a place, fused MRR@10 −0.03 and −0.04
//! (docs/benchmarks/languages.md, "Compounds").
//!
//! Two parts at most: a third would make every substring of a word a possible
//! part (the browser would fetch shards for each), and a long compound has a
//! head or tail the pages use as a word (*Netzwerkrichtlinien* + *objekt*).

use super::analyzer;
use super::lang::{Lang, LangStemmer};

/// The shortest head, in letters (*neu*·planung).
pub const MIN_HEAD: usize = 3;
/// The shortest tail, in letters: three-letter tails are mostly suffixes
/// (*-ung*, *-ten*) that some term happens to spell.
pub const MIN_TAIL: usize = 4;
/// The shortest word split.
pub const MIN_LEN: usize = MIN_HEAD + MIN_TAIL;
/// Longer runs of letters are not words (a pasted token).
const MAX_LEN: usize = 40;
/// The most words of one query that may be split: its first this many of
/// [`MIN_LEN`] to [`MAX_LEN`] letters. Each costs up to a few hundred stems
/// and as many vocabulary lookups (rows the PostgreSQL tier fetches for every
/// such word, known or not), and a query of 1,000 characters holds 25 words
/// of 40 letters; the bound keeps that to a few thousand, the same words for
/// every reader.
pub const MAX_WORDS: usize = 6;

/// The linking elements between a compound's parts in `lang` (the empty one
/// first), or `None` when the language does not write compounds as one word.
fn links(lang: Lang) -> Option<&'static [&'static str]> {
    // Without the `languages` feature (the browser's English engine) no
    // language that compounds is read ([`Lang::supported`]): no code for it.
    if !cfg!(feature = "languages") {
        return None;
    }
    Some(match lang.code() {
        // Fugenelemente: Arbeit·s·knoten, Frau·en·arzt, Hund·e·hütte, Kind·er·garten, Herz·ens·wunsch.
        "de" => &["", "s", "es", "n", "en", "e", "er", "ens"],
        "nl" => &["", "s", "e", "en"],
        "sv" => &["", "s", "a", "u", "o", "e"],
        "da" | "no" => &["", "s", "e"],
        "fi" | "et" | "hu" => &[""],
        _ => return None,
    })
}

/// Whether `lang` writes compounds as one word (and so is split here).
pub fn compounds(lang: Lang) -> bool {
    links(lang).is_some()
}

/// The terms of a word's two parts.
#[derive(Debug, Clone, PartialEq)]
struct Split {
    head: String,
    tail: String,
    /// The geometric mean of the parts' document frequencies.
    score: f64,
}

/// Where `word` may be cut: (byte offset, head, tail), heads of at least
/// [`MIN_HEAD`] and tails of at least [`MIN_TAIL`] letters.
fn cuts(word: &str) -> impl Iterator<Item = (&str, &str)> {
    let ends: Vec<usize> = word.char_indices().map(|(i, _)| i).collect();
    let n = ends.len();
    let range = if (MIN_LEN..=MAX_LEN).contains(&n) { MIN_HEAD..n - MIN_TAIL + 1 } else { 0..0 };
    range.map(move |at| word.split_at(ends[at]))
}

/// The heads a head may stand for: itself, and itself less each linking
/// element it ends with, of at least [`MIN_HEAD`] letters.
fn bases<'w>(head: &'w str, links: &'static [&'static str]) -> impl Iterator<Item = &'w str> {
    links.iter().filter_map(move |l| head.strip_suffix(l)).filter(|b| b.chars().count() >= MIN_HEAD)
}

/// The best split of `word` (lowercased, letters only) whose parts' terms
/// both have a document frequency (`df`), if any.
fn best_split(word: &str, lang: Lang, stemmer: Option<&LangStemmer>, df: &dyn Fn(&str) -> usize) -> Option<Split> {
    let links = links(lang)?;
    let mut best: Option<Split> = None;
    for (head, tail) in cuts(word) {
        let tail_term = analyzer::term_of(stemmer, tail);
        let tail_df = df(&tail_term);
        if tail_df == 0 || tail_term.chars().count() < MIN_HEAD {
            continue;
        }
        for base in bases(head, links) {
            let head_term = analyzer::term_of(stemmer, base);
            let head_df = df(&head_term);
            if head_df == 0 || head_term.chars().count() < MIN_HEAD {
                continue;
            }
            let score = (head_df as f64 * tail_df as f64).sqrt();
            if best.as_ref().is_none_or(|b| score > b.score) {
                best = Some(Split { head: head_term, tail: tail_term.clone(), score });
            }
        }
    }
    best
}

/// The words of `query` in `lang` that may be split: the first [`MAX_WORDS`]
/// of its plain words ([`analyzer::plain_words_in`]) long enough to split.
fn splittable(query: &str, lang: Lang) -> impl Iterator<Item = String> {
    let long = |w: &String| (MIN_LEN..=MAX_LEN).contains(&w.chars().count());
    analyzer::plain_words_in(query, lang).into_iter().filter(long).take(MAX_WORDS)
}

/// `reading`, the terms of `query` read in `lang`, with each word no chunk has
/// (`df` 0) read as its parts, when it splits into two terms chunks have.
pub fn decompound(query: &str, lang: Lang, reading: &mut Vec<String>, df: &dyn Fn(&str) -> usize) {
    if !compounds(lang) {
        return;
    }
    let stemmer = lang.stemmer();
    for w in splittable(query, lang) {
        let term = analyzer::term_of(stemmer.as_ref(), &w);
        if df(&term) > 0 {
            continue;
        }
        let Some(split) = best_split(&w, lang, stemmer.as_ref(), df) else { continue };
        reading.retain(|t| *t != term);
        for p in [split.head, split.tail] {
            if !reading.contains(&p) {
                reading.push(p);
            }
        }
    }
}

/// Every term a split of `query`'s words may be made of, in each of `langs`
/// that writes compounds, for the words `unknown` says no chunk has (given
/// their term): what a reader of fragments fetches before [`decompound`] can
/// decide (the browser's shards, the PostgreSQL tier's vocabulary rows).
pub fn candidates(query: &str, langs: &[Lang], unknown: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    for &lang in langs {
        let Some(links) = links(lang) else { continue };
        let stemmer = lang.stemmer();
        for w in splittable(query, lang) {
            if !unknown(&analyzer::term_of(stemmer.as_ref(), &w)) {
                continue;
            }
            for (head, tail) in cuts(&w) {
                out.push(analyzer::term_of(stemmer.as_ref(), tail));
                out.extend(bases(head, links).map(|b| analyzer::term_of(stemmer.as_ref(), b)));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(all(test, feature = "languages"))]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn de() -> Lang {
        Lang::from_tag("de").unwrap()
    }

    /// Document frequencies of the terms of `words` read in `lang`, each word
    /// counted `n` times.
    fn vocabulary(lang: Lang, words: &[(&str, usize)]) -> HashMap<String, usize> {
        let mut df = HashMap::new();
        for (w, n) in words {
            for t in analyzer::terms_in(w, lang) {
                *df.entry(t).or_default() += n;
            }
        }
        df
    }

    #[test]
    fn a_word_no_chunk_has_is_read_as_two_words_chunks_have() {
        let lang = de();
        let df = vocabulary(lang, &[("Verwaltung", 3), ("Server", 9), ("Netzwerk", 4), ("Routen", 2), ("neu", 5)]);
        let df = |t: &str| df.get(t).copied().unwrap_or(0);
        let mut reading = analyzer::terms_in("Welcher Verwaltungsserver richtet Netzwerkrouten ein?", lang);
        decompound("Welcher Verwaltungsserver richtet Netzwerkrouten ein?", lang, &mut reading, &df);
        let want: Vec<String> = analyzer::terms_in("richtet Verwaltung Server Netzwerk Routen", lang);
        let mut got = reading.clone();
        got.sort();
        let mut want = want;
        want.sort();
        assert_eq!(got, want, "{reading:?}");
    }

    #[test]
    fn a_word_chunks_have_or_that_splits_into_unknown_parts_stays_whole() {
        let lang = de();
        let df = vocabulary(lang, &[("Namespace", 40), ("Name", 6), ("Space", 2), ("Daten", 3)]);
        let df = |t: &str| df.get(t).copied().unwrap_or(0);
        for q in ["Namespace", "Zauberdaten", "Datenzauber"] {
            let mut reading = analyzer::terms_in(q, lang);
            let before = reading.clone();
            decompound(q, lang, &mut reading, &df);
            assert_eq!(reading, before, "{q}");
        }
        // English is not split, whatever its vocabulary.
        let mut reading = analyzer::terms_in("namedaten", Lang::EN);
        decompound("namedaten", Lang::EN, &mut reading, &df);
        assert_eq!(reading, analyzer::terms_in("namedaten", Lang::EN));
    }

    #[test]
    fn the_commonest_parts_win_and_a_linking_element_goes() {
        let lang = de();
        // Arbeit·s·knoten: "arbeit" + "knoten" (the linking s dropped), not
        // "arbeits" + "knoten" read as another word, nor "arbeitskno" + "ten".
        let df = vocabulary(lang, &[("Arbeit", 2), ("Knoten", 30), ("Arbeitskno", 1), ("ten", 50)]);
        let df = |t: &str| df.get(t).copied().unwrap_or(0);
        let stemmer = lang.stemmer();
        let split = best_split("arbeitsknoten", lang, stemmer.as_ref(), &df).unwrap();
        assert_eq!([split.head, split.tail], [terms_of("Arbeit", lang), terms_of("Knoten", lang)]);
        // Of two splits, the commoner parts: "Speicher" + "klasse" over "Speicherk" + "lasse".
        let df = vocabulary(lang, &[("Speicher", 9), ("Klasse", 9), ("Speicherk", 1), ("Lasse", 1)]);
        let df = |t: &str| df.get(t).copied().unwrap_or(0);
        let split = best_split("speicherklasse", lang, stemmer.as_ref(), &df).unwrap();
        assert_eq!([split.head, split.tail], [terms_of("Speicher", lang), terms_of("Klasse", lang)]);
    }

    /// The one term of `word` in `lang`.
    fn terms_of(word: &str, lang: Lang) -> String {
        let mut t = analyzer::terms_in(word, lang);
        assert_eq!(t.len(), 1, "{word}: {t:?}");
        t.remove(0)
    }

    #[test]
    fn candidates_hold_every_part_a_split_may_use() {
        let lang = de();
        let got = candidates("die Netzwerkrouten", &[lang, Lang::EN], &|_| true);
        for part in ["Netzwerk", "Routen"] {
            for t in analyzer::terms_in(part, lang) {
                assert!(got.contains(&t), "{t} in {got:?}");
            }
        }
        assert!(candidates("die Netzwerkrouten", &[lang], &|_| false).is_empty());
        assert!(candidates("die Netzwerkrouten", &[Lang::EN], &|_| true).is_empty());
        // A short word is not split.
        assert!(candidates("Daten", &[lang], &|_| true).is_empty());
    }

    #[test]
    fn only_the_first_long_words_of_a_query_are_split() {
        let lang = de();
        let df = vocabulary(lang, &[("Netzwerk", 4), ("Routen", 2)]);
        let df = |t: &str| df.get(t).copied().unwrap_or(0);
        // The compound after MAX_WORDS long words (kurz: too short to count).
        let filler = ["Zauberwort"; MAX_WORDS].join(" kurz ");
        let late = format!("{filler} Netzwerkrouten");
        let mut reading = analyzer::terms_in(&late, lang);
        let before = reading.clone();
        decompound(&late, lang, &mut reading, &df);
        assert_eq!(reading, before);
        assert!(!candidates(&late, &[lang], &|_| true).contains(&terms_of("Routen", lang)));
        // One long word fewer before it: split, and its parts are candidates.
        let early = format!("{} Netzwerkrouten", ["Zauberwort"; MAX_WORDS - 1].join(" kurz "));
        let mut reading = analyzer::terms_in(&early, lang);
        decompound(&early, lang, &mut reading, &df);
        assert!(reading.contains(&terms_of("Routen", lang)), "{reading:?}");
        assert!(candidates(&early, &[lang], &|_| true).contains(&terms_of("Routen", lang)));
        // A 1,000-character query of 25 words of 40 letters: the candidates
        // of its first MAX_WORDS words, no more.
        let abc: Vec<char> = ('a'..='z').collect();
        let words: Vec<String> = (0..25).map(|i| (0..40).map(|j| abc[(i + j * 7) % 26]).collect()).collect();
        let all = candidates(&words.join(" "), &[lang], &|_| true);
        assert_eq!(all, candidates(&words[..MAX_WORDS].join(" "), &[lang], &|_| true));
        // (Each word has candidates of its own: the bound is what cut them.)
        let one_more = candidates(&words[MAX_WORDS..=MAX_WORDS].join(" "), &[lang], &|_| true);
        assert!(!one_more.is_empty() && one_more.iter().any(|t| !all.contains(t)));
    }
}
