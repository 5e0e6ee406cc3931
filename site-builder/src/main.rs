//! The `site-builder` command: parses the command line into typed options once, and
//! hands them to the library. Exit codes: 0 success, 1 the build ran but `--strict`
//! found problems, 2 the build could not run (bad arguments, missing folders, I/O).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use site_builder::build::{build, BuildError, BuildOptions, JudgeChoice};
use site_builder::chunk::ChunkOptions;
use site_builder::llm::LlmConfig;

#[derive(Parser)]
#[command(
    name = "site-builder",
    version,
    about = "Builds a knowledge base of Markdown pages into a browsable static site and a chunk set for hybrid search."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build the site, the chunk set and the build report.
    ///
    /// Reads every *.md page under --content (YAML frontmatter in the scraped
    /// knowledge-base schema, or plain Markdown), renders each to OUT/site/, splits
    /// pages into chunks (OUT/chunks.jsonl) and writes OUT/report.json: pages read,
    /// rendered and skipped with reasons, chunks before and after each filter,
    /// every dropped chunk, broken links and timings.
    ///
    /// A bad page (malformed YAML, missing title, non-UTF-8, empty, duplicate
    /// page_id) is skipped and reported; with --strict, skipped pages or broken
    /// links fail the build and the previous site is left in place.
    Build(BuildArgs),
}

#[derive(clap::Args)]
struct BuildArgs {
    /// Folder of Markdown pages (any depth of sub-folders).
    #[arg(long, default_value = "content", value_name = "DIR")]
    content: PathBuf,
    /// Output folder: site/, chunks.jsonl and report.json are written here.
    #[arg(long, default_value = "dist", value_name = "DIR")]
    out: PathBuf,
    /// Split pages on headers of this level and above (2 = H1 and H2).
    #[arg(long, default_value_t = 2, value_name = "1-6")]
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
    /// Do not draw progress bars.
    #[arg(long)]
    quiet: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Judge {
    Auto,
    Heuristic,
    Llm,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Build(args) => run_build(args),
    }
}

fn run_build(args: BuildArgs) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let opts = BuildOptions {
        content: args.content,
        out: args.out,
        chunk: ChunkOptions {
            header_levels: args.header_levels,
            chunk_size: args.chunk_size,
            overlap: args.overlap,
        },
        strict: args.strict,
        templates: args.templates,
        site_url: args.site_url,
        judge: match args.stub_judge {
            Judge::Auto => JudgeChoice::Auto,
            Judge::Heuristic => JudgeChoice::Heuristic,
            Judge::Llm => JudgeChoice::Llm,
        },
        llm: LlmConfig::from_env(&cwd),
        progress: !args.quiet && std::io::stderr().is_terminal(),
    };
    match build(&opts) {
        Ok(report) => {
            print!("{}", report.summary());
            ExitCode::SUCCESS
        }
        Err(e @ BuildError::Strict { .. }) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
