//! Shortcodes that stand for text where they are: `heading`, `feature-state`,
//! versions and params, `ref`/`relref`, `figure`, `youtube`, `link`,
//! `api-reference`; the dispatch to the glossary and include ones.

use super::calls::Call;
use super::scanner::Scanner;
use crate::mdx::tree;

/// The English text Hugo's i18n gives `heading "key"`.
fn heading_text(key: &str) -> String {
    match key {
        "prerequisites" => "Before you begin".to_string(),
        "objectives" => "Objectives".to_string(),
        "cleanup" => "Clean up".to_string(),
        "whatsnext" => "What's next".to_string(),
        "synopsis" => "Synopsis".to_string(),
        "options" => "Options".to_string(),
        "seealso" => "See Also".to_string(),
        "lessoncontent" => "Lesson content".to_string(),
        other => tree::capitalise(other),
    }
}

/// What rendering a call gave.
pub(super) enum Rendered {
    Inline(String),
    /// Lines of their own when the call stands alone on its line, else joined.
    Lines(Vec<String>),
    Nothing,
}

impl Scanner<'_> {
    /// Renders a call that is not a container; `before` is the line's text so
    /// far (to tell a link destination), `heading` whether it is a heading.
    pub(super) fn render(&mut self, c: &Call, before: &str, src: usize, heading: bool) -> Rendered {
        match c.name.as_str() {
            "glossary_tooltip" => Rendered::Inline(self.tooltip(c, before, heading)),
            "glossary_definition" => self.definition(c, src),
            "heading" => Rendered::Inline(heading_text(c.get_or_first("heading").unwrap_or(""))),
            "feature-state" => Rendered::Inline(feature_state(c)),
            "skew" | "param" | "latest-version" => {
                let name = c.positional(0).or_else(|| c.get("name")).unwrap_or(&c.name).to_string();
                Rendered::Inline(if in_link_destination(before) { name } else { format!("`{name}`") })
            }
            "ref" | "relref" => Rendered::Inline(self.reference(c.get_or_first("path").unwrap_or(""))),
            "figure" => figure(c),
            "youtube" => youtube(c),
            "api-reference" => Rendered::Inline(api_reference(c)),
            "link" => Rendered::Inline(match (c.get("text"), c.get("url")) {
                (Some(text), Some(url)) => format!("[{text}]({url})"),
                (text, url) => text.or(url).unwrap_or("").to_string(),
            }),
            "code_sample" | "codenew" | "code" => self.code_sample(c, src),
            "include" => self.include(c, src),
            _ => Rendered::Nothing,
        }
    }

    /// `ref`/`relref`: the link to the page when it is known, else the path.
    fn reference(&self, target: &str) -> String {
        let (path, anchor) = target.split_once('#').map_or((target, ""), |(p, a)| (p, a));
        let key = path.trim_start_matches('/').trim_end_matches('/').trim_end_matches(".md");
        // Hugo paths start at the content folder (`/docs/…`); the knowledge base
        // may start below it.
        let resolved = (!key.is_empty())
            .then(|| self.resolver.page(key).or_else(|| key.strip_prefix("docs/").and_then(|k| self.resolver.page(k))))
            .flatten();
        let base = match resolved {
            Some(p) => crate::link_from(self.resolver.source(), &p),
            None => path.to_string(),
        };
        if anchor.is_empty() {
            base
        } else {
            format!("{base}#{anchor}")
        }
    }
}

/// Whether text ends inside a Markdown link destination (`[t](/docs/` …).
pub(super) fn in_link_destination(before: &str) -> bool {
    before.rfind("](").is_some_and(|at| !before[at..].contains(')'))
}

fn feature_state(c: &Call) -> String {
    let state = c.get("state").map(|s| format!(" [{s}]")).unwrap_or_default();
    if let Some(v) = c.get("for_k8s_version") {
        let v = if v.starts_with('v') { v.to_string() } else { format!("v{v}") };
        format!("*FEATURE STATE: Kubernetes {v}{state}*")
    } else if let Some(gate) = c.get("feature_gate_name") {
        format!("*FEATURE STATE: feature gate {gate}{state}*")
    } else {
        format!("*FEATURE STATE:{state}*")
    }
}

fn figure(c: &Call) -> Rendered {
    let src = c.get("src").unwrap_or("");
    let alt = c.get("alt").or_else(|| c.get("title")).unwrap_or("");
    let mut lines = vec![format!("![{}]({src})", alt.replace(['[', ']'], ""))];
    let caption: Vec<&str> =
        [c.get("title"), c.get("caption")].into_iter().flatten().filter(|s| !s.is_empty()).collect();
    if !caption.is_empty() {
        lines.push(format!("*{}*", caption.join(" ")));
    }
    if src.is_empty() {
        lines.remove(0);
    }
    Rendered::Lines(lines)
}

fn youtube(c: &Call) -> Rendered {
    match c.get_or_first("id") {
        Some(id) => {
            let title = c.get("title").unwrap_or("YouTube video");
            Rendered::Inline(format!("[{title}](https://www.youtube.com/watch?v={id})"))
        }
        None => Rendered::Nothing,
    }
}

/// `api-reference page="workload-resources/pod-v1" anchor="…" text="…"`: a link
/// to the page on the Kubernetes site, as the shortcode writes it.
fn api_reference(c: &Call) -> String {
    let page = c.get("page").unwrap_or("").trim_matches('/');
    let anchor = c.get("anchor").map(|a| format!("#{a}")).unwrap_or_default();
    let text = c.get("text").or(c.get("anchor")).unwrap_or_else(|| page.rsplit('/').next().unwrap_or(page));
    format!("[{text}](/docs/reference/kubernetes-api/{page}/{anchor})")
}
