//! BERT uncased WordPiece tokenisation, as `tokenizer.json` of all-MiniLM-L6-v2
//! configures it: `BertNormalizer` (clean text, spaces around CJK characters,
//! lowercase, strip accents), `BertPreTokenizer` (split on whitespace and on every
//! punctuation character), greedy longest-match WordPiece with `##` continuations,
//! `[CLS] … [SEP]`, truncation to the model's token budget.
//!
//! The vocabulary is read in place from the encoder file: a sorted string table
//! searched by binary search, so nothing is built per instance.

use unicode_general_category::{get_general_category, GeneralCategory as G};
use unicode_normalization::UnicodeNormalization;

use crate::container::ContainerError;

/// Token ids of the special tokens in the BERT uncased vocabulary.
pub const CLS: u32 = 101;
pub const SEP: u32 = 102;
pub const UNK: u32 = 100;
const MAX_WORD_CHARS: usize = 100;

/// Why a stored vocabulary is not usable: the encoder file is corrupt.
#[derive(Debug, thiserror::Error)]
pub enum VocabError {
    #[error("{offsets} offsets for {tokens} tokens")]
    Count { offsets: usize, tokens: usize },
    #[error("{0}")]
    Offsets(#[from] ContainerError),
    #[error("token {0} is out of order (the table must be sorted)")]
    Unsorted(usize),
    #[error("token id {id} is beyond the vocabulary of {vocab}")]
    BeyondVocab { id: u32, vocab: usize },
}

/// A vocabulary stored as a sorted string table (what the encoder file holds).
#[derive(Clone, Copy)]
pub struct Vocab<'a> {
    /// `offsets[i]..offsets[i+1]` is the i-th string (in sorted order) of `bytes`.
    pub offsets: &'a [u32],
    /// Token id of the i-th sorted string.
    pub ids: &'a [u32],
    pub bytes: &'a [u8],
}

impl<'a> Vocab<'a> {
    fn get(&self, i: usize) -> &'a [u8] {
        // `validate` makes every range valid; the fields are public, so a table
        // built some other way still reads as empty strings rather than panicking.
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => self.bytes.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// The `i`-th string in sorted order (empty past the end).
    pub fn entry(&self, i: usize) -> &'a [u8] {
        self.get(i)
    }

    /// Of the sorted positions `range`, whose strings all start with a prefix of
    /// `prefix`, those that start with `prefix` itself (a contiguous run, as the
    /// table is sorted): two binary searches. Narrowing one byte sequence at a
    /// time lists every piece that starts a text without a per-instance trie.
    pub fn narrow(&self, range: std::ops::Range<usize>, prefix: &[u8]) -> std::ops::Range<usize> {
        let first = |mut lo: usize, mut hi: usize, before: &dyn Fn(&[u8]) -> bool| {
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if before(self.get(mid)) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        let lo = first(range.start, range.end, &|s| s < prefix);
        let hi = first(lo, range.end, &|s| s.starts_with(prefix));
        lo..hi
    }

    /// Every string of the vocabulary, in sorted order.
    pub fn pieces(&self) -> impl Iterator<Item = &'a [u8]> + '_ {
        (0..self.ids.len()).map(|i| self.get(i))
    }

    /// Token id of `piece`, if it is in the vocabulary.
    pub fn id(&self, piece: &str) -> Option<u32> {
        let n = self.ids.len();
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.get(mid).cmp(piece.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.ids.get(mid).copied(),
            }
        }
        None
    }

    /// Builds the sorted table from (token, id) pairs (done once, when packing).
    pub fn build(tokens: &[(String, u32)]) -> (Vec<u32>, Vec<u32>, Vec<u8>) {
        let mut sorted: Vec<&(String, u32)> = tokens.iter().collect();
        sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut offsets = vec![0u32];
        let mut ids = Vec::with_capacity(sorted.len());
        let mut bytes = Vec::new();
        for (t, id) in sorted {
            bytes.extend_from_slice(t.as_bytes());
            offsets.push(bytes.len() as u32);
            ids.push(*id);
        }
        (offsets, ids, bytes)
    }

    /// Checks that the table is well formed for a model of `vocab` tokens (called
    /// when the encoder is opened from a file; one pass over the table, once per
    /// instance): one more offset than tokens, offsets ascending and inside the
    /// string bytes, strings strictly ascending (binary search relies on it) and
    /// every token id below `vocab` (it indexes the embedding table).
    pub fn validate(&self, vocab: usize) -> Result<(), VocabError> {
        if self.offsets.len() != self.ids.len() + 1 {
            return Err(VocabError::Count { offsets: self.offsets.len(), tokens: self.ids.len() });
        }
        crate::container::check_offsets("vocab.offsets", self.offsets, self.bytes.len())?;
        if let Some(i) = (1..self.ids.len()).find(|&i| self.get(i - 1) >= self.get(i)) {
            return Err(VocabError::Unsorted(i));
        }
        if let Some(&id) = self.ids.iter().find(|&&id| id as usize >= vocab) {
            return Err(VocabError::BeyondVocab { id, vocab });
        }
        Ok(())
    }
}

fn is_bert_whitespace(c: char) -> bool {
    c.is_whitespace()
}

fn is_bert_control(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    matches!(get_general_category(c), G::Control | G::Format | G::PrivateUse | G::Surrogate | G::Unassigned)
}

fn is_bert_punctuation(c: char) -> bool {
    let u = c as u32;
    if (33..=47).contains(&u) || (58..=64).contains(&u) || (91..=96).contains(&u) || (123..=126).contains(&u) {
        return true;
    }
    matches!(
        get_general_category(c),
        G::ConnectorPunctuation
            | G::DashPunctuation
            | G::OpenPunctuation
            | G::ClosePunctuation
            | G::InitialPunctuation
            | G::FinalPunctuation
            | G::OtherPunctuation
    )
}

fn is_cjk(c: char) -> bool {
    let u = c as u32;
    (0x4E00..=0x9FFF).contains(&u)
        || (0x3400..=0x4DBF).contains(&u)
        || (0x20000..=0x2A6DF).contains(&u)
        || (0x2A700..=0x2B73F).contains(&u)
        || (0x2B740..=0x2B81F).contains(&u)
        || (0x2B820..=0x2CEAF).contains(&u)
        || (0xF900..=0xFAFF).contains(&u)
        || (0x2F800..=0x2FA1F).contains(&u)
}

/// Normalises and splits `text` into the words WordPiece sees.
pub fn pre_tokenize(text: &str) -> Vec<String> {
    // BertNormalizer: clean text, pad CJK, then strip accents (NFD, drop Mn) and lowercase.
    let mut cleaned = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_bert_control(c) {
            continue;
        }
        if is_bert_whitespace(c) {
            cleaned.push(' ');
        } else if is_cjk(c) {
            cleaned.push(' ');
            cleaned.push(c);
            cleaned.push(' ');
        } else {
            cleaned.push(c);
        }
    }
    let normalized: String =
        cleaned.nfd().filter(|&c| get_general_category(c) != G::NonspacingMark).flat_map(char::to_lowercase).collect();

    // BertPreTokenizer: whitespace split, then every punctuation char is a word.
    let mut words = Vec::new();
    for chunk in normalized.split(is_bert_whitespace) {
        let mut word = String::new();
        for c in chunk.chars() {
            if is_bert_punctuation(c) {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                words.push(c.to_string());
            } else {
                word.push(c);
            }
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    words
}

/// Greedy longest-match WordPiece of one word; `[UNK]` if it cannot be covered.
fn word_piece(word: &str, vocab: &Vocab<'_>, out: &mut Vec<u32>) {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    if chars.len() > MAX_WORD_CHARS {
        out.push(UNK);
        return;
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut candidate = String::new();
    while start < chars.len() {
        let mut end = chars.len();
        let mut found = None;
        while end > start {
            let a = chars[start].0;
            let b = chars.get(end).map_or(word.len(), |c| c.0);
            candidate.clear();
            if start > 0 {
                candidate.push_str("##");
            }
            candidate.push_str(&word[a..b]);
            if let Some(id) = vocab.id(&candidate) {
                found = Some(id);
                break;
            }
            end -= 1;
        }
        match found {
            Some(id) => pieces.push(id),
            None => {
                out.push(UNK);
                return;
            }
        }
        start = end;
    }
    out.extend(pieces);
}

/// `[CLS] pieces… [SEP]`, at most `max_tokens` ids in all.
pub fn encode(text: &str, vocab: &Vocab<'_>, max_tokens: usize) -> Vec<u32> {
    let budget = max_tokens.saturating_sub(2);
    let mut ids = vec![CLS];
    let mut pieces = Vec::new();
    for word in pre_tokenize(text) {
        word_piece(&word, vocab, &mut pieces);
        if pieces.len() >= budget {
            break;
        }
    }
    pieces.truncate(budget);
    ids.extend(pieces);
    ids.push(SEP);
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pre_tokenizer_follows_bert() {
        assert_eq!(pre_tokenize("Hello, World!"), vec!["hello", ",", "world", "!"]);
        assert_eq!(pre_tokenize("Café résumé naïve"), vec!["cafe", "resume", "naive"]);
        assert_eq!(pre_tokenize("--gres=nvme:100"), vec!["-", "-", "gres", "=", "nvme", ":", "100"]);
        assert_eq!(pre_tokenize("日本"), vec!["日", "本"]);
        assert_eq!(pre_tokenize("a\u{200b}b\tc\u{0}"), vec!["ab", "c"]);
    }

    fn toy() -> (Vec<u32>, Vec<u32>, Vec<u8>) {
        let toks: Vec<(String, u32)> = ["[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "a", "##ff", "!"]
            .iter()
            .enumerate()
            .map(|(i, t)| {
                (
                    t.to_string(),
                    match *t {
                        "[UNK]" => UNK,
                        "[CLS]" => CLS,
                        "[SEP]" => SEP,
                        _ => 1000 + i as u32,
                    },
                )
            })
            .collect();
        Vocab::build(&toks)
    }

    #[test]
    fn word_piece_is_greedy_longest_match() {
        let (o, i, b) = toy();
        let v = Vocab { offsets: &o, ids: &i, bytes: &b };
        v.validate(2000).unwrap();
        let e = v.validate(1005).unwrap_err();
        assert!(matches!(e, VocabError::BeyondVocab { vocab: 1005, .. }), "{e}");
        assert!(e.to_string().contains("beyond the vocabulary"), "{e}");
        let unsorted = [o[0], o[2], o[1]];
        let bad = Vocab { offsets: &o[..3], ids: &i[..2], bytes: &b };
        assert!(bad.validate(2000).is_ok());
        let bad = Vocab { offsets: &unsorted, ids: &i[..2], bytes: &b };
        assert!(bad.validate(2000).is_err(), "offsets out of order");
        assert_eq!(v.id("##aff"), Some(1004));
        assert_eq!(encode("Unaffable!", &v, 16), vec![CLS, 1003, 1004, 1005, 1008, SEP]);
        assert_eq!(encode("unknown", &v, 16), vec![CLS, UNK, SEP]);
        assert_eq!(encode("un un un un", &v, 4), vec![CLS, 1003, 1003, SEP]);
        assert_eq!(encode("", &v, 8), vec![CLS, SEP]);
    }
}
