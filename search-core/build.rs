//! Generates the BM25 analyzer's data from the packages that define it, so the
//! analyzer carries only what it uses (this matters in the browser's engine):
//!
//! - `fold.rs`: `FOLD`, the ASCII spelling of each character in the Latin, Latin
//!   punctuation and symbol blocks, as `deunicode` transliterates it, sorted by
//!   character. Characters outside those blocks are kept as they are when they are
//!   letters or digits (see `index::analyzer`).
//! - `stopwords.rs`: `STOPWORDS`, the English list of `stop-words` (NLTK's, as the `bm25` crate used),
//!   folded the same way, sorted and without duplicates; and `STOPS`, NLTK's list
//!   of each other language (`index::lang`), lowercased, with each word's folded
//!   spelling beside it (a reader types "uber" for "über"), sorted, one string
//!   of lines per language (a few bytes a word rather than a pointer pair),
//!   with the question words NLTK's lists leave out ([`QUESTION_WORDS`]) and
//!   the spoken forms of their pronouns and particles ([`SPOKEN`]).

use std::fmt::Write as _;
use std::path::Path;

/// The blocks folded to ASCII: Latin-1 Supplement and Latin Extended-A/B, IPA and
/// spacing modifiers, combining diacritics (to nothing), Latin Extended Additional,
/// general punctuation, super- and subscripts, currency, letterlike symbols,
/// number forms, arrows, mathematical operators, and the fullwidth ASCII forms.
const BLOCKS: &[(u32, u32)] = &[(0x00A0, 0x036F), (0x1E00, 0x1EFF), (0x2000, 0x22FF), (0xFF01, 0xFF5E)];

/// The languages besides English whose NLTK stop list the analyzer uses, sorted
/// (the ones `index::lang` stems, and a few it only folds).
const NLTK: &[&str] = &[
    "ar", "az", "da", "de", "el", "es", "fi", "fr", "hu", "id", "it", "kk", "ne", "nl", "no", "pt", "ro", "ru", "sl",
    "sv", "tg", "tr",
];

/// The words a question opens with that NLTK's list of the language leaves
/// out, where English's has them all (*how, what, where, when, why, who,
/// which*): French lacks *comment, où, quand, pourquoi, combien*, Spanish
/// *cómo, dónde, cuándo*, Finnish *miten, kuinka, milloin* and its `-ko`
/// questions (*voinko*, *onko*). Pages seldom use them, so a natural question
/// read with them carried words no chunk has: BM25 and the "no results" rule
/// counted them against the question (a Finnish "Miten vaihdan salasanani?"
/// over a help centre's pages found nothing), and nothing told the query's
/// language. Modal verbs are left out but for the asker's own (*puedo*,
/// *posso*, *peux*): "pueden ser máquinas virtuales" is how a page answers
/// "¿pueden ser máquinas virtuales?", and a stop word would lose the match.
const QUESTION_WORDS: &[(&str, &[&str])] = &[
    ("da", &["hvordan", "hvornår", "hvorfor", "hvem", "hvilken", "hvilket", "hvilke"]),
    (
        "de",
        &[
            "wann", "warum", "wer", "wen", "wem", "wessen", "wieso", "weshalb", "weswegen", "woher", "wohin", "wozu",
            "wieviel", "wieviele",
        ],
    ),
    (
        "es",
        &[
            "cómo", "dónde", "cuándo", "cuál", "cuáles", "quién", "quiénes", "cuánto", "cuánta", "cuántos", "cuántas",
            "puedo", "debo",
        ],
    ),
    (
        "fi",
        &[
            "miten",
            "kuinka",
            "milloin",
            "minne",
            "paljonko",
            "montako",
            "millainen",
            "millaisen",
            "millaista",
            "voinko",
            "voiko",
            "voivatko",
            "onko",
            "ovatko",
            "saako",
            "saanko",
            "pitääkö",
            "täytyykö",
            "tarvitseeko",
            "tarvitsenko",
        ],
    ),
    (
        "fr",
        &[
            "comment",
            "où",
            "quand",
            "pourquoi",
            "combien",
            "quoi",
            "quel",
            "quelle",
            "quels",
            "quelles",
            "lequel",
            "laquelle",
            "lesquels",
            "lesquelles",
            "puis",
            "peux",
            "dois",
        ],
    ),
    ("it", &["cosa", "quando", "quali", "posso", "devo"]),
    ("nl", &["waar", "wanneer", "waarom", "welke", "welk"]),
    ("no", &["hvilket"]),
    ("pt", &["onde", "porque", "porquê", "quais", "quanto", "quanta", "quantos", "quantas", "posso", "devo"]),
];

/// The spoken forms of words NLTK's lists have in their written form, which
/// a reader asking in everyday words types and no page writes: Finnish
/// *mä, mun, mulla* for *minä, minun, minulla* (the colloquial pronouns of
/// nearly every natural Finnish question) and *onks, voiks* for *onko,
/// voiko*; French *ça* (*cela* is listed); German's modal particles *mal,
/// halt, eh* and *nich, nix*. Read as content words they are words no chunk
/// has, which BM25 and the "no results" rule count against the question.
/// Left out: forms that fold into another word (*mää* is *maa*, "land";
/// *sää*, *saa*, "gets").
const SPOKEN: &[(&str, &[&str])] = &[
    ("de", &["mal", "halt", "eh", "nich", "nix"]),
    (
        "fi",
        &[
            "mä", "sä", "mun", "sun", "mul", "sul", "mulla", "sulla", "mulle", "sulle", "multa", "sulta", "mua", "sua",
            "meil", "teil", "onks", "oisko", "voiks", "voisko", "saaks",
        ],
    ),
    ("fr", &["ça"]),
];

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let mut fold =
        String::from("/// (character, ASCII spelling), sorted by character.\npub static FOLD: &[(char, &str)] = &[\n");
    for (lo, hi) in BLOCKS {
        for c in (*lo..=*hi).filter_map(char::from_u32) {
            if let Some(s) = deunicode::deunicode_char(c) {
                writeln!(fold, "    ({c:?}, {s:?}),").expect("writing to a String");
            }
        }
    }
    fold.push_str("];\n");
    write(Path::new(&out).join("fold.rs"), &fold);

    let mut words: Vec<String> =
        stop_words::get(stop_words::LANGUAGE::English).iter().map(|w| deunicode::deunicode(w).to_lowercase()).collect();
    words.sort();
    words.dedup();
    let mut stop = String::from("/// English stop words, sorted.\npub static STOPWORDS: &[&str] = &[\n");
    for w in &words {
        writeln!(stop, "    {w:?},").expect("writing to a String");
    }
    stop.push_str("];\n");
    stop.push_str(
        "/// (language code, its stop words: sorted lines), by code.\npub static STOPS: &[(&str, &str)] = &[\n",
    );
    for code in NLTK {
        let mut words: Vec<String> = Vec::new();
        let asked = QUESTION_WORDS.iter().chain(SPOKEN).filter(|q| q.0 == *code).flat_map(|q| q.1.iter().copied());
        for w in stop_words::get(code).iter().copied().chain(asked) {
            let lower = w.trim().to_lowercase();
            if lower.is_empty() {
                continue;
            }
            words.push(deunicode::deunicode(&lower).to_lowercase());
            words.push(lower);
        }
        words.sort();
        words.dedup();
        writeln!(stop, "    ({code:?}, {:?}),", words.join("\n")).expect("writing to a String");
    }
    stop.push_str("];\n");
    write(Path::new(&out).join("stopwords.rs"), &stop);
    println!("cargo:rerun-if-changed=build.rs");
}

fn write(path: impl AsRef<Path>, text: &str) {
    std::fs::write(path.as_ref(), text).unwrap_or_else(|e| panic!("writing {}: {e}", path.as_ref().display()));
}
