//! The LLM settings, with one set of rules for every driver of the agent: the edge
//! function reads them from its Spin variables, `site-builder chat` and the build's
//! stub judge from the same variables in the environment or `.env`. A base URL
//! that is not http(s), an empty model, or a timeout out of range is an error
//! naming the variable, wherever it is read; no base URL means no LLM.

/// `llm_max_total_secs` when not set; spin.toml and the local host's defaults
/// (`kb_common::variables`) say the same.
pub const DEFAULT_LLM_MAX_TOTAL_SECS: f64 = 60.0;

/// A wrong LLM setting; each names its variable and what to set it to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("llm_base_url: `{0}` is not an http(s) URL; use e.g. https://api.openai.com/v1")]
    BaseUrl(String),
    #[error("llm_model is empty; set it to the model to use (e.g. gpt-4o-mini, qwen2.5:7b)")]
    NoModel,
    #[error("llm_timeout_secs: `{0}` is not a number of seconds from 0.1 to 600")]
    Timeout(String),
    #[error("llm_max_total_secs: `{0}` is not a number of seconds from 1 to 3600")]
    MaxTotal(String),
}

/// The OpenAI-compatible endpoint the agent uses.
#[derive(Clone, PartialEq, Eq)]
pub struct LlmConfig {
    /// Up to and including `/v1` (`https://api.openai.com/v1`,
    /// `http://127.0.0.1:11434/v1`); `/chat/completions` is appended.
    pub base_url: String,
    pub model: String,
    /// Sent as a bearer token when not empty.
    pub api_key: String,
    /// Wait for the first byte, and between two pieces of a stream.
    pub timeout: std::time::Duration,
    /// All LLM calls of one chat request together (`llm_max_total_secs`): past
    /// it, the agent answers extractively. Bounds what one request can cost.
    pub max_total: std::time::Duration,
}

impl std::fmt::Debug for LlmConfig {
    // The key is a secret: never in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmConfig").field("base_url", &self.base_url).field("model", &self.model).finish()
    }
}

impl LlmConfig {
    /// From the variables `llm_base_url`, `llm_model`, `llm_api_key`,
    /// `llm_timeout_secs` and `llm_max_total_secs` (empty: the default): `None`
    /// when no base URL is set (the agent is then extractive).
    pub fn from_variables(
        base_url: &str,
        model: &str,
        api_key: &str,
        timeout_secs: &str,
        max_total_secs: &str,
    ) -> Result<Option<LlmConfig>, SettingsError> {
        let base_url = base_url.trim().trim_end_matches('/');
        if base_url.is_empty() {
            return Ok(None);
        }
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(SettingsError::BaseUrl(base_url.into()));
        }
        if model.trim().is_empty() {
            return Err(SettingsError::NoModel);
        }
        let secs = match timeout_secs.trim() {
            "" => 30.0,
            t => t
                .parse::<f64>()
                .ok()
                .filter(|s| (0.1..=600.0).contains(s))
                .ok_or_else(|| SettingsError::Timeout(t.into()))?,
        };
        let total = match max_total_secs.trim() {
            "" => DEFAULT_LLM_MAX_TOTAL_SECS,
            t => t
                .parse::<f64>()
                .ok()
                .filter(|s| (1.0..=3600.0).contains(s))
                .ok_or_else(|| SettingsError::MaxTotal(t.into()))?,
        };
        Ok(Some(LlmConfig {
            base_url: base_url.into(),
            model: model.trim().into(),
            api_key: api_key.trim().into(),
            timeout: std::time::Duration::from_secs_f64(secs),
            max_total: std::time::Duration::from_secs_f64(total),
        }))
    }

    pub fn completions_url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llm_settings_need_a_url_and_a_model() {
        assert_eq!(LlmConfig::from_variables("", "m", "k", "", ""), Ok(None));
        let c = LlmConfig::from_variables(" http://127.0.0.1:11434/v1/ ", "qwen", "", "2.5", "").unwrap().unwrap();
        assert_eq!(c.completions_url(), "http://127.0.0.1:11434/v1/chat/completions");
        assert_eq!(c.timeout, std::time::Duration::from_millis(2500));
        assert_eq!(c.max_total, std::time::Duration::from_secs(60));
        let c = LlmConfig::from_variables("http://x/v1", "m", "", "", " 90 ").unwrap().unwrap();
        assert_eq!(c.max_total, std::time::Duration::from_secs(90));
        let e = LlmConfig::from_variables("api.openai.com", "m", "", "", "").unwrap_err();
        assert!(e.to_string().starts_with("llm_base_url: `api.openai.com`"), "{e}");
        let e = LlmConfig::from_variables("https://x/v1", " ", "", "", "").unwrap_err();
        assert!(e.to_string().contains("llm_model"), "{e}");
        let e = LlmConfig::from_variables("https://x/v1", "m", "", "soon", "").unwrap_err();
        assert!(e.to_string().contains("llm_timeout_secs"), "{e}");
        for bad in ["0", "-5", "forever", "1e9", "NaN"] {
            let e = LlmConfig::from_variables("https://x/v1", "m", "", "", bad).unwrap_err();
            assert_eq!(e, SettingsError::MaxTotal(bad.into()));
            assert!(e.to_string().contains("llm_max_total_secs"), "{bad}: {e}");
        }
        let secret = LlmConfig::from_variables("https://x/v1", "m", "sk-secret", "", "").unwrap().unwrap();
        assert!(!format!("{secret:?}").contains("sk-secret"));
    }
}
