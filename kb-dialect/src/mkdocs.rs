//! MkDocs Material syntax → CommonMark, before anything else reads a page body.
//!
//! Scraped knowledge bases are full of MkDocs Material extensions that plain
//! CommonMark shows as garbage (an admonition's indented body becomes a code block).
//! This pass rewrites them line by line, outside fenced code:
//!
//! | syntax | [`Target::Html`] (the site) | [`Target::Text`] (chunks) |
//! | --- | --- | --- |
//! | `!!! note "Title"` + indented body | `<aside class="admonition note">` | `**Title**` + body |
//! | `??? note "Title"` (collapsible) | `<details class="admonition note">` | `**Title**` + body |
//! | `=== "Tab"` + indented body | `<section class="tab">` with a label | `**Tab**` + body |
//! | `{ target=_blank }`, `{: .class }` attribute lists | removed (kept on headings) | removed (kept on headings) |
//! | `:material-arrow-right:` icon shortcodes | removed | removed |
//! | `--8<-- "file.md"` snippet includes | inlined when found, else dropped and reported | same |
//! | `[TOC]` markers | removed (the page template has a table of contents) | removed |
//!
//! Headings are never added or removed, so heading ids agree between the two targets.
//! The output keeps a map from each output line to the body line it came from, so
//! that later stages can report a file line.

use html_escape::encode_quoted_attribute;

use crate::fence::Fence;
use crate::{Line, Resolver, Target};

/// Inlines `--8<--` snippet includes (one line `--8<-- "file.md"`, or a block of
/// file names between two `--8<--` lines), outside fenced code; a name the
/// resolver does not know is left out and recorded in `missing`.
pub fn include_snippets(lines: Vec<Line>, resolver: &dyn Resolver, missing: &mut Vec<(usize, String)>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    let mut include = |i: usize, name: String, out: &mut Vec<Line>| match resolver.snippet(&name) {
        Some(text) => out.extend(text.lines().map(|l| (i, l.to_string()))),
        None => missing.push((i, name)),
    };
    let mut fence: Option<Fence> = None;
    let mut block = false; // inside a `--8<--` … `--8<--` block
    for (i, line) in lines {
        if let Some(f) = fence {
            if f.closes(&line) {
                fence = None;
            }
            out.push((i, line));
            continue;
        }
        if block {
            // Block form: one file name per line until the closing `--8<--`.
            if line.trim() == "--8<--" {
                block = false;
            } else if !line.trim().is_empty() {
                include(i, line.trim().to_string(), &mut out);
            }
            continue;
        }
        if line.trim() == "--8<--" {
            block = true;
            continue;
        }
        match snippet_name(&line) {
            Some(name) => include(i, name, &mut out),
            None => {
                fence = Fence::open(&line);
                out.push((i, line));
            }
        }
    }
    out
}

/// `--8<-- "file.md"` → `file.md`.
fn snippet_name(line: &str) -> Option<String> {
    let rest = line.trim().strip_prefix("--8<--")?.trim();
    let name = rest.trim_matches(|c| c == '"' || c == '\'').trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// Columns of leading whitespace (a tab to the next multiple of 4).
pub(crate) fn indent_of(line: &str) -> usize {
    let mut n = 0;
    for c in line.chars() {
        match c {
            ' ' => n += 1,
            '\t' => n += 4 - n % 4,
            _ => break,
        }
    }
    n
}

/// Drops up to `n` columns of leading whitespace.
pub(crate) fn dedent(line: &str, n: usize) -> &str {
    let mut col = 0;
    for (i, c) in line.char_indices() {
        if col >= n {
            return &line[i..];
        }
        match c {
            ' ' => col += 1,
            '\t' => col += 4 - col % 4,
            _ => return &line[i..],
        }
    }
    ""
}

struct Container {
    kind: ContainerKind,
    /// `note`, `warning`, … for admonitions.
    class: String,
    title: Option<String>,
}

#[derive(PartialEq)]
enum ContainerKind {
    Admonition,
    Collapsible { open: bool },
    Tab,
}

/// Recognises `!!! type "title"`, `???[+] type "title"` and `===[+!] "label"`.
fn container_marker(trimmed: &str) -> Option<Container> {
    let (kind, rest) = if let Some(r) = trimmed.strip_prefix("!!!") {
        // `!!!! Note` (one bang too many) happens in real pages.
        (ContainerKind::Admonition, r.trim_start_matches('!'))
    } else if let Some(r) = trimmed.strip_prefix("???+") {
        (ContainerKind::Collapsible { open: true }, r)
    } else if let Some(r) = trimmed.strip_prefix("???") {
        (ContainerKind::Collapsible { open: false }, r)
    } else if let Some(r) = trimmed.strip_prefix("===") {
        let r = r.trim_start_matches(['+', '!']);
        let label = r.trim();
        if !(label.starts_with('"') && label.ends_with('"') && label.len() >= 2) {
            return None;
        }
        return Some(Container {
            kind: ContainerKind::Tab,
            class: String::new(),
            title: Some(label[1..label.len() - 1].to_string()),
        });
    } else {
        return None;
    };
    if !rest.starts_with(' ') && !rest.is_empty() {
        return None;
    }
    let rest = rest.trim();
    let (class_part, title) = match rest.find('"') {
        Some(q) => {
            let t = rest[q..].trim().trim_matches('"').to_string();
            (rest[..q].trim(), Some(t))
        }
        None => (rest, None),
    };
    // `!!! Note:` is a common slip for `!!! note`; accept it.
    let class = class_part.split_whitespace().next().unwrap_or("note").trim_end_matches(':').to_ascii_lowercase();
    if !class.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return None;
    }
    let title = match title {
        Some(t) => Some(t).filter(|t| !t.is_empty()),
        None => Some(capitalise(&class)),
    };
    Some(Container { kind, class, title })
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// Rewrites MkDocs containers (and the containers the other passes translated
/// into their syntax) for `target`; with `inline`, also MkDocs's inline syntax
/// (attribute lists, icons, `[TOC]`).
pub fn process(lines: &[Line], target: Target, inline: bool, out: &mut Vec<Line>) {
    let mut i = 0;
    while i < lines.len() {
        let (src, line) = &lines[i];
        let trimmed = line.trim_start();
        let ind = indent_of(line);

        if let Some(fence) = Fence::open(line) {
            // Copy a fenced code block verbatim.
            out.push((*src, line.clone()));
            i += 1;
            let mut closed = false;
            while i < lines.len() {
                let (s, l) = &lines[i];
                out.push((*s, l.clone()));
                i += 1;
                if fence.closes(l) {
                    closed = true;
                    break;
                }
            }
            if !closed {
                // CommonMark closes a fence at the end of its container; the
                // container's wrapper is about to end, so close it here.
                let pad = " ".repeat(indent_of(line));
                out.push((lines.last().map_or(*src, |l| l.0), format!("{pad}{}", fence.marker())));
            }
            continue;
        }

        if let Some(container) = container_marker(trimmed) {
            // The body: following lines indented by ≥ ind + 4, or blank.
            let mut j = i + 1;
            while j < lines.len() {
                let l = &lines[j].1;
                if l.trim().is_empty() || indent_of(l) >= ind + 4 {
                    j += 1;
                } else {
                    break;
                }
            }
            let mut end = j;
            while end > i + 1 && lines[end - 1].1.trim().is_empty() {
                end -= 1;
            }
            let mut body: Vec<(usize, String)> =
                lines[i + 1..end].iter().map(|(s, l)| (*s, dedent(l, 4).to_string())).collect();
            if body.is_empty() && container.kind != ContainerKind::Tab {
                // `!!! note` directly followed by an unindented paragraph: the
                // author meant that paragraph (MkDocs would print the marker as text).
                while end < lines.len()
                    && !lines[end].1.trim().is_empty()
                    && container_marker(lines[end].1.trim_start()).is_none()
                {
                    body.push((lines[end].0, lines[end].1.trim_start().to_string()));
                    end += 1;
                }
            }
            emit_container(*src, ind, &container, &body, target, inline, out);
            i = end;
            continue;
        }

        if inline && trimmed.trim_end() == "[TOC]" {
            // Python-Markdown's table-of-contents marker: the template has its own.
            i += 1;
            continue;
        }
        out.push((*src, if inline { clean_inline(line, trimmed) } else { line.clone() }));
        i += 1;
    }
}

fn emit_container(
    src: usize,
    ind: usize,
    c: &Container,
    body: &[Line],
    target: Target,
    inline: bool,
    out: &mut Vec<Line>,
) {
    let pad = " ".repeat(ind);
    let title = c.title.as_deref().map(|t| if inline { clean_inline(t, t) } else { t.to_string() });
    match target {
        Target::Html => {
            let (open, close) = match c.kind {
                ContainerKind::Admonition => {
                    (format!("<aside class=\"admonition {}\" role=\"note\">", c.class), "</aside>")
                }
                ContainerKind::Collapsible { open } => (
                    format!("<details class=\"admonition {}\"{}>", c.class, if open { " open" } else { "" }),
                    "</details>",
                ),
                ContainerKind::Tab => ("<section class=\"tab\">".to_string(), "</section>"),
            };
            out.push((src, format!("{pad}{open}")));
            if let Some(t) = &title {
                let t = encode_quoted_attribute(t);
                let label = match c.kind {
                    ContainerKind::Admonition => format!("<p class=\"admonition-title\">{t}</p>"),
                    ContainerKind::Collapsible { .. } => {
                        format!("<summary class=\"admonition-title\">{t}</summary>")
                    }
                    ContainerKind::Tab => format!("<p class=\"tab-title\">{t}</p>"),
                };
                out.push((src, format!("{pad}{label}")));
            }
            out.push((src, String::new()));
            process(body, target, inline, out);
            out.push((src, String::new()));
            out.push((src, format!("{pad}{close}")));
            out.push((src, String::new()));
        }
        Target::Text => {
            if let Some(t) = &title {
                out.push((src, format!("{pad}**{t}**")));
                out.push((src, String::new()));
            } else {
                // Like the `<aside>` line of the Html form, the container ends the
                // paragraph before it: else `h` + `!!! ""` + `-` became a setext
                // heading in this form only (found by the `page` fuzz target).
                out.push((src, String::new()));
            }
            process(body, target, inline, out);
            out.push((src, String::new()));
        }
    }
}

/// Removes attribute lists (except on headings) and icon shortcodes from a line.
fn clean_inline(line: &str, trimmed: &str) -> String {
    let is_heading = trimmed.starts_with('#');
    let mut s = line.to_string();
    if !is_heading {
        s = remove_attr_lists(&s);
    }
    remove_icons(&s)
}

/// `[x](y){ target=_blank }` → `[x](y)`; `{: .class }` → ``. Only braces whose
/// content looks like an attribute list are touched (`${#array[*]}` is not).
fn remove_attr_lists(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find('{') {
        let Some(close_rel) = rest[open..].find('}') else {
            break;
        };
        let inner = &rest[open + 1..open + close_rel];
        let preceded_by_dollar = rest[..open].ends_with('$');
        if !preceded_by_dollar && is_attr_list(inner) {
            out.push_str(rest[..open].trim_end_matches(' '));
            rest = &rest[open + close_rel + 1..];
        } else {
            out.push_str(&rest[..open + close_rel + 1]);
            rest = &rest[open + close_rel + 1..];
        }
    }
    out.push_str(rest);
    out
}

fn is_attr_list(inner: &str) -> bool {
    let inner = inner.trim().strip_prefix(':').unwrap_or(inner.trim()).trim();
    if inner.is_empty() {
        return false;
    }
    inner.split_whitespace().all(|tok| {
        let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if let Some(id) = tok.strip_prefix('#').or_else(|| tok.strip_prefix('.')) {
            ident(id)
        } else if let Some((k, v)) = tok.split_once('=') {
            ident(k) && !v.is_empty()
        } else {
            false
        }
    })
}

/// Removes Material icon shortcodes such as `:material-arrow-right:`.
fn remove_icons(line: &str) -> String {
    const PREFIXES: [&str; 4] = [":material-", ":octicons-", ":fontawesome-", ":simple-"];
    let mut s = line.to_string();
    for p in PREFIXES {
        while let Some(start) = s.find(p) {
            let after = start + p.len();
            let Some(end_rel) = s[after..].find(':') else {
                break;
            };
            let name = &s[after..after + end_rel];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                break;
            }
            let mut cut_start = start;
            if s[..start].ends_with(' ') {
                cut_start -= 1;
            }
            s.replace_range(cut_start..after + end_rel + 1, "");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::{Dialects, NoResolver};

    fn none() -> NoResolver {
        NoResolver
    }

    struct Snippets<F: Fn(&str) -> Option<String>>(F);
    impl<F: Fn(&str) -> Option<String>> Resolver for Snippets<F> {
        fn snippet(&self, name: &str) -> Option<String> {
            (self.0)(name)
        }
    }

    fn normalize(md: &str, target: Target, resolver: &dyn Resolver) -> crate::Normalized {
        let only = Dialects { mkdocs: true, obsidian: false, gfm: false, mdx: false, hugo: false };
        crate::normalize(md, target, only, resolver)
    }

    #[test]
    fn admonition_becomes_aside_or_label() {
        let md = "Intro\n\n!!! warning \"Deadline\"\n    Pay by **May 1**.\n\n    Second para.\n\nAfter\n";
        let html = normalize(md, Target::Html, &none());
        assert!(html.text.contains("<aside class=\"admonition warning\" role=\"note\">\n<p class=\"admonition-title\">Deadline</p>\n\nPay by **May 1**.\n\nSecond para.\n\n</aside>"), "{}", html.text);
        assert!(html.text.contains("\nAfter\n"));
        let text = normalize(md, Target::Text, &none());
        assert!(text.text.contains("**Deadline**\n\nPay by **May 1**.\n\nSecond para.\n"), "{}", text.text);
        assert!(!text.text.contains("    Pay"));
    }

    #[test]
    fn untitled_and_collapsible_admonitions() {
        let html = normalize("!!! info\n    Body\n??? tip \"More\"\n    Hidden\n", Target::Html, &none());
        assert!(html.text.contains("<p class=\"admonition-title\">Info</p>"));
        assert!(html
            .text
            .contains("<details class=\"admonition tip\">\n<summary class=\"admonition-title\">More</summary>"));
    }

    #[test]
    fn tabs_become_sections_and_nest() {
        let md =
            "=== \"Puhti\"\n    ```bash\n    module load x\n    ```\n\n=== \"Mahti\"\n    !!! note\n        Nested\n";
        let html = normalize(md, Target::Html, &none());
        assert_eq!(html.text.matches("<section class=\"tab\">").count(), 2);
        assert!(html.text.contains("<p class=\"tab-title\">Puhti</p>\n\n```bash\nmodule load x\n```"), "{}", html.text);
        assert!(html.text.contains("<aside class=\"admonition note\""));
        assert!(html.text.contains("\nNested\n"));
    }

    #[test]
    fn sloppy_admonitions_are_understood() {
        let n = normalize("!!!! Note:\nUnindented body.\n\nAfter.\n", Target::Html, &none());
        assert!(n.text.contains("<aside class=\"admonition note\" role=\"note\">\n<p class=\"admonition-title\">Note</p>\n\nUnindented body.\n\n</aside>"), "{}", n.text);
        assert!(n.text.ends_with("After.\n"));
    }

    #[test]
    fn unclosed_fence_ends_with_its_admonition() {
        let md = "!!! note\n    ```text\n    never closed\n\n!!! tip\n    Tip body\n";
        let n = normalize(md, Target::Html, &none());
        let aside_close = n.text.find("</aside>").unwrap();
        assert!(n.text[..aside_close].contains("never closed\n```\n"), "{}", n.text);
        assert!(n.text.contains("<aside class=\"admonition tip\""));
    }

    #[test]
    fn code_fences_are_left_alone() {
        let md = "```\n!!! note\n    not an admonition { target=_blank }\n```\n";
        let n = normalize(md, Target::Html, &none());
        assert_eq!(n.text, md);
    }

    #[test]
    fn attr_lists_and_icons_removed_but_not_shell() {
        let md = "[Docs](https://x.example){ target=_blank } :material-arrow-right:\n[TOC]\necho ${#array[*]} {not attrs}\n## Title {#keep}\n";
        let n = normalize(md, Target::Text, &none());
        assert_eq!(n.text, "[Docs](https://x.example)\necho ${#array[*]} {not attrs}\n## Title {#keep}\n");
    }

    #[test]
    fn snippets_inline_or_report() {
        let resolver = Snippets(|name: &str| (name == "a.md").then(|| "Included line".to_string()));
        let n = normalize("x\n--8<-- \"a.md\"\n--8<-- \"missing.md\"\ny\n", Target::Text, &resolver);
        assert_eq!(n.text, "x\nIncluded line\ny\n");
        assert_eq!(n.missing_snippets, vec![(2, "missing.md".to_string())]);
        assert_eq!(n.line_map, vec![0, 1, 3]);
        let block = normalize("--8<--\na.md\nb.md\n--8<--\nz\n", Target::Text, &resolver);
        assert_eq!(block.text, "Included line\nz\n");
        assert_eq!(block.missing_snippets, vec![(2, "b.md".to_string())]);
        let fenced = "```\n--8<-- \"a.md\"\n```\n";
        assert_eq!(normalize(fenced, Target::Text, &resolver).text, fenced);
    }

    #[test]
    fn line_map_points_at_body_lines() {
        let n = normalize("a\n!!! note \"T\"\n    b\nc\n", Target::Html, &none());
        let off = n.text.find("\nb\n").unwrap() + 1;
        assert_eq!(n.source_line(off), 2);
        let off = n.text.find("c\n").unwrap();
        assert_eq!(n.source_line(off), 3);
    }
}
