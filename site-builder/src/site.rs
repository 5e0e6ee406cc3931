//! Site stage: minijinja templates → the HTML files of `OUT/site/`.
//!
//! The templates live in `templates/` and are compiled into the binary, so that
//! `site-builder` works from any folder; `--templates DIR` uses a folder of your
//! own instead (same file names). This module owns the template contexts: the
//! shape of what each template receives is documented at the top of each template.

use std::path::Path;

use minijinja::{Environment, Value};

/// The template files and what they render.
pub const TEMPLATE_FILES: [&str; 7] =
    ["base.html", "page.html", "section.html", "home.html", "search.html", "404.html", "sitemap.xml"];

/// Static files (in `templates/static/`) and where they go in the site: the
/// widget sits at the root, where the one-line embed snippet points
/// (`https://kb.example.edu/widget.js`); the rest under `assets/`.
pub const STATIC_FILES: [(&str, &str); 3] =
    [("style.css", "assets/style.css"), ("search.js", "assets/search.js"), ("widget.js", "widget.js")];

macro_rules! embedded {
    ($($name:literal),*) => {
        [$(($name, include_str!(concat!("../../templates/", $name)))),*]
    };
}

const EMBEDDED_TEMPLATES: [(&str, &str); 7] =
    embedded!("base.html", "page.html", "section.html", "home.html", "search.html", "404.html", "sitemap.xml");
const EMBEDDED_STATIC: [(&str, &str); 3] = embedded!("static/style.css", "static/search.js", "static/widget.js");

/// A template that could not be loaded or rendered.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error("cannot read template {path}: {message}")]
    Read { path: String, message: String },
    #[error("template {name}: {message}")]
    Render { name: String, message: String },
}

/// The loaded templates and static files.
pub struct Templates {
    env: Environment<'static>,
    statics: Vec<(String, String)>,
}

impl Templates {
    /// The templates compiled into the binary.
    pub fn embedded() -> Result<Templates, TemplateError> {
        let files = EMBEDDED_TEMPLATES.iter().map(|(n, s)| (n.to_string(), s.to_string())).collect();
        let statics = EMBEDDED_STATIC
            .iter()
            .zip(STATIC_FILES)
            .map(|((_, content), (_, dest))| (dest.to_string(), content.to_string()))
            .collect();
        Templates::from_sources(files, statics)
    }

    /// Templates from a folder with the same layout as `templates/`.
    pub fn from_dir(dir: &Path) -> Result<Templates, TemplateError> {
        let read = |rel: &str| {
            let path = dir.join(rel);
            std::fs::read_to_string(&path)
                .map_err(|e| TemplateError::Read { path: path.display().to_string(), message: e.to_string() })
        };
        let mut files = Vec::new();
        for name in TEMPLATE_FILES {
            files.push((name.to_string(), read(name)?));
        }
        let mut statics = Vec::new();
        for (name, dest) in STATIC_FILES {
            statics.push((dest.to_string(), read(&format!("static/{name}"))?));
        }
        Templates::from_sources(files, statics)
    }

    fn from_sources(files: Vec<(String, String)>, statics: Vec<(String, String)>) -> Result<Templates, TemplateError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Chainable);
        env.set_formatter(html_formatter);
        for (name, source) in files {
            env.add_template_owned(name.clone(), source)
                .map_err(|e| TemplateError::Render { name, message: describe(&e) })?;
        }
        Ok(Templates { env, statics })
    }

    /// Renders template `name` with `ctx`.
    pub fn render(&self, name: &str, ctx: &serde_json::Value) -> Result<String, TemplateError> {
        let tmpl = self
            .env
            .get_template(name)
            .map_err(|e| TemplateError::Render { name: name.to_string(), message: describe(&e) })?;
        tmpl.render(Value::from_serialize(ctx))
            .map_err(|e| TemplateError::Render { name: name.to_string(), message: describe(&e) })
    }

    /// Static files (path in the site, content).
    pub fn statics(&self) -> &[(String, String)] {
        &self.statics
    }
}

/// Like minijinja's HTML escaping, but leaves `/` alone: URLs stay readable in
/// the output (`href="../it/vpn.html"`) and `/` is harmless in text and in quoted
/// attribute values.
fn html_formatter(
    out: &mut minijinja::Output<'_>,
    state: &minijinja::State<'_, '_>,
    value: &Value,
) -> Result<(), minijinja::Error> {
    if state.auto_escape() != minijinja::AutoEscape::Html || value.is_safe() || value.is_none() || value.is_undefined()
    {
        return minijinja::escape_formatter(out, state, value);
    }
    let text = value.to_string();
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#x27;"),
            c => escaped.push(c),
        }
    }
    out.write_str(&escaped).map_err(|e| minijinja::Error::new(minijinja::ErrorKind::WriteFailure, e.to_string()))
}

/// minijinja's error with its line, and its cause chain.
fn describe(e: &minijinja::Error) -> String {
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        source = s.source();
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_templates_render_and_escape() {
        let t = Templates::embedded().unwrap();
        let ctx = serde_json::json!({
            "root": "../", "site": {"title": "Help <&>", "page_count": 1, "built": "2026-01-01"},
            "top_sections": [{"title": "IT \"x\"", "url": "it/index.html"}],
            "section": {"title": "S", "breadcrumbs": [], "children": []}
        });
        let html = t.render("section.html", &ctx).unwrap();
        assert!(html.contains("href=\"../it/index.html\""), "{html}");
        assert!(html.contains("Help &lt;&amp;&gt;"));
        assert!(html.contains("IT &quot;x&quot;"));
        assert!(!html.contains("Help <&>"));
        let dests: Vec<&str> = t.statics().iter().map(|(d, _)| d.as_str()).collect();
        assert_eq!(dests, ["assets/style.css", "assets/search.js", "widget.js"]);
    }

    #[test]
    fn template_errors_name_the_template() {
        let err = Templates::from_sources(vec![("page.html".into(), "{% if %}".into())], vec![]).err().unwrap();
        assert!(err.to_string().starts_with("template page.html"), "{err}");
    }
}
