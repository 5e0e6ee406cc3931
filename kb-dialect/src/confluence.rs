//! Confluence macro placeholders: the text a Confluence macro stands in with when
//! a page is exported or scraped without the macro's output ("Related articles
//! will be listed here automatically… edit this macro", "Content by label",
//! "Children display", "Table of contents will appear here"). A reader cannot
//! use it and search should not match it, so it is left out of both targets,
//! and so is a heading left with nothing under it (it would only be an empty
//! entry of the page's contents list).
//!
//! The rule, for a paragraph outside fenced code (its text with emphasis and
//! code marks removed, at most [`MAX_CHARS`] characters):
//!
//! | the paragraph | example |
//! | --- | --- |
//! | names what a macro lists, and says it shows *here* | "Related articles will be listed here automatically…", "Table of contents will appear here" |
//! | tells the editor to edit the macro | "…Click to edit the macro and add or change labels." |
//! | is only the name of a macro | "Content by label", "Children display" |
//!
//! Prose that merely mentions macros ("To add the Jira macro, click Insert") or
//! says something will appear here ("Your grades will appear here") is kept.

use crate::fence::Fences;
use crate::{Line, Notice, NoticeKind};

/// Longer paragraphs are the author's own prose, whatever they mention.
pub const MAX_CHARS: usize = 300;

/// What a listing macro shows, as its placeholder begins ("Related articles will…").
const MACRO_OUTPUTS: [&str; 10] = [
    "related articles",
    "related pages",
    "table of contents",
    "child pages",
    "content by label",
    "recently updated",
    "page tree",
    "page properties",
    "popular labels",
    "incoming links",
];

/// "…will be listed here": how a placeholder says where the output would be.
const HERE: [&str; 6] = ["appear here", "listed here", "displayed here", "shown here", "show here", "show up here"];

/// The editor's instruction only a placeholder gives.
const EDIT_THE_MACRO: [&str; 3] = ["edit this macro", "edit the macro", "configure this macro"];

/// Macro names left on their own where the macro was.
const MACRO_NAMES: [&str; 9] = [
    "content by label",
    "children display",
    "page tree",
    "page tree search",
    "recently updated",
    "page properties report",
    "content report table",
    "excerpt include",
    "livesearch",
];

/// Whether a paragraph's text is a Confluence macro's placeholder (see the module table).
pub fn is_placeholder(paragraph: &str) -> bool {
    let plain: String = paragraph.chars().filter(|c| !matches!(c, '*' | '_' | '`')).collect();
    let t = plain.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    let t = t.trim_end_matches(['.', '…', ':', '!']).trim();
    if t.is_empty() || t.chars().count() > MAX_CHARS {
        return false;
    }
    let says_here = HERE.iter().any(|h| t.contains(h));
    (says_here && MACRO_OUTPUTS.iter().any(|m| t.starts_with(m)))
        || EDIT_THE_MACRO.iter().any(|e| t.contains(e))
        || MACRO_NAMES.contains(&t)
}

/// Leaves out every placeholder paragraph, and every ATX heading whose section
/// held nothing but placeholders; each removal is a [`Notice`] (line of the
/// paragraph). Lines keep their source lines.
pub fn drop_placeholders(lines: Vec<Line>, notices: &mut Vec<Notice>) -> Vec<Line> {
    let code = code_lines(&lines);
    let mut dropped = vec![false; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        if code[i] || !is_paragraph_start(&lines[i].1) {
            i += 1;
            continue;
        }
        let end = (i..lines.len()).find(|&j| code[j] || !is_paragraph_line(&lines[j].1)).unwrap_or(lines.len());
        let text: Vec<&str> = lines[i..end].iter().map(|(_, l)| l.trim()).collect();
        let text = text.join(" ");
        if is_placeholder(&text) {
            dropped[i..end].iter_mut().for_each(|d| *d = true);
            let quoted: String = text.chars().take(60).collect();
            notices.push(Notice {
                line: lines[i].0,
                kind: NoticeKind::MacroPlaceholder,
                message: format!("a Confluence macro's placeholder (\"{quoted}…\") was left out"),
            });
        }
        i = end.max(i + 1);
    }
    if !dropped.contains(&true) {
        return lines;
    }
    let emptied = emptied_headings(&lines, &code, &dropped);
    lines.into_iter().enumerate().filter(|(i, _)| !dropped[*i] && !emptied[*i]).map(|(_, l)| l).collect()
}

/// Headings whose section (up to the next heading of the same or a higher
/// level) is blank once the placeholders are gone, and held one.
fn emptied_headings(lines: &[Line], code: &[bool], dropped: &[bool]) -> Vec<bool> {
    let mut emptied = vec![false; lines.len()];
    for i in 0..lines.len() {
        let Some(level) = (!code[i]).then(|| heading_level(&lines[i].1)).flatten() else { continue };
        let mut held_placeholder = false;
        let mut blank = true;
        for j in i + 1..lines.len() {
            if !code[j] && heading_level(&lines[j].1).is_some_and(|l| l <= level) {
                break;
            }
            if dropped[j] {
                held_placeholder = true;
            } else if !lines[j].1.trim().is_empty() {
                blank = false;
                break;
            }
        }
        emptied[i] = blank && held_placeholder;
    }
    emptied
}

/// Which lines are fenced code (fences included).
fn code_lines(lines: &[Line]) -> Vec<bool> {
    let mut fences = Fences::default();
    lines.iter().map(|(_, line)| fences.code(line)).collect()
}

/// `## Title` (up to three spaces before it): its level.
fn heading_level(line: &str) -> Option<usize> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let t = &line[indent..];
    let level = t.chars().take_while(|&c| c == '#').count();
    let rest = &t[level..];
    (indent <= 3 && (1..=6).contains(&level) && (rest.is_empty() || rest.starts_with([' ', '\t']))).then_some(level)
}

/// A line that can start a plain paragraph: not indented code, a heading, a
/// list item, a quote, a table row, HTML or a container.
fn is_paragraph_start(line: &str) -> bool {
    let t = line.trim_start();
    let indent = line.len() - t.len();
    is_paragraph_line(line)
        && indent <= 3
        && !t.starts_with(['-', '+', '>', '|', '<', '!', '?', '=', ':', '{'])
        && !(t.starts_with('*') && t[1..].starts_with([' ', '\t']))
        && !t.chars().next().is_some_and(|c| c.is_ascii_digit())
}

/// A line that continues a paragraph: anything but a blank line or a heading.
fn is_paragraph_line(line: &str) -> bool {
    !line.trim().is_empty() && heading_level(line).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(md: &str) -> (String, Vec<usize>, usize) {
        let lines: Vec<Line> = md.lines().enumerate().map(|(i, l)| (i, l.to_string())).collect();
        let mut notices = Vec::new();
        let out = drop_placeholders(lines, &mut notices);
        let text = out.iter().map(|(_, l)| format!("{l}\n")).collect();
        (text, out.iter().map(|(s, _)| *s).collect(), notices.len())
    }

    #[test]
    fn the_placeholders_of_confluence_macros_are_recognised() {
        for p in [
            "Related articles will be listed here automatically based on the labels on this page. To choose which labels are used, edit this macro and update the label list.",
            "Related articles appear here based on the labels you select. Click to edit the macro and add or change labels.",
            "Content by label",
            "*Children Display*",
            "Table of contents will appear here.",
            "Child pages will be listed here",
        ] {
            assert!(is_placeholder(p), "{p}");
        }
        for prose in [
            "Your grades will appear here once your instructor posts them.",
            "To add the Jira macro, click Insert and choose Other macros.",
            "Table of contents",
            "Children under 12 ride the shuttle free; their names will be listed here on the roster.",
            "Related articles",
        ] {
            assert!(!is_placeholder(prose), "{prose}");
        }
        assert!(!is_placeholder(&format!("Related articles will appear here. {}", "More words. ".repeat(40))));
    }

    #[test]
    fn a_placeholder_and_the_heading_it_emptied_go() {
        let md = "# VPN\n\nConnect first.\n\n## Related articles\n\nRelated articles will be listed here automatically.\nTo choose labels, edit this macro.\n\n## Help\n\nCall us.\n";
        let (text, sources, notices) = run(md);
        assert_eq!(text, "# VPN\n\nConnect first.\n\n\n\n## Help\n\nCall us.\n");
        assert_eq!(sources, [0, 1, 2, 3, 5, 8, 9, 10, 11], "every line keeps its source line");
        assert_eq!(notices, 1);
    }

    #[test]
    fn a_heading_with_content_of_its_own_stays() {
        let md = "## Contents\n\nTable of contents will appear here.\n\nRead the steps below.\n\n### Steps\n\nOne.\n";
        let (text, _, _) = run(md);
        assert_eq!(text, "## Contents\n\n\nRead the steps below.\n\n### Steps\n\nOne.\n");
        // A heading empty by its author's choice is not ours to remove.
        let (text, _, notices) = run("## Later\n\n## Now\n\nText.\n");
        assert_eq!((text.as_str(), notices), ("## Later\n\n## Now\n\nText.\n", 0));
    }

    #[test]
    fn code_lists_and_quotes_are_left_alone() {
        let md = "```\nContent by label\n```\n\n- Content by label\n\n> Children display\n\n    Page tree\n";
        let (text, _, notices) = run(md);
        assert_eq!(text, md);
        assert_eq!(notices, 0);
    }
}
