//! `site-builder ingest`: pages from Confluence, a PDF or a website into a content folder.

use std::io::IsTerminal;
use std::path::PathBuf;

use super::CommandError;
use crate::out;

#[derive(clap::Args)]
pub(crate) struct WebArgs {
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
pub(crate) struct PdfArgs {
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
pub(crate) struct ConfluenceArgs {
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

pub(crate) fn run_ingest_confluence(args: ConfluenceArgs) -> Result<(), CommandError> {
    let opts = ingest::IngestOptions {
        base_url: args.base_url,
        root_page: args.root_page,
        out: args.out,
        token_env: args.token_env,
        concurrency: usize::from(args.concurrency),
        prune: args.prune,
        progress: !args.quiet && std::io::stderr().is_terminal(),
        page_size: usize::from(args.page_size),
    };
    let summary = ingest::ingest_confluence(&opts)?;
    out(&summary.text());
    Ok(())
}

pub(crate) fn run_ingest_pdf(args: PdfArgs) -> Result<(), CommandError> {
    let opts = ingest::pdf::PdfOptions { file: args.file, title: args.title, out: args.out };
    let summary = ingest::pdf::ingest_pdf(&opts)?;
    out(&summary.text());
    Ok(())
}

pub(crate) fn run_ingest_web(args: WebArgs) -> Result<(), CommandError> {
    let opts = ingest::web::WebOptions {
        sitemap: args.sitemap,
        include: args.include,
        exclude: args.exclude,
        out: args.out,
        concurrency: usize::from(args.concurrency),
        prune: args.prune,
        progress: !args.quiet && std::io::stderr().is_terminal(),
    };
    let summary = ingest::web::ingest_web(&opts)?;
    out(&summary.text());
    Ok(())
}
