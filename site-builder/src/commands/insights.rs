//! `site-builder insights`: the report as HTML (default) or JSON.
//!
//! Questions are what readers typed, escape sequences included: everything this
//! command prints goes through `insights::terminal_line` (one-line text) or
//! `insights::terminal_json` (the JSON on standard output). The files it writes
//! keep the data as it is (the HTML escapes it as markup, not for a terminal).

use site_builder::insights::{terminal_json, terminal_line};

use crate::InsightsArgs;

pub(crate) fn run_insights(args: InsightsArgs) -> Result<(), String> {
    let variables = edge_host::Variables::from_environment().map_err(|e| e.to_string())?;
    let var = |name: &str| variables.get(name).unwrap_or_default();
    let settings = search_service::insights::record::Settings::from_variables(
        &var("insights_recording"),
        &var("insights_retention_days"),
    )?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let since = search_service::insights::parse_since(&args.since, now).map_err(|e| format!("--{e}"))?;
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
        Some(s) => return Err(format!("--site: `{s}` is not an http(s) address; use e.g. https://help.example.edu/")),
    };
    let mut report = match &args.from {
        Some(from) => {
            let token = std::env::var(site_builder::insights::TOKEN_ENV)
                .ok()
                .filter(|t| !t.trim().is_empty())
                .ok_or_else(|| site_builder::insights::InsightsError::NoToken.to_string())?;
            site_builder::insights::fetch(from, &args.since, token.trim())
        }
        None => site_builder::insights::compute(&site_builder::insights::Options {
            state: args.state,
            index: args.index,
            since,
            now,
            settings,
        }),
    }
    .map_err(|e| e.to_string())?;
    // Links are the page's business; the JSON stays the API's data.
    if let (Some(base), false) = (&site, args.json) {
        site_builder::insights::rebase(&mut report, base);
    }
    let (bytes, what) = if args.json {
        let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        // To a terminal or a file alike: the same document, as escapes.
        (terminal_json(&json).into_owned().into_bytes(), "JSON")
    } else {
        (site_builder::insights_html::render(&report).into_bytes(), "HTML")
    };
    match (&args.out, args.json) {
        (None, true) => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes)
                .and_then(|_| out.write_all(b"\n"))
                .map_err(|e| format!("cannot write to stdout: {e}"))?;
        }
        (out, _) => {
            let path = out.clone().unwrap_or_else(|| "insights.html".into());
            kb_common::write::write_atomic(&path, &bytes).map_err(|e| e.to_string())?;
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
    Ok(())
}
