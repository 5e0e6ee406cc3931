//! `site-builder serve`: the built site and the edge function in the local host.

use crate::ServeArgs;

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

pub(crate) fn run_serve(args: ServeArgs) -> Result<(), String> {
    let variables = edge_host::Variables::from_environment().map_err(|e| e.to_string())?;
    let overridden = variables.overridden().join(", ");
    let cfg = host_config(args, variables);
    edge_host::serve(cfg, |addr| {
        eprintln!("Serving the knowledge base on http://{addr}/ (search API at http://{addr}/api/search?q=...)");
        if !overridden.is_empty() {
            eprintln!("Spin variables set: {overridden}");
        }
        eprintln!("Press Ctrl-C to stop.");
    })
    .map_err(|e| e.to_string())
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
