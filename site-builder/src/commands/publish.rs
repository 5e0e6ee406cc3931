//! `site-builder publish`: a built index into a PostgreSQL tenant.

use super::args::PostgresTlsArgs;
use super::CommandError;

use std::io::IsTerminal;
use std::path::PathBuf;

use site_builder::pg::{publish, PublishOptions};

#[derive(clap::Args)]
pub(crate) struct PublishArgs {
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

pub(crate) fn run_publish(args: PublishArgs) -> Result<(), CommandError> {
    let o = PublishOptions {
        index: &args.index,
        url: &args.postgres,
        ca: args.tls.postgres_ca.as_deref(),
        tenant: &args.tenant,
        prune: args.prune,
        progress: std::io::stderr().is_terminal(),
    };
    let r = publish(&o)?;
    if args.json {
        println!("{}", serde_json::to_string(&r)?);
        return Ok(());
    }
    let chunks_changed = r.added + r.changed + r.removed > 0;
    if !chunks_changed && r.settings_updated {
        println!(
            "published tenant `{}` (generation {}): the index's settings; {} chunks unchanged ({:.1} s)",
            r.tenant, r.generation, r.chunks, r.seconds
        );
    } else if !chunks_changed {
        println!(
            "tenant `{}` is up to date: {} chunks, generation {} ({:.1} s)",
            r.tenant, r.chunks, r.generation, r.seconds
        );
    } else {
        println!(
            "published tenant `{}` (generation {}): {} chunks — {} added, {} changed, {} removed, {} unchanged; {} postings written ({:.1} s)",
            r.tenant, r.generation, r.chunks, r.added, r.changed, r.removed, r.unchanged, r.postings_written, r.seconds
        );
    }
    if r.kept_stale > 0 {
        println!("{} chunks of pages the index no longer has were kept; `--prune` removes them", r.kept_stale);
    }
    Ok(())
}
