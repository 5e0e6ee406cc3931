//! `site-builder insights`: the report on what readers asked, read from the
//! SQLite database the edge function records into (`STATE/sqlite_db.db`, where
//! `site-builder serve` and `spin up` keep Spin's `default` database), computed by
//! `search_service::insights::report` with the index and encoder of the build.
//!
//! The statements run through [`Sqlite`], the native twin of the component's
//! `spin:sqlite` client. The report may write too: the schema if the file predates
//! it, and the question vectors it computes (kept so the next report reuses them).
//!
//! What readers typed reaches the terminal (the gaps `insights` prints, its JSON on
//! standard output, a server's error message): [`terminal_safe`],
//! [`terminal_line`] and [`terminal_json`] take out what a terminal would obey
//! rather than show.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use rusqlite::types::{Value as V, ValueRef};
use search_service::insights::report::{self, RateLimits, Report};
use search_service::insights::{record::Settings, Db, DbError, SqlValue};

/// Why the report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum InsightsError {
    #[error("no insights in {}: {} does not exist; `site-builder serve --state {}` records searches, chats and feedback there (or pass the --state that server used)", state.display(), file.display(), state.display())]
    NoDatabase { state: PathBuf, file: PathBuf },
    #[error("cannot open {}: {source}; is it a SQLite file?", path.display())]
    Open { path: PathBuf, source: rusqlite::Error },
    #[error(transparent)]
    Report(#[from] search_service::insights::InsightsError),
    #[error(transparent)]
    Search(#[from] crate::search::SearchError),
    #[error("--from needs the function's insights_token in the environment variable {TOKEN_ENV}")]
    NoToken,
    #[error("cannot fetch {url}: {message}")]
    Fetch { url: String, message: String },
    #[error("{url} answered {status}: {message}")]
    Refused { url: String, status: u16, message: String },
}

/// Where `--from` reads the bearer token (not an argument: it would stay in the
/// shell's history and the process list).
pub const TOKEN_ENV: &str = "KB_INSIGHTS_TOKEN";

/// The report of a deployed function (`GET /api/insights`): `from` is the site
/// (`https://help.example.edu`) or the endpoint itself.
pub fn fetch(from: &str, since: &str, token: &str) -> Result<Report, InsightsError> {
    let base = from.trim().trim_end_matches('/');
    let url = if base.ends_with("/api/insights") { base.to_string() } else { format!("{base}/api/insights") };
    let fail = |message: String| InsightsError::Fetch { url: url.clone(), message };
    let client = kb_common::http::blocking_client()
        .timeout(std::time::Duration::from_secs(300))
        .build()
        .map_err(|e| fail(kb_common::http::describe(&e)))?;
    // `since` in a query string: anything but letters, digits and `-` encoded.
    let since: String = since
        .bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b == b'-' { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect();
    let resp = client
        .get(format!("{url}?since={since}"))
        .bearer_auth(token)
        .send()
        .map_err(|e| fail(kb_common::http::describe(&e)))?;
    let status = resp.status().as_u16();
    let body = resp.bytes().map_err(|e| fail(kb_common::http::describe(&e)))?;
    if status != 200 {
        // The API's error envelope says what to do; anything else, its start.
        let message = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| String::from_utf8_lossy(&body).chars().take(200).collect());
        // The server's words go to the terminal.
        let message = terminal_line(&message).into_owned();
        return Err(InsightsError::Refused { url, status, message });
    }
    serde_json::from_slice(&body)
        .map_err(|e| fail(format!("not an insights report ({e}); is this the knowledge base's function?")))
}

/// A SQLite file as `search_service::insights` sees a database.
pub struct Sqlite(rusqlite::Connection);

impl Sqlite {
    /// Opens `STATE/sqlite_db.db`, which must exist (a report of an empty state
    /// folder is a mistake in the path far more often than a fresh install).
    pub fn open_state(state: &Path) -> Result<Sqlite, InsightsError> {
        let file = state.join(kb_common::spin_state::SQLITE_FILE);
        if !file.is_file() {
            return Err(InsightsError::NoDatabase { state: state.to_path_buf(), file });
        }
        let conn =
            rusqlite::Connection::open(&file).map_err(|source| InsightsError::Open { path: file.clone(), source })?;
        // A server may be writing: wait for its statement rather than fail.
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|source| InsightsError::Open { path: file.clone(), source })?;
        Ok(Sqlite(conn))
    }
}

impl Db for Sqlite {
    fn execute(&self, statement: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>, DbError> {
        let err = |e: rusqlite::Error| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DiskFull) => DbError::Full,
            _ => DbError::Statement(e.to_string()),
        };
        let mut st = self.0.prepare_cached(statement).map_err(err)?;
        let n = st.column_count();
        let ps = params.iter().map(|p| match p {
            SqlValue::Null => V::Null,
            SqlValue::Integer(v) => V::Integer(*v),
            SqlValue::Real(v) => V::Real(*v),
            SqlValue::Text(v) => V::Text(v.clone()),
            SqlValue::Blob(v) => V::Blob(v.clone()),
        });
        let mut rows = st.query(rusqlite::params_from_iter(ps)).map_err(err)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(err)? {
            let row = (0..n)
                .map(|i| match r.get_ref(i) {
                    Ok(ValueRef::Integer(v)) => SqlValue::Integer(v),
                    Ok(ValueRef::Real(v)) => SqlValue::Real(v),
                    Ok(ValueRef::Text(t)) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
                    Ok(ValueRef::Blob(b)) => SqlValue::Blob(b.to_vec()),
                    _ => SqlValue::Null,
                })
                .collect();
            out.push(row);
        }
        Ok(out)
    }
}

/// What `site-builder insights` reports on.
pub struct Options {
    pub state: PathBuf,
    pub index: PathBuf,
    pub since: u64,
    pub now: u64,
    pub settings: Settings,
}

/// Computes the report.
pub fn compute(o: &Options) -> Result<Report, InsightsError> {
    let db = Sqlite::open_state(&o.state)?;
    let searcher = crate::search::Searcher::open(&o.index, None)?;
    let svc = searcher.service()?;
    Ok(report::compute(&db, &svc, &report::Options::new(o.since, o.now, o.settings))?)
}

/// Prefixes the report's site-relative page URLs with the site's address
/// (`https://help.example.edu/`, ending in `/`), so its links open from anywhere.
pub fn rebase(report: &mut Report, base: &str) {
    let fix = |url: &mut String| {
        if !url.is_empty() && !url.contains("://") && !url.starts_with('/') {
            *url = format!("{base}{url}");
        }
    };
    for g in &mut report.gaps {
        g.closest_pages.iter_mut().for_each(|p| fix(&mut p.page.url));
    }
    report.cited_pages.iter_mut().for_each(|p| fix(&mut p.page.url));
    if let Some(pages) = &mut report.never_retrieved {
        pages.iter_mut().for_each(|p| fix(&mut p.url));
    }
    for f in &mut report.feedback {
        f.citations.iter_mut().for_each(fix);
    }
    report.pages_rated.iter_mut().for_each(|p| fix(&mut p.page.url));
}

/// What the team should do about the requests the rate limit refused, said the
/// same by the HTML report and the command's summary; `None` when none were.
/// The limit is per address (`spin-client-addr`), so readers who share one (a
/// computer lab, a residence hall behind NAT) share one allowance: the advice
/// names the variable of each endpoint that refused, and its value now.
pub fn rate_limit_advice(r: &RateLimits) -> Option<String> {
    if r.refused == 0 || r.buckets.is_empty() {
        return None;
    }
    let raise: Vec<String> =
        r.buckets.iter().map(|b| format!("`{}` (now {} a minute per address)", b.variable, b.limit)).collect();
    Some(format!(
        "If these are readers behind one campus address (a computer lab, a residence hall behind NAT), raise {}; if they are one script, the limit did its job.",
        raise.join(" or ")
    ))
}

/// The rate limit's refusals in one line for a terminal: how many, from how
/// many clients, the busiest minute, and [`rate_limit_advice`]; `None` when
/// nothing was refused.
pub fn rate_limit_summary(r: &RateLimits) -> Option<String> {
    let advice = rate_limit_advice(r)?;
    let busiest = r
        .busiest_minute
        .as_ref()
        .map(|m| format!(", busiest minute {} ({} refused)", m.start, m.refused))
        .unwrap_or_default();
    let clients = if r.clients == 1 { "1 client".to_string() } else { format!("{} clients", r.clients) };
    Some(format!("rate limited: {} requests refused (at least), {clients}{busiest}. {advice}", r.refused))
}

/// Whether a terminal would act on `c` rather than show it: C0 controls (but
/// `\n` and `\t`), DEL, C1 controls, and Unicode's bidirectional controls
/// (which reorder what is shown around them).
fn is_terminal_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` as a terminal should get it: escape sequences removed whole (CSI
/// `ESC [ … final`, the string sequences OSC, DCS, SOS, PM and APC up to their
/// terminator, two-character escapes; their C1 forms too), and every other control
/// character dropped ([`is_terminal_control`]); newlines and tabs stay.
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_terminal_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    // Skips a control string up to BEL or ST (ESC \ or U+009C).
    fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
        while let Some(c) = chars.next() {
            match c {
                '\u{7}' | '\u{9c}' => return,
                '\u{1b}' if chars.peek() == Some(&'\\') => {
                    chars.next();
                    return;
                }
                _ => {}
            }
        }
    }
    // Skips a CSI's parameter and intermediate bytes and its final byte.
    fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
        while let Some(&c) = chars.peek() {
            chars.next();
            if !('\u{20}'..='\u{3f}').contains(&c) {
                return;
            }
        }
    }
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.peek().copied() {
                Some('[') => {
                    chars.next();
                    skip_csi(&mut chars);
                }
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    chars.next();
                    skip_string(&mut chars);
                }
                Some(n) if ('\u{20}'..='\u{7e}').contains(&n) => {
                    chars.next();
                }
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            c if is_terminal_control(c) => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`terminal_safe`] for text shown on one line: newlines and tabs become spaces,
/// so a question cannot start a line that looks like the tool's own.
pub fn terminal_line(s: &str) -> Cow<'_, str> {
    match terminal_safe(s) {
        Cow::Borrowed(b) if !b.contains(['\n', '\t']) => Cow::Borrowed(b),
        other => Cow::Owned(other.replace(['\n', '\t'], " ")),
    }
}

/// JSON text as a terminal should get it: the same document, with the control
/// characters JSON leaves raw (C1, DEL, the bidirectional controls) written as
/// `\uXXXX` escapes. (serde_json already escapes C0, so ESC never appears raw;
/// outside strings JSON text is ASCII, so only strings change, and not in value.)
pub fn terminal_json(json: &str) -> Cow<'_, str> {
    if !json.chars().any(is_terminal_control) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_terminal_control(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_controls_do_not_reach_the_terminal() {
        let hostile = concat!(
            "how do I \u{1b}[2J\u{1b}[1;31mreset\u{1b}[0m my password",
            "\u{1b}]0;pwned title\u{7}",
            "\u{1b}]8;;https://evil.example/\u{1b}\\click\u{1b}]8;;\u{1b}\\",
            "\u{9b}31m c1\u{9d}osc\u{9c}",
            "\r\u{8}\u{7f}\u{0}\u{7} \u{202e}gnp.exe",
            "\u{1b}Pdcs\u{1b}\\\u{1b}c\u{1b}"
        );
        let safe = terminal_safe(hostile);
        assert!(!safe.chars().any(|c| c.is_control() || ('\u{202a}'..='\u{2069}').contains(&c)), "{safe:?}");
        assert_eq!(safe, "how do I reset my passwordclick c1 gnp.exe");
        assert_eq!(terminal_safe("plain\ttext\nand more"), "plain\ttext\nand more");
        assert!(matches!(terminal_safe("nothing to do"), Cow::Borrowed(_)));
        assert_eq!(terminal_line("two\nlines\tand a tab"), "two lines and a tab");
        assert_eq!(terminal_safe("ünïcödé, 中文, emoji 🙂"), "ünïcödé, 中文, emoji 🙂");
    }

    #[test]
    fn json_keeps_its_value_and_loses_raw_controls() {
        let value = serde_json::json!({ "label": "a\u{1b}[2J b\u{9b}31m c\u{202e}d\u{7f}", "n": 1 });
        let text = serde_json::to_string_pretty(&value).unwrap();
        let safe = terminal_json(&text);
        assert!(!safe.chars().any(|c| c.is_control() && c != '\n'), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value, "the same document");
    }
}
