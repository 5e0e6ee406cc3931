//! `site-builder insights`: the report as HTML (default) or JSON.
//!
//! Questions are what readers typed, escape sequences included: everything this
//! command prints goes through `insights::terminal_line` (one-line text) or
//! `insights::terminal_json` (the JSON on standard output). The files it writes
//! keep the data as it is (the HTML escapes it as markup, not for a terminal).

use site_builder::insights::{terminal_json, terminal_line};
use std::path::PathBuf;

use super::CommandError;

#[derive(clap::Args)]
pub(crate) struct InsightsArgs {
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

pub(crate) fn run_insights(args: InsightsArgs) -> Result<(), CommandError> {
    let variables = kb_common::variables::Variables::from_environment()?;
    let var = |name: &str| variables.get(name).unwrap_or_default();
    let settings = search_service::insights::record::Settings::from_variables(
        &var("insights_recording"),
        &var("insights_retention_days"),
    )?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let since = search_service::insights::parse_since(&args.since, now).map_err(CommandError::Since)?;
    // A deployed function's pages are on its site: links open there by default.
    let site_arg = args
        .site
        .clone()
        .or_else(|| args.from.as_ref().map(|f| f.trim().trim_end_matches("/api/insights").to_string()));
    let site = match site_arg.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(s) if s.starts_with("https://") || s.starts_with("http://") => {
            Some(format!("{}/", s.trim_end_matches('/')))
        }
        Some(s) => return Err(CommandError::Site(s.into())),
    };
    let mut report = match &args.from {
        Some(from) => {
            let token = std::env::var(site_builder::insights::TOKEN_ENV)
                .ok()
                .filter(|t| !t.trim().is_empty())
                .ok_or(site_builder::insights::InsightsError::NoToken)?;
            site_builder::insights::fetch(from, &args.since, token.trim())
        }
        None => site_builder::insights::compute(&site_builder::insights::Options {
            state: args.state,
            index: args.index,
            since,
            now,
            settings,
        }),
    }?;
    // Links are the page's business; the JSON stays the API's data.
    if let (Some(base), false) = (&site, args.json) {
        site_builder::insights::rebase(&mut report, base);
    }
    let (bytes, what) = if args.json {
        let json = serde_json::to_string_pretty(&report)?;
        // To a terminal or a file alike: the same document, as escapes.
        (terminal_json(&json).into_owned().into_bytes(), "JSON")
    } else {
        (site_builder::insights_html::render(&report).into_bytes(), "HTML")
    };
    match (&args.out, args.json) {
        (None, true) => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes).and_then(|_| out.write_all(b"\n")).map_err(CommandError::Stdout)?;
        }
        (out, _) => {
            let path = out.clone().unwrap_or_else(|| "insights.html".into());
            kb_common::write::write_atomic(&path, &bytes)?;
            eprintln!("Wrote {} ({what})", terminal_line(&path.display().to_string()));
        }
    }
    let t = &report.totals;
    eprintln!(
        "{} searches, {} chats ({:.0}% abstained), {} thumbs down, {} gap groups since {}",
        t.searches,
        t.chats,
        t.abstention_rate * 100.0,
        t.thumbs_down,
        report.gaps.len(),
        terminal_line(&report.period.since)
    );
    for (i, g) in report.gaps.iter().take(5).enumerate() {
        eprintln!("  answer next {}: {} ({}x)", i + 1, terminal_line(&g.label), g.count);
    }
    if let Some(worst) = report.pages_rated.first() {
        eprintln!(
            "{} pages rated by readers; least helpful: {} ({} yes, {} no)",
            report.pages_rated.len(),
            terminal_line(&worst.page.url),
            worst.yes,
            worst.no
        );
    }
    if let Some(line) = site_builder::insights::rate_limit_summary(&report.rate_limited) {
        eprintln!("{}", terminal_line(&line));
    }
    Ok(())
}
