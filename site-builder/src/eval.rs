//! `site-builder eval`: retrieval quality on a question set over a built index, or
//! on a BEIR benchmark folder (indexed on the fly, one document = one chunk).
//!
//! Metrics, for a ranked list of chunks:
//! - `recall_at_k`: QA — 1 if a chunk of the source page is in the top k (page
//!   hit), averaged; BEIR — the share of relevant documents in the top 100.
//! - `context_precision`: the advising paper's rank-aware precision,
//!   Σᵢ precision@i · vᵢ / (relevant chunks in the top k).
//! - `mrr_at_10`: 1 / rank of the first relevant result within 10.
//! - `ndcg_at_10`: graded (BEIR qrels) or binary (QA) gain `rel / log2(rank + 1)`,
//!   over the ideal ordering.
//!
//! For QA sets, MRR and NDCG are computed on the ranking of *pages* (a page's first
//! chunk stands for it), since the question names a page; recall and context
//! precision on the chunks themselves.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use search_core::chunk::Chunk;
use search_core::container::AlignedBytes;
use search_core::index::lang::LangChoice;
use search_core::index::{self as hybrid, Index, Mode, SearchParams, VectorStorage};
use serde::Serialize;

use crate::embed::{embed_all, EncoderFile, LongText};
use search_service::service::{Query, Service};

/// Rank-aware context precision at k: `Σ_{i≤k} precision@i · v_i / Σ_{i≤k} v_i`.
pub fn context_precision(rel: &[bool], k: usize) -> f64 {
    let mut hits = 0.0;
    let mut sum = 0.0;
    for (i, &r) in rel.iter().take(k).enumerate() {
        if r {
            hits += 1.0;
            sum += hits / (i as f64 + 1.0);
        }
    }
    if hits == 0.0 {
        0.0
    } else {
        sum / hits
    }
}

/// 1 / rank of the first relevant item within `k`, else 0.
pub fn reciprocal_rank(rel: &[bool], k: usize) -> f64 {
    rel.iter().take(k).position(|&r| r).map_or(0.0, |i| 1.0 / (i as f64 + 1.0))
}

/// NDCG@k with gains `gains` (in ranked order) against all relevance grades `ideal`.
pub fn ndcg(gains: &[f64], ideal: &[f64], k: usize) -> f64 {
    let dcg = |g: &[f64]| g.iter().take(k).enumerate().map(|(i, &x)| x / (i as f64 + 2.0).log2()).sum::<f64>();
    let mut best = ideal.to_vec();
    best.sort_by(|a, b| b.total_cmp(a));
    let idcg = dcg(&best);
    if idcg == 0.0 {
        0.0
    } else {
        dcg(gains) / idcg
    }
}

/// Metrics of one mode, averaged over the questions (`--json`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Metrics {
    pub mode: String,
    pub k: usize,
    pub questions: usize,
    pub recall_at_k: f64,
    /// The share of questions whose page is in the top k of a search that
    /// matched: what the reader is shown (`/api/search` answers "no results"
    /// to a search that did not match, however it ranked;
    /// `search_core::index::relevance`). `None` for BEIR, searched without
    /// the rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shown_at_k: Option<f64>,
    pub context_precision: f64,
    pub mrr_at_10: f64,
    pub ndcg_at_10: f64,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub per_category: BTreeMap<String, CategoryMetrics>,
    /// Questions whose source page was not in the top k.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub misses: Vec<String>,
    pub query_ms_p50: f64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct CategoryMetrics {
    pub questions: usize,
    pub recall_at_k: f64,
    pub shown_at_k: f64,
    pub context_precision: f64,
    pub mrr_at_10: f64,
    pub ndcg_at_10: f64,
}

#[derive(Default)]
struct Acc {
    n: usize,
    recall: f64,
    shown: f64,
    cp: f64,
    mrr: f64,
    ndcg: f64,
}

impl Acc {
    fn add(&mut self, recall: f64, shown: f64, cp: f64, mrr: f64, ndcg: f64) {
        self.n += 1;
        self.recall += recall;
        self.shown += shown;
        self.cp += cp;
        self.mrr += mrr;
        self.ndcg += ndcg;
    }

    fn mean(&self) -> CategoryMetrics {
        let d = self.n.max(1) as f64;
        CategoryMetrics {
            questions: self.n,
            recall_at_k: self.recall / d,
            shown_at_k: self.shown / d,
            context_precision: self.cp / d,
            mrr_at_10: self.mrr / d,
            ndcg_at_10: self.ndcg / d,
        }
    }
}

/// Why an evaluation could not run.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("{path}: {message}")]
    Input { path: PathBuf, message: String },
    #[error(transparent)]
    Search(#[from] crate::search::SearchError),
    #[error(transparent)]
    Embed(#[from] crate::embed::EmbedError),
    #[error("search failed: {0}")]
    Service(String),
}

fn input(path: &Path, message: impl Into<String>) -> EvalError {
    EvalError::Input { path: path.to_path_buf(), message: message.into() }
}

/// One question of a QA CSV.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Question {
    pub question: String,
    #[serde(default)]
    pub ground_truth: String,
    #[serde(default)]
    pub category: String,
    #[serde(default)]
    pub source_path: String,
    pub source_file: String,
}

/// Reads `question,ground_truth,category,source_path,source_file`.
pub fn read_qa(path: &Path) -> Result<Vec<Question>, EvalError> {
    let mut r = csv::Reader::from_path(path).map_err(|e| input(path, e.to_string()))?;
    let mut out = Vec::new();
    for (i, row) in r.deserialize().enumerate() {
        let q: Question = row.map_err(|e| input(path, format!("row {}: {e}", i + 2)))?;
        out.push(q);
    }
    if out.is_empty() {
        return Err(input(path, "no questions"));
    }
    Ok(out)
}

/// Reads a list of queries, one per line (`eval/no-match.txt`): blank lines
/// and lines starting with `#` left out.
pub fn read_queries(path: &Path) -> Result<Vec<String>, EvalError> {
    let text = std::fs::read_to_string(path).map_err(|e| input(path, e.to_string()))?;
    Ok(text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(String::from).collect())
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Evaluates a QA set against a built index, each question searched in `lang`
/// (falling back to every language as `/api/search` does).
pub fn eval_qa(
    svc: &Service<'_>,
    questions: &[Question],
    k: usize,
    mode: Mode,
    base: &SearchParams,
    lang: LangChoice,
) -> Result<Metrics, EvalError> {
    let origin = std::time::Instant::now();
    let clock = || origin.elapsed().as_secs_f64() * 1e3;
    let depth = k.max(10);
    let p = SearchParams { k: depth.max(base.depth), mode, ..*base };
    let mut all = Acc::default();
    let mut cats: BTreeMap<String, Acc> = BTreeMap::new();
    let mut misses = Vec::new();
    let mut times = Vec::new();
    for q in questions {
        let params = SearchParams { lang: svc.search_language(lang, &q.question), ..p };
        let query = Query { text: &q.question, params, offset: 0, vector: None, count_more: false };
        let (ranked, _) = svc.rank_in_language(&query, &clock).map_err(|e| EvalError::Service(e.to_string()))?;
        times.push(ranked.timings.total);
        let hits = ranked.hits;
        let target = crate::build::page_url(&q.source_file.replace('\\', "/"));
        let urls: Vec<String> = hits.iter().map(|h| svc.chunk(h.doc).map(|m| m.url).unwrap_or_default()).collect();
        let rel: Vec<bool> = urls.iter().map(|u| *u == target).collect();
        let recall = f64::from(u8::from(rel.iter().take(k).any(|&r| r)));
        let shown = if ranked.evidence.matched() { recall } else { 0.0 };
        let cp = context_precision(&rel, k);
        let mut seen = HashSet::new();
        let pages: Vec<bool> = urls.iter().filter(|u| seen.insert(u.as_str())).map(|u| *u == target).collect();
        let mrr = reciprocal_rank(&pages, 10);
        let gains: Vec<f64> = pages.iter().map(|&r| f64::from(u8::from(r))).collect();
        let nd = ndcg(&gains, &[1.0], 10);
        all.add(recall, shown, cp, mrr, nd);
        cats.entry(q.category.clone()).or_default().add(recall, shown, cp, mrr, nd);
        if recall == 0.0 {
            misses.push(q.question.clone());
        }
    }
    let m = all.mean();
    Ok(Metrics {
        mode: mode.name().into(),
        k,
        questions: m.questions,
        recall_at_k: m.recall_at_k,
        shown_at_k: Some(m.shown_at_k),
        context_precision: m.context_precision,
        mrr_at_10: m.mrr_at_10,
        ndcg_at_10: m.ndcg_at_10,
        per_category: cats.iter().filter(|(c, _)| !c.is_empty()).map(|(c, a)| (c.clone(), a.mean())).collect(),
        misses,
        query_ms_p50: median(times),
    })
}

/// A BEIR folder loaded.
pub struct Beir {
    pub name: String,
    pub docs: Vec<Chunk>,
    pub queries: Vec<(String, String)>,
    /// query id → (doc id → grade)
    pub qrels: HashMap<String, HashMap<String, f64>>,
}

fn read_maybe_gz(dir: &Path, stem: &str) -> Result<String, EvalError> {
    let plain = dir.join(stem);
    let gz = dir.join(format!("{stem}.gz"));
    if plain.exists() {
        return std::fs::read_to_string(&plain).map_err(|e| input(&plain, e.to_string()));
    }
    let f = std::fs::File::open(&gz).map_err(|e| input(&gz, format!("{e} (nor {} found)", plain.display())))?;
    let mut s = String::new();
    flate2::read::GzDecoder::new(f).read_to_string(&mut s).map_err(|e| input(&gz, e.to_string()))?;
    Ok(s)
}

/// Loads `corpus.jsonl[.gz]`, `queries.jsonl[.gz]`, `qrels/test.tsv`.
pub fn load_beir(dir: &Path) -> Result<Beir, EvalError> {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut docs = Vec::new();
    for (i, line) in read_maybe_gz(dir, "corpus.jsonl")?.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| input(&dir.join("corpus.jsonl"), format!("line {}: {e}", i + 1)))?;
        let id = v["_id"].as_str().map(str::to_string).unwrap_or_else(|| v["_id"].to_string());
        let title = v["title"].as_str().unwrap_or_default().to_string();
        let text = v["text"].as_str().unwrap_or_default().to_string();
        let index_text = if title.is_empty() { text.clone() } else { format!("{title}\n{text}") };
        docs.push(Chunk {
            id: id.clone(),
            page_id: id,
            n: 0,
            title,
            aliases: Vec::new(),
            path: Vec::new(),
            headers: Vec::new(),
            url: String::new(),
            anchor: String::new(),
            version: None,
            last_updated: None,
            lang: "en".into(),
            stands_in: Vec::new(),
            text,
            index_text,
        });
    }
    let mut queries = Vec::new();
    for (i, line) in read_maybe_gz(dir, "queries.jsonl")?.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| input(&dir.join("queries.jsonl"), format!("line {}: {e}", i + 1)))?;
        let id = v["_id"].as_str().map(str::to_string).unwrap_or_else(|| v["_id"].to_string());
        queries.push((id, v["text"].as_str().unwrap_or_default().to_string()));
    }
    let qrels_path = dir.join("qrels/test.tsv");
    let mut qrels: HashMap<String, HashMap<String, f64>> = HashMap::new();
    for (i, line) in
        std::fs::read_to_string(&qrels_path).map_err(|e| input(&qrels_path, e.to_string()))?.lines().enumerate()
    {
        let f: Vec<&str> = line.split('\t').collect();
        if i == 0 && f.first().is_some_and(|h| h.contains("query")) {
            continue;
        }
        if f.len() < 3 {
            continue;
        }
        let grade: f64 = f[2].trim().parse().map_err(|_| input(&qrels_path, format!("line {}: bad score", i + 1)))?;
        qrels.entry(f[0].to_string()).or_default().insert(f[1].to_string(), grade);
    }
    queries.retain(|(id, _)| qrels.contains_key(id));
    Ok(Beir { name, docs, queries, qrels })
}

/// Vectors of the BEIR documents, cached in `cache` (keyed by name and settings) so
/// that trying modes does not re-embed the corpus.
pub fn beir_vectors(
    beir: &Beir,
    enc_file: &EncoderFile,
    long: LongText,
    cache: Option<&Path>,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Vec<f32>, EvalError> {
    let enc = enc_file.encoder().map_err(crate::embed::EmbedError::from)?;
    let key = format!("{}-{}-{}-{:016x}.f32", beir.name, beir.docs.len(), long.name(), enc.fingerprint());
    if let Some(dir) = cache {
        if let Ok(bytes) = std::fs::read(dir.join(&key)) {
            if bytes.len() == beir.docs.len() * search_core::encoder::DIM * 4 {
                return Ok(bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect());
            }
        }
    }
    let texts: Vec<&str> = beir.docs.iter().map(|d| d.index_text.as_str()).collect();
    let v = embed_all(&enc, &texts, long, crate::embed::threads(), progress);
    if let Some(dir) = cache {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let _ = std::fs::create_dir_all(dir);
        let _ = crate::output::write_atomic(&dir.join(&key), &bytes);
    }
    Ok(v)
}

/// Builds the BEIR index in memory (with an HNSW graph when `graph` is given).
pub fn beir_index(
    beir: &Beir,
    vectors: &[f32],
    storage: VectorStorage,
    fingerprint: u64,
    graph: Option<hybrid::graph::Graph>,
) -> AlignedBytes {
    let params = hybrid::BuildParams {
        bm25: hybrid::Bm25Params::default(),
        vectors: storage,
        encoder: "all-MiniLM-L6-v2".into(),
        encoder_fingerprint: fingerprint,
        // The product's defaults, so that BEIR measures what users get.
        default_mode: Mode::Convex,
        alpha: 0.5,
        rrf_k: 60.0,
        norm_depth: search_core::index::fusion::NORM_DEPTH,
        long_text: String::new(),
        built_unix: 0,
        graph,
    };
    AlignedBytes::new(&hybrid::build(&beir.docs, vectors, search_core::encoder::DIM, &params))
}

/// Evaluates BEIR queries: NDCG@10, recall@100, MRR@10; a query's own id is never
/// counted among its results (ArguAna's queries are documents of the corpus).
pub fn eval_beir(beir: &Beir, idx: &Index<'_>, qvecs: &[f32], mode: Mode, base: &SearchParams) -> Metrics {
    let dim = search_core::encoder::DIM;
    let p = SearchParams { k: 101, depth: base.depth.max(101), mode, ..*base };
    let mut ndcg_sum = 0.0;
    let mut recall_sum = 0.0;
    let mut mrr_sum = 0.0;
    let mut times = Vec::new();
    for (qi, (qid, text)) in beir.queries.iter().enumerate() {
        let rels = &beir.qrels[qid];
        let t = std::time::Instant::now();
        let hits = idx.search(text, Some(&qvecs[qi * dim..(qi + 1) * dim]), &p);
        times.push(t.elapsed().as_secs_f64() * 1e3);
        let ids: Vec<String> =
            hits.iter().filter_map(|h| idx.chunk(h.doc).ok().map(|m| m.id)).filter(|id| id != qid).take(100).collect();
        let gains: Vec<f64> = ids.iter().map(|id| rels.get(id).copied().unwrap_or(0.0).max(0.0)).collect();
        let ideal: Vec<f64> = rels.values().copied().filter(|g| *g > 0.0).collect();
        ndcg_sum += ndcg(&gains, &ideal, 10);
        let relevant = ideal.len().max(1) as f64;
        recall_sum += gains.iter().filter(|g| **g > 0.0).count() as f64 / relevant;
        mrr_sum += reciprocal_rank(&gains.iter().map(|g| *g > 0.0).collect::<Vec<_>>(), 10);
    }
    let n = beir.queries.len().max(1) as f64;
    Metrics {
        mode: mode.name().into(),
        k: 100,
        questions: beir.queries.len(),
        recall_at_k: recall_sum / n,
        shown_at_k: None,
        context_precision: 0.0,
        mrr_at_10: mrr_sum / n,
        ndcg_at_10: ndcg_sum / n,
        per_category: BTreeMap::new(),
        misses: Vec::new(),
        query_ms_p50: median(times),
    }
}

/// Share of the exact top `k` that the HNSW graph finds, averaged over queries.
pub fn graph_recall(idx: &Index<'_>, qvecs: &[f32], k: usize, ef: usize) -> f64 {
    let dim = search_core::encoder::DIM;
    let n = qvecs.len() / dim;
    let mut sum = 0.0;
    for q in qvecs.chunks_exact(dim) {
        let exact: HashSet<u32> = idx.dense_candidates(q, k, true, ef).into_iter().map(|h| h.0).collect();
        let approx = idx.dense_candidates(q, k, false, ef);
        sum += approx.iter().filter(|h| exact.contains(&h.0)).count() as f64 / k as f64;
    }
    sum / n.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_list_leaves_out_comments_and_blank_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("queries.txt");
        std::fs::write(&path, "# nonsense\nxqzv blorf\n\n  best hiking trails  \n#end\n").unwrap();
        assert_eq!(read_queries(&path).unwrap(), ["xqzv blorf", "best hiking trails"]);
        let err = read_queries(&dir.path().join("missing.txt")).unwrap_err().to_string();
        assert!(err.contains("missing.txt"), "{err}");
    }

    #[test]
    fn context_precision_matches_the_papers_worked_example() {
        // Relevant at ranks 1, 3 and 5 of 5: (1/1 + 2/3 + 3/5) / 3 = 0.7556.
        let cp = context_precision(&[true, false, true, false, true], 5);
        assert!((cp - 0.755_555).abs() < 1e-5, "{cp}");
        assert_eq!(context_precision(&[false; 5], 5), 0.0);
        assert_eq!(context_precision(&[true, true], 5), 1.0);
        assert!((context_precision(&[false, true], 5) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn reciprocal_rank_and_ndcg_by_hand() {
        assert_eq!(reciprocal_rank(&[false, false, true], 10), 1.0 / 3.0);
        assert_eq!(reciprocal_rank(&[false, false, true], 2), 0.0);
        // One relevant document at rank 2: 1/log2(3).
        assert!((ndcg(&[0.0, 1.0], &[1.0], 10) - 1.0 / 3f64.log2()).abs() < 1e-12);
        // Graded: gains 2 then 1, ideal the same order → 1.
        assert!((ndcg(&[2.0, 1.0], &[1.0, 2.0], 10) - 1.0).abs() < 1e-12);
        // Reversed: (1 + 2/log2 3) / (2 + 1/log2 3).
        let want = (1.0 + 2.0 / 3f64.log2()) / (2.0 + 1.0 / 3f64.log2());
        assert!((ndcg(&[1.0, 2.0], &[2.0, 1.0], 10) - want).abs() < 1e-12);
        assert_eq!(ndcg(&[1.0], &[], 10), 0.0);
    }
}
