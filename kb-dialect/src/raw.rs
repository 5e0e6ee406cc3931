//! Dialect syntax left raw: what the build counts after rendering, per page, to
//! show that nothing a tool would have rendered reached the reader as text.
//!
//! The tokens are the ones no plain page writes on purpose: `[[`, `]]`, `[!type]`,
//! a line starting `:::`, `{{<`, `{{%` and `%%`. Code is never counted (pages
//! *about* a dialect show its syntax in code): fenced blocks and inline code
//! spans in Markdown, `<code>` and `<pre>` in HTML.

use crate::fence::prose_lines;

/// One raw token found, with a little of the text around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raw {
    pub token: &'static str,
    pub context: String,
}

/// Raw dialect tokens in Markdown text (a chunk), outside code.
pub fn in_markdown(text: &str) -> Vec<Raw> {
    let mut found = Vec::new();
    for line in prose_lines(text) {
        scan_line(&without_code_spans(line), &mut found);
    }
    found
}

/// Raw dialect tokens in the text of rendered HTML, outside `<code>` and `<pre>`.
pub fn in_html(html: &str) -> Vec<Raw> {
    let text = html_text(html);
    let mut found = Vec::new();
    for line in text.lines() {
        scan_line(line, &mut found);
    }
    found
}

fn scan_line(line: &str, found: &mut Vec<Raw>) {
    if line.trim_start().starts_with(":::") {
        found.push(raw(":::", line, 0));
    }
    for token in ["[[", "]]", "{{<", "{{%", "%%"] {
        let mut from = 0;
        while let Some(i) = line[from..].find(token) {
            found.push(raw(token, line, from + i));
            from += i + token.len();
        }
    }
    let mut from = 0;
    while let Some(i) = line[from..].find("[!") {
        let at = from + i;
        let rest = &line[at + 2..];
        let word = rest.bytes().take_while(|b| b.is_ascii_alphabetic()).count();
        if word > 0 && rest.as_bytes().get(word) == Some(&b']') {
            found.push(raw("[!type]", line, at));
        }
        from = at + 2;
    }
}

fn raw(token: &'static str, line: &str, at: usize) -> Raw {
    let start = floor_char(line, at.saturating_sub(20));
    let end = floor_char(line, (at + 30).min(line.len()));
    Raw { token, context: line[start..end].trim().to_string() }
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The line with its inline code spans (`` `x` ``, ``` ``x`` ```) blanked out.
fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find('`') {
        let ticks = rest[open..].bytes().take_while(|&b| b == b'`').count();
        let marker = &rest[open..open + ticks];
        let after = &rest[open + ticks..];
        match after.find(marker) {
            Some(close) => {
                out.push_str(&rest[..open]);
                out.push(' ');
                rest = &after[close + ticks..];
            }
            None => {
                out.push_str(&rest[..open + ticks]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The text of HTML: tags removed, `<code>`/`<pre>` content and comments left
/// out, the entities a sanitiser writes decoded.
fn html_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut code_depth = 0usize;
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        if code_depth == 0 {
            out.push_str(&rest[..lt]);
        }
        let tag_end = rest[lt..].find('>').map_or(rest.len(), |e| lt + e + 1);
        let tag = rest[lt..tag_end].to_ascii_lowercase();
        let name: String =
            tag.trim_start_matches(['<', '/']).chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        if name == "code" || name == "pre" {
            if tag.starts_with("</") {
                code_depth = code_depth.saturating_sub(1);
            } else {
                code_depth += 1;
            }
        } else if matches!(name.as_str(), "p" | "br" | "li" | "div" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "tr") {
            out.push('\n');
        }
        rest = &rest[tag_end..];
    }
    if code_depth == 0 {
        out.push_str(rest);
    }
    out.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(found: &[Raw]) -> Vec<&str> {
        found.iter().map(|r| r.token).collect()
    }

    #[test]
    fn markdown_tokens_outside_code_are_counted() {
        let md = "See [[Page]] and {{< note >}}.\n:::tip\n> [!NOTE]\n%% hidden %%\n`[[code]]` ``{{<x>}}``\n```\n[[fenced]]\n:::\n```\n";
        assert_eq!(tokens(&in_markdown(md)), vec!["[[", "]]", "{{<", ":::", "[!type]", "%%", "%%"]);
        assert!(in_markdown("Plain [link](x) and [!] and a[b]\n").is_empty());
    }

    #[test]
    fn html_text_is_read_outside_code() {
        let html = "<p>Text [[Raw]] here</p><pre><code>[[in code]]\n{{&lt; note &gt;}}</code></pre><p>{{&lt; note &gt;}} <code>%%</code></p>";
        assert_eq!(tokens(&in_html(html)), vec!["[[", "]]", "{{<"]);
        let r = &in_html("<p>a long sentence before the [[Raw link]] and after it</p>")[0];
        assert!(r.context.contains("[[Raw link]]"), "{}", r.context);
    }

    #[test]
    fn multibyte_text_does_not_split_characters() {
        let found = in_markdown("ääääääääääääääääääääää [[x]] ööööööööööööööööööööööööööö\n");
        assert_eq!(found.len(), 2);
    }
}
