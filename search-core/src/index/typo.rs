//! Typo tolerance on the lexical side: a word of the query that no chunk has,
//! one keyboard slip away from a word that chunks do have, is read as that
//! word, by BM25 and by the encoder alike, and the answer says what it searched
//! ("showing results for …").
//!
//! A slip is one deletion, doubled letter, adjacent transposition, substitution
//! or insertion (Damerau–Levenshtein distance 1), never at the first letter:
//! slips there are rarer, and keeping the first letter lets the browser engine
//! fetch only the vocabulary of one initial ([`super::fragments`]). Of the
//! words one slip away, a stop word wins ("whaat", "wat" → "what": the
//! commonest words are the likeliest meant, and BM25 then leaves them out),
//! else the one whose term the most chunks have (ties: the alphabetically
//! first), as a spelling corrector by frequency would; but a slip a keyboard
//! makes (a neighbouring key, a doubled, dropped or swapped letter) before any
//! other (`poft` is `port`, a key away, before the commoner `post`): in a
//! noisy-channel corrector's terms, the frequency is the prior and a slip of
//! the fingers is far likelier than a letter typed from across the keyboard.
//!
//! What is never corrected: a word some chunk has (so an exact match always
//! stays exact); a word of the language that the knowledge base happens not to
//! use ("wipe", "broke", "clashes": the encoder's whole-word tokens are the
//! dictionary, [`crate::encoder::Encoder::is_word`]), unless a keyboard slip
//! makes it of a stop word (`booth` → `both`: BM25 found nothing in it either
//! way, and the encoder reads what was meant); anything but a plain word
//! of ASCII letters (identifiers, error codes, numbers, words with accents);
//! words shorter than [`MIN_LEN`], unless into a stop word or a word with the
//! letter they dropped (`bck` → `back`, `kep` → `keep`: three letters have too
//! many neighbours by a changed letter to pick a content word from); stop
//! words; and the word being typed (the completion reads that one).
//!
//! In other languages a slip is read as in English, in the language the
//! search reads the query in ([`super::lang::Languages::spelling`]): its
//! letters ([`alphabet`]: `Teeil` → `Teil`, `identificaciónn` →
//! `identificación`), its stems and its stop words, the multilingual
//! encoder's whole-word pieces as the dictionary; but only keyboard slips
//! that keep the word's form, never one that changes its ending
//! ([`form_kept`]: such languages inflect there). A query read
//! in several languages at once (its words do not tell which) is left as
//! typed: a slip in one language may be a word in another. Chinese and
//! Japanese (no spaces between words) and scripts without a table here are
//! never corrected. A word written with a capital keeps it (`Kuberrnetes` →
//! `Kubernetes`): the multilingual encoder reads case.

use super::analyzer;
use super::lang::Lang;

/// Shorter words have too many neighbours one slip away to pick a content
/// word from; a word of [`STOP_LEN`] letters may still be a stop word's slip.
pub const MIN_LEN: usize = 4;
/// The shortest word read as a stop word's slip (`wat`, `teh`, `hwo`).
pub const STOP_LEN: usize = 3;
/// The most words of one query read as slips: each costs a few hundred stems
/// looked up (a thousand for a long word), and a query with more unknown words
/// than this is not a question with slips in it. A 1,000-character query of
/// 45 made-up words took 30 ms to read in full (natively, CSC); with the
/// bound, 3 ms.
pub const MAX_SLIPS: usize = 4;
/// Longer words are not words (a hash, a pasted token).
pub const MAX_LEN: usize = 24;

/// The letters of English's words, the first of every Latin alphabet's.
const LATIN: &str = "abcdefghijklmnopqrstuvwxyz";

/// The lowercase letters a word of `lang` is written in, which a slip may
/// add or put in place of another; `None` for a language whose slips are not
/// read (see the module's doc).
pub fn alphabet(lang: Lang) -> Option<&'static str> {
    if lang == Lang::EN {
        return Some(LATIN);
    }
    // Without the `languages` feature (the browser's English engine) no
    // other language is read ([`Lang::supported`]): no tables for them.
    if !cfg!(feature = "languages") {
        return None;
    }
    Some(match lang.code() {
        "de" => "abcdefghijklmnopqrstuvwxyzäöüß",
        "fr" => "abcdefghijklmnopqrstuvwxyzàâæçéèêëîïôœùûüÿ",
        "es" => "abcdefghijklmnopqrstuvwxyzáéíñóúü",
        "it" => "abcdefghijklmnopqrstuvwxyzàèéìíîòóùú",
        "pt" => "abcdefghijklmnopqrstuvwxyzáâãàçéêíóôõú",
        "nl" => "abcdefghijklmnopqrstuvwxyzéëïóöü",
        "sv" => "abcdefghijklmnopqrstuvwxyzåäö",
        "da" | "no" => "abcdefghijklmnopqrstuvwxyzæøå",
        "fi" => "abcdefghijklmnopqrstuvwxyzäöåšž",
        "et" => "abcdefghijklmnopqrstuvwxyzäöõüšž",
        "hu" => "abcdefghijklmnopqrstuvwxyzáéíóöőúüű",
        "ro" => "abcdefghijklmnopqrstuvwxyzăâîșț",
        "tr" => "abcdefghijklmnopqrstuvwxyzçğıöşü",
        "az" => "abcdefghijklmnopqrstuvwxyzçəğıöşü",
        "ca" => "abcdefghijklmnopqrstuvwxyzàçèéíïòóúü",
        "eu" | "id" => "abcdefghijklmnopqrstuvwxyzñ",
        "ga" => "abcdefghijklmnopqrstuvwxyzáéíóú",
        "lt" => "abcdefghijklmnopqrstuvwxyząčęėįšųūž",
        "pl" => "abcdefghijklmnopqrstuvwxyząćęłńóśźż",
        "sl" => "abcdefghijklmnopqrstuvwxyzčšž",
        "ru" => "абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
        "el" => "αβγδεζηθικλμνξοπρστυφχψωάέήίόύώϊϋΐΰς",
        _ => return None,
    })
}

/// A query as corrected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Correction {
    /// The query with each corrected word replaced (lowercase, but for a
    /// capital the word was written with).
    pub text: String,
    /// (the word as written, the word read), in query order.
    pub words: Vec<(String, String)>,
}

/// A word of the query that may be a typo: its place in the query, the word
/// (lowercase) and the one term it analyses to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suspect {
    pub start: usize,
    pub end: usize,
    pub word: String,
    pub term: String,
}

/// The words of `query`, read in `lang`, that could be corrected, whether or
/// not some chunk has them: words of [`STOP_LEN`] (English; else [`MIN_LEN`])
/// to [`MAX_LEN`] letters of the language's [`alphabet`] that are not stop words; with `partial`, not the
/// last word (it is being typed). None in a language without an alphabet.
pub fn suspects(query: &str, partial: bool, lang: Lang) -> Vec<Suspect> {
    let Some(letters) = alphabet(lang) else { return Vec::new() };
    let mut out = Vec::new();
    let mut words = word_spans(query);
    if partial && !query.ends_with(char::is_whitespace) {
        words.pop();
    }
    for (start, end) in words {
        let start = after_elision(query, start, end, lang);
        let lower = query[start..end].to_lowercase();
        // Three letters are read as an English stop word's slip (`wat`);
        // elsewhere they are too often a word of the language no dictionary
        // here names (Spanish *mus* read as *mis* found a page).
        let shortest = if lang == Lang::EN { STOP_LEN } else { MIN_LEN };
        if !(shortest..=MAX_LEN).contains(&lower.chars().count()) || !lower.chars().all(|c| letters.contains(c)) {
            continue;
        }
        if let [term] = analyzer::terms_in(&lower, lang).as_slice() {
            out.push(Suspect { start, end, term: term.clone(), word: lower });
        }
    }
    out
}

/// Where the word at `query[start..end]` starts once an elided article
/// before its apostrophe is left out (French *l'évicton* → *évicton*,
/// Italian *dell'utnete*; [`analyzer::is_elided_article`]): the word a slip
/// is read in; `start` when there is none.
fn after_elision(query: &str, start: usize, end: usize, lang: Lang) -> usize {
    let word = &query[start..end];
    let Some(i) = word.find(['\'', '\u{2019}']) else { return start };
    let apostrophe = word[i..].chars().next().map_or(1, char::len_utf8);
    if analyzer::is_elided_article(&word[..i].to_lowercase(), lang) {
        start + i + apostrophe
    } else {
        start
    }
}

/// Byte ranges of the whitespace-separated pieces of `query`, trimmed of the
/// punctuation around them (`licwnses?` → `licwnses`, `¿Cómo` → `Cómo`,
/// `«mot»` → `mot`).
fn word_spans(query: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut at = 0;
    for piece in query.split_inclusive(char::is_whitespace) {
        let body = piece.trim_end();
        let lead = body.len() - body.trim_start_matches(|c: char| !c.is_alphanumeric()).len();
        let core = body[lead..].trim_end_matches(|c: char| !c.is_alphanumeric());
        if !core.is_empty() {
            spans.push((at + lead, at + lead + core.len()));
        }
        at += piece.len();
    }
    spans
}

/// Every word one slip from `word` (lowercase, of the letters of `alphabet`)
/// that keeps its first letter, in no particular order and possibly twice
/// (callers break ties themselves: sorting here cost the browser engine's
/// wasm kilobytes).
pub fn edits(word: &str, alphabet: &str) -> Vec<String> {
    let w: Vec<char> = word.chars().collect();
    let n = w.len();
    let letters = alphabet.chars().count();
    let mut out: Vec<Vec<char>> = Vec::with_capacity((2 * letters + 2) * n);
    for i in 1..n {
        let mut del = w.clone();
        del.remove(i);
        out.push(del);
        if i + 1 < n && w[i] != w[i + 1] {
            let mut swap = w.clone();
            swap.swap(i, i + 1);
            out.push(swap);
        }
        for c in alphabet.chars().filter(|&c| c != w[i]) {
            let mut sub = w.clone();
            sub[i] = c;
            out.push(sub);
        }
    }
    for i in 1..=n {
        for c in alphabet.chars() {
            let mut ins = w.clone();
            ins.insert(i, c);
            out.push(ins);
        }
    }
    out.into_iter().map(|v| v.into_iter().collect()).collect()
}

/// The correction of `query`, read in `lang`: each [`suspects`] word whose
/// term `df` does not know (`None`) and that is no word of the language
/// (`is_word`), the first [`MAX_SLIPS`] of them, becomes the word one slip
/// away whose term has the largest document frequency (keyboard slips first);
/// one that is a word of the language, the stop word a keyboard slip from it,
/// if any. `None` when no word changes.
///
/// `df` counts the chunks in `lang` ([`super::lang::spelled_in`]); `Some(0)`
/// is a term only other languages' chunks have: a word typed as some page
/// writes it is no slip, but a slip is never read into another language's
/// term (a Spanish *mantenga* into Portuguese *mantenha*).
pub fn correct(
    query: &str,
    partial: bool,
    lang: Lang,
    df: impl Fn(&str) -> Option<usize>,
    is_word: impl Fn(&str) -> bool,
) -> Option<Correction> {
    let mut text = String::with_capacity(query.len());
    let mut words = Vec::new();
    let mut last = 0;
    let mut tried = 0;
    for s in suspects(query, partial, lang) {
        if df(&s.term).is_some() {
            continue;
        }
        let best = if is_word(&s.word) {
            // No lookups: not counted against MAX_SLIPS.
            stop_slip(&s.word, lang)
        } else if tried == MAX_SLIPS {
            break;
        } else {
            tried += 1;
            best_neighbour(&s.word, lang, &df, &is_word)
        };
        let Some(best) = best else { continue };
        let typed = &query[s.start..s.end];
        let best = with_case_of(typed, best);
        text.push_str(&query[last..s.start]);
        text.push_str(&best);
        last = s.end;
        words.push((typed.to_string(), best));
    }
    if words.is_empty() {
        return None;
    }
    text.push_str(&query[last..]);
    Some(Correction { text, words })
}

/// `word` (lowercase, one slip from `typed`) with `typed`'s first letter as
/// written: a slip never changes the first letter, so a capital stays one
/// (and no case table is needed, which would cost the browser's engine).
fn with_case_of(typed: &str, word: String) -> String {
    match (typed.chars().next(), word.chars().next()) {
        (Some(t), Some(w)) if t != w => format!("{t}{}", &word[w.len_utf8()..]),
        _ => word,
    }
}

/// The word one slip from `word` in `lang`: a stop word (the longest, which
/// keeps the most of what was typed: `wat` → `what`, not `was`; ties: the
/// alphabetically first), else the word whose term the most chunks have
/// among the [`keyboard_slip`]s, then among the other edits (ties: the
/// alphabetically first); for a word shorter than [`MIN_LEN`], only a stop
/// word or a word with a letter it dropped. Outside English a letter put back
/// must make a word of the language (`is_word`).
fn best_neighbour(
    word: &str,
    lang: Lang,
    df: &impl Fn(&str) -> Option<usize>,
    is_word: &impl Fn(&str) -> bool,
) -> Option<String> {
    let letters = alphabet(lang)?;
    let len = word.chars().count();
    let mut stop: Option<String> = None;
    let mut best: Option<((bool, usize), String)> = None;
    for e in edits(word, letters) {
        let e_len = e.chars().count();
        // Outside English only a keyboard slip that keeps the word's form is
        // read; the check is cheap beside stemming the edit.
        let read_here = lang == Lang::EN || (form_kept(word, &e) && keyboard_slip(word, &e));
        if !read_here {
            continue;
        }
        let n = match analyzer::terms_in(&e, lang).as_slice() {
            // Edits are plain words: no term means a stop word.
            // Not one of two letters: `sop` is more likely `stop` than `so`.
            [] if e_len < STOP_LEN => continue,
            [] => {
                if stop.as_ref().is_none_or(|s| stop_order(&e, s).is_gt()) {
                    stop = Some(e);
                }
                continue;
            }
            [term] if len >= MIN_LEN || e_len > len => df(term),
            _ => None,
        };
        let Some(n) = n.filter(|&n| n > 0) else { continue };
        // A letter put back must make a word of the language there: the
        // stem alone is often another word's (*hérissons* with a `u` is
        // *heur·issons*, stemmed as *heure*; *fürs* with an `o`, *four*).
        if lang != Lang::EN && e_len > len && !is_word(&e) {
            continue;
        }
        // Every edit kept outside English is a keyboard slip (above).
        let key = (lang != Lang::EN || keyboard_slip(word, &e), n);
        if best.as_ref().is_none_or(|(k, b)| key > *k || (key == *k && e < *b)) {
            best = Some((key, e));
        }
    }
    stop.or(best.map(|(_, w)| w))
}

/// The stop word of `lang` a word of the language is a [`keyboard_slip`] of,
/// if any (the longest; ties: the alphabetically first): `booth` → `both`.
/// A word no chunk has reads as nothing to BM25 either
/// way, and slips that make another word land on the commonest words the
/// most often; a content word is never guessed for a word that is one
/// (`widows` stays `widows`).
fn stop_slip(word: &str, lang: Lang) -> Option<String> {
    edits(word, alphabet(lang)?)
        .into_iter()
        .filter(|e| e.chars().count() >= STOP_LEN && analyzer::is_stop_in(e, lang))
        .filter(|e| keyboard_slip(word, e) && (lang == Lang::EN || form_kept(word, e)))
        .max_by(|a, b| stop_order(a, b))
}

/// Whether a [`keyboard_slip`] `typed` of `meant` keeps the word's form, as
/// a slip must in a language that inflects more than English: its last
/// letter as typed (or its last two swapped). The ending is where such a
/// language makes another form of the same word (*legt* / *leg*, *fürs* /
/// *für*, *pilotent* / *piloteant*), which no chunk may have and no
/// whole-word piece of the multilingual encoder names (its pieces are stems
/// and endings): reading every slip as English does corrected a right word
/// in 11 of the 90 German, Spanish and French k8s dev questions (German 7),
/// these kinds in none (docs/benchmarks/languages.md, "Slips in the reader's
/// language"). A letter put back must make a word of the language besides
/// ([`best_neighbour`]): near the end it makes another form too (*hängen* /
/// *hängten*).
fn form_kept(typed: &str, meant: &str) -> bool {
    // Read from the end, without collecting: this runs for each of a word's
    // thousand edits.
    let (mut t, mut m) = (typed.chars().rev(), meant.chars().rev());
    let (t1, m1) = (t.next(), m.next());
    if t1 == m1 {
        return true;
    }
    let (t2, m2) = (t.next(), m.next());
    t2.is_some() && t2 == m1 && m2 == t1 && typed.chars().count() == meant.chars().count()
}

/// Which of two stop words a slip is read as: the longer, which keeps the
/// most of what was typed (`wat` → `what`, not `was`); of two as long, the
/// alphabetically first.
fn stop_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.chars().count().cmp(&b.chars().count()).then_with(|| b.cmp(a))
}

/// Whether typing `meant` as `typed` (one edit apart, the first letter kept)
/// is a slip of the fingers: a letter dropped, two letters swapped, a key's
/// neighbour hit instead of it, or an extra letter that doubles a neighbour
/// or sits beside one on the keyboard. QWERTY's neighbours: the layouts
/// around it (QWERTZ, AZERTY) share most of them; a letter QWERTY lacks
/// (`ö`, `é`) touches none.
fn keyboard_slip(typed: &str, meant: &str) -> bool {
    let (typed, meant): (Vec<char>, Vec<char>) = (typed.chars().collect(), meant.chars().collect());
    let i = typed.iter().zip(&meant).take_while(|(a, b)| a == b).count();
    match typed.len().cmp(&meant.len()) {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Greater => {
            let extra = typed[i];
            let beside = [i.checked_sub(1).map(|j| typed[j]), typed.get(i + 1).copied()];
            beside.into_iter().flatten().any(|b| b == extra || keys_touch(b, extra))
        }
        std::cmp::Ordering::Equal => {
            let swapped = typed.get(i + 1) == meant.get(i) && meant.get(i + 1) == typed.get(i);
            swapped || keys_touch(typed[i], meant[i])
        }
    }
}

/// Whether two letter keys touch on a QWERTY keyboard: side by side in a row,
/// or a key and the two above it (each row sits half a key right of the one
/// above: `s` touches `w` and `e`).
fn keys_touch(a: char, b: char) -> bool {
    const ROWS: [&[u8]; 3] = [b"qwertyuiop", b"asdfghjkl", b"zxcvbnm"];
    let at = |k: char| {
        let k = u8::try_from(k.to_ascii_lowercase()).ok()?;
        ROWS.iter().enumerate().find_map(|(r, row)| row.iter().position(|&c| c == k).map(|c| (r, c)))
    };
    let (Some((ra, ca)), Some((rb, cb))) = (at(a), at(b)) else { return false };
    match (ra.abs_diff(rb), ra.cmp(&rb)) {
        (0, _) => ca.abs_diff(cb) == 1,
        (1, std::cmp::Ordering::Less) => cb == ca || cb + 1 == ca,
        (1, _) => ca == cb || ca + 1 == cb,
        _ => false,
    }
}

/// The terms one slip from `words` (the [`suspects`] words [`correct`] would
/// read as slips): what a source that holds its vocabulary elsewhere (a
/// PostgreSQL tenant) looks up before [`correct`] can answer, in `lang`.
pub fn neighbour_terms<'w>(words: impl IntoIterator<Item = &'w str>, lang: Lang) -> Vec<String> {
    let Some(letters) = alphabet(lang) else { return Vec::new() };
    let mut terms: Vec<String> = words
        .into_iter()
        .flat_map(|w| edits(w, letters))
        .filter_map(|e| match analyzer::terms_in(&e, lang).as_slice() {
            [term] => Some(term.clone()),
            _ => None,
        })
        .collect();
    terms.sort_unstable();
    terms.dedup();
    terms
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const EN: Lang = Lang::EN;

    fn no_words(_: &str) -> bool {
        false
    }

    fn vocab(words: &[(&str, usize)]) -> HashMap<String, usize> {
        words.iter().map(|&(w, n)| (analyzer::terms(w)[0].clone(), n)).collect()
    }

    #[test]
    fn each_kind_of_slip_is_read_as_the_word() {
        let v = vocab(&[("university", 40), ("licenses", 12), ("machine", 30), ("inside", 8), ("permit", 20)]);
        let df = |t: &str| v.get(t).copied();
        for (typo, word) in [
            ("unifersity", "university"), // adjacent key
            ("licwnses", "licenses"),
            ("machinne", "machine"), // doubled
            ("innside", "inside"),
            ("pemrit", "permit"), // transposed
            ("permt", "permit"),  // dropped
        ] {
            let c = correct(&format!("Can I get a {typo}?"), false, EN, df, no_words).expect(typo);
            assert_eq!(c.text, format!("Can I get a {word}?"));
            assert_eq!(c.words, vec![(typo.to_string(), word.to_string())]);
        }
    }

    #[test]
    fn what_is_never_corrected() {
        let v = vocab(&[("permit", 20), ("parking", 9), ("gateway", 3)]);
        let df = |t: &str| v.get(t).copied();
        // Known words, identifiers, codes, short words, the first letter, accents.
        for q in ["parking permit", "VPN-504", "nbvpn --tcp", "pemr", "bermit", "pérmit"] {
            assert_eq!(correct(q, false, EN, df, no_words), None, "{q}");
        }
        // Beside a code, a word is still read as it was meant.
        assert_eq!(correct("VPN-504 gatewya", false, EN, df, no_words).map(|c| c.text), Some("VPN-504 gateway".into()));
        // The word being typed is the completion's, not the corrector's...
        assert_eq!(correct("parkign permi", true, EN, df, no_words).map(|c| c.text), Some("parking permi".into()));
        // ...until a space ends it.
        assert_eq!(correct("parkign permt ", true, EN, df, no_words).map(|c| c.text), Some("parking permit ".into()));
    }

    #[test]
    fn a_stop_word_slip_is_read_as_the_stop_word() {
        let v = vocab(&[("wheat", 90), ("option", 4)]);
        let df = |t: &str| v.get(t).copied();
        assert_eq!(
            correct("Whaat does the optoin do", false, EN, df, no_words).map(|c| c.text),
            Some("What does the option do".into())
        );
        assert_eq!(correct("wat is tihs", false, EN, df, no_words).map(|c| c.text), Some("what is this".into()));
        assert_eq!(correct("sop", false, EN, df, no_words), None, "not `so`");
        // Three letters are too few to guess a content word from...
        let v = vocab(&[("gpu", 40)]);
        assert_eq!(correct("gpx", false, EN, |t: &str| v.get(t).copied(), no_words), None);
        // ...and a word of the language is never a slip.
        assert_eq!(correct("opt out", false, EN, df, |w: &str| w == "opt"), None);
    }

    #[test]
    fn a_word_of_the_language_is_not_a_typo() {
        let v = vocab(&[("wide", 30), ("permit", 20)]);
        let df = |t: &str| v.get(t).copied();
        let dictionary = |w: &str| w == "wipe";
        assert_eq!(correct("wipe everything", false, EN, df, dictionary), None);
        assert_eq!(correct("wipe permt", false, EN, df, dictionary).map(|c| c.text), Some("wipe permit".into()));
    }

    #[test]
    fn at_most_max_slips_words_are_read() {
        let v = vocab(&[("permit", 20)]);
        let df = |t: &str| v.get(t).copied();
        // Unknown words with no neighbour count too: a flood of them ends the reading.
        let q = "permt xqzvw permt xqzvw permt permt";
        let c = correct(q, false, EN, df, no_words).expect("the first slips are read");
        assert_eq!(c.text, "permit xqzvw permit xqzvw permt permt");
        assert_eq!(c.words.len(), 2);
    }

    #[test]
    fn the_most_frequent_neighbour_wins() {
        let v = vocab(&[("quota", 50), ("quote", 3)]);
        let df = |t: &str| v.get(t).copied();
        assert_eq!(correct("disk quoto", false, EN, df, no_words).map(|c| c.text), Some("disk quota".into()));
    }

    #[test]
    fn a_keyboard_slip_wins_over_a_commoner_word_typed_across_the_keyboard() {
        let v = vocab(&[("post", 50), ("port", 5), ("sort", 40), ("short", 2)]);
        let df = |t: &str| v.get(t).copied();
        // `f` is a neighbour of `r`, not of `s`.
        assert_eq!(correct("which poft", false, EN, df, no_words).map(|c| c.text), Some("which port".into()));
        // With no keyboard slip among the neighbours, the commonest still wins.
        assert_eq!(correct("a pxst", false, EN, df, no_words).map(|c| c.text), Some("a post".into()));
        // An extra letter beside its neighbour on the keyboard is a slip...
        assert!(keyboard_slip("shprt", "short") && keyboard_slip("shoprt", "short"));
        // ...one from across the keyboard is not.
        assert!(!keyboard_slip("shoxrt", "short"));
        assert!(keys_touch('f', 'r') && keys_touch('r', 'f') && keys_touch('s', 'e'));
        assert!(keys_touch('z', 'a') && keys_touch('p', 'l') && !keys_touch('f', 's') && !keys_touch('q', 'p'));
    }

    #[test]
    fn three_letters_are_read_as_the_word_that_lost_a_letter() {
        let v = vocab(&[("back", 30), ("beck", 1), ("bucket", 9)]);
        let df = |t: &str| v.get(t).copied();
        assert_eq!(correct("roll bck", false, EN, df, no_words).map(|c| c.text), Some("roll back".into()));
        // A changed letter in three is still too little to go on.
        assert_eq!(correct("roll bxk", false, EN, df, no_words), None);
    }

    #[test]
    fn a_word_of_the_language_may_be_a_slip_of_a_stop_word_only() {
        let v = vocab(&[("windows", 90), ("editor", 5)]);
        let df = |t: &str| v.get(t).copied();
        let dictionary = |w: &str| ["booth", "widows", "wipe"].contains(&w);
        assert_eq!(
            correct("editor on booth", false, EN, df, dictionary).map(|c| c.words),
            Some(vec![("booth".into(), "both".into())])
        );
        assert_eq!(correct("on widows", false, EN, df, dictionary), None, "never a content word");
        assert_eq!(correct("wipe", false, EN, df, dictionary), None, "no stop word a slip away");
    }

    #[test]
    fn any_word_reads_as_itself_or_a_word_one_slip_away() {
        // Words made from a fixed seed over a small alphabet, so that many are
        // one slip from a word of the vocabulary.
        let v = vocab(&[("back", 9), ("bask", 3), ("abba", 2), ("cabbage", 5), ("baggage", 4), ("cab", 7)]);
        let df = |t: &str| v.get(t).copied();
        let (mut state, mut read_as_slips) = (7u32, 0);
        for _ in 0..2_000 {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let len = 3 + (state >> 8) as usize % 6;
            let word: String = (0..len).map(|i| b"abcegks"[(state >> (i * 3 % 24)) as usize % 7] as char).collect();
            let Some(c) = correct(&word, false, EN, df, |w: &str| w == "bag") else { continue };
            let [(typed, read)] = c.words.as_slice() else { panic!("{word}: {c:?}") };
            assert_eq!((typed.as_str(), read[..1].to_string()), (word.as_str(), word[..1].to_string()));
            assert!(edits(&word, LATIN).contains(read), "{word} -> {read}");
            read_as_slips += 1;
        }
        assert!(read_as_slips > 20, "not vacuous: {read_as_slips}");
    }

    #[test]
    fn neighbour_terms_cover_every_candidate() {
        let terms = neighbour_terms(["licwnses", "permt"], EN);
        assert!(terms.contains(&analyzer::terms("licenses")[0]));
        assert!(terms.contains(&analyzer::terms("permit")[0]));
        assert!(terms.iter().all(|t| t.starts_with('l') || t.starts_with('p')), "first letters kept");
    }

    #[test]
    fn spans_skip_the_punctuation_around_words() {
        let q = "(licwnses?) 'permt' ¿Cómo «mot»";
        let s: Vec<&str> = word_spans(q).iter().map(|&(a, b)| &q[a..b]).collect();
        assert_eq!(s, ["licwnses", "permt", "Cómo", "mot"]);
    }

    #[test]
    fn a_capital_is_kept() {
        let v = vocab(&[("kubernetes", 90)]);
        let df = |t: &str| v.get(t).copied();
        let c = correct("Kuberrnetes nodes", false, EN, df, no_words).expect("a slip");
        assert_eq!(c.text, "Kubernetes nodes");
        assert_eq!(c.words, vec![("Kuberrnetes".into(), "Kubernetes".into())]);
    }

    #[cfg(feature = "languages")]
    fn vocab_in(lang: Lang, words: &[(&str, usize)]) -> HashMap<String, usize> {
        words.iter().map(|&(w, n)| (analyzer::terms_in(w, lang)[0].clone(), n)).collect()
    }

    /// `query` as [`correct`] reads it in the language `tag` over the terms of
    /// `vocab` and the dictionary `dictionary`.
    #[cfg(feature = "languages")]
    fn read_in(tag: &str, vocab: &[(&str, usize)], dictionary: &[&str], query: &str) -> Option<String> {
        let lang = Lang::from_tag(tag).expect(tag);
        let v = vocab_in(lang, vocab);
        correct(query, false, lang, |t| v.get(t).copied(), |w| dictionary.contains(&w)).map(|c| c.text)
    }

    #[cfg(feature = "languages")]
    #[test]
    fn slips_are_read_in_the_querys_language() {
        let de = Lang::from_tag("de").expect("German");
        let v = vocab_in(de, &[("Teil", 40), ("Identifizierung", 3), ("Schlüssel", 9), ("Kubernetes", 90)]);
        let df = |t: &str| v.get(t).copied();
        for (typo, word) in [
            ("Teeil", "Teil"),                      // doubled
            ("Identifiizerung", "Identifizierung"), // doubled, accents elsewhere in the query
            ("Schlüsssel", "Schlüssel"),            // doubled, a letter English lacks beside it
            ("Kubrenetes", "Kubernetes"),           // swapped
        ] {
            let c = correct(&format!("Welcher {typo} für mich?"), false, de, df, no_words).expect(typo);
            assert_eq!(c.words, vec![(typo.to_string(), word.to_string())]);
        }
        // A word with a letter English lacks.
        let es = Lang::from_tag("es").expect("Spanish");
        let v = vocab_in(es, &[("identificación", 12)]);
        let df = |t: &str| v.get(t).copied();
        let c = correct("¿Qué identificaciónn?", false, es, df, no_words).expect("doubled");
        assert_eq!(c.text, "¿Qué identificación?");
    }

    #[cfg(feature = "languages")]
    #[test]
    fn a_dropped_letter_is_read_into_a_word_of_the_language() {
        let words = ["facilita", "travail", "skalieren", "trabajo"];
        let read = |tag, vocab, q| read_in(tag, vocab, &words, q);
        assert_eq!(
            read("es", &[("facilita", 6)], "¿Por qué faciita desplegarla?").as_deref(),
            Some("¿Por qué facilita desplegarla?")
        );
        // Near the end too, the last letter kept.
        assert_eq!(read("es", &[("trabajo", 9)], "cargas de trabao").as_deref(), Some("cargas de trabajo"));
        let fr = [("travail", 30), ("heure", 50)];
        assert_eq!(read("fr", &fr, "une charge de traail").as_deref(), Some("une charge de travail"));
        // Only a word of the language: *héurissons* stems as *heure*.
        assert_eq!(read("fr", &fr, "les hérissons"), None);
        // *skaliereren* (no word) stems as *Skalierung*, the commoner term.
        let de = [("skalieren", 2), ("Skalierung", 40)];
        assert_eq!(read("de", &de, "API-Server skalieeren").as_deref(), Some("API-Server skalieren"));
    }

    /// A slip in a word behind an elided article is read in the word, the
    /// article and its apostrophe (either) kept as typed; an apostrophe
    /// after anything else is no elision.
    #[cfg(feature = "languages")]
    #[test]
    fn a_slip_behind_an_elided_article_is_read_in_the_word() {
        let words = ["éviction", "utente"];
        let fr = [("éviction", 8), ("élection", 5), ("disque", 9)];
        let read = |tag, vocab, q| read_in(tag, vocab, &words, q);
        assert_eq!(read("fr", &fr, "Comment marche l'évicton ?").as_deref(), Some("Comment marche l'éviction ?"));
        assert_eq!(read("fr", &fr, "L’élcetion du chef").as_deref(), Some("L’élection du chef"));
        assert_eq!(read("fr", &fr, "sur d'disuqe").as_deref(), Some("sur d'disque"));
        assert_eq!(read("it", &[("utente", 7)], "i dati dell'utnete").as_deref(), Some("i dati dell'utente"));
        // Not an article of the language: the whole piece is no word to read.
        assert_eq!(read("fr", &fr, "x'disuqe"), None);
        assert_eq!(read("es", &[("disco", 4)], "l'dicso"), None);
    }

    #[cfg(feature = "languages")]
    #[test]
    fn another_form_of_a_word_is_not_a_slip() {
        // Forms a stemmer keeps apart, one letter from a term some chunk has:
        // a dropped or changed ending is how German and French inflect.
        let de = Lang::from_tag("de").expect("German");
        let v = vocab_in(de, &[("hängten", 5), ("leg", 4), ("Infoe", 2)]);
        let df = |t: &str| v.get(t).copied();
        // A letter put back near the end makes another form (*hängen* →
        // *hängten*): read only into a word of the language, which
        // `no_words` has none of.
        for q in ["Daten hängen", "sie legt", "mehr Infos", "fürs Logging"] {
            assert_eq!(correct(q, false, de, df, no_words), None, "{q}");
        }
        let fr = Lang::from_tag("fr").expect("French");
        let v = vocab_in(fr, &[("piloteant", 1), ("exemplaises", 1)]);
        let df = |t: &str| v.get(t).copied();
        assert_eq!(correct("qui pilotent", false, fr, df, no_words), None);
    }

    #[test]
    fn hostile_text_is_read_without_a_panic_in_every_language() {
        let v = vocab(&[("permit", 20)]);
        let df = |t: &str| v.get(t).copied();
        // Letters that change length when lowercased (İ), combining marks,
        // symbols outside the basic plane, controls, a word of 200 letters,
        // and thousands of words: nothing panics, at most MAX_SLIPS are read.
        let mut q = String::from("İstanbul ǅemal Straße\u{301} 𝔘𝔫𝔦 \u{0}permt ¿¡«» pérmít ");
        q.push_str(&"ä".repeat(200));
        q.push(' ');
        q.push_str(&"permt xqzvw ".repeat(2_000));
        for lang in Lang::all() {
            for partial in [false, true] {
                if let Some(c) = correct(&q, partial, lang, df, no_words) {
                    assert!(c.words.len() <= MAX_SLIPS, "{lang:?}");
                }
                let _ = neighbour_terms(suspects(&q, partial, lang).iter().map(|s| s.word.as_str()).take(2), lang);
            }
        }
    }

    #[test]
    fn a_language_without_an_alphabet_is_left_as_typed() {
        let ja = Lang::from_tag("ja").expect("Japanese");
        assert!(suspects("Kuberrnetes のノード", false, ja).is_empty());
        assert_eq!(alphabet(Lang::OTHER), None);
    }
}
