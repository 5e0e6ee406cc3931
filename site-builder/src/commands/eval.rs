//! `site-builder eval`: retrieval quality of a QA set over a built index, or of a
//! BEIR folder indexed on the fly, for each fusion mode asked for.

use super::args::{
    parse_modes, results_count, second_chunk_weight, unit_interval, Long, Modes, PostgresTlsArgs, Vectors,
};
use super::CommandError;

use std::io::IsTerminal;
use std::path::Path;
use std::path::PathBuf;

use search_core::index::lang::LangChoice;
use search_core::index::{Mode, Order, SearchParams};
use site_builder::embed::{default_model_dir, EncoderFile, LongText};
use site_builder::eval;
use site_builder::search::Searcher;

use crate::out;

#[derive(clap::Args)]
pub(crate) struct EvalArgs {
    /// The index a build wrote (with --qa).
    #[arg(long, default_value = "dist/index.bin", value_name = "FILE")]
    index: PathBuf,
    /// QA set: CSV with question,ground_truth,category,source_path,source_file.
    #[arg(long, value_name = "FILE", conflicts_with = "beir")]
    qa: Option<PathBuf>,
    /// BEIR folder (corpus.jsonl[.gz], queries.jsonl[.gz], qrels/test.tsv).
    #[arg(long, value_name = "DIR")]
    beir: Option<PathBuf>,
    /// Results per question for recall and context precision (QA).
    #[arg(long, default_value_t = 5, value_parser = results_count)]
    k: usize,
    /// A mode, a comma-separated list, or `all`.
    #[arg(long, default_value = "all", value_parser = parse_modes)]
    mode: Modes,
    /// Weight of the dense side in convex.
    #[arg(long, value_parser = unit_interval)]
    alpha: Option<f32>,
    /// How deep each ranking is read before fusing.
    #[arg(long, default_value_t = 100, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=10_000))]
    depth: usize,
    /// Convex: how many top scores of each list define its range (default: the index's).
    #[arg(long)]
    norm_depth: Option<usize>,
    /// Weight of a page's second-best chunk in the score pages are ranked by
    /// (0: each page by its best chunk alone; default 1).
    #[arg(long, value_parser = second_chunk_weight)]
    second_chunk: Option<f32>,
    /// Rank chunks by their own scores, not pages first (the agent's order).
    #[arg(long, conflicts_with = "second_chunk")]
    chunk_order: bool,
    /// Search each question in one language (a tag: `de`), in its own
    /// (`question`, the default: as `/api/search` without `lang` and the
    /// agents do), or in every language (`all`); a language without a good
    /// match falls back to every one, as `/api/search?lang=` does.
    #[arg(long, default_value = "question", value_parser = super::search::parse_lang)]
    lang: LangChoice,
    /// BM25 k1 and b at query time (default: the index's).
    #[arg(long)]
    k1: Option<f32>,
    #[arg(long)]
    b: Option<f32>,
    /// Model folder for --beir (as for build).
    #[arg(long, value_name = "DIR")]
    model: Option<PathBuf>,
    /// Document vectors for --beir: i16, f16, f32 or int8.
    #[arg(long, value_enum, default_value_t = Vectors::I16)]
    vectors: Vectors,
    /// Long documents for --beir: truncate, mean or blend.
    #[arg(long, value_enum, default_value_t = Long::Truncate)]
    long_text: Long,
    /// Where --beir caches document vectors between runs.
    #[arg(long, default_value = "target/beir-cache", value_name = "DIR")]
    cache: PathBuf,
    /// --beir: also build an HNSW graph, search through it, and report its
    /// recall@10 against the exact scan.
    #[arg(long)]
    hnsw: bool,
    /// HNSW beam width at query time.
    #[arg(long, default_value_t = 64)]
    ef: usize,
    /// Print one JSON object per mode.
    #[arg(long)]
    json: bool,
    /// List the questions each mode missed (QA).
    #[arg(long)]
    misses: bool,
    /// QA through a tenant in PostgreSQL (`site-builder publish`) instead of the
    /// index file; the encoder is read from beside --index.
    #[arg(long, value_name = "URL", requires = "qa")]
    postgres: Option<String>,
    /// The tenant --postgres searches.
    #[arg(long, default_value = "default", value_name = "NAME")]
    tenant: String,
    #[command(flatten)]
    tls: PostgresTlsArgs,
}

pub(crate) fn run_eval(args: EvalArgs) -> Result<(), CommandError> {
    let modes = &args.mode.0;
    match (&args.qa, &args.beir) {
        (Some(qa), None) => {
            let s = match &args.postgres {
                Some(url) => Searcher::open_postgres(&args.index, url, &args.tenant, args.tls.postgres_ca.as_deref()),
                None => Searcher::open(&args.index, None),
            }?;
            // Opened once for every question and mode.
            let svc = s.service()?;
            let questions = eval::read_qa(qa)?;
            let base = overrides(&args, svc.default_params(args.k));
            for &mode in modes {
                let m = eval::eval_qa(&svc, &questions, args.k, mode, &base, args.lang)?;
                print_metrics(&m, args.json, args.misses)?;
            }
            Ok(())
        }
        (None, Some(dir)) => run_beir(&args, dir, modes),
        _ => Err(CommandError::EvalInput),
    }
}

fn run_beir(args: &EvalArgs, dir: &Path, modes: &[Mode]) -> Result<(), CommandError> {
    let beir = eval::load_beir(dir)?;
    let model = args.model.clone().unwrap_or_else(default_model_dir);
    let file = EncoderFile::from_model_dir(&model)?;
    let enc = file.encoder()?;
    let show = std::io::stderr().is_terminal();
    let bar = if show { indicatif::ProgressBar::new(beir.docs.len() as u64) } else { indicatif::ProgressBar::hidden() };
    let t = std::time::Instant::now();
    let vectors =
        eval::beir_vectors(&beir, &file, args.long_text.into(), Some(&args.cache), &|d| bar.set_position(d as u64))?;
    bar.finish_and_clear();
    let embed_s = t.elapsed().as_secs_f64();
    let queries: Vec<&str> = beir.queries.iter().map(|(_, q)| q.as_str()).collect();
    let qvecs =
        site_builder::embed::embed_all(&enc, &queries, LongText::Truncate, site_builder::embed::threads(), &|_| {});
    let t = std::time::Instant::now();
    let graph = if args.hnsw {
        Some(site_builder::hnsw::build_graph(&vectors, search_core::encoder::DIM, args.ef)?)
    } else {
        None
    };
    let bytes = eval::beir_index(&beir, &vectors, args.vectors.into(), enc.fingerprint(), graph);
    let index_s = t.elapsed().as_secs_f64();
    let idx = search_core::index::Index::open(bytes.as_slice())?;
    if !args.json {
        outln!(
            "{}: {} documents, {} queries; embedding {:.0}s (cached vectors are reused), index {:.1}s, {:.0} bytes/doc",
            beir.name,
            beir.docs.len(),
            beir.queries.len(),
            embed_s,
            index_s,
            bytes.as_slice().len() as f64 / beir.docs.len().max(1) as f64
        );
    }
    if idx.has_graph() {
        let r = eval::graph_recall(&idx, &qvecs, 10, args.ef);
        if args.json {
            outln!("{}", serde_json::json!({"hnsw_recall_at_10": r, "ef": args.ef}));
        } else {
            outln!("HNSW (ef {}): recall@10 against the exact scan {:.4}", args.ef, r);
        }
    }
    let base = SearchParams { ef: args.ef, ..overrides(args, idx.default_params(10)) };
    for &mode in modes {
        let m = eval::eval_beir(&beir, &idx, &qvecs, mode, &base);
        if args.json {
            outln!("{}", serde_json::to_string(&m)?);
        } else {
            outln!(
                "{:<7} NDCG@10 {:.4}  recall@100 {:.4}  MRR@10 {:.4}  ({} queries, p50 {:.2} ms)",
                m.mode,
                m.ndcg_at_10,
                m.recall_at_k,
                m.mrr_at_10,
                m.questions,
                m.query_ms_p50
            );
        }
    }
    Ok(())
}

fn print_metrics(m: &eval::Metrics, json: bool, misses: bool) -> Result<(), CommandError> {
    if json {
        outln!("{}", serde_json::to_string(m)?);
        return Ok(());
    }
    // What the reader is shown beside the ranking, when the search ran the
    // "no results" rule: a page ranked for a search that did not match is lost.
    let shown = m.shown_at_k.map(|s| format!(" (shown {s:.3})")).unwrap_or_default();
    outln!(
        "{:<7} recall@{} {:.3}{shown}  context precision {:.3}  MRR@10 {:.3}  NDCG@10 {:.3}  ({} questions, p50 {:.1} ms)",
        m.mode,
        m.k,
        m.recall_at_k,
        m.context_precision,
        m.mrr_at_10,
        m.ndcg_at_10,
        m.questions,
        m.query_ms_p50
    );
    for (cat, c) in &m.per_category {
        outln!(
            "        {cat:<11} recall {:.3} (shown {:.3})  cp {:.3}  MRR {:.3}  NDCG {:.3}  ({})",
            c.recall_at_k,
            c.shown_at_k,
            c.context_precision,
            c.mrr_at_10,
            c.ndcg_at_10,
            c.questions
        );
    }
    if misses {
        for q in &m.misses {
            outln!("        miss: {q}");
        }
    }
    Ok(())
}

/// The index's search parameters with what the command line sets instead.
fn overrides(args: &EvalArgs, base: SearchParams) -> SearchParams {
    SearchParams {
        alpha: args.alpha.unwrap_or(base.alpha),
        depth: args.depth,
        norm_depth: args.norm_depth.unwrap_or(base.norm_depth),
        order: match (args.chunk_order, args.second_chunk) {
            (true, _) => Order::Chunks,
            (false, Some(second)) => Order::Pages { second },
            (false, None) => base.order,
        },
        k1: args.k1.unwrap_or(base.k1),
        b: args.b.unwrap_or(base.b),
        ..base
    }
}
