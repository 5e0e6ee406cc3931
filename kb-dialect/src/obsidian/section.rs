//! The part of a note an embed takes: the section under a heading, or the block
//! marked `^id`.

use kb_common::slug;

use super::lines::{split_block_id, split_prefix, Fences};
use super::transclusion::atx_heading_text;
use crate::fence::Fence;

/// The section of `body` under the heading `written`: from that heading to the
/// next heading of the same or a higher level.
pub(super) fn heading_section(body: &str, written: &str) -> Option<String> {
    let want = slug::slugify(written);
    let headings = slug::headings(body);
    let k = headings.iter().position(|h| slug::slugify(&h.text) == want || h.id == want)?;
    let line_start = |offset: usize| body[..offset].rfind('\n').map_or(0, |n| n + 1);
    let start = line_start(headings[k].range.start);
    let end = headings[k + 1..]
        .iter()
        .find(|h| h.level <= headings[k].level)
        .map_or(body.len(), |h| line_start(h.range.start));
    Some(body[start..end].trim_end().to_string())
}

/// The block of `body` marked `^id`: the paragraph or list item whose last line
/// ends with ` ^id`, or the block just above a line that is only `^id` (how
/// Obsidian marks tables, lists and quotes). The marker is left out.
pub(super) fn block_text(body: &str, id: &str) -> Option<String> {
    let lines: Vec<&str> = body.lines().collect();
    let mut fences = Fences::default();
    let (k, before) = lines.iter().enumerate().find_map(|(k, l)| {
        let code = fences.code(split_prefix(l).1);
        let (before, found) = split_block_id(l).filter(|_| !code)?;
        found.eq_ignore_ascii_case(id).then_some((k, before))
    })?;
    let (start, end) = if before.trim().is_empty() {
        let end = (0..k).rev().find(|&j| !lines[j].trim().is_empty())? + 1;
        let start = (0..end).rev().find(|&j| lines[j].trim().is_empty()).map_or(0, |j| j + 1);
        (start, end)
    } else {
        let mut start = k;
        while start > 0 && !is_list_item(lines[start]) {
            let prev = lines[start - 1];
            if prev.trim().is_empty() || atx_heading_text(split_prefix(prev).1).is_some() || Fence::open(prev).is_some()
            {
                break;
            }
            start -= 1;
        }
        (start, k + 1)
    };
    let mut block: Vec<&str> = lines[start..end].to_vec();
    if !before.trim().is_empty() {
        block[end - start - 1] = before;
    }
    Some(dedent_block(&block))
}

fn is_list_item(line: &str) -> bool {
    let t = line.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let after_number = (1..10).contains(&digits) && (t[digits..].starts_with(". ") || t[digits..].starts_with(") "));
    t.starts_with("- ") || t.starts_with("* ") || t.starts_with("+ ") || after_number
}

/// Lines joined, without the indentation they all share.
fn dedent_block(lines: &[&str]) -> String {
    // Spaces and tabs only: they are one byte each, so every line can be cut there.
    let indent = |l: &str| l.len() - l.trim_start_matches([' ', '\t']).len();
    let common = lines.iter().filter(|l| !l.trim().is_empty()).map(|l| indent(l)).min().unwrap_or(0);
    let cut: Vec<&str> =
        lines.iter().map(|l| if l.trim().is_empty() { "" } else { l.get(common..).unwrap_or(l) }).collect();
    cut.join("\n")
}
