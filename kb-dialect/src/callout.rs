//! Callouts and alerts → MkDocs containers.
//!
//! Obsidian, GitHub and older GitHub-style docs all write a note box as a
//! blockquote whose first line says what kind of box it is. Plain CommonMark
//! shows that first line as text (`[!warning]`), so this pass rewrites each such
//! blockquote into MkDocs's container syntax, which [`crate::mkdocs::process`]
//! then renders for both [`crate::Target`]s:
//!
//! | written | becomes |
//! | --- | --- |
//! | `> [!tip] Title` + `> body` (Obsidian callout, any case) | `!!! tip "Title"` + body indented by 4 |
//! | `> [!faq]- Title` (folded) / `> [!faq]+ Title` (open) | `??? question "Title"` / `???+ question "Title"` |
//! | `> [!hint]` (no title) | `!!! tip "Hint"`: the class is Obsidian's canonical type, the title the word written |
//! | `> [!NOTE]`, `> [!Caution]` (GitHub alerts) | the same: `!!! note`, `!!! warning "Caution"` |
//! | `> **Note:** text`, `> **Warning**: text` (older GitHub style; with [`Dialects::gfm`]) | `!!! note "Note"` + `text` |
//! | `> > [!todo]` nested in a callout's body | a container nested in the outer one's body |
//! | any other blockquote | left exactly as written |
//!
//! The marker must be the first line of its blockquote. The body is the rest of
//! the blockquote with one level of `>` taken off (a bare `>` is a blank line);
//! lazy continuation lines (paragraph text without `>`) belong to it, as in
//! CommonMark. The body is translated again, so callouts nest, and fenced code in
//! a body is copied as it is. The container sits at the blockquote's indentation,
//! so callouts in list items and container bodies work too.
//!
//! Obsidian's type aliases (`warn`, `hint`, `faq`, `tldr`, `done`, …) are folded
//! into their canonical type so that the site's CSS needs few classes; an alias
//! written without a title keeps its own word as the title, as Obsidian shows it.
//! Titles keep their Markdown; a `"` in a title is turned into a typographic quote
//! because the MkDocs marker uses `"` to delimit the title.
//!
//! Every output line keeps the body line it came from: the container marker maps
//! to the `> [!type]` line, each body line to its own line.

use crate::fence::{rewrite_outside_fences, Fence};
use crate::{Dialects, Line};

/// Translates Obsidian callouts, GitHub alerts and `> **Note:**` notes into MkDocs containers.
pub fn translate(lines: Vec<Line>, dialects: Dialects) -> Vec<Line> {
    if !dialects.obsidian && !dialects.gfm {
        return lines;
    }
    rewrite_outside_fences(&lines, |lines, i, out| {
        is_quote(&lines[i].1).then(|| {
            let end = quote_end(lines, i);
            translate_quote(&lines[i..end], dialects, out);
            end
        })
    })
}

/// A container opener and the line that starts it, as MkDocs writes it:
/// `!!! note "Title"`. `opener` is `!!!`, `???` or `???+`; a title holding `"`
/// gets typographic quotes instead (MkDocs's marker parser trims `"` off the
/// title's ends).
pub(crate) fn container_line(opener: &str, class: &str, title: Option<&str>) -> String {
    match title {
        Some(t) => format!("{opener} {class} \"{}\"", typographic_quotes(t.trim())),
        None => format!("{opener} {class}"),
    }
}

/// Whether `text` (a blockquote's first line with its `>` taken off) opens a
/// callout or alert: `[!type]`.
pub(crate) fn is_callout_header(text: &str) -> bool {
    callout_header(text).is_some()
}

/// `"a" b "c` → `“a” b “c`: alternating opening and closing quotes.
fn typographic_quotes(title: &str) -> String {
    let mut open = true;
    title
        .chars()
        .map(|c| {
            if c != '"' {
                return c;
            }
            open = !open;
            if open {
                '”'
            } else {
                '“'
            }
        })
        .collect()
}

fn is_quote(line: &str) -> bool {
    line.trim_start().starts_with('>')
}

/// The index just past the blockquote starting at `start`: its `>` lines and the
/// lazy continuation lines of a paragraph in it.
fn quote_end(lines: &[Line], start: usize) -> usize {
    let mut fence: Option<Fence> = None;
    let mut prev_is_text = false;
    let mut j = start;
    while j < lines.len() {
        let line = &lines[j].1;
        if is_quote(line) {
            let inner = strip_all_levels(line);
            match fence {
                Some(f) if f.closes(inner) => fence = None,
                Some(_) => {}
                None => fence = Fence::open(inner),
            }
            prev_is_text = fence.is_none() && !inner.trim().is_empty() && !starts_block(inner);
        } else if !(prev_is_text && !line.trim().is_empty() && !starts_block(line)) {
            break;
        }
        j += 1;
    }
    j
}

/// The text of a blockquote line inside all its `>` markers.
fn strip_all_levels(line: &str) -> &str {
    let mut rest = line.trim_start();
    while let Some(r) = rest.strip_prefix('>') {
        rest = r.trim_start();
    }
    rest
}

/// Whether a line would start a block of its own rather than continue a
/// paragraph lazily (CommonMark's lazy continuation is paragraph text only).
pub(crate) fn starts_block(line: &str) -> bool {
    let t = line.trim_start();
    let first = t.chars().next().unwrap_or(' ');
    let list_number = t.find(['.', ')']).is_some_and(|k| k > 0 && k < 10 && t[..k].bytes().all(|b| b.is_ascii_digit()));
    matches!(first, '#' | '>' | '<' | '|' | '`' | '~')
        || t.starts_with("- ")
        || t.starts_with("* ")
        || t.starts_with("+ ")
        || t.starts_with("---")
        || t.starts_with("***")
        || t.starts_with("___")
        || list_number
}

/// Takes one level of `>` (and the space after it) off a blockquote line; a
/// lazy continuation line has none and is only unindented.
fn strip_one_level(line: &str) -> String {
    let t = line.trim_start();
    match t.strip_prefix('>') {
        Some(rest) => rest.strip_prefix(' ').or_else(|| rest.strip_prefix('\t')).unwrap_or(rest).to_string(),
        None => t.to_string(),
    }
}

/// What a blockquote's first line makes of it.
struct Header {
    /// `!!!`, `???` or `???+`.
    opener: &'static str,
    class: String,
    title: Option<String>,
    /// For `> **Note:** text`: the text after the label, which stays in the body.
    rest: Option<String>,
}

/// Writes one blockquote (`block`, its first line first) as a container, or as
/// it is when it is not a callout.
fn translate_quote(block: &[Line], dialects: Dialects, out: &mut Vec<Line>) {
    let stripped: Vec<Line> = block.iter().map(|(s, l)| (*s, strip_one_level(l))).collect();
    let header = callout_header(&stripped[0].1).or_else(|| legacy_header(&stripped[0].1).filter(|_| dialects.gfm));
    let Some(header) = header else {
        out.extend(block.iter().cloned());
        return;
    };
    let first = &block[0];
    let pad = &first.1[..first.1.len() - first.1.trim_start().len()];
    out.push((first.0, format!("{pad}{}", container_line(header.opener, &header.class, header.title.as_deref()))));
    let mut body: Vec<Line> = Vec::with_capacity(block.len());
    if let Some(rest) = header.rest.filter(|r| !r.trim().is_empty()) {
        body.push((first.0, rest));
    }
    body.extend(stripped.into_iter().skip(1));
    let body = translate(body, dialects);
    let has_text = body.iter().any(|(_, l)| !l.trim().is_empty());
    for (src, line) in body {
        out.push((src, if line.trim().is_empty() { String::new() } else { format!("{pad}    {line}") }));
    }
    if !has_text {
        // A container without a body takes the paragraph right after its
        // marker as its body (a leniency of `mkdocs::process`); a blank line
        // keeps whatever follows the blockquote out of it.
        out.push((first.0, String::new()));
    }
}

/// `[!type]±|meta Title` (Obsidian callout or GitHub alert).
fn callout_header(text: &str) -> Option<Header> {
    let rest = text.trim_start().strip_prefix("[!")?;
    let close = rest.find(']')?;
    // `[!type|metadata]`: Obsidian's metadata is for custom CSS; ignored.
    let word = rest[..close].split('|').next().unwrap_or_default();
    if word.is_empty() || !word.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return None;
    }
    let after = &rest[close + 1..];
    let (opener, after) = match after.chars().next() {
        Some('+') => ("???+", &after[1..]),
        Some('-') => ("???", &after[1..]),
        _ => ("!!!", after),
    };
    let written = word.to_ascii_lowercase();
    let class = canonical_type(&written).to_string();
    let title = match after.trim() {
        "" if class == written => None, // MkDocs's default title is the type, capitalised
        "" => Some(capitalise(&written)),
        t => Some(t.to_string()),
    };
    Some(Header { opener, class, title, rest: None })
}

/// `**Note:** text` / `**Note**: text` (the older GitHub convention for notes).
fn legacy_header(text: &str) -> Option<Header> {
    let inner = text.trim_start().strip_prefix("**")?;
    let end = inner.find("**")?;
    let (label, rest) = match inner[..end].strip_suffix(':') {
        Some(label) => (label, &inner[end + 2..]),
        None => (&inner[..end], inner[end + 2..].strip_prefix(':')?),
    };
    let written = label.trim().to_ascii_lowercase();
    if !matches!(written.as_str(), "note" | "tip" | "important" | "warning" | "caution") {
        return None;
    }
    Some(Header {
        opener: "!!!",
        class: canonical_type(&written).to_string(),
        title: Some(capitalise(&written)),
        rest: Some(rest.trim_start().to_string()),
    })
}

/// Obsidian's canonical callout type for an alias (lower case in, lower case out);
/// other types are kept. `important` stays itself: it is GitHub's own alert type.
fn canonical_type(written: &str) -> &str {
    match written {
        "warn" | "caution" | "attention" => "warning",
        "hint" => "tip",
        "error" => "danger",
        "faq" | "help" => "question",
        "cite" => "quote",
        "summary" | "tldr" => "abstract",
        "check" | "done" => "success",
        "fail" | "missing" => "failure",
        other => other,
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NoResolver, Target};

    const BOTH: Dialects = Dialects { mkdocs: true, obsidian: true, gfm: true, mdx: false, hugo: false };
    const OBSIDIAN_ONLY: Dialects = Dialects { mkdocs: true, obsidian: true, gfm: false, mdx: false, hugo: false };

    fn lines(md: &str) -> Vec<Line> {
        md.lines().enumerate().map(|(i, l)| (i, l.to_string())).collect()
    }

    fn run(md: &str) -> String {
        text(&translate(lines(md), BOTH))
    }

    fn text(lines: &[Line]) -> String {
        lines.iter().map(|(_, l)| format!("{l}\n")).collect()
    }

    #[test]
    fn obsidian_callout_becomes_admonition() {
        assert_eq!(
            run("> [!info] Read this\n> First line.\n>\n> Second para.\nAfter\n"),
            "!!! info \"Read this\"\n    First line.\n\n    Second para.\n    After\n"
        );
        assert_eq!(run("> [!WARNING]\n> Careful.\n\nAfter\n"), "!!! warning\n    Careful.\n\nAfter\n");
    }

    #[test]
    fn folded_and_open_callouts() {
        assert_eq!(run("> [!faq]- Why?\n> Because.\n"), "??? question \"Why?\"\n    Because.\n");
        assert_eq!(run("> [!tip]+\n> Open.\n"), "???+ tip\n    Open.\n");
        assert_eq!(run("> [!todo]-\n> Later.\n"), "??? todo\n    Later.\n");
    }

    #[test]
    fn aliases_fold_into_canonical_types_and_keep_their_word() {
        for (written, class, title) in [
            ("hint", "tip", " \"Hint\""),
            ("warn", "warning", " \"Warn\""),
            ("caution", "warning", " \"Caution\""),
            ("error", "danger", " \"Error\""),
            ("faq", "question", " \"Faq\""),
            ("help", "question", " \"Help\""),
            ("cite", "quote", " \"Cite\""),
            ("TLDR", "abstract", " \"Tldr\""),
            ("summary", "abstract", " \"Summary\""),
            ("done", "success", " \"Done\""),
            ("check", "success", " \"Check\""),
            ("missing", "failure", " \"Missing\""),
            ("fail", "failure", " \"Fail\""),
            ("attention", "warning", " \"Attention\""),
            ("important", "important", ""),
            ("Note", "note", ""),
            ("custom-type", "custom-type", ""),
        ] {
            let out = run(&format!("> [!{written}]\n> x\n"));
            assert_eq!(out, format!("!!! {class}{title}\n    x\n"), "{written}");
        }
        // A title written by the author wins over the word.
        assert_eq!(run("> [!hint] Try this\n> x\n"), "!!! tip \"Try this\"\n    x\n");
    }

    #[test]
    fn github_alerts_in_every_case() {
        for (alert, expected) in [
            ("NOTE", "!!! note"),
            ("TIP", "!!! tip"),
            ("IMPORTANT", "!!! important"),
            ("WARNING", "!!! warning"),
            ("CAUTION", "!!! warning \"Caution\""),
            ("Note", "!!! note"),
        ] {
            assert_eq!(run(&format!("> [!{alert}]\n> Text.\n")), format!("{expected}\n    Text.\n"));
        }
        // GitHub alerts alone (a GitHub page that is not an Obsidian vault).
        let gfm = Dialects { mkdocs: true, obsidian: false, gfm: true, mdx: false, hugo: false };
        assert_eq!(text(&translate(lines("> [!TIP]\n> Text.\n"), gfm)), "!!! tip\n    Text.\n");
    }

    #[test]
    fn nested_callouts() {
        let md = "> [!question]+ Can callouts be _nested_?\n>\n> > [!todo]- Yes!, they can.\n> >\n> > > [!example] Many layers.\n";
        assert_eq!(
            run(md),
            "???+ question \"Can callouts be _nested_?\"\n\n    ??? todo \"Yes!, they can.\"\n\n        !!! example \"Many layers.\"\n\n"
        );
    }

    #[test]
    fn legacy_bold_notes_only_with_gfm() {
        assert_eq!(run("> **Note:** Pay by May.\n> More.\n"), "!!! note \"Note\"\n    Pay by May.\n    More.\n");
        assert_eq!(run("> **Warning**: Hot.\n"), "!!! warning \"Warning\"\n    Hot.\n");
        assert_eq!(run("> **Caution:** Sharp.\n"), "!!! warning \"Caution\"\n    Sharp.\n");
        assert_eq!(run("> **Tip:**\n> Below.\n"), "!!! tip \"Tip\"\n    Below.\n");
        // Only the known labels, and only in the first line.
        assert_eq!(run("> **Remember:** x\n"), "> **Remember:** x\n");
        assert_eq!(run("> Intro\n> **Note:** x\n"), "> Intro\n> **Note:** x\n");
        assert_eq!(text(&translate(lines("> **Note:** x\n"), OBSIDIAN_ONLY)), "> **Note:** x\n");
    }

    #[test]
    fn plain_blockquotes_are_left_alone() {
        let md = "> Just a quote\n> [!note] not first\n>\n> > [!tip] nested in a plain quote\n\n> [link](x) and text\n";
        assert_eq!(run(md), md);
        assert_eq!(run("> [! note] spaced\n"), "> [! note] spaced\n");
    }

    #[test]
    fn code_is_untouched() {
        let md = "```\n> [!info] Title\n> This is a callout!\n```\n";
        assert_eq!(run(md), md);
        let md = "> [!example] Code\n> ```bash\n> > [!not] a callout\n> echo \"hi\"\n> ```\n";
        assert_eq!(run(md), "!!! example \"Code\"\n    ```bash\n    > [!not] a callout\n    echo \"hi\"\n    ```\n");
    }

    #[test]
    fn titles_keep_markdown_and_quotes_are_made_safe() {
        assert_eq!(
            run("> [!note] See [[Page|here]] and `code` \"now\"\n> x\n"),
            "!!! note \"See [[Page|here]] and `code` “now”\"\n    x\n"
        );
    }

    #[test]
    fn indented_callouts_keep_their_indentation() {
        let md = "- item\n\n    > [!tip] In a list\n    > Body\n";
        assert_eq!(run(md), "- item\n\n    !!! tip \"In a list\"\n        Body\n");
    }

    #[test]
    fn empty_callout_does_not_swallow_what_follows() {
        assert_eq!(run("> [!example] Only a title\n## Next\n"), "!!! example \"Only a title\"\n\n## Next\n");
        let n = crate::normalize("> [!info] T\nNot body\n\n# H\n", Target::Text, BOTH, &NoResolver);
        assert!(n.text.contains("# H"));
    }

    #[test]
    fn lines_map_to_their_source() {
        let out = translate(lines("a\n\n> [!note] T\n> b\n>\n> > [!tip]\n> > c\n"), BOTH);
        let map: Vec<usize> = out.iter().map(|(s, _)| *s).collect();
        assert_eq!(map, vec![0, 1, 2, 3, 4, 5, 6]);
        let out = translate(lines("> **Note:** x\n> y\n"), BOTH);
        assert_eq!(out, vec![(0, "!!! note \"Note\"".into()), (0, "    x".into()), (1, "    y".into())]);
    }

    #[test]
    fn renders_through_mkdocs_in_both_targets() {
        let md = "> [!warning] Deadline\n> Pay **now**.\n\n> [!faq]- Folded\n> Answer\n";
        let html = crate::normalize(md, Target::Html, BOTH, &NoResolver);
        assert!(html.text.contains("<aside class=\"admonition warning\" role=\"note\">\n<p class=\"admonition-title\">Deadline</p>\n\nPay **now**.\n"), "{}", html.text);
        assert!(html
            .text
            .contains("<details class=\"admonition question\">\n<summary class=\"admonition-title\">Folded</summary>"));
        let text = crate::normalize(md, Target::Text, BOTH, &NoResolver);
        assert_eq!(text.text.trim(), "**Deadline**\n\nPay **now**.\n\n\n**Folded**\n\nAnswer");
        assert!(!html.text.contains("[!") && !text.text.contains("[!"));
    }
}
