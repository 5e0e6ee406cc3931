//! The languages the BM25 analyzer reads ([`super::analyzer::terms_in`]): for each,
//! its Snowball stemmer and NLTK stop words where those exist, and the reading of
//! a query's language from its words.
//!
//! | languages | stemmed (Snowball) | stop words (NLTK) |
//! | --- | --- | --- |
//! | en de fr es it pt nl sv da no fi ru hu ro tr el ar id ne | yes | yes |
//! | ca eu et lt pl ga hy hi sr ta yi | yes | no |
//! | az kk sl tg | no | yes |
//! | zh ja ko | their script in overlapping pairs (the analyzer's CJK rule), Latin words as English | as English |
//!
//! Any other language is read as words folded to ASCII, neither stemmed nor
//! stopped ([`Lang::OTHER`]). English is read exactly as before languages existed
//! (the whole text folded, then stopped and stemmed); the others keep their
//! letters through the stemmer (Snowball German needs its `ä`, Finnish its `ö`)
//! and fold the stem afterwards, so `Lösung`, `losung` and `Loesung`'s stems meet
//! where Snowball makes them meet, and a reader without the accent finds the word.

use std::borrow::Cow;
use std::sync::OnceLock;

use pagefind_stem::{Algorithm, Stemmer};

/// One language the analyzer knows, by its place in [`LANGS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lang(u8);

/// (ISO 639-1 code, English name) of every language with its own reading;
/// [`Lang::OTHER`] last.
const LANGS: &[(&str, &str)] = &[
    ("en", "English"),
    ("de", "German"),
    ("fr", "French"),
    ("es", "Spanish"),
    ("it", "Italian"),
    ("pt", "Portuguese"),
    ("nl", "Dutch"),
    ("sv", "Swedish"),
    ("da", "Danish"),
    ("no", "Norwegian"),
    ("fi", "Finnish"),
    ("ru", "Russian"),
    ("hu", "Hungarian"),
    ("ro", "Romanian"),
    ("tr", "Turkish"),
    ("el", "Greek"),
    ("ar", "Arabic"),
    ("id", "Indonesian"),
    ("ne", "Nepali"),
    ("ca", "Catalan"),
    ("eu", "Basque"),
    ("et", "Estonian"),
    ("lt", "Lithuanian"),
    ("pl", "Polish"),
    ("ga", "Irish"),
    ("hy", "Armenian"),
    ("hi", "Hindi"),
    ("sr", "Serbian"),
    ("ta", "Tamil"),
    ("yi", "Yiddish"),
    ("az", "Azerbaijani"),
    ("kk", "Kazakh"),
    ("sl", "Slovenian"),
    ("tg", "Tajik"),
    ("zh", "Chinese"),
    ("ja", "Japanese"),
    ("ko", "Korean"),
    ("und", "other"),
];

impl Lang {
    pub const EN: Lang = Lang(0);
    /// A language without its own reading: folded words, no stemmer, no stop words.
    pub const OTHER: Lang = Lang(LANGS.len() as u8 - 1);

    /// The language a tag names (`de`, `de-AT`, `de_DE`, `zh-cn`, `pt-BR`, `nb`,
    /// `German`), or `None` for an empty or malformed tag. A well-formed tag of a
    /// language without its own reading is [`Lang::OTHER`].
    pub fn from_tag(tag: &str) -> Option<Lang> {
        let tag = tag.trim();
        let primary = tag.split(['-', '_']).next().unwrap_or("").to_ascii_lowercase();
        if primary.is_empty() || primary.len() > 8 || !primary.bytes().all(|b| b.is_ascii_alphabetic()) {
            return None;
        }
        let primary = match primary.as_str() {
            "nb" | "nn" => "no",
            "iw" => "he",
            "in" => "id",
            p => p,
        };
        if let Some(i) = LANGS.iter().position(|(code, name)| *code == primary || name.eq_ignore_ascii_case(primary)) {
            return Some(Lang(i as u8));
        }
        // Two or three letters name a language (ISO 639); a longer word that is
        // no language's English name is not a tag.
        (primary.len() <= 3).then_some(Lang::OTHER)
    }

    /// The ISO 639-1 code (`und` for [`Lang::OTHER`]).
    pub fn code(self) -> &'static str {
        LANGS.get(usize::from(self.0)).map_or("und", |l| l.0)
    }

    /// The language's English name.
    pub fn name(self) -> &'static str {
        LANGS.get(usize::from(self.0)).map_or("other", |l| l.1)
    }

    /// Every language with its own reading, English first, then [`Lang::OTHER`].
    pub fn all() -> impl Iterator<Item = Lang> {
        (0..LANGS.len() as u8).map(Lang)
    }

    /// Whether the language is written without spaces between words (Chinese,
    /// Japanese) or with particles glued to them (Korean): the analyzer reads
    /// its characters in overlapping pairs, whatever the page's language says.
    pub fn is_cjk(self) -> bool {
        matches!(self.code(), "zh" | "ja" | "ko")
    }

    /// Whether this build reads the language as it should: always for English,
    /// CJK and [`Lang::OTHER`]; the others need the `languages` feature (a
    /// browser engine without it refuses an index in them rather than read
    /// its words otherwise than the build did).
    pub fn supported(self) -> bool {
        cfg!(feature = "languages") || !self.needs_languages()
    }

    /// Whether only a build with the `languages` feature reads the language
    /// (its own stemmer or stop words): what decides which browser engine a
    /// page in it needs.
    pub fn needs_languages(self) -> bool {
        !(self == Lang::EN || self == Lang::OTHER || self.is_cjk())
    }

    /// The stemmer of the language, if it has one.
    pub(crate) fn stemmer(self) -> Option<LangStemmer> {
        let algorithm =
            if self == Lang::EN || self.is_cjk() { Algorithm::English } else { other_stemmer(self.code())? };
        Some(LangStemmer { snowball: Stemmer::create(algorithm), levels_grades: self.code() == "fi" })
    }

    /// The language's stop words, lowercased (English's, the analyzer's own,
    /// for English and CJK; none for a language without a list, or without
    /// the `languages` feature).
    pub fn stop_words(self) -> Vec<&'static str> {
        if self == Lang::EN || self.is_cjk() {
            return super::analyzer::english_stop_words().to_vec();
        }
        super::analyzer::stop_list(self.code()).map_or(Vec::new(), |s| s.lines().collect())
    }

    /// Whether `word` (lowercased, as written or folded) is one of the
    /// language's stop words. English's list is the analyzer's own.
    pub(crate) fn is_stop(self, word: &str) -> bool {
        if self == Lang::EN || self.is_cjk() {
            return super::analyzer::is_english_stop(word);
        }
        static SETS: OnceLock<Vec<Vec<&'static str>>> = OnceLock::new();
        let sets = SETS.get_or_init(|| {
            Lang::all()
                .map(|l| super::analyzer::stop_list(l.code()).map_or(Vec::new(), |s| s.lines().collect()))
                .collect()
        });
        sets.get(usize::from(self.0)).is_some_and(|s| s.binary_search(&word).is_ok())
    }

    /// The language of a query among `among` (a knowledge base's languages),
    /// read from its words: the script of Japanese kana, Korean hangul or Chinese
    /// characters, else the language with the most of the query's words among
    /// its stop words (at least one; a tie goes to the language the other
    /// words' letters are closest to, when they say).
    /// `None` when nothing tells (a few keywords, a command, a tie the letters
    /// do not break): the caller reads
    /// the query in every language of `among`, or in the reader's.
    pub fn of_query(query: &str, among: &[Lang]) -> Option<Lang> {
        Lang::of_query_preferring(query, among, among)
    }

    /// [`Lang::of_query`], a tie between one of `preferred` and other
    /// languages going to `preferred`'s (before the letters are read).
    fn of_query_preferring(query: &str, among: &[Lang], preferred: &[Lang]) -> Option<Lang> {
        let has = |code: &str| among.iter().copied().find(|l| l.code() == code);
        let (mut kana, mut hangul, mut han) = (false, false, false);
        for c in query.chars() {
            match c {
                '\u{3040}'..='\u{30FF}' => kana = true,
                '\u{AC00}'..='\u{D7AF}' | '\u{1100}'..='\u{11FF}' => hangul = true,
                c if super::analyzer::is_han(c) => han = true,
                _ => {}
            }
        }
        if kana {
            return has("ja");
        }
        if hangul {
            return has("ko");
        }
        if han {
            return has("zh").or_else(|| has("ja"));
        }
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric() && c != '\'')
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        // The language with the most stop words. Chinese, Japanese and Korean
        // are told by their script (above), not here: their stop words for
        // Latin text are English's, and would take English questions on a
        // site that is mostly Chinese.
        let votes: Vec<(Lang, usize)> =
            among.iter().filter(|l| !l.is_cjk()).map(|&l| (l, words.iter().filter(|w| l.is_stop(w)).count())).collect();
        let top = votes.iter().map(|v| v.1).max().filter(|&n| n > 0)?;
        let mut tied: Vec<Lang> = votes.iter().filter(|v| v.1 == top).map(|v| v.0).collect();
        if tied.iter().any(|l| preferred.contains(l)) {
            tied.retain(|l| preferred.contains(l));
        }
        // A tie is common between languages that share their short words
        // ("Que contient le namespace ?": `que` and `le` are French and
        // Spanish); the letters of the other words tell them apart. Failing
        // that, nothing tells ("filtrar recursos por etiquetas": Spanish or
        // Portuguese): taking the language with more chunks searched Spanish
        // keywords in Portuguese.
        match tied.as_slice() {
            [one] => Some(*one),
            _ => by_letters(query, &tied),
        }
    }

    /// The language as `whatlang` names it.
    #[cfg(feature = "detect")]
    fn whatlang(self) -> Option<whatlang::Lang> {
        let three = ISO_639_3.iter().find(|p| p.1 == self.code())?.0;
        whatlang::Lang::from_code(three)
    }
}

/// ISO 639-3 codes (as `whatlang` names languages) and their ISO 639-1
/// codes: what page detection writes as a tag, and what a query's tie is
/// broken among.
const ISO_639_3: &[(&str, &str)] = &[
    ("eng", "en"),
    ("deu", "de"),
    ("fra", "fr"),
    ("spa", "es"),
    ("ita", "it"),
    ("por", "pt"),
    ("nld", "nl"),
    ("swe", "sv"),
    ("dan", "da"),
    ("nob", "no"),
    ("fin", "fi"),
    ("rus", "ru"),
    ("hun", "hu"),
    ("ron", "ro"),
    ("tur", "tr"),
    ("ell", "el"),
    ("ara", "ar"),
    ("ind", "id"),
    ("nep", "ne"),
    ("cat", "ca"),
    ("est", "et"),
    ("lit", "lt"),
    ("pol", "pl"),
    ("hye", "hy"),
    ("hin", "hi"),
    ("srp", "sr"),
    ("tam", "ta"),
    ("yid", "yi"),
    ("aze", "az"),
    ("slv", "sl"),
    ("cmn", "zh"),
    ("jpn", "ja"),
    ("kor", "ko"),
    ("ukr", "uk"),
    ("ces", "cs"),
    ("slk", "sk"),
    ("hrv", "hr"),
    ("bul", "bg"),
    ("heb", "he"),
    ("vie", "vi"),
    ("tha", "th"),
    ("pes", "fa"),
    ("ben", "bn"),
    ("lat", "la"),
    ("epo", "eo"),
    ("lav", "lv"),
    ("bel", "be"),
    ("mkd", "mk"),
    ("urd", "ur"),
];

/// The ISO 639-1 code of an ISO 639-3 one, where the table has it.
pub fn iso639_1_of(three: &str) -> Option<&'static str> {
    ISO_639_3.iter().find(|p| p.0 == three).map(|p| p.1)
}

/// Of `tied` languages, the one whose letter trigrams `query` is closest to
/// (`whatlang`, restricted to them), when it names one.
#[cfg(feature = "detect")]
fn by_letters(query: &str, tied: &[Lang]) -> Option<Lang> {
    let allowed: Vec<whatlang::Lang> = tied.iter().filter_map(|l| l.whatlang()).collect();
    if allowed.len() < 2 {
        return None;
    }
    // Code is no language's ("Was zeigt `minikube addons list` an?" is German).
    let prose: String = query.split('`').step_by(2).collect::<Vec<_>>().join(" ");
    let found = whatlang::Detector::with_allowlist(allowed).detect(&prose)?;
    // A few words give a guess, not a reading ("Was zeigt … an?": English at
    // 0.17); from half of whatlang's scale up, the French questions of the
    // Kubernetes set that tie with Spanish read as French (0.66-1.0).
    if found.confidence() < 0.5 {
        return None;
    }
    tied.iter().copied().find(|l| l.whatlang() == Some(found.lang()))
}

/// Without `detect` (the browser engine) a tie stays undecided.
#[cfg(not(feature = "detect"))]
fn by_letters(_: &str, _: &[Lang]) -> Option<Lang> {
    None
}

/// A language's stemmer: its Snowball algorithm, and for Finnish the stem
/// then levelled across consonant gradation ([`super::gradation`]).
pub(crate) struct LangStemmer {
    snowball: Stemmer,
    levels_grades: bool,
}

impl LangStemmer {
    /// The stem of `word` (lowercase, letters kept): borrowed when the
    /// stemmer leaves the word as it is, as Snowball's is (this runs for every
    /// word of a page and each of a slipped word's edits).
    pub(crate) fn stem<'a>(&self, word: &'a str) -> Cow<'a, str> {
        let stem = self.snowball.stem(word);
        if self.levels_grades {
            Cow::Owned(super::gradation::level(&stem))
        } else {
            stem
        }
    }
}

/// The Snowball algorithm of a language besides English.
#[cfg(feature = "languages")]
fn other_stemmer(code: &str) -> Option<Algorithm> {
    Some(match code {
        "de" => Algorithm::German,
        "fr" => Algorithm::French,
        "es" => Algorithm::Spanish,
        "it" => Algorithm::Italian,
        "pt" => Algorithm::Portuguese,
        "nl" => Algorithm::Dutch,
        "sv" => Algorithm::Swedish,
        "da" => Algorithm::Danish,
        "no" => Algorithm::Norwegian,
        "fi" => Algorithm::Finnish,
        "ru" => Algorithm::Russian,
        "hu" => Algorithm::Hungarian,
        "ro" => Algorithm::Romanian,
        "tr" => Algorithm::Turkish,
        "el" => Algorithm::Greek,
        "ar" => Algorithm::Arabic,
        "id" => Algorithm::Indonesian,
        "ne" => Algorithm::Nepali,
        "ca" => Algorithm::Catalan,
        "eu" => Algorithm::Basque,
        "et" => Algorithm::Estonian,
        "lt" => Algorithm::Lithuanian,
        "pl" => Algorithm::Polish,
        "ga" => Algorithm::Irish,
        "hy" => Algorithm::Armenian,
        "hi" => Algorithm::Hindi,
        "sr" => Algorithm::Serbian,
        "ta" => Algorithm::Tamil,
        "yi" => Algorithm::Yiddish,
        _ => return None,
    })
}

/// Without the `languages` feature only English is stemmed ([`Lang::supported`]).
#[cfg(not(feature = "languages"))]
fn other_stemmer(_code: &str) -> Option<Algorithm> {
    None
}

impl std::fmt::Display for Lang {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_strings_table_is_chosen_by_the_primary_subtag() {
        let key = |t: &str| strings_key(t);
        assert_eq!(key("de-CH").as_deref(), Some("de"));
        assert_eq!(key("pt_BR").as_deref(), Some("pt"));
        assert_eq!(key("zh-CN").as_deref(), Some("zh"));
        assert_eq!(key("zh-Hans").as_deref(), Some("zh"));
        for traditional in ["zh-TW", "zh-hk", "zh-Hant-TW", "zh_MO"] {
            assert_eq!(key(traditional), None, "{traditional}");
        }
    }

    #[test]
    fn tags_name_their_language() {
        for (tag, code) in [
            ("de", "de"),
            ("de-AT", "de"),
            ("de_DE", "de"),
            ("zh-cn", "zh"),
            ("pt-BR", "pt"),
            ("nb", "no"),
            ("German", "de"),
            (" fi ", "fi"),
            ("cs", "und"),
            ("vi-VN", "und"),
        ] {
            assert_eq!(Lang::from_tag(tag).map(Lang::code), Some(code), "{tag}");
        }
        for bad in ["", "-", "12", "d3", "klingonese", "<script>", "de\u{0}"] {
            assert_eq!(Lang::from_tag(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_build_reads_only_the_languages_it_has() {
        let de = Lang::from_tag("de").unwrap();
        assert_eq!(de.supported(), cfg!(feature = "languages"));
        assert_eq!(de.stemmer().is_some(), cfg!(feature = "languages"));
        for l in [Lang::EN, Lang::OTHER, Lang::from_tag("ja").unwrap()] {
            assert!(l.supported(), "{l}");
        }
    }

    #[test]
    #[cfg(feature = "languages")]
    fn every_stemmed_language_stems_and_every_listed_one_stops() {
        // The module's table, row by row: (codes, stemmed, stop words).
        let rows: [(&str, bool, bool); 4] = [
            ("en de fr es it pt nl sv da no fi ru hu ro tr el ar id ne zh ja ko", true, true),
            ("ca eu et lt pl ga hy hi sr ta yi", true, false),
            ("az kk sl tg", false, true),
            ("und", false, false),
        ];
        let mut seen = 0;
        for (codes, stemmed, stops) in rows {
            for code in codes.split(' ') {
                let l = Lang::from_tag(code).unwrap();
                assert_eq!(l.code(), code);
                assert_eq!(l.stemmer().is_some(), stemmed, "{code} stemmer");
                let listed = l == Lang::EN || l.is_cjk() || super::super::analyzer::stop_list(code).is_some();
                assert_eq!(listed, stops, "{code} stop words");
                seen += 1;
            }
        }
        assert_eq!(seen, Lang::all().count(), "every language is in the table");
        assert!(Lang::from_tag("de").unwrap().is_stop("über") && Lang::from_tag("de").unwrap().is_stop("uber"));
        assert!(Lang::from_tag("fi").unwrap().is_stop("että"));
        // Question words, with and without their accents; a modal verb a page
        // answers with is no stop word.
        for (tag, word) in
            [("fi", "miten"), ("fr", "pourquoi"), ("fr", "ou"), ("es", "cómo"), ("es", "como"), ("de", "warum")]
        {
            assert!(Lang::from_tag(tag).unwrap().is_stop(word), "{tag} {word}");
        }
        assert!(!Lang::from_tag("es").unwrap().is_stop("pueden"));
        assert!(!Lang::from_tag("de").unwrap().is_stop("deployment"));
        // Spoken forms of listed words; not one that folds into another word
        // (Finnish *sää* would be *saa*, "gets").
        for (tag, word) in [("fi", "mä"), ("fi", "mun"), ("fi", "onks"), ("fr", "ça"), ("fr", "ca"), ("de", "halt")] {
            assert!(Lang::from_tag(tag).unwrap().is_stop(word), "{tag} {word}");
        }
        assert!(!Lang::from_tag("fi").unwrap().is_stop("saa"));
    }

    #[test]
    #[cfg(feature = "languages")]
    fn a_querys_language_is_read_from_its_words() {
        let kb: Vec<Lang> = ["en", "de", "es", "fr", "ja", "zh"].iter().filter_map(|t| Lang::from_tag(t)).collect();
        let of = |q: &str| Lang::of_query(q, &kb).map(Lang::code);
        assert_eq!(of("Wie kann ich ein Deployment zurückrollen?"), Some("de"));
        // `la`, `de`, `un` are Spanish and French stop words: the letters
        // break the tie, and without them (the browser) it stays undecided.
        let tied = if cfg!(feature = "detect") { Some("es") } else { None };
        assert_eq!(of("necesito limitar la memoria de un contenedor"), tied);
        // The question words NLTK's lists leave out (build.rs) tell too.
        assert_eq!(of("¿Cómo puedo limitar la memoria de un contenedor?"), Some("es"));
        let fi: Vec<Lang> = ["en", "de", "fi"].iter().filter_map(|t| Lang::from_tag(t)).collect();
        assert_eq!(Lang::of_query("Miten vaihdan salasanani?", &fi).map(Lang::code), Some("fi"));
        assert_eq!(Lang::of_query("Kuinka paljon tulostus maksaa?", &fi).map(Lang::code), Some("fi"));
        assert_eq!(of("Comment est-ce que je peux limiter la mémoire d'un conteneur ?"), Some("fr"));
        assert_eq!(of("How do I roll back a deployment?"), Some("en"));
        assert_eq!(of("コンテナのメモリを制限するには？"), Some("ja"));
        assert_eq!(of("如何限制容器的内存？"), Some("zh"));
        assert_eq!(of("kubectl rollout undo"), None);
        // English words on a site that is mostly Chinese are English.
        let zh_first: Vec<Lang> = ["zh", "en", "ja"].iter().filter_map(|t| Lang::from_tag(t)).collect();
        assert_eq!(Lang::of_query("How do I roll back a deployment?", &zh_first).map(Lang::code), Some("en"));
        assert_eq!(Lang::of_query("如何回滚 deployment？", &zh_first).map(Lang::code), Some("zh"));
        // A language the knowledge base does not have is never the answer.
        assert_eq!(Lang::of_query("파드란 무엇인가요?", &kb), None);
    }

    #[test]
    #[cfg(feature = "detect")]
    fn a_tie_in_short_words_is_broken_by_the_other_words_letters() {
        // Spanish before French: the tie rule alone read these as Spanish.
        let kb: Vec<Lang> = ["en", "es", "de", "fr", "pt"].iter().filter_map(|t| Lang::from_tag(t)).collect();
        let of = |q: &str| Lang::of_query(q, &kb).map(Lang::code);
        // `que` and `le` are stop words of both.
        assert_eq!(of("Que contient le namespace `kube-node-lease` ?"), Some("fr"));
        assert_eq!(of("Quelles valeurs peut prendre le champ `restartPolicy` d'un Pod ?"), Some("fr"));
        // `was` and `an` are English and German, and two other words tell
        // too little: undecided (read in each language), not the language
        // with more chunks.
        assert_eq!(of("Was zeigt `minikube addons list` an?"), None);
        assert_eq!(of("filtrar recursos por etiquetas"), None, "`por`: Spanish or Portuguese");
        // No tie: the vote alone decides, whatever the letters say.
        assert_eq!(of("¿Qué contiene el namespace `kube-node-lease`?"), Some("es"));
    }
}

/// A language results are restricted to (`lang` in a search): a tag as the
/// build writes a page's (`de`, `zh-cn`, `pt-br`), lowercased, `_` read as `-`,
/// at most 15 bytes. A tag covers itself and its regions: `zh` covers `zh-cn`
/// and `zh-tw`, `zh-cn` only itself. Kept in a fixed array so that
/// [`super::SearchParams`] stays `Copy`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct LangTag {
    bytes: [u8; 15],
    len: u8,
}

impl LangTag {
    /// The tag `s` names, or `None` for one that is empty, longer than 15
    /// bytes, or holds anything but ASCII letters, digits, `-` and `_` (or
    /// starts or ends with a separator; white space included, as the API's
    /// schema says).
    pub fn parse(s: &str) -> Option<LangTag> {
        let ok = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
        let edges = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric());
        if s.is_empty()
            || s.len() > 15
            || !s.bytes().all(ok)
            || !edges(s.as_bytes().first())
            || !edges(s.as_bytes().last())
        {
            return None;
        }
        let mut bytes = [0u8; 15];
        for (o, b) in bytes.iter_mut().zip(s.bytes()) {
            *o = if b == b'_' { b'-' } else { b.to_ascii_lowercase() };
        }
        Some(LangTag { bytes, len: s.len() as u8 })
    }

    /// A `lang` choice as the search API, the chat request and the browser
    /// engine read it: a tag keeps a search to that language (`Ok(Some)`),
    /// `all` or empty asks for every language (`Ok(None)`), anything else is
    /// no tag (`Err(NotATag)`; the caller names its parameter).
    pub fn choice(s: &str) -> Result<Option<LangTag>, NotATag> {
        match s {
            "" | "all" => Ok(None),
            t => LangTag::parse(t).map(Some).ok_or(NotATag),
        }
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII was written.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }

    /// Whether a chunk in language `tag` (as the build wrote it; empty is
    /// English) is one this tag asks for.
    pub fn covers(&self, tag: &str) -> bool {
        let tag = if tag.is_empty() { "en" } else { tag };
        let me = self.as_str();
        tag.len() >= me.len()
            && tag.as_bytes()[..me.len()].eq_ignore_ascii_case(me.as_bytes())
            && (tag.len() == me.len() || matches!(tag.as_bytes()[me.len()], b'-' | b'_'))
    }
}

/// The languages a search reads, as its caller chose them (`lang` of
/// `GET /api/search`, `--lang` of the CLI's `search` and `eval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LangChoice {
    /// No choice: the question's own language when its words tell and the
    /// knowledge base has pages in it, as the agents search; every language
    /// when they do not tell or the knowledge base has one language.
    Question,
    /// Every language (`all`, or empty as an HTML form sends it).
    Every,
    /// One language and its regions (`de`, `zh-cn`).
    Only(LangTag),
}

impl LangChoice {
    /// `lang` as a request gives it (`None`: not given); `question` names
    /// the default. Anything else is no tag (`Err(NotATag)`; the caller names
    /// its parameter).
    pub fn of(lang: Option<&str>) -> Result<LangChoice, NotATag> {
        match lang {
            None | Some("question") => Ok(LangChoice::Question),
            Some(t) => Ok(LangTag::choice(t)?.map_or(LangChoice::Every, LangChoice::Only)),
        }
    }
}

/// The key a table of translated strings is chosen by: the tag's primary
/// subtag, lowercase (`de-CH`, `de_DE` → `de`); `None` for Traditional Chinese
/// (`zh-tw`, `zh-hk`, `zh-mo`, `zh-hant`), whose readers would rather read
/// English than the one Chinese table, which is Simplified. The site's labels
/// (site-builder's `i18n`) and the agent's answers (`agent::words`) choose
/// their tables by it.
pub fn strings_key(tag: &str) -> Option<String> {
    let tag = tag.to_ascii_lowercase().replace('_', "-");
    let mut subtags = tag.split('-');
    let primary = subtags.next().unwrap_or_default();
    if primary == "zh" && subtags.any(|s| matches!(s, "hant" | "tw" | "hk" | "mo")) {
        return None;
    }
    Some(primary.to_string())
}

/// A `lang` that is neither a language tag nor `all` ([`LangTag::choice`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotATag;

/// For each of an index's chunk languages (`IndexInfo::chunk_languages`;
/// empty when every chunk is English), whether `tag` covers it: what the
/// index file and the browser's fragments filter a search in one language by.
pub fn covered(tag: LangTag, chunk_languages: &[String]) -> Vec<bool> {
    if chunk_languages.is_empty() {
        vec![tag.covers("en")]
    } else {
        chunk_languages.iter().map(|t| tag.covers(t)).collect()
    }
}

/// What a search in one language keeps: the chunks in it, and those whose
/// page stands in for it (`Chunk::stands_in`: a page in the main language
/// with no translation into it). The index file and the browser's fragments
/// number a chunk's language by its place in `chunk_languages` and its
/// stand-in set by its place in `stand_in_sets` from 1 (0: none); both read
/// one byte a chunk and ask this.
#[derive(Debug, Clone)]
pub struct InLanguage {
    own: Vec<bool>,
    /// By set number: 0 (none) is `false`.
    stands_in: Vec<bool>,
}

impl InLanguage {
    pub fn new(tag: LangTag, chunk_languages: &[String], stand_in_sets: &[Vec<String>]) -> InLanguage {
        let sets = stand_in_sets.iter().map(|set| set.iter().any(|t| tag.covers(t)));
        InLanguage { own: covered(tag, chunk_languages), stands_in: std::iter::once(false).chain(sets).collect() }
    }

    /// Whether a chunk in language place `lang` with stand-in set `set` is kept.
    pub fn keeps(&self, lang: usize, set: usize) -> bool {
        self.own.get(lang).copied().unwrap_or(false) || self.stands_in.get(set).copied().unwrap_or(false)
    }
}

/// [`InLanguage`] for one chunk whose record gives its language (`lang`,
/// empty for English) and the languages its page stands in for: how the
/// PostgreSQL tier, which reads both from the chunk's record, filters.
pub fn keeps(tag: LangTag, lang: &str, stands_in: &[String]) -> bool {
    tag.covers(lang) || stands_in.iter().any(|t| tag.covers(t))
}

/// Which places of `chunk_languages` (an index's
/// [`super::IndexInfo::chunk_languages`]) hold chunks in `lang`: those whose
/// terms a slip read in `lang` may become ([`super::typo::correct`]). Every
/// chunk in an index of one language.
pub fn spelled_in(lang: Lang, chunk_languages: &[String]) -> Vec<bool> {
    if chunk_languages.len() <= 1 {
        return vec![true];
    }
    chunk_languages.iter().map(|t| Lang::from_tag(if t.is_empty() { "en" } else { t }) == Some(lang)).collect()
}

/// The languages an index reads queries in, from its `IndexInfo`: the index
/// file, the browser's fragments and the PostgreSQL tier each hold one.
///
/// Two lists, because a language of a few pages is where its readers' pages
/// are, yet reading every query in it would find its stems in other
/// languages' words (CSC's one Finnish page read into English questions cost
/// a dev question): a query is read in any language a chunk is in when its
/// words say so or a search is restricted to it, and in each of the common
/// ones only when nothing tells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Languages {
    /// `IndexInfo::languages`: those of at least 5 % of the chunks, most
    /// first; empty when that is English alone.
    query: Vec<Lang>,
    /// `query`'s, then every other language a chunk is in that this build
    /// reads (`IndexInfo::chunk_languages`).
    every: Vec<Lang>,
}

/// English alone, or a source that does not say.
pub static ENGLISH: Languages = Languages { query: Vec::new(), every: Vec::new() };

impl Languages {
    /// From the index's query languages and its chunks' tags (languages this
    /// build does not read, and tags of no language, left out).
    pub fn new(query: Vec<Lang>, chunk_tags: &[String]) -> Languages {
        // No query language means English: the common one.
        let mut every = if query.is_empty() && !chunk_tags.is_empty() { vec![Lang::EN] } else { query.clone() };
        for l in chunk_tags.iter().filter_map(|t| Lang::from_tag(t)) {
            if l.supported() && l != Lang::OTHER && !every.contains(&l) {
                every.push(l);
            }
        }
        Languages { query, every }
    }

    /// [`Languages::new`] from the codes an index names for its queries
    /// (`IndexInfo::languages`); `Err` the first code this build cannot read
    /// as the index was written (a browser engine built without it), which
    /// the caller names in its error.
    pub fn read<'c>(query: &'c [String], chunk_tags: &[String]) -> Result<Languages, &'c str> {
        let query = query
            .iter()
            .map(|code| Lang::from_tag(code).filter(|l| l.supported()).ok_or(code.as_str()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Languages::new(query, chunk_tags))
    }

    /// The languages a query whose words do not tell is read in, each on its
    /// own (empty: English).
    pub fn query(&self) -> &[Lang] {
        &self.query
    }

    /// Every language some chunk is in that this build reads, the common
    /// ones first.
    pub fn every(&self) -> &[Lang] {
        &self.every
    }

    /// The language `text`'s words say ([`Lang::of_query`]) among every
    /// language a chunk is in; a tie between a common language and a rare
    /// one goes to the common one (English when the index is English but a
    /// few pages): a language of a few pages is taken on its words' evidence
    /// alone, not on "Puhti on" tying English with Finnish.
    pub fn of_query(&self, text: &str) -> Option<Lang> {
        let common = if self.query.is_empty() { &[Lang::EN][..] } else { &self.query };
        Lang::of_query_preferring(text, &self.every, common)
    }

    /// The language a search's slips are read in ([`super::typo`]): the one
    /// it reads `text` in ([`Languages::reading`]), English for an English
    /// index, `None` when it reads the query in several (a slip in one may be
    /// a word in another).
    pub fn spelling(&self, text: &str, tag: Option<LangTag>) -> Option<Lang> {
        match self.reading(text, tag).as_ref() {
            [] => Some(Lang::EN),
            [one] => Some(*one),
            _ => None,
        }
    }

    /// The languages a search reads `text` in: the one it is restricted to
    /// (`tag`) when some chunk is in it, else the one its words say, else
    /// each of the common ones.
    pub fn reading(&self, text: &str, tag: Option<LangTag>) -> std::borrow::Cow<'_, [Lang]> {
        let restricted = tag.and_then(|t| Lang::from_tag(t.as_str())).filter(|l| self.every.contains(l));
        match restricted.or_else(|| self.of_query(text)) {
            Some(l) => std::borrow::Cow::Owned(vec![l]),
            None => std::borrow::Cow::Borrowed(&self.query),
        }
    }
}

impl std::fmt::Debug for LangTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LangTag({})", self.as_str())
    }
}

impl std::fmt::Display for LangTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tag_tests {
    use super::{LangChoice, LangTag};

    #[test]
    fn a_tag_covers_itself_and_its_regions() {
        let zh = LangTag::parse("zh").unwrap();
        assert!(zh.covers("zh-cn") && zh.covers("zh_TW") && zh.covers("zh"));
        assert!(!zh.covers("zha") && !zh.covers("en"));
        let zh_cn = LangTag::parse("ZH_cn").unwrap();
        assert_eq!(zh_cn.as_str(), "zh-cn");
        assert!(zh_cn.covers("zh-cn") && !zh_cn.covers("zh-tw") && !zh_cn.covers("zh"));
        // A chunk without a tag is English.
        assert!(LangTag::parse("en").unwrap().covers(""));
        assert!(!LangTag::parse("de").unwrap().covers(""));
        for bad in ["", "-", "de-", "_de", "de de", " de", "dé", "x".repeat(16).as_str(), "<script>", "__main__"] {
            assert_eq!(LangTag::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_choice_is_a_tag_or_every_language() {
        assert_eq!(LangTag::choice("de_AT").map(|t| t.map(|t| t.to_string())), Ok(Some("de-at".into())));
        assert_eq!((LangTag::choice("all"), LangTag::choice("")), (Ok(None), Ok(None)));
        let de = LangTag::parse("de").map(LangChoice::Only);
        assert_eq!((LangChoice::of(Some("de")).ok(), LangChoice::of(Some("DE")).ok()), (de, de));
        assert_eq!(
            (LangChoice::of(None), LangChoice::of(Some("question"))),
            (Ok(LangChoice::Question), Ok(LangChoice::Question))
        );
        assert_eq!(
            (LangChoice::of(Some("all")), LangChoice::of(Some(""))),
            (Ok(LangChoice::Every), Ok(LangChoice::Every))
        );
        assert_eq!(LangChoice::of(Some("de DE")), Err(super::NotATag));
        for bad in ["ALL ", "-", "de de", "<script>", "x".repeat(16).as_str()] {
            assert_eq!(LangTag::choice(bad), Err(super::NotATag), "{bad:?}");
        }
    }
}
