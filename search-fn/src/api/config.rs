//! The function's settings as its Spin variables give them, each parsed and
//! checked once: the origins allowed, the insights token, the search backend,
//! the query cache's size and the LLM.

use search_service::insights::record;

use crate::limit::Limits;

/// A Spin variable whose value the function cannot use; the message names the
/// variable and says what it takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    #[error("allowed_origins: `{0}` is not an origin; use `*` or a list like `https://www.example.edu, http://localhost:8080`")]
    Origin(String),
    #[error("insights_token must be at least {MIN_INSIGHTS_TOKEN} printable ASCII characters without spaces (e.g. `openssl rand -hex 24`)")]
    InsightsToken,
    #[error("`search_backend` is `postgres` but `postgres_url` is empty; set it to the database's URL (postgres://user:password@host:port/db)")]
    NoPostgresUrl,
    #[error("`tenant` is `{0}`; use 1 to 63 letters, digits, `-` or `_`")]
    Tenant(String),
    #[error("`search_backend` is `{0}`; use `bundled` or `postgres`")]
    Backend(String),
    #[error("query_cache_size: `{0}` is not a number of query vectors from 0 (no cache) to {MAX_QUERY_CACHE}")]
    QueryCacheSize(String),
}

/// Which origins may call the API from a browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowedOrigins {
    /// Any origin (`Access-Control-Allow-Origin: *`).
    Any,
    /// Exactly these origins (scheme, host and port), echoed back when they
    /// match. The site's own origin must be listed too: the request's `Host`
    /// says nothing, a client (or a DNS rebinding) chooses it.
    List(Vec<String>),
}

impl AllowedOrigins {
    /// Parses the `allowed_origins` variable: `*`, or origins separated by commas
    /// or spaces (`https://www.example.edu, https://help.example.edu`). Empty means `*`.
    pub fn parse(s: &str) -> Result<AllowedOrigins, SettingError> {
        let items: Vec<&str> = s.split([',', ' ']).map(str::trim).filter(|x| !x.is_empty()).collect();
        if items.is_empty() || items == ["*"] {
            return Ok(AllowedOrigins::Any);
        }
        let mut list = Vec::with_capacity(items.len());
        for o in items {
            let ok = (o.starts_with("https://") || o.starts_with("http://"))
                && !o.trim_end_matches('/').contains(['?', '#'])
                && o.split("://").nth(1).is_some_and(|h| !h.is_empty() && !h.trim_end_matches('/').contains('/'));
            if !ok {
                return Err(SettingError::Origin(o.to_string()));
            }
            list.push(o.trim_end_matches('/').to_ascii_lowercase());
        }
        Ok(AllowedOrigins::List(list))
    }

    /// Whether a request with this `Origin` header may be served at all. No header
    /// (curl, servers, same-origin GETs) is allowed: the check is against other
    /// sites driving their visitors' browsers, which always send one.
    pub fn permits(&self, origin: Option<&str>) -> bool {
        origin.is_none() || self.allow(origin).is_some()
    }

    /// The `Access-Control-Allow-Origin` value for a request from `origin`, if allowed.
    pub(super) fn allow(&self, origin: Option<&str>) -> Option<String> {
        match self {
            AllowedOrigins::Any => Some("*".into()),
            AllowedOrigins::List(list) => {
                let o = origin?.trim_end_matches('/').to_ascii_lowercase();
                list.contains(&o).then_some(o)
            }
        }
    }
}

pub use search_service::agent::settings::LlmConfig;

/// Configuration from the Spin variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub allowed_origins: AllowedOrigins,
    pub llm: Option<LlmConfig>,
    pub limits: Limits,
    /// Query vectors each instance keeps (`query_cache_size`; 0: none).
    pub query_cache: usize,
    /// Where the index is read from.
    pub backend: Backend,
    /// Whether searches, chats and feedback are recorded, and for how long
    /// (`insights_recording`, `insights_retention_days`).
    pub insights: record::Settings,
    /// The bearer token of `GET /api/insights` (`insights_token`); `None`: the
    /// report is not served.
    pub insights_token: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            allowed_origins: AllowedOrigins::Any,
            llm: None,
            limits: Limits::default(),
            query_cache: search_core::query_cache::DEFAULT_CAPACITY,
            backend: Backend::Bundled,
            insights: record::Settings::default(),
            insights_token: None,
        }
    }
}

/// Shortest `insights_token` accepted: the report holds what readers asked.
pub const MIN_INSIGHTS_TOKEN: usize = 16;

/// Checks the `insights_token` variable (empty: the report is not served).
pub fn insights_token(v: &str) -> Result<Option<String>, SettingError> {
    let v = v.trim();
    if v.is_empty() {
        return Ok(None);
    }
    if v.len() < MIN_INSIGHTS_TOKEN || !v.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(SettingError::InsightsToken);
    }
    Ok(Some(v.to_string()))
}

/// Where the function reads its index (`search_backend`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// The index bundled in the component (the default).
    Bundled,
    /// A tenant in PostgreSQL: the URLs (`postgres_url`, space-separated: a
    /// primary and its replicas, tried in order) and the tenant (`tenant`).
    Postgres { urls: Vec<String>, tenant: String },
}

impl Backend {
    /// The backend the three variables describe; an error names the variable.
    pub fn from_variables(backend: &str, postgres_url: &str, tenant: &str) -> Result<Backend, SettingError> {
        match backend.trim() {
            "" | "bundled" => Ok(Backend::Bundled),
            "postgres" => {
                let urls: Vec<String> = postgres_url.split_whitespace().map(str::to_string).collect();
                if urls.is_empty() {
                    return Err(SettingError::NoPostgresUrl);
                }
                let tenant = match tenant.trim() {
                    "" => "default",
                    t => t,
                };
                if !search_service::pg::valid_tenant(tenant) {
                    return Err(SettingError::Tenant(tenant.to_string()));
                }
                Ok(Backend::Postgres { urls, tenant: tenant.to_string() })
            }
            other => Err(SettingError::Backend(other.to_string())),
        }
    }
}

/// The most query vectors `query_cache_size` may ask an instance to keep (about
/// 100 MB): a bound so that a typo in a variable cannot exhaust an instance.
pub const MAX_QUERY_CACHE: usize = 65_536;

/// `query_cache_size` (empty: the default).
pub fn query_cache_size(v: &str) -> Result<usize, SettingError> {
    match v.trim() {
        "" => Ok(search_core::query_cache::DEFAULT_CAPACITY),
        t => t
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= MAX_QUERY_CACHE)
            .ok_or_else(|| SettingError::QueryCacheSize(t.to_string())),
    }
}
