//! `site-builder serve`: the built site and the edge function in the local host.

use std::path::PathBuf;

use super::args::PostgresTlsArgs;
use super::CommandError;

#[derive(clap::Args)]
pub(crate) struct ServeArgs {
    /// Output folder of a build (its site/ is served).
    #[arg(long, default_value = "dist", value_name = "DIR")]
    out: PathBuf,
    /// The compiled edge function.
    #[arg(long, default_value = "target/wasm32-wasip2/component/search_fn.wasm", value_name = "FILE")]
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

/// The host `serve` runs, from its arguments and the Spin variables.
fn host_config(args: ServeArgs, variables: edge_host::Variables) -> edge_host::HostConfig {
    edge_host::HostConfig {
        addr: args.addr,
        request_timeout: std::time::Duration::from_secs(args.request_timeout),
        log: !args.quiet,
        postgres_ca: args.tls.postgres_ca,
        sqlite_max_bytes: (args.insights_max_mb > 0).then(|| args.insights_max_mb.saturating_mul(1024 * 1024)),
        ..edge_host::HostConfig::search_fn(args.out.join("site"), args.component, variables, args.state)
    }
}

pub(crate) fn run_serve(args: ServeArgs) -> Result<(), CommandError> {
    let variables = edge_host::Variables::from_environment()?;
    let overridden = variables.overridden().join(", ");
    let cfg = host_config(args, variables);
    edge_host::serve(cfg, |addr| {
        eprintln!("Serving the knowledge base on http://{addr}/ (search API at http://{addr}/api/search?q=...)");
        if !overridden.is_empty() {
            eprintln!("Spin variables set: {overridden}");
        }
        eprintln!("Press Ctrl-C to stop.");
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    fn cfg(args: &[&str]) -> edge_host::HostConfig {
        let cli = crate::Cli::try_parse_from(["site-builder", "serve"].iter().chain(args)).unwrap();
        let crate::Command::Serve(a) = cli.command else { panic!("not serve") };
        super::host_config(a, edge_host::Variables::defaults())
    }

    #[test]
    fn the_insights_store_is_capped_by_default() {
        assert_eq!(cfg(&[]).sqlite_max_bytes, Some(256 * 1024 * 1024));
        assert_eq!(cfg(&["--insights-max-mb", "8"]).sqlite_max_bytes, Some(8 * 1024 * 1024));
        assert_eq!(cfg(&["--insights-max-mb", "0"]).sqlite_max_bytes, None);
    }
}
