//! The `site-builder` command: parses the command line into typed options once
//! (ranges and enumerations checked by clap's value parsers) and dispatches to
//! `commands`, one module per command, each holding its own arguments and handing
//! them to the library. Exit codes: 0 success, 1 the build ran but `--strict`
//! found problems, 2 the command could not run (bad arguments, missing files, I/O).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use commands::build::BuildArgs;
use commands::chat::ChatArgs;
use commands::embed_bench::EmbedBenchArgs;
use commands::eval::EvalArgs;
#[cfg(feature = "ingest")]
use commands::ingest::{ConfluenceArgs, PdfArgs, WebArgs};
use commands::insights::InsightsArgs;
use commands::publish::PublishArgs;
use commands::search::SearchArgs;
#[cfg(feature = "serve")]
use commands::serve::ServeArgs;

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
    #[cfg(feature = "serve")]
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
    #[cfg(feature = "ingest")]
    #[command(subcommand)]
    Ingest(IngestCommand),
}

#[cfg(feature = "ingest")]
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Build(args) => return commands::build::run_build(args),
        Command::Search(args) => commands::search::run_search(args),
        Command::Eval(args) => commands::eval::run_eval(args),
        Command::EmbedBench(args) => commands::embed_bench::run_embed_bench(args),
        #[cfg(feature = "serve")]
        Command::Serve(args) => commands::serve::run_serve(args),
        Command::Publish(args) => commands::publish::run_publish(args),
        Command::Insights(args) => commands::insights::run_insights(args),
        Command::Chat(args) => commands::chat::run_chat(args),
        #[cfg(feature = "ingest")]
        Command::Ingest(IngestCommand::Confluence(args)) => commands::ingest::run_ingest_confluence(args),
        #[cfg(feature = "ingest")]
        Command::Ingest(IngestCommand::Pdf(args)) => commands::ingest::run_ingest_pdf(args),
        #[cfg(feature = "ingest")]
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
