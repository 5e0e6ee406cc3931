//! Text → BM25 terms, the same at build and at query time.
//!
//! The base is the `bm25` crate's English tokenizer (Unicode word boundaries,
//! folding to ASCII, lowercase, stop words, Snowball stemming). On its own it
//! breaks what help-desk users search for most precisely: `a-put` loses `a` as a
//! stop word and becomes `put`; `--gres=nvme:100` becomes `gres`, `nvme`, `100`;
//! `q_fiqci` stays whole, so `fiqci` alone never finds it. So every
//! whitespace-separated piece that mixes letters or digits with identifier
//! punctuation (`- _ = : . / @ #`) also yields
//! - the whole piece, lowercased and trimmed of surrounding quotes and brackets,
//!   as an exact term (prefixed `=` so it cannot collide with a word), and
//! - each of its alphanumeric parts, lowercased and unstemmed.
//!
//! A query for `--gres=nvme:100` then matches the exact term, a query for
//! `fiqci` matches the part, and ordinary words behave as BM25 expects.

use std::sync::OnceLock;

use bm25::{DefaultTokenizer, Language, Tokenizer};

fn base() -> &'static DefaultTokenizer {
    static T: OnceLock<DefaultTokenizer> = OnceLock::new();
    T.get_or_init(|| {
        DefaultTokenizer::builder()
            .language_mode(Language::English)
            .normalization(true)
            .stemming(true)
            .stopwords(true)
            .build()
    })
}

const IDENT_PUNCT: &[char] = &['-', '_', '=', ':', '.', '/', '@', '#'];

/// The terms of `text`, in order, with repetitions (term frequency matters).
pub fn terms(text: &str) -> Vec<String> {
    let mut out = base().tokenize(text);
    for piece in text.split_whitespace() {
        let trimmed =
            piece.trim_matches(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_' || c == '#' || c == '.'));
        let trimmed = trimmed.trim_end_matches('.');
        if trimmed.is_empty() || !trimmed.contains(IDENT_PUNCT) || !trimmed.chars().any(char::is_alphanumeric) {
            continue;
        }
        // Only pieces that look like identifiers, not prose with a full stop or a URL.
        if trimmed.contains("://") || trimmed.chars().filter(|c| IDENT_PUNCT.contains(c)).count() > 8 {
            continue;
        }
        let lower = trimmed.to_lowercase();
        out.push(format!("={lower}"));
        for part in lower.split(|c: char| !c.is_alphanumeric()) {
            if !part.is_empty() && part.len() < 40 {
                out.push(part.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(text: &str, term: &str) -> bool {
        terms(text).iter().any(|t| t == term)
    }

    #[test]
    fn identifiers_survive() {
        assert!(has("Use `--gres=nvme:100` to get local disk", "=--gres=nvme:100"));
        assert!(has("Upload with a-put.", "=a-put"));
        assert!(has("Upload with a-put.", "a"));
        assert!(has("partition q_fiqci on LUMI", "=q_fiqci"));
        assert!(has("partition q_fiqci on LUMI", "fiqci"));
        assert!(has("Error ERR_MFA_TIMEOUT shown", "mfa"));
        assert_eq!(terms("--gres=nvme:100").iter().filter(|t| t.starts_with('=')).count(), 1);
    }

    #[test]
    fn prose_is_plain_bm25() {
        let t = terms("The students were registering for courses.");
        assert!(t.contains(&"student".to_string()), "{t:?}");
        assert!(!t.iter().any(|x| x.starts_with('=')), "{t:?}");
        assert!(!t.contains(&"the".to_string()));
    }

    #[test]
    fn urls_and_sentences_are_not_identifiers() {
        assert!(!terms("see https://docs.example.org/a/b for more").iter().any(|t| t.starts_with("=https")));
        assert!(!terms("It ends here.").iter().any(|t| t.starts_with('=')));
    }
}
