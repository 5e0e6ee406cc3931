//! Lines before the scan: ```` ```mdx-code-block ```` fences unwrapped and ESM
//! (`import`/`export`) statements removed.

use super::js::JsLexer;
use crate::fence::{rewrite_outside_fences, Fence};
use crate::Line;

/// The info string of a fence opener line (```` ```js title="x" ```` → `js title="x"`).
fn info_string(line: &str) -> &str {
    let t = line.trim_start();
    t.trim_start_matches(['`', '~']).trim()
}

/// Drops the fence lines of ```` ```mdx-code-block ```` blocks, keeping their
/// content: Docusaurus renders it as MDX.
pub(super) fn unwrap_mdx_code_blocks(lines: Vec<Line>) -> Vec<Line> {
    let mut out = Vec::with_capacity(lines.len());
    // The open fence, and whether it is an `mdx-code-block` being unwrapped.
    let mut fence: Option<(Fence, bool)> = None;
    for (src, line) in lines {
        match fence {
            Some((f, unwrap)) if f.closes(&line) => {
                fence = None;
                if !unwrap {
                    out.push((src, line));
                }
            }
            Some(_) => out.push((src, line)),
            None => {
                if let Some(f) = Fence::open(&line) {
                    let unwrap = info_string(&line).split_whitespace().next() == Some("mdx-code-block");
                    fence = Some((f, unwrap));
                    if unwrap {
                        continue;
                    }
                }
                out.push((src, line));
            }
        }
    }
    out
}

/// Removes `import` and `export` statements (outside fenced code), each over as
/// many lines as its brackets take.
pub(super) fn remove_esm(lines: Vec<Line>) -> Vec<Line> {
    rewrite_outside_fences(&lines, |lines, i, _| starts_esm(&lines[i].1).then(|| esm_end(lines, i)))
}

/// An ESM statement starts at column 0 with `import` or `export` and the shape
/// of one (prose that happens to start with "import" does not have it).
fn starts_esm(line: &str) -> bool {
    if let Some(rest) = line.strip_prefix("import") {
        let t = line.trim_end();
        return rest.starts_with([' ', '{', '*'])
            && (t.contains(" from ")
                || t.contains("from'")
                || t.contains("from\"")
                || rest.trim_start().starts_with(['\'', '"'])
                || t.ends_with('{')
                || t.ends_with(','));
    }
    if let Some(rest) = line.strip_prefix("export") {
        let rest = rest.trim_start();
        let word = rest.split(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or("");
        return line.len() > "export".len()
            && (matches!(word, "const" | "let" | "var" | "function" | "default" | "class" | "async")
                || rest.starts_with(['{', '*']));
    }
    false
}

/// The line after the ESM statement starting at line `i`: where its brackets
/// balance at a line end that does not continue the expression. A statement
/// that never balances within 300 lines is taken to be its first line only.
fn esm_end(lines: &[Line], i: usize) -> usize {
    let mut lex = JsLexer::default();
    for (k, (_, line)) in lines.iter().enumerate().skip(i).take(300) {
        lex.feed(line);
        let t = line.trim_end();
        let continues = [",", "=", "=>", "(", "[", "{", "+", "&&", "||", "?", ":", "."].iter().any(|c| t.ends_with(c));
        if lex.depth <= 0 && !lex.in_template && !continues {
            return k + 1;
        }
    }
    i + 1
}
