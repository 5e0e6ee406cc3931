//! The `site-builder` command: parses the command line into typed options once
//! (ranges and enumerations checked by clap's value parsers), and dispatches to
//! `commands`, one module per command, which hands them to the library. Exit codes: 0 success, 1 the build ran but `--strict`
//! found problems, 2 the command could not run (bad arguments, missing files, I/O).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use search_core::index::{Mode, VectorStorage};
use site_builder::embed::LongText;

#[derive(Parser)]
#[command(
    name = "site-builder",
    version,
    about = "Builds a knowledge base of Markdown pages into a browsable static site and a hybrid (dense + BM25) search index."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build the site, the chunk set, the search index and the build report.
    ///
    /// Reads every *.md page under --content (YAML frontmatter in the scraped
    /// knowledge-base schema, or plain Markdown), renders each to OUT/site/, splits
    /// pages into chunks (OUT/chunks.jsonl), embeds them with all-MiniLM-L6-v2 and
    /// writes the hybrid index (OUT/index.bin, OUT/encoder.bin) and OUT/report.json:
    /// pages read, rendered and skipped with reasons, chunks before and after each
    /// filter, every dropped chunk, broken links, index size and timings.
    ///
    /// A bad page (malformed YAML, missing title, non-UTF-8, empty, duplicate
    /// page_id) is skipped and reported; with --strict, skipped pages or broken
    /// links fail the build and the previous site is left in place.
    Build(BuildArgs),
    /// Search a built index: `site-builder search "how do I reset my password"`.
    Search(SearchArgs),
    /// Measure retrieval quality: a QA set over a built index (--qa), or a BEIR
    /// benchmark folder indexed on the fly (--beir).
    Eval(EvalArgs),
    /// Measure embedding throughput on a chunk set (chunks.jsonl's index_text).
    EmbedBench(EmbedBenchArgs),
    /// Ask the knowledge base questions in the terminal: the edge function's agent,
    /// with the LLM from SPIN_VARIABLE_LLM_BASE_URL / _MODEL / _API_KEY (environment
    /// or .env), or extractive answers without one. `exit` leaves.
    Chat(ChatArgs),
    /// Run the product locally: the built site, and /api/* answered by the edge
    /// function (the same search_fn.wasm that spin.toml deploys) in wasmtime.
    ///
    /// Spin variables come from the environment or a .env file in the current
    /// folder, as Spin reads them: SPIN_VARIABLE_LLM_BASE_URL, SPIN_VARIABLE_LLM_MODEL,
    /// SPIN_VARIABLE_LLM_API_KEY, SPIN_VARIABLE_ALLOWED_ORIGINS.
    Serve(ServeArgs),
    /// Load a built index into PostgreSQL + pgvector, for knowledge bases that
    /// outgrow one function: `site-builder publish --index dist/index.bin
    /// --postgres postgres://kb@db/kb --tenant physics`.
    ///
    /// Incremental (unchanged chunks are not rewritten; an unchanged index writes
    /// nothing) and atomic (one transaction: readers see the tenant before or
    /// after, never half of it). Creates the schema on an empty database.
    Publish(PublishArgs),
    /// Report what readers asked, what the knowledge base did not answer and
    /// what they thought of the answers: `site-builder insights --since 7d`.
    ///
    /// Reads the searches, chats and feedback the edge function recorded in
    /// STATE/sqlite_db.db (Spin's SQLite database `default`), groups unanswered
    /// and thumbs-down questions by meaning with the build's encoder, and writes
    /// one self-contained HTML page (or JSON with --json, the same data as
    /// `GET /api/insights`).
    Insights(InsightsArgs),
    /// Copy pages from another system into a content folder.
    #[command(subcommand)]
    Ingest(IngestCommand),
}

#[derive(Subcommand)]
enum IngestCommand {
    /// Copy a Confluence page tree (REST API) into Markdown pages with frontmatter.
    ///
    /// Lists the tree under --root-page, fetches the storage body of every new or
    /// changed page, converts it (panels → admonitions, code macros → fenced code,
    /// page links → relative .md links; tocs, images and macro parameters dropped)
    /// and writes one file per page, atomically. OUT/.confluence-state.json records
    /// each page's version, so reruns fetch only what changed and an interrupted run
    /// resumes. A page whose body cannot be converted is reported and skipped.
    Confluence(ConfluenceArgs),
    /// Convert a PDF (a handbook, a policy) into one Markdown page with frontmatter.
    ///
    /// Extracts the text layer and infers the structure: headings from font sizes
    /// (largest → #), bullet and numbered lists, tables from aligned columns,
    /// paragraphs from wrapped lines; running headers, page numbers, contents pages
    /// and indexes are dropped, words hyphenated at line ends joined. The title
    /// comes from --title, the PDF's metadata, the largest text on the first page,
    /// or the first heading.
    /// Writes OUT/<slug of the title>.md atomically. An encrypted PDF, one without
    /// a text layer (scanned) or a file that is not a PDF is refused, nothing written.
    Pdf(PdfArgs),
    /// Copy a help-centre website (MkDocs, Zendesk, WordPress, plain HTML) through
    /// its sitemap into Markdown pages with frontmatter.
    ///
    /// Reads robots.txt and the sitemap (and a sitemap index), fetches the pages on
    /// the sitemap's origin under --include politely (bounded concurrency, one at a
    /// time when robots.txt sets a Crawl-delay, Retry-After honoured), keeps each
    /// page's main content (not navigation, footers or cookie banners), converts it
    /// with links to the other ingested pages rewritten, and writes one file per
    /// page atomically, the site's tree as folders. OUT/.web-state.json records
    /// lastmod, ETag and Last-Modified, so reruns fetch only what changed.
    Web(WebArgs),
}

#[derive(clap::Args)]
struct WebArgs {
    /// The site's sitemap.xml (or sitemap index) URL.
    #[arg(long, value_name = "URL")]
    sitemap: String,
    /// Keep only pages whose URL starts with this prefix (repeatable).
    #[arg(long, value_name = "PREFIX")]
    include: Vec<String>,
    /// Leave out pages whose URL starts with this prefix (repeatable; wins over --include).
    #[arg(long, value_name = "PREFIX")]
    exclude: Vec<String>,
    /// Content folder to write into.
    #[arg(long, default_value = "content", value_name = "DIR")]
    out: PathBuf,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=32))]
    concurrency: u16,
    /// Delete the files of pages that are no longer in the sitemap.
    #[arg(long)]
    prune: bool,
    /// Do not draw a progress bar.
    #[arg(long)]
    quiet: bool,
}

#[derive(clap::Args)]
struct PdfArgs {
    /// The PDF file to convert.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Page title (default: the PDF's Title, else its first heading, else the file name).
    #[arg(long, value_name = "TITLE")]
    title: Option<String>,
    /// Content folder to write into.
    #[arg(long, default_value = "content", value_name = "DIR")]
    out: PathBuf,
}

#[derive(clap::Args)]
struct ConfluenceArgs {
    /// The Confluence base URL (e.g. https://wiki.example.org or https://example.atlassian.net/wiki).
    #[arg(long, value_name = "URL")]
    base_url: String,
    /// Id of the page whose tree is copied (it becomes OUT/index.md).
    #[arg(long, value_name = "ID")]
    root_page: String,
    /// Content folder to write into.
    #[arg(long, default_value = "content", value_name = "DIR")]
    out: PathBuf,
    /// Environment variable holding an API token, sent as `Authorization: Bearer`.
    #[arg(long, value_name = "NAME")]
    token_env: Option<String>,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    concurrency: u16,
    /// Children asked for per listing request.
    #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u16).range(1..=1000), value_name = "N")]
    page_size: u16,
    /// Delete the files of pages that are no longer in the tree.
    #[arg(long)]
    prune: bool,
    /// Do not draw a progress bar.
    #[arg(long)]
    quiet: bool,
}

#[derive(clap::Args)]
struct ChatArgs {
    /// index.bin written by a build (encoder.bin beside it).
    #[arg(long, default_value = "dist/index.bin", value_name = "FILE")]
    index: PathBuf,
    /// Answer extractively even when an LLM is configured.
    #[arg(long)]
    no_llm: bool,
}

#[derive(clap::Args)]
struct InsightsArgs {
    /// The state folder the server recorded into (`site-builder serve --state`,
    /// or `spin up`'s `.spin`).
    #[arg(long, default_value = ".spin", value_name = "DIR")]
    state: PathBuf,
    /// The build's index (its encoder.bin beside it groups questions by meaning,
    /// and its pages name the never-retrieved ones).
    #[arg(long, default_value = "dist/index.bin", value_name = "FILE")]
    index: PathBuf,
    /// The period: 30d, 12h, 2w, all, or a date (2026-11-01).
    #[arg(long, default_value = "30d", value_name = "PERIOD")]
    since: String,
    /// Where to write the report (default insights.html; with --json, stdout).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// JSON instead of HTML.
    #[arg(long)]
    json: bool,
    /// The site's address (https://help.example.edu/kb/), so that the report's
    /// page links open wherever the report is saved; without it they are relative
    /// to the report's folder (right when it sits in the site's root).
    #[arg(long, value_name = "URL")]
    site: Option<String>,
    /// Read the report from a deployed function instead (`GET /api/insights` of
    /// this site, e.g. https://help.example.edu), with the bearer token in
    /// KB_INSIGHTS_TOKEN; --state and --index are then not read.
    #[arg(long, value_name = "URL", conflicts_with_all = ["state", "index"])]
    from: Option<String>,
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Output folder of a build (its site/ is served).
    #[arg(long, default_value = "dist", value_name = "DIR")]
    out: PathBuf,
    /// The compiled edge function.
    #[arg(long, default_value = "target/wasm32-wasip2/release/search_fn.wasm", value_name = "FILE")]
    component: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:3000", value_name = "HOST:PORT")]
    addr: std::net::SocketAddr,
    /// Where state is kept between runs, as `spin up` keeps it: the key-value
    /// store (rate-limit counters) in DIR/sqlite_key_value.db.
    #[arg(long, default_value = ".spin", value_name = "DIR")]
    state: PathBuf,
    /// Seconds the function may take to answer before the request gets a 504.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600), value_name = "SECONDS")]
    request_timeout: u64,
    /// Do not log each request on stderr.
    #[arg(long)]
    quiet: bool,
    /// Most megabytes (MiB) the insights database (DIR/sqlite_db.db, with its
    /// write-ahead log) may take on disk, as a platform's quota caps it: past
    /// it, nothing more is recorded
    /// until retention frees room (searches and chats are answered as usual).
    /// 0: no cap.
    #[arg(long, default_value_t = 256, value_name = "MB")]
    insights_max_mb: u64,
    #[command(flatten)]
    tls: PostgresTlsArgs,
}

#[derive(clap::Args)]
struct EmbedBenchArgs {
    /// chunks.jsonl written by a build.
    #[arg(long, default_value = "dist/chunks.jsonl", value_name = "FILE")]
    chunks: PathBuf,
    /// Embed only the first N chunks.
    #[arg(long)]
    limit: Option<usize>,
    /// Threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    #[arg(long, value_enum, default_value_t = Long::Truncate)]
    long_text: Long,
    /// Model folder (as for build).
    #[arg(long, value_name = "DIR")]
    model: Option<PathBuf>,
}

#[derive(clap::Args)]
struct BuildArgs {
    /// Folder of Markdown pages (any depth of sub-folders).
    #[arg(long, default_value = "content", value_name = "DIR")]
    content: PathBuf,
    /// Output folder: site/, chunks.jsonl, index.bin, encoder.bin and report.json are written here.
    #[arg(long, default_value = "dist", value_name = "DIR")]
    out: PathBuf,
    /// Split pages on headers of this level and above (2 = H1 and H2).
    #[arg(long, default_value_t = 2, value_name = "1-6", value_parser = clap::value_parser!(u8).range(1..=6))]
    header_levels: u8,
    /// Longest chunk, in characters; longer sections are split.
    #[arg(long, default_value_t = 2000, value_name = "CHARS")]
    chunk_size: usize,
    /// Characters carried over from one part of a split section to the next.
    #[arg(long, default_value_t = 400, value_name = "CHARS")]
    overlap: usize,
    /// Fail (exit 1) if any page is skipped or any internal link is broken.
    #[arg(long)]
    strict: bool,
    /// Read every page in this dialect instead of detecting it per page:
    /// commonmark, mkdocs, obsidian, gfm, docusaurus or hugo.
    #[arg(long, value_name = "NAME", value_parser = parse_dialect)]
    dialect: Option<kb_dialect::Dialect>,
    /// The path the pages' own site served them under (`/docs`), for links
    /// written from that site's root (`/docs/setup/setup.md`); detected per
    /// link when not given.
    #[arg(long, value_name = "PATH")]
    base_path: Option<String>,
    /// Use the templates in this folder instead of the built-in ones.
    #[arg(long, value_name = "DIR")]
    templates: Option<PathBuf>,
    /// Absolute URL the site will be served from (used in sitemap.xml).
    #[arg(long, default_value = "http://127.0.0.1:3000/", value_name = "URL")]
    site_url: String,
    /// Who decides whether an overview chunk ("This page contains…") is a stub:
    /// the LLM when SPIN_VARIABLE_LLM_BASE_URL is set (auto), the heuristic, or
    /// the LLM (fails without one).
    #[arg(long, value_enum, default_value_t = Judge::Auto)]
    stub_judge: Judge,
    #[command(flatten)]
    index: IndexArgs,
    /// Skip the search index (site and chunks only).
    #[arg(long)]
    no_index: bool,
    /// Leave browser search out of the site (no `site/_search/`): the site then
    /// searches only through the edge function's /api.
    #[arg(long)]
    no_browser_search: bool,
    /// Folder with the browser engine (search_web.js, search_web_bg.wasm);
    /// default $KB_BROWSER_ENGINE or search-web/pkg (scripts/build-search-web).
    #[arg(long, value_name = "DIR", conflicts_with = "no_browser_search")]
    browser_engine: Option<PathBuf>,
    /// Also offer semantic search in the browser: the query encoder and every
    /// chunk's vector go into `site/_search/` (about 20 MB more for a
    /// MiniLM site, fetched once by readers whose browser engine answers), and the
    /// search script gets `data-semantic`.
    #[arg(long, conflicts_with = "no_browser_search")]
    browser_semantic: bool,
    /// Keep every chunk: no placeholder, navigation or stub filters (for ablations).
    #[arg(long)]
    no_filters: bool,
    /// Do not draw progress bars.
    #[arg(long)]
    quiet: bool,
}

#[derive(clap::Args)]
struct IndexArgs {
    /// Folder with the model files (model.safetensors, tokenizer.json, config.json);
    /// default $KB_MODEL_DIR or .cache/models/all-MiniLM-L6-v2 (scripts/fetch-model).
    #[arg(long, value_name = "DIR")]
    model: Option<PathBuf>,
    /// How the dense vectors are stored: i16 (fixed point, the default: half the
    /// bytes of f32, the same rankings on the dev sets and BEIR, and an exact
    /// integer scan 2.5× faster than f16's), f16 (half floats, the same bytes),
    /// f32, or int8 (one scale per vector; smaller again, but measurably worse on
    /// the CSC dev sets).
    #[arg(long, value_enum, default_value_t = Vectors::I16)]
    vectors: Vectors,
    /// What happens to chunk text beyond MiniLM's 256 tokens: half the first
    /// 256-token window and half the mean of all windows (blend: the first window
    /// carries the Source/Headers block that averaging dilutes; best on both CSC
    /// dev sets, BEIR unchanged, see BENCHMARKS.md), the mean alone, or the first
    /// window alone (truncate).
    #[arg(long, value_enum, default_value_t = Long::Blend)]
    long_text: Long,
    /// The fusion mode searches use unless they ask for another.
    #[arg(long, default_value = "convex", value_parser = parse_mode)]
    default_mode: Mode,
    /// Weight of the dense side in the convex mode.
    #[arg(long, default_value_t = 0.5, value_parser = unit_interval)]
    alpha: f32,
    /// Convex mode: how many top scores of each list define its min-max range.
    #[arg(long, default_value_t = 10)]
    norm_depth: usize,
    /// Vectors of earlier builds, reused for unchanged chunks.
    #[arg(long, env = "KB_EMBED_CACHE", default_value = ".cache/embeddings.bin", value_name = "FILE")]
    embed_cache: PathBuf,
    /// Embed every chunk, ignoring and not updating the cache.
    #[arg(long)]
    no_embed_cache: bool,
    /// From this many chunks on, build an HNSW graph for dense search (below it,
    /// every vector is scanned: exact, and fast at knowledge-base sizes).
    #[arg(long, default_value_t = 50_000, value_name = "CHUNKS")]
    hnsw_threshold: usize,
    /// BM25 k1.
    #[arg(long, default_value_t = 1.2)]
    k1: f32,
    /// BM25 b.
    #[arg(long, default_value_t = 0.75)]
    b: f32,
    /// Extra weight of title terms in BM25 (a title term counts 1 + this).
    #[arg(long, default_value_t = 1.0)]
    title_weight: f32,
    /// Extra weight of header-trail terms in BM25.
    #[arg(long, default_value_t = 0.5)]
    header_weight: f32,
}

/// What a PostgreSQL client trusts over TLS (`serve`, `publish`, `eval --postgres`).
#[derive(clap::Args)]
struct PostgresTlsArgs {
    /// CA certificates (PEM) trusted for PostgreSQL over TLS besides the
    /// system's roots (SSL_CERT_FILE and SSL_CERT_DIR are honoured too): a
    /// managed database's CA. The URL's sslmode says whether TLS is used;
    /// when it is, the certificate and the host name are always verified.
    #[arg(long, env = "KB_POSTGRES_CA", value_name = "FILE")]
    postgres_ca: Option<PathBuf>,
}

#[derive(clap::Args)]
struct QueryArgs {
    /// Results to return.
    #[arg(long, default_value_t = 5, value_parser = results_count)]
    k: usize,
    /// rrf, convex, dot, dense or bm25 (default: the index's default mode).
    #[arg(long, value_parser = parse_mode)]
    mode: Option<Mode>,
    /// Weight of the dense side in convex (default: the index's).
    #[arg(long, value_parser = unit_interval)]
    alpha: Option<f32>,
    /// Keep only the best chunk of each page.
    #[arg(long)]
    collapse: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct PublishArgs {
    /// The index a build wrote.
    #[arg(long, default_value = "dist/index.bin", value_name = "FILE")]
    index: PathBuf,
    /// The database: a libpq URL (postgres://user:password@host:port/db) or
    /// key=value string; also read from KB_POSTGRES_URL.
    #[arg(long, env = "KB_POSTGRES_URL", value_name = "URL")]
    postgres: String,
    /// The tenant to publish into (letters, digits, `-`, `_`).
    #[arg(long, default_value = "default", value_name = "NAME")]
    tenant: String,
    /// Delete the chunks of pages the index no longer has (without it they are
    /// kept, and counted in the summary).
    #[arg(long)]
    prune: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    tls: PostgresTlsArgs,
}

#[derive(clap::Args)]
struct SearchArgs {
    /// The query.
    #[arg(value_parser = non_blank)]
    query: String,
    /// The index a build wrote.
    #[arg(long, default_value = "dist/index.bin", value_name = "FILE")]
    index: PathBuf,
    /// The encoder file (default: encoder.bin beside the index).
    #[arg(long, value_name = "FILE")]
    encoder: Option<PathBuf>,
    #[command(flatten)]
    q: QueryArgs,
}

#[derive(clap::Args)]
struct EvalArgs {
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

#[derive(Clone, Copy, ValueEnum)]
enum Judge {
    Auto,
    Heuristic,
    Llm,
}

#[derive(Clone, Copy, ValueEnum)]
enum Vectors {
    F16,
    I16,
    F32,
    Int8,
}

#[derive(Clone, Copy, ValueEnum)]
enum Long {
    Truncate,
    Mean,
    Blend,
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse()
}

/// Fusion modes to evaluate: `all`, or a comma-separated list.
#[derive(Clone)]
struct Modes(Vec<Mode>);

fn parse_modes(s: &str) -> Result<Modes, String> {
    if s == "all" {
        return Ok(Modes(Mode::ALL.to_vec()));
    }
    s.split(',').map(|m| m.trim().parse()).collect::<Result<_, _>>().map(Modes)
}

/// A weight from 0 to 1.
fn unit_interval(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f32>() {
        Ok(a) if (0.0..=1.0).contains(&a) => Ok(a),
        _ => Err(format!("`{s}` is not a number from 0 to 1")),
    }
}

/// A page's second-chunk weight: 0 to 2.
fn second_chunk_weight(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f32>() {
        Ok(w) if (0.0..=2.0).contains(&w) => Ok(w),
        _ => Err(format!("`{s}` is not a weight from 0 to 2")),
    }
}

/// How many results to return: 1 to 100.
fn results_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(k) if (1..=100).contains(&k) => Ok(k),
        _ => Err(format!("`{s}` is not a number of results from 1 to 100")),
    }
}

fn non_blank(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("the query is empty".into())
    } else {
        Ok(s.to_string())
    }
}

impl From<Vectors> for VectorStorage {
    fn from(v: Vectors) -> Self {
        match v {
            Vectors::F16 => VectorStorage::F16,
            Vectors::I16 => VectorStorage::I16,
            Vectors::F32 => VectorStorage::F32,
            Vectors::Int8 => VectorStorage::Int8,
        }
    }
}

impl From<Long> for LongText {
    fn from(l: Long) -> Self {
        match l {
            Long::Truncate => LongText::Truncate,
            Long::Mean => LongText::Mean,
            Long::Blend => LongText::Blend,
        }
    }
}

/// Writes to stdout; a closed pipe (`site-builder eval … | head`) ends the
/// program quietly instead of panicking like `println!` does.
fn out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {e}");
        std::process::exit(2);
    }
}

macro_rules! outln {
    ($($arg:tt)*) => { out(&format!("{}\n", format!($($arg)*))) };
}

// After the macro: the commands use it.
mod commands;

/// `--dialect NAME`, with the accepted names in the message when it is not one.
fn parse_dialect(name: &str) -> Result<kb_dialect::Dialect, String> {
    kb_dialect::Dialect::parse(name)
        .ok_or_else(|| format!("unknown dialect `{name}`; use one of {}", kb_dialect::Dialect::NAMES.join(", ")))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Build(args) => return commands::build::run_build(args),
        Command::Search(args) => commands::search::run_search(args),
        Command::Eval(args) => commands::eval::run_eval(args),
        Command::EmbedBench(args) => commands::embed_bench::run_embed_bench(args),
        Command::Serve(args) => commands::serve::run_serve(args),
        Command::Publish(args) => commands::publish::run_publish(args),
        Command::Insights(args) => commands::insights::run_insights(args),
        Command::Chat(args) => commands::chat::run_chat(args),
        Command::Ingest(IngestCommand::Confluence(args)) => commands::ingest::run_ingest_confluence(args),
        Command::Ingest(IngestCommand::Pdf(args)) => commands::ingest::run_ingest_pdf(args),
        Command::Ingest(IngestCommand::Web(args)) => commands::ingest::run_ingest_web(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
