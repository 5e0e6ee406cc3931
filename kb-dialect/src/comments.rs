//! Comments: removed before any other pass reads the page, so that nothing an
//! author hid from readers reaches the site or the search index.
//!
//! This matters most for localised pages: Hugo sites such as the Kubernetes docs
//! keep the English original of every translated paragraph inside HTML comments,
//! and a Chinese page must not match English queries through them.
//!
//! | syntax | read when | becomes |
//! | --- | --- | --- |
//! | `<!-- … -->` (one line or several; also Hugo's `<!--more-->`) | always | removed |
//! | `%% … %%` (inline or a block of lines) | [`Dialects::obsidian`] | removed |
//! | `{/* … */}` (inline or a block of lines) | [`Dialects::mdx`] | removed |
//!
//! Fenced code and inline code spans are left alone (`<!--` in a shell example
//! stays). A comment that filled its lines leaves one empty line where it began,
//! so the paragraphs around it stay apart; a comment inside a paragraph leaves
//! the paragraph's text joined as before.

use crate::fence::Fence;
use crate::{Dialects, Line};

/// Removes HTML comments, and Obsidian's `%% %%` / MDX's `{/* */}` where those
/// dialects are on, outside fenced code and inline code.
pub fn strip(lines: Vec<Line>, dialects: Dialects) -> Vec<Line> {
    let mut out = Vec::with_capacity(lines.len());
    let mut fence: Option<Fence> = None;
    // The comment a previous line opened and did not close: its closing delimiter.
    let mut open: Option<&'static str> = None;
    for (src, line) in lines {
        if let Some(f) = fence {
            if f.closes(&line) {
                fence = None;
            }
            out.push((src, line));
            continue;
        }
        if open.is_none() {
            if let Some(f) = Fence::open(&line) {
                fence = Some(f);
                out.push((src, line));
                continue;
            }
        }
        let was_open = open.is_some();
        let stripped = strip_line(&line, &mut open, dialects);
        if !stripped.touched {
            out.push((src, line));
        } else if !stripped.text.trim().is_empty() {
            out.push((src, stripped.text.trim_end().to_string()));
        } else if stripped.started && !was_open {
            // A comment that fills its lines: one empty line keeps the blocks
            // around it apart; its further lines leave nothing.
            out.push((src, String::new()));
        }
    }
    out
}

/// One line with its comments removed.
struct Stripped {
    text: String,
    /// Whether any part of the line was a comment.
    touched: bool,
    /// Whether a comment began on this line.
    started: bool,
}

/// The comment openers of `dialects`, each with its closer.
fn delimiters(dialects: Dialects) -> Vec<(&'static str, &'static str)> {
    let mut d = vec![("<!--", "-->")];
    if dialects.obsidian {
        d.push(("%%", "%%"));
    }
    if dialects.mdx {
        d.push(("{/*", "*/}"));
    }
    d
}

/// Removes the comments of one line; `open` carries a comment across lines.
fn strip_line(line: &str, open: &mut Option<&'static str>, dialects: Dialects) -> Stripped {
    let delims = delimiters(dialects);
    let mut out = Stripped { text: String::with_capacity(line.len()), touched: false, started: false };
    let mut i = 0;
    while i < line.len() {
        if let Some(close) = *open {
            out.touched = true;
            match find_closer(&line[i..], close) {
                Some((_, end)) => {
                    i += end;
                    *open = None;
                }
                None => return out,
            }
            continue;
        }
        let rest = &line[i..];
        if rest.starts_with('`') {
            let end = code_span_end(line, i).unwrap_or(i + backtick_run(rest));
            out.text.push_str(&line[i..end]);
            i = end;
            continue;
        }
        if let Some(&(opener, closer)) = delims.iter().find(|(o, _)| opens_comment(rest, o)) {
            out.touched = true;
            out.started = true;
            *open = Some(closer);
            i += opener_len(rest, opener);
            continue;
        }
        let ch = rest.chars().next().map_or(1, char::len_utf8);
        out.text.push_str(&rest[..ch]);
        i += ch;
    }
    out
}

/// Whether `rest` starts with the comment opener `opener`. MDX's `{/*` may hold
/// spaces after the brace (`{ /* x */ }`).
fn opens_comment(rest: &str, opener: &str) -> bool {
    if opener == "{/*" {
        return rest.strip_prefix('{').is_some_and(|r| r.trim_start_matches([' ', '\t']).starts_with("/*"));
    }
    rest.starts_with(opener)
}

fn opener_len(rest: &str, opener: &str) -> usize {
    if opener == "{/*" {
        let after_brace = &rest[1..];
        return 1 + (after_brace.len() - after_brace.trim_start_matches([' ', '\t']).len()) + 2;
    }
    opener.len()
}

/// Where `close` ends in `rest`: (start, end) byte offsets. MDX's `*/}` may hold
/// spaces before the brace.
fn find_closer(rest: &str, close: &str) -> Option<(usize, usize)> {
    if close == "*/}" {
        let mut from = 0;
        while let Some(at) = rest[from..].find("*/") {
            let start = from + at;
            let after = &rest[start + 2..];
            let spaces = after.len() - after.trim_start_matches([' ', '\t']).len();
            if after[spaces..].starts_with('}') {
                return Some((start, start + 2 + spaces + 1));
            }
            from = start + 2;
        }
        return None;
    }
    rest.find(close).map(|at| (at, at + close.len()))
}

/// Length in bytes of the run of backticks `rest` starts with.
fn backtick_run(rest: &str) -> usize {
    rest.bytes().take_while(|&b| b == b'`').count()
}

/// If the backtick run at byte `i` of `line` opens an inline code span (a later
/// run of the same length closes it), the byte offset just after its closer.
pub(crate) fn code_span_end(line: &str, i: usize) -> Option<usize> {
    let n = backtick_run(&line[i..]);
    if n == 0 {
        return None;
    }
    let bytes = line.as_bytes();
    let mut j = i + n;
    while j < bytes.len() {
        if bytes[j] == b'`' {
            let m = backtick_run(&line[j..]);
            if m == n {
                return Some(j + m);
            }
            j += m;
        } else {
            j += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dialects(obsidian: bool, mdx: bool) -> Dialects {
        Dialects { mkdocs: true, obsidian, gfm: true, mdx, hugo: true }
    }

    fn run(text: &str, d: Dialects) -> Vec<Line> {
        strip(text.lines().enumerate().map(|(i, l)| (i, l.to_string())).collect(), d)
    }

    fn texts(lines: &[Line]) -> Vec<&str> {
        lines.iter().map(|(_, l)| l.as_str()).collect()
    }

    #[test]
    fn html_comments_inline_and_whole_line() {
        let out = run("a <!-- hidden --> b\n<!--more-->\nc<!---->\n", dialects(false, false));
        assert_eq!(texts(&out), ["a  b", "", "c"]);
        assert_eq!(out.iter().map(|l| l.0).collect::<Vec<_>>(), [0, 1, 2]);
    }

    #[test]
    fn multi_line_comment_leaves_one_empty_line() {
        let md = "中文\n\n<!--\nEnglish original\nsecond line\n-->\n中文二\n";
        let out = run(md, dialects(false, false));
        assert_eq!(texts(&out), ["中文", "", "", "中文二"]);
        assert_eq!(out[2].0, 2);
        assert_eq!(out[3].0, 6);
    }

    #[test]
    fn comment_inside_a_paragraph_keeps_the_text_joined() {
        let out = run("start <!-- a\nb\nc --> end\nnext\n", dialects(false, false));
        assert_eq!(texts(&out), ["start", " end", "next"]);
        assert_eq!(out[1].0, 2);
    }

    #[test]
    fn code_is_left_alone() {
        let md = "```html\n<!-- kept -->\n```\n`<!-- kept -->` <!-- gone -->\n``a ` <!-- b``\n";
        let out = run(md, dialects(false, false));
        assert_eq!(texts(&out), ["```html", "<!-- kept -->", "```", "`<!-- kept -->`", "``a ` <!-- b``"]);
    }

    #[test]
    fn fences_inside_comments_are_not_code() {
        let md = "<!--\n```\n-->\ntext\n```\n<!-- x -->\n```\n";
        let out = run(md, dialects(false, false));
        assert_eq!(texts(&out), ["", "text", "```", "<!-- x -->", "```"]);
    }

    #[test]
    fn obsidian_and_mdx_comments_only_in_their_dialects() {
        let md = "a %%note%% b\n%%\nblock\n%%\n{/* prettier-ignore */}\nx { /* y */ } z\n";
        let plain = run(md, dialects(false, false));
        assert_eq!(texts(&plain), md.lines().collect::<Vec<_>>());
        let obs = run(md, dialects(true, false));
        assert_eq!(texts(&obs), ["a  b", "", "{/* prettier-ignore */}", "x { /* y */ } z"]);
        let mdx = run(md, dialects(false, true));
        assert_eq!(texts(&mdx)[4..], ["", "x  z"]);
        let multi = run("{/*\nhidden\n*/}\nshown\n", dialects(false, true));
        assert_eq!(texts(&multi), ["", "shown"]);
    }

    #[test]
    fn indented_fences_in_lists_are_code() {
        let md = "1. Step\n\n   ```html\n   <!-- kept -->\n   ```\n   <!-- gone --> text\n";
        let out = run(md, dialects(false, false));
        assert_eq!(texts(&out)[3], "   <!-- kept -->");
        assert_eq!(texts(&out)[5], "    text");
    }

    #[test]
    fn unclosed_comment_runs_to_the_end() {
        let out = run("a\n<!-- never closed\nb\n", dialects(false, false));
        assert_eq!(texts(&out), ["a", ""]);
    }
}
