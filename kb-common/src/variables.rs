//! Spin variables for the hosted component, found the way Spin's environment
//! provider finds them: `SPIN_VARIABLE_LLM_API_KEY` in the environment (or in a
//! `.env` file) is the variable `llm_api_key`.
//!
//! Like Spin, the component sees only the variables the application declares
//! ([`DECLARED`], which mirrors `[variables]` in `spin.toml`; a test keeps the two
//! equal), with the manifest's defaults; any other name is `undefined`.
//!
//! Here rather than in `edge-host` because the command line reads the same
//! variables for commands that host no component (`chat`, `insights`), and those
//! must not need wasmtime.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why the variables could not be read.
#[derive(Debug, thiserror::Error)]
pub enum VariablesError {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// A `.env` line that is not `NAME=value` (`line` 0: the file as a whole).
    #[error("{}:{line}: {message}", path.display())]
    DotEnv { path: PathBuf, line: usize, message: String },
}

/// The application's variables and their defaults, as `spin.toml` declares them.
pub const DECLARED: &[(&str, &str)] = &[
    ("llm_base_url", ""),
    ("llm_model", ""),
    ("llm_api_key", ""),
    ("llm_timeout_secs", "30"),
    ("llm_max_total_secs", "60"),
    ("allowed_origins", "*"),
    ("llm_allowed_outbound_host", "https://api.openai.com"),
    ("chat_rate_limit", "20"),
    ("search_rate_limit", "600"),
    ("feedback_rate_limit", "60"),
    ("insights_rate_limit", "20"),
    ("query_cache_size", "512"),
    ("search_backend", "bundled"),
    ("postgres_url", ""),
    ("tenant", "default"),
    ("postgres_allowed_outbound_host", "postgres://127.0.0.1:5432"),
    ("insights_recording", "on"),
    ("insights_retention_days", "90"),
    ("insights_token", ""),
];

/// Prefix of the environment variables that set Spin variables.
pub const ENV_PREFIX: &str = "SPIN_VARIABLE_";

/// Why a lookup failed (the variants of `spin:variables/variables.error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupError {
    InvalidName(String),
    Undefined(String),
}

/// Resolved values of the declared variables.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Variables {
    values: BTreeMap<String, String>,
}

impl Variables {
    /// The declared variables from `env` (pairs of environment name and value)
    /// over those of a `.env` file's text, over the defaults.
    pub fn resolve(
        env: impl IntoIterator<Item = (String, String)>,
        dotenv: Option<(&Path, &str)>,
    ) -> Result<Variables, VariablesError> {
        let mut values = Variables::defaults().values;
        if let Some((path, text)) = dotenv {
            for (name, value) in parse_dotenv(path, text)? {
                if let Some(var) = variable_name(&name) {
                    if values.contains_key(&var) {
                        values.insert(var, value);
                    }
                }
            }
        }
        for (name, value) in env {
            if let Some(var) = variable_name(&name) {
                if values.contains_key(&var) {
                    values.insert(var, value);
                }
            }
        }
        Ok(Variables { values })
    }

    /// Every declared variable at its default.
    pub fn defaults() -> Variables {
        Variables { values: DECLARED.iter().map(|(n, d)| (n.to_string(), d.to_string())).collect() }
    }

    /// From the process environment and `.env` in the current directory, if any.
    pub fn from_environment() -> Result<Variables, VariablesError> {
        let path = Path::new(".env");
        let text = match std::fs::read_to_string(path) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(VariablesError::Read { path: path.to_path_buf(), source }),
        };
        Variables::resolve(std::env::vars(), text.as_deref().map(|t| (path, t)))
    }

    /// Sets one declared variable (tests and embedders).
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), LookupError> {
        self.get(name)?;
        self.values.insert(name.to_string(), value.to_string());
        Ok(())
    }

    /// The value of `name`, as `spin:variables/variables.get` answers.
    pub fn get(&self, name: &str) -> Result<String, LookupError> {
        let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
            && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !valid {
            return Err(LookupError::InvalidName(format!(
                "`{name}` is not a variable name (lowercase letters, digits and `_`, starting with a letter)"
            )));
        }
        self.values
            .get(name)
            .cloned()
            .ok_or_else(|| LookupError::Undefined(format!("no variable `{name}` is declared")))
    }

    /// The names whose values are not their defaults (for the startup banner;
    /// values are never printed, some are secrets).
    pub fn overridden(&self) -> Vec<&str> {
        DECLARED.iter().filter(|(n, d)| self.values.get(*n).is_some_and(|v| v != d)).map(|(n, _)| *n).collect()
    }
}

/// `SPIN_VARIABLE_LLM_API_KEY` → `llm_api_key`.
fn variable_name(env_name: &str) -> Option<String> {
    env_name.strip_prefix(ENV_PREFIX).filter(|n| !n.is_empty()).map(str::to_ascii_lowercase)
}

/// Parses a `.env` file with `dotenvy`, the parser Spin's environment variables
/// provider uses, so `site-builder serve` reads a `.env` exactly as `spin up`
/// does (quotes, `export `, comments, multi-line double-quoted values, `${VAR}`
/// substitution). Errors name the file and the line.
pub fn parse_dotenv(path: &Path, text: &str) -> Result<Vec<(String, String)>, VariablesError> {
    let mut out = Vec::new();
    for item in dotenvy::from_read_iter(text.as_bytes()) {
        match item {
            Ok(pair) => out.push(pair),
            Err(dotenvy::Error::LineParse(line, index)) => {
                // dotenvy gives the offending line's text; its number is where
                // that text first starts a line.
                let start = text
                    .match_indices(line.as_str())
                    .map(|(i, _)| i)
                    .find(|&i| i == 0 || text[..i].ends_with('\n'))
                    .unwrap_or(0);
                return Err(VariablesError::DotEnv {
                    path: path.to_path_buf(),
                    line: text[..start].matches('\n').count() + 1,
                    message: format!(
                        "cannot read `{}` at character {}: expected NAME=value, the value quoted if it has spaces",
                        line.trim_end(),
                        index + 1
                    ),
                });
            }
            Err(e) => {
                return Err(VariablesError::DotEnv { path: path.to_path_buf(), line: 0, message: e.to_string() });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn environment_over_dotenv_over_defaults() {
        let dotenv = "# settings\nexport SPIN_VARIABLE_LLM_MODEL=\"qwen 7b\"\nSPIN_VARIABLE_LLM_API_KEY='k1' \nSPIN_VARIABLE_ALLOWED_ORIGINS=https://a.edu # the site\nOTHER=1\n";
        let v = Variables::resolve(
            env(&[("SPIN_VARIABLE_LLM_API_KEY", "k2"), ("SPIN_VARIABLE_UNDECLARED", "x"), ("PATH", "/bin")]),
            Some((Path::new(".env"), dotenv)),
        )
        .unwrap();
        assert_eq!(v.get("llm_model").unwrap(), "qwen 7b");
        assert_eq!(v.get("llm_api_key").unwrap(), "k2");
        assert_eq!(v.get("allowed_origins").unwrap(), "https://a.edu");
        assert_eq!(v.get("llm_base_url").unwrap(), "");
        assert!(matches!(v.get("undeclared"), Err(LookupError::Undefined(_))));
        assert!(matches!(v.get("Bad-Name"), Err(LookupError::InvalidName(_))));
        assert_eq!(v.overridden(), vec!["llm_model", "llm_api_key", "allowed_origins"]);
        assert_eq!(v.get("llm_timeout_secs").unwrap(), "30");
    }

    #[test]
    fn dotenv_errors_name_the_line() {
        let e = parse_dotenv(Path::new("x/.env"), "A=1\n\nnot a pair\n").unwrap_err().to_string();
        assert!(e.starts_with("x/.env:3: cannot read `not a pair`"), "{e}");
        let e = parse_dotenv(Path::new(".env"), "A=1\nB=\"open\n").unwrap_err().to_string();
        assert!(e.starts_with(".env:2: "), "{e}");
        assert_eq!(parse_dotenv(Path::new(".env"), "A=\"a\\nb\\\"c\"").unwrap()[0].1, "a\nb\"c");
        // As Spin reads it: a double-quoted value may span lines.
        assert_eq!(parse_dotenv(Path::new(".env"), "K=\"line 1\nline 2\"\n").unwrap()[0].1, "line 1\nline 2");
    }
}
