//! `site-builder ingest`: pages from Confluence, a PDF or a website into a content folder.

use std::io::IsTerminal;

use crate::{out, ConfluenceArgs, PdfArgs, WebArgs};

pub(crate) fn run_ingest_confluence(args: ConfluenceArgs) -> Result<(), String> {
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
    let summary = ingest::ingest_confluence(&opts).map_err(|e| e.to_string())?;
    out(&summary.text());
    Ok(())
}

pub(crate) fn run_ingest_pdf(args: PdfArgs) -> Result<(), String> {
    let opts = ingest::pdf::PdfOptions { file: args.file, title: args.title, out: args.out };
    let summary = ingest::pdf::ingest_pdf(&opts).map_err(|e| e.to_string())?;
    out(&summary.text());
    Ok(())
}

pub(crate) fn run_ingest_web(args: WebArgs) -> Result<(), String> {
    let opts = ingest::web::WebOptions {
        sitemap: args.sitemap,
        include: args.include,
        exclude: args.exclude,
        out: args.out,
        concurrency: usize::from(args.concurrency),
        prune: args.prune,
        progress: !args.quiet && std::io::stderr().is_terminal(),
    };
    let summary = ingest::web::ingest_web(&opts).map_err(|e| e.to_string())?;
    out(&summary.text());
    Ok(())
}
