//! What a recorded URL may become on the page: [`link_href`] lets a URL into an
//! `href` only when it can do nothing but navigate, and [`Link`] is a title with
//! that checked URL (or none, when the URL is shown as text).

use search_service::insights::report::PageRef;
use serde::Serialize;

/// The URL as it may go into an `href`: a relative path (`it/vpn.html`,
/// `/reset.html`, `#x`) or an `http:`/`https:` URL that passes the build's URL
/// check ([`kb_common::safe_url`]); `None` for anything else (`javascript:`,
/// `data:`, `mailto:`, control characters, an empty URL), which is then shown as
/// text without a link.
pub fn link_href(url: &str) -> Option<String> {
    if url.trim().is_empty() || !kb_common::safe_url::is_safe(url) {
        return None;
    }
    // Cleaned the way `safe_url` (and a browser) reads the scheme.
    let cleaned: String =
        url.trim_matches(|c: char| c <= ' ').chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect();
    // Backslashes are slashes to a browser (`/\host` is another host): no real
    // page URL holds one.
    if cleaned.contains('\\') {
        return None;
    }
    let before_path = cleaned.split(['/', '?', '#']).next().unwrap_or("");
    let lower = cleaned.to_ascii_lowercase();
    if !before_path.contains(':') || lower.starts_with("http:") || lower.starts_with("https:") {
        Some(url.to_string())
    } else {
        None
    }
}

/// A title, linked when its URL may be (see [`link_href`]).
#[derive(Debug, Clone, Serialize)]
pub struct Link {
    pub(super) title: String,
    href: Option<String>,
    /// The URL as recorded, for a tooltip (also when it is not linked).
    url: String,
}

impl Link {
    pub(super) fn page(p: &PageRef) -> Link {
        let title = if p.title.trim().is_empty() { p.page_id.clone() } else { p.title.clone() };
        Link { title, href: link_href(&p.url), url: p.url.clone() }
    }

    pub(super) fn url(url: &str) -> Link {
        Link { title: url.to_string(), href: link_href(url), url: url.to_string() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_link_only_when_they_can_only_navigate() {
        for ok in ["reset.html", "/it/vpn.html", "../a.html", "#top", "https://x.example/a", "HTTP://x.example"] {
            assert_eq!(link_href(ok).as_deref(), Some(ok), "{ok}");
        }
        for bad in [
            "",
            " ",
            "javascript:alert(1)",
            " java\tscript:x",
            "data:text/html,x",
            "mailto:a@b",
            "/\\evil",
            "vbscript:x",
        ] {
            assert_eq!(link_href(bad), None, "{bad}");
        }
    }
}
