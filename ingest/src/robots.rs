//! `robots.txt` for `ingest web`: which paths the crawler may fetch, and how long
//! it should wait between requests.
//!
//! Matching is the `robotstxt` crate's, a port of Google's reference parser and
//! matcher for RFC 9309: the group whose `User-agent` names the crawler's product
//! token (case-insensitively) replaces the `*` group, several groups naming it are
//! merged, the longest matching rule wins (`*` any run, a final `$` the end) and
//! `Allow` wins a tie; it also forgives the usual typos (`Disalow`).
//! `Crawl-delay` is not in the RFC but help-centre hosts set it and mean it, so it
//! is read here from the same parse, by the same group rule. A missing
//! `robots.txt` (4xx) allows everything; a server error (5xx) disallows everything,
//! as the RFC asks, and the run says so.

use robotstxt::{parse_robotstxt, DefaultMatcher, RobotsParseHandler};

/// The rules that apply to one crawler.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Robots {
    /// The file as served; empty when there is none (everything allowed).
    body: String,
    /// The crawler's product token (`kb-site-builder`).
    token: String,
    /// Seconds to wait between requests, when the crawler's group says.
    pub crawl_delay: Option<f64>,
    /// `Sitemap:` lines (they apply to every agent).
    pub sitemaps: Vec<String>,
    /// Nothing may be fetched (the file could not be read for a server error).
    deny_all: bool,
}

impl Robots {
    /// Everything allowed (no `robots.txt`).
    pub fn allow_all() -> Robots {
        Robots::default()
    }

    /// Nothing allowed (`robots.txt` answered with a server error).
    pub fn deny_all() -> Robots {
        Robots { deny_all: true, ..Robots::default() }
    }

    /// Reads `text` for the crawler whose user agent is `user_agent`
    /// (`kb-site-builder/0.1 (+url)`: its product token is what groups name).
    pub fn parse(text: &str, user_agent: &str) -> Robots {
        let token = user_agent.split('/').next().unwrap_or(user_agent).trim().to_string();
        let mut delays = Delays { token: token.clone(), ..Delays::default() };
        parse_robotstxt(text, &mut delays);
        Robots {
            body: text.to_string(),
            token,
            crawl_delay: if delays.named_seen { delays.named } else { delays.star },
            sitemaps: delays.sitemaps,
            deny_all: false,
        }
    }

    /// Whether the crawler may fetch `path` (the URL's path and query).
    pub fn allowed(&self, path: &str) -> bool {
        if self.deny_all {
            return false;
        }
        if self.body.is_empty() {
            return true;
        }
        // A whole URL, so that a path that starts `//` is not read as a host.
        let sep = if path.starts_with('/') { "" } else { "/" };
        let url = format!("http://robots.invalid{sep}{path}");
        DefaultMatcher::default().one_agent_allowed_by_robots(&self.body, &self.token, &url)
    }
}

/// Collects `Crawl-delay` and `Sitemap` lines while the crate parses the file,
/// with the groups told apart as its matcher tells them.
#[derive(Default)]
struct Delays {
    token: String,
    /// The last line was a rule, so the next `User-agent` starts a new group.
    after_rules: bool,
    in_named: bool,
    in_star: bool,
    /// Some group names the crawler: the `*` group no longer applies.
    named_seen: bool,
    named: Option<f64>,
    star: Option<f64>,
    sitemaps: Vec<String>,
}

impl RobotsParseHandler for Delays {
    fn handle_robots_start(&mut self) {}
    fn handle_robots_end(&mut self) {}

    fn handle_user_agent(&mut self, _line: u32, agent: &str) {
        if std::mem::take(&mut self.after_rules) {
            (self.in_named, self.in_star) = (false, false);
        }
        let agent = agent.split(|c: char| c == '/' || c.is_whitespace()).next().unwrap_or("");
        if agent == "*" {
            self.in_star = true;
        } else if agent.eq_ignore_ascii_case(&self.token) {
            (self.in_named, self.named_seen) = (true, true);
        }
    }

    fn handle_allow(&mut self, _line: u32, _value: &str) {
        self.after_rules = true;
    }

    fn handle_disallow(&mut self, _line: u32, _value: &str) {
        self.after_rules = true;
    }

    fn handle_sitemap(&mut self, _line: u32, value: &str) {
        self.sitemaps.push(value.to_string());
    }

    fn handle_unknown_action(&mut self, _line: u32, action: &str, value: &str) {
        if !action.eq_ignore_ascii_case("crawl-delay") {
            return;
        }
        self.after_rules = true;
        let Some(delay) = value.trim().parse::<f64>().ok().filter(|d| d.is_finite() && *d >= 0.0) else { return };
        if self.in_named {
            self.named = self.named.or(Some(delay));
        }
        if self.in_star {
            self.star = self.star.or(Some(delay));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
# a help centre's robots.txt
User-agent: *
Disallow: /search
Disallow: /*.pdf$
Allow: /search/help
Crawl-delay: 2

User-agent: kb-site-builder
User-agent: OtherBot
Disallow: /drafts/
Allow: /drafts/public

Sitemap: https://help.example.edu/sitemap.xml
";

    #[test]
    fn the_star_group_applies_to_unnamed_crawlers() {
        let r = Robots::parse(FILE, "SomeBot/1.0");
        assert!(!r.allowed("/search?q=wifi"));
        assert!(r.allowed("/search/help"), "the longer Allow wins");
        assert!(!r.allowed("/files/guide.pdf"));
        assert!(r.allowed("/files/guide.pdf?download=1"), "$ anchors the end");
        assert!(r.allowed("/drafts/x"));
        assert_eq!(r.crawl_delay, Some(2.0));
        assert_eq!(r.sitemaps, vec!["https://help.example.edu/sitemap.xml".to_string()]);
    }

    #[test]
    fn a_named_group_replaces_the_star_group() {
        let r = Robots::parse(FILE, "kb-site-builder/0.1 (+https://example.org)");
        assert!(r.allowed("/search?q=wifi"), "the * rules do not apply to a named crawler");
        assert!(!r.allowed("/drafts/plan"));
        assert!(r.allowed("/drafts/public/faq"));
        assert_eq!(r.crawl_delay, None);
    }

    #[test]
    fn ties_go_to_allow_and_empty_disallow_allows() {
        let r = Robots::parse("User-agent: *\nDisallow: /a\nAllow: /a\n", "x");
        assert!(r.allowed("/a/b"));
        let r = Robots::parse("User-agent: *\nDisallow:\n", "x");
        assert!(r.allowed("/anything"));
        let r = Robots::parse("User-agent: *\nDisallow: /\n", "x");
        assert!(!r.allowed("/"));
        assert!(!r.allowed(""));
    }

    #[test]
    fn wildcards_match_runs() {
        let matches = |pattern: &str, path: &str| {
            !Robots::parse(&format!("User-agent: *\nDisallow: {pattern}\n"), "x").allowed(path)
        };
        assert!(matches("/*/private/", "/en/private/x"));
        assert!(!matches("/*/private/", "/en/public/x"));
        assert!(matches("/a*b*c$", "/aXbYc"));
        assert!(!matches("/a*b*c$", "/aXbYcZ"));
        assert!(matches("*.php", "/index.php?x"));
        assert!(matches("/x$", "/x"));
        assert!(!matches("/x$", "/xy"));
    }

    #[test]
    fn the_delay_is_the_crawlers_groups_and_typos_are_forgiven() {
        let file = "User-agent: *\nCrawl-delay: 5\n\nUser-agent: kb-site-builder\nDisalow: /old/\nCrawl-delay: 0.5\n";
        let r = Robots::parse(file, "kb-site-builder/0.1");
        assert_eq!(r.crawl_delay, Some(0.5));
        assert!(!r.allowed("/old/page"), "Disalow is read as Disallow");
        assert_eq!(Robots::parse(file, "Other/1").crawl_delay, Some(5.0));
    }

    #[test]
    fn errors_allow_or_deny_everything() {
        assert!(Robots::allow_all().allowed("/x"));
        assert!(!Robots::deny_all().allowed("/x"));
        let junk = Robots::parse("<html>not a robots file</html>", "x");
        assert!(junk.allowed("/x"));
    }
}
