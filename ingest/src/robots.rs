//! `robots.txt` as RFC 9309 reads it, for `ingest web`: which paths a crawler
//! named by `user_agent` may fetch, and how long it should wait between requests.
//!
//! The group is the one whose `User-agent` line names the crawler's product token
//! (case-insensitively), else the `*` group; several groups naming the same agent
//! are merged, as the RFC says. Within the group the longest matching rule wins
//! (`*` matches any run of characters, a trailing `$` anchors the end) and `Allow`
//! wins a tie. `Crawl-delay` is not in the RFC but help-centre hosts set it and
//! mean it, so it is honoured. A missing `robots.txt` (4xx) allows everything; a
//! server error (5xx) disallows everything, as the RFC asks, and the run says so.

/// One `User-agent` group as written: its agents, rules and crawl delay.
#[derive(Default)]
struct Group {
    agents: Vec<String>,
    rules: Vec<(bool, String)>,
    crawl_delay: Option<f64>,
}

/// The rules that apply to one crawler.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Robots {
    /// (allow, pattern), in file order.
    rules: Vec<(bool, String)>,
    /// Seconds to wait between requests, when the group says.
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

    /// Parses `text` for the crawler whose product token is `user_agent`.
    pub fn parse(text: &str, user_agent: &str) -> Robots {
        let token = user_agent.split('/').next().unwrap_or(user_agent).trim().to_ascii_lowercase();
        // Groups: consecutive User-agent lines, then their rules.
        let mut groups: Vec<Group> = Vec::new();
        let mut sitemaps = Vec::new();
        let mut in_agents = false;
        for raw in text.lines() {
            let line = raw.split('#').next().unwrap_or("").trim();
            let Some((key, value)) = line.split_once(':') else { continue };
            let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
            match key.as_str() {
                "user-agent" => {
                    if !in_agents {
                        groups.push(Group::default());
                        in_agents = true;
                    }
                    if let Some(g) = groups.last_mut() {
                        g.agents.push(value.to_ascii_lowercase());
                    }
                }
                "allow" | "disallow" => {
                    in_agents = false;
                    if let Some(g) = groups.last_mut() {
                        // An empty Disallow allows everything: no rule.
                        if !value.is_empty() {
                            g.rules.push((key == "allow", value.to_string()));
                        }
                    }
                }
                "crawl-delay" => {
                    in_agents = false;
                    if let (Some(g), Ok(d)) = (groups.last_mut(), value.parse::<f64>()) {
                        if d.is_finite() && d >= 0.0 {
                            g.crawl_delay = Some(d);
                        }
                    }
                }
                "sitemap" => sitemaps.push(value.to_string()),
                _ => {}
            }
        }
        let named: Vec<&Group> = groups.iter().filter(|g| g.agents.contains(&token)).collect();
        let chosen: Vec<&Group> = if named.is_empty() {
            groups.iter().filter(|g| g.agents.iter().any(|a| a == "*")).collect()
        } else {
            named
        };
        let mut robots = Robots { sitemaps, ..Robots::default() };
        for g in chosen {
            robots.rules.extend(g.rules.iter().cloned());
            robots.crawl_delay = robots.crawl_delay.or(g.crawl_delay);
        }
        robots
    }

    /// Whether the crawler may fetch `path` (the URL's path and query).
    pub fn allowed(&self, path: &str) -> bool {
        if self.deny_all {
            return false;
        }
        let path = if path.is_empty() { "/" } else { path };
        let mut best: Option<(usize, bool)> = None;
        for (allow, pattern) in &self.rules {
            if matches(pattern, path) {
                let len = pattern.len();
                best = match best {
                    Some((l, a)) if l > len || (l == len && a) => Some((l, a)),
                    _ => Some((len, *allow)),
                };
            }
        }
        best.is_none_or(|(_, allow)| allow)
    }
}

/// RFC 9309 matching: the pattern matches a prefix of the path, `*` any run of
/// characters, a final `$` the end of the path. Percent-encoding is compared as
/// written (both sides come from the same site).
fn matches(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut at = 0;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            if !path.starts_with(part) {
                return false;
            }
            at = part.len();
        } else if i == parts.len() - 1 && anchored {
            // The last piece must end the path, after what the earlier pieces used.
            return path.len() >= at + part.len() && path.ends_with(part);
        } else {
            match path[at..].find(part) {
                Some(p) => at += p + part.len(),
                None => return false,
            }
        }
    }
    !anchored || at == path.len()
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
        assert!(matches("/*/private/", "/en/private/x"));
        assert!(!matches("/*/private/", "/en/public/x"));
        assert!(matches("/a*b*c$", "/aXbYc"));
        assert!(!matches("/a*b*c$", "/aXbYcZ"));
        assert!(matches("*.php", "/index.php?x"));
        assert!(matches("/x$", "/x"));
        assert!(!matches("/x$", "/xy"));
    }

    #[test]
    fn errors_allow_or_deny_everything() {
        assert!(Robots::allow_all().allowed("/x"));
        assert!(!Robots::deny_all().allowed("/x"));
        let junk = Robots::parse("<html>not a robots file</html>", "x");
        assert!(junk.allowed("/x"));
    }
}
