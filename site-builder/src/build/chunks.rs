//! The search side of the build: pages chunked, the chunks filtered and
//! enriched, then embedded and written as the hybrid index.

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use search_core::chunk::Chunk;
use search_core::encoder::DIM;
use search_core::index as hybrid;
use search_core::index::lang::Lang;

use super::{progress, BuildError, Built, IndexOptions};
use crate::chunk::{chunk_page, ChunkOptions};
use crate::embed::{embed_all, EmbedCache, EncoderFile};
use crate::filter::{HeuristicJudge, Rule, StubJudge};
use crate::report::{Dropped, FilterCount, IndexReport, Report, Warning};
use crate::{enrich, filter};

/// Embeds the chunks and writes the index; returns (index bytes, encoder bytes).
pub(super) fn build_index(
    chunks: &[Chunk],
    io: &IndexOptions,
    show: bool,
    report: &mut Report,
) -> Result<(Vec<u8>, Vec<u8>), BuildError> {
    let started = Instant::now();
    let (model_dir, why) = choose_model(chunks, io.model_dir.as_deref());
    let file = EncoderFile::from_model_dir(&model_dir)?;
    let enc = file.encoder().map_err(crate::embed::EmbedError::from)?;
    // Only texts the cache has not seen are embedded.
    let cache = io.embed_cache.as_deref().map(EmbedCache::load);
    let keys: Vec<crate::embed::CacheKey> =
        chunks.iter().map(|c| EmbedCache::key(enc.fingerprint(), io.long_text, &c.index_text)).collect();
    let missing: Vec<usize> =
        (0..chunks.len()).filter(|&i| cache.as_ref().and_then(|c| c.get(&keys[i])).is_none()).collect();
    let texts: Vec<&str> = missing.iter().map(|&i| chunks[i].index_text.as_str()).collect();
    let bar = progress(show, texts.len() as u64, "embed");
    let embed_started = Instant::now();
    let fresh = embed_all(&enc, &texts, io.long_text, crate::embed::threads(), &|done| bar.set_position(done as u64));
    bar.finish_and_clear();
    let embed_seconds = embed_started.elapsed().as_secs_f64();
    let mut vectors = vec![0f32; chunks.len() * DIM];
    for (j, &i) in missing.iter().enumerate() {
        vectors[i * DIM..(i + 1) * DIM].copy_from_slice(&fresh[j * DIM..(j + 1) * DIM]);
    }
    if let Some(cache) = &cache {
        for i in 0..chunks.len() {
            if let Some(v) = cache.get(&keys[i]) {
                vectors[i * DIM..(i + 1) * DIM].copy_from_slice(v);
            }
        }
    }
    if let Some(cache) = cache {
        let entries: Vec<(crate::embed::CacheKey, &[f32])> =
            (0..chunks.len()).map(|i| (keys[i], &vectors[i * DIM..(i + 1) * DIM])).collect();
        cache.save(&entries)?;
    }
    // The multilingual model ships only the pieces the knowledge base uses:
    // vectors the same, the file a third (the component must stay deployable).
    // (`texts` above are the ones embedded now; the report counts them.)
    let model = file.model_name().map_err(crate::embed::EmbedError::from)?;
    let all: Vec<&str> = chunks.iter().map(|c| c.index_text.as_str()).collect();
    let mut langs: Vec<Lang> = chunks.iter().filter_map(|c| Lang::from_tag(&c.lang)).collect();
    langs.sort();
    langs.dedup();
    let shipped = if io.full_vocabulary { file } else { file.pruned_to(&all, &langs)? };
    let params = hybrid::BuildParams {
        bm25: io.bm25,
        vectors: io.vectors,
        encoder: model.into(),
        encoder_fingerprint: shipped.encoder().map_err(crate::embed::EmbedError::from)?.fingerprint(),
        default_mode: io.default_mode,
        alpha: io.alpha,
        rrf_k: 60.0,
        norm_depth: io.norm_depth,
        long_text: io.long_text.name().into(),
        graph: if chunks.len() >= io.hnsw_threshold {
            Some(crate::hnsw::build_graph(&vectors, DIM, 64).map_err(|e| BuildError::Graph(e.to_string()))?)
        } else {
            None
        },
        built_unix: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
    };
    let index = hybrid::build(chunks, &vectors, DIM, &params);
    report.index = Some(IndexReport {
        chunks: chunks.len(),
        bytes: index.len(),
        bytes_per_chunk: if chunks.is_empty() { 0.0 } else { index.len() as f64 / chunks.len() as f64 },
        encoder_bytes: shipped.bytes().len(),
        model: model.into(),
        model_reason: why,
        vectors: format!("{:?}", io.vectors).to_lowercase(),
        long_text: io.long_text.name().into(),
        default_mode: io.default_mode.name().into(),
        hnsw: chunks.len() >= io.hnsw_threshold,
        embedded: texts.len(),
        reused: chunks.len() - texts.len(),
        embed_seconds,
        chunks_per_second: if embed_seconds > 0.0 && !texts.is_empty() {
            texts.len() as f64 / embed_seconds
        } else {
            0.0
        },
        seconds: started.elapsed().as_secs_f64(),
    });
    Ok((index, shipped.bytes().to_vec()))
}

/// The model to embed with, and why: `--model` when given; else MiniLM for a
/// knowledge base all in English, multilingual-e5-small when any chunk is in
/// another language (MiniLM reads English only: over k8s-concepts' German pages
/// its dense side alone finds a third of what BM25 does).
pub(super) fn choose_model(chunks: &[Chunk], given: Option<&std::path::Path>) -> (std::path::PathBuf, String) {
    if let Some(dir) = given {
        return (dir.to_path_buf(), format!("--model {}", dir.display()));
    }
    let mut other: BTreeMap<&str, usize> = BTreeMap::new();
    for c in chunks.iter().filter(|c| c.lang != "en") {
        *other.entry(c.lang.as_str()).or_default() += 1;
    }
    let langs: Vec<String> = other.iter().map(|(l, n)| format!("{l} {n}")).collect();
    let others: usize = other.values().sum();
    if others == 0 {
        return (crate::embed::default_model_dir(), "every chunk is in English".into());
    }
    // As for the languages queries are read in (`IndexInfo::languages`): a
    // cookie notice in Finnish does not make an English knowledge base
    // multilingual.
    if others * 20 < chunks.len() {
        let why = format!("English but for {others} of {} chunks ({}), under 5 %", chunks.len(), langs.join(", "));
        return (crate::embed::default_model_dir(), why);
    }
    (
        crate::embed::default_e5_dir(),
        format!("chunks in other languages than English ({}): the multilingual model", langs.join(", ")),
    )
}

pub(super) fn chunk_filter_enrich(
    built: &[Built],
    opts: &ChunkOptions,
    filters: bool,
    judge: &dyn StubJudge,
    show_progress: bool,
    report: &mut Report,
) -> Vec<Chunk> {
    let mut kept = Vec::new();
    let mut dropped_by: BTreeMap<Rule, usize> = BTreeMap::new();
    let mut candidates = Vec::new();
    let mut per_page: Vec<(usize, usize)> = Vec::new(); // (page index, kept count)
    for (pi, b) in built.iter().enumerate() {
        let raw = chunk_page(&b.text_md, opts);
        report.chunks.before_filters += raw.len();
        let mut kept_here = 0;
        for rc in raw {
            let chunk = Chunk {
                id: Chunk::make_id(&b.page.id, rc.n),
                page_id: b.page.id.clone(),
                n: rc.n,
                title: b.page.title.clone(),
                aliases: b.page.aliases.clone(),
                path: b.chain.clone(),
                headers: rc.headers.clone(),
                url: b.url.clone(),
                anchor: rc.anchor.clone(),
                version: b.page.version.clone(),
                last_updated: b.page.last_updated.clone(),
                lang: crate::language::of_chunk(&b.lang, &rc.text),
                stands_in: b.stands_in.clone(),
                index_text: String::new(),
                text: rc.text,
            };
            if let Some(rule) = filter::rule_for(&chunk.text, &chunk.headers).filter(|_| filters) {
                drop_chunk(report, &mut dropped_by, &chunk, &b.page.source, rule);
                continue;
            }
            if filters && filter::is_stub_candidate(&chunk.text) {
                candidates.push((pi, kept.len()));
            }
            kept.push(chunk);
            kept_here += 1;
        }
        per_page.push((pi, kept_here));
    }

    // The stub check, which may call an LLM once per candidate.
    report.chunks.stub_candidates = candidates.len();
    let bar = progress(show_progress && !candidates.is_empty(), candidates.len() as u64, "stubs");
    let mut stub_drops = HashSet::new();
    for &(pi, ci) in &candidates {
        let chunk = &kept[ci];
        let verdict = judge.is_stub(&chunk.title, &chunk.text).unwrap_or_else(|why| {
            report.warnings.push(Warning {
                file: built[pi].page.source.clone(),
                line: None,
                message: format!("stub check for {} fell back to the heuristic: {why}", chunk.id),
            });
            HeuristicJudge::default().judge(&chunk.text)
        });
        if verdict {
            stub_drops.insert(ci);
            drop_chunk(report, &mut dropped_by, chunk, &built[pi].page.source, Rule::Stub);
            per_page[pi].1 -= 1;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut chunks: Vec<Chunk> =
        kept.into_iter().enumerate().filter(|(i, _)| !stub_drops.contains(i)).map(|(_, c)| c).collect();

    let mut remaining = report.chunks.before_filters;
    for rule in Rule::ALL {
        let dropped = dropped_by.get(&rule).copied().unwrap_or(0);
        remaining -= dropped;
        report.chunks.filters.push(FilterCount { rule, dropped, remaining });
    }
    report.chunks.after_filters = chunks.len();
    report.chunks.pages_without_chunks =
        per_page.iter().filter(|(_, k)| *k == 0).map(|(pi, _)| built[*pi].page.source.clone()).collect();

    for c in &mut chunks {
        c.index_text = enrich::index_text(
            &c.path,
            &c.aliases,
            &c.headers,
            c.version.as_deref(),
            c.last_updated.as_deref(),
            &c.text,
        );
    }
    chunks
}

fn drop_chunk(report: &mut Report, by: &mut BTreeMap<Rule, usize>, chunk: &Chunk, file: &str, rule: Rule) {
    *by.entry(rule).or_default() += 1;
    let body = filter::body_of(&chunk.text);
    let preview: String = body.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(80).collect();
    report.dropped.push(Dropped { chunk_id: chunk.id.clone(), file: file.to_string(), rule, preview });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn chunks(langs: &[(&str, usize)]) -> Vec<Chunk> {
        let mut out = Vec::new();
        for (lang, n) in langs {
            for i in 0..*n {
                let mut c = search_core::testing::chunk(&format!("{lang}{i}"), lang, "t", "text");
                c.lang = (*lang).into();
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn the_model_follows_the_languages_unless_given() {
        let (dir, why) = choose_model(&chunks(&[("en", 40)]), None);
        assert_eq!((dir, why.as_str()), (crate::embed::default_model_dir(), "every chunk is in English"));
        // One notice in Finnish does not make a knowledge base multilingual…
        let (dir, why) = choose_model(&chunks(&[("en", 99), ("fi", 1)]), None);
        assert_eq!(dir, crate::embed::default_model_dir());
        assert!(why.contains("fi 1") && why.contains("under 5 %"), "{why}");
        // …a tenth in German does.
        let (dir, why) = choose_model(&chunks(&[("en", 90), ("de", 10)]), None);
        assert_eq!(dir, crate::embed::default_e5_dir());
        assert!(why.contains("de 10"), "{why}");
        // What the command line says stands.
        let (dir, why) = choose_model(&chunks(&[("de", 10)]), Some(Path::new("/m")));
        assert_eq!((dir.as_path(), why.as_str()), (Path::new("/m"), "--model /m"));
    }
}
