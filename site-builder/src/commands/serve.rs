//! `site-builder serve`: the built site and the edge function in the local host.

use crate::ServeArgs;

pub(crate) fn run_serve(args: ServeArgs) -> Result<(), String> {
    let variables = edge_host::Variables::from_environment().map_err(|e| e.to_string())?;
    let overridden = variables.overridden().join(", ");
    let cfg = edge_host::HostConfig {
        addr: args.addr,
        request_timeout: std::time::Duration::from_secs(args.request_timeout),
        log: !args.quiet,
        postgres_ca: args.tls.postgres_ca,
        ..edge_host::HostConfig::search_fn(args.out.join("site"), args.component, variables, args.state)
    };
    edge_host::serve(cfg, |addr| {
        eprintln!("Serving the knowledge base on http://{addr}/ (search API at http://{addr}/api/search?q=...)");
        if !overridden.is_empty() {
            eprintln!("Spin variables set: {overridden}");
        }
        eprintln!("Press Ctrl-C to stop.");
    })
    .map_err(|e| e.to_string())
}
