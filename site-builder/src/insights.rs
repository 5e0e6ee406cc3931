//! `site-builder insights`: the report on what readers asked, read from the
//! SQLite database the edge function records into (`STATE/sqlite_db.db`, where
//! `site-builder serve` and `spin up` keep Spin's `default` database), computed by
//! `search_core::insights::report` with the index and encoder of the build.
//!
//! The statements run through [`Sqlite`], the native twin of the component's
//! `spin:sqlite` client. The report may write too: the schema if the file predates
//! it, and the question vectors it computes (kept so the next report reuses them).

use std::path::{Path, PathBuf};

use rusqlite::types::{Value as V, ValueRef};
use search_core::insights::report::{self, Report};
use search_core::insights::{record::Settings, Db, DbError, SqlValue};

/// Why the report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum InsightsError {
    #[error("no insights in {}: {} does not exist; `site-builder serve --state {}` records searches, chats and feedback there (or pass the --state that server used)", state.display(), file.display(), state.display())]
    NoDatabase { state: PathBuf, file: PathBuf },
    #[error("cannot open {}: {source}; is it a SQLite file?", path.display())]
    Open { path: PathBuf, source: rusqlite::Error },
    #[error(transparent)]
    Report(#[from] search_core::insights::InsightsError),
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
        return Err(InsightsError::Refused { url, status, message });
    }
    serde_json::from_slice(&body)
        .map_err(|e| fail(format!("not an insights report ({e}); is this the knowledge base's function?")))
}

/// A SQLite file as `search_core::insights` sees a database.
pub struct Sqlite(rusqlite::Connection);

impl Sqlite {
    /// Opens `STATE/sqlite_db.db`, which must exist (a report of an empty state
    /// folder is a mistake in the path far more often than a fresh install).
    pub fn open_state(state: &Path) -> Result<Sqlite, InsightsError> {
        let file = state.join(edge_host::spin_sqlite::FILE_NAME);
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
}
