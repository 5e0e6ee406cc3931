//! Assembling output lines from a run's tokens: text between tags, line ends,
//! and which lines hold block-level tags.

use super::components::{role, Role};
use super::tokens::{Tok, TokKind};
use super::tree::{self, Item, Text};
use crate::Line;

/// Builds the output lines of a run while its tokens are read.
pub(super) struct Asm<'r> {
    pub(super) run: &'r [Line],
    /// Byte offset of each line of the run in the joined text.
    starts: Vec<usize>,
    /// The line being read.
    pub(super) line: usize,
    buf: String,
    buf_line: usize,
    /// The text in `buf` followed a tag on its line.
    pub(super) mid: bool,
    /// Whether the line being read has given a line of text.
    produced: bool,
}

impl<'r> Asm<'r> {
    pub(super) fn new(run: &'r [Line], joined: &str) -> Asm<'r> {
        let mut starts = vec![0];
        starts.extend(joined.match_indices('\n').map(|(i, _)| i + 1));
        Asm { run, starts, line: 0, buf: String::new(), buf_line: 0, mid: false, produced: false }
    }

    fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset).saturating_sub(1)
    }

    pub(super) fn at(&mut self, offset: usize) {
        self.line = self.line_of(offset);
    }

    pub(super) fn src(&self) -> usize {
        self.run[self.line].0
    }

    pub(super) fn indent(&self) -> usize {
        tree::indent_of(&self.run[self.line].1)
    }

    /// Source text starting at byte `at` of the run, line breaks included.
    pub(super) fn source_text(&mut self, at: usize, text: &str, items: &mut Vec<Item>) {
        let mut off = at;
        for (k, piece) in text.split('\n').enumerate() {
            if k > 0 {
                self.end_line(items);
                self.at(off);
            }
            self.replacement(piece);
            off += piece.len() + 1;
        }
    }

    /// Text that belongs to the line being read.
    pub(super) fn replacement(&mut self, text: &str) {
        if self.buf.is_empty() {
            self.buf_line = self.line;
        }
        self.buf.push_str(text);
    }

    /// Ends the text before a tag: a line of its own, if it holds anything.
    pub(super) fn flush(&mut self, items: &mut Vec<Item>) {
        if self.buf.trim().is_empty() {
            self.buf.clear();
            return;
        }
        let run = self.run;
        let (src, line) = &run[self.buf_line];
        let text = if self.mid {
            // Text after a tag: placed at its line's indentation.
            let piece = tree::guard_block_start(self.buf.trim());
            format!("{}{piece}", tree::leading_ws(line))
        } else {
            std::mem::take(&mut self.buf)
        };
        items.push(Item::Text(Text::new(*src, text)));
        self.buf.clear();
        self.produced = true;
    }

    /// Ends a source line; one that gave no text (a tag line) leaves an empty
    /// line, as MDX ends a paragraph at a tag line.
    pub(super) fn end_line(&mut self, items: &mut Vec<Item>) {
        self.flush(items);
        if !self.produced {
            items.push(Item::Text(Text::new(self.src(), "")));
        }
        self.produced = false;
        self.mid = false;
    }
}

/// Whether each line of a run starts with a component tag or an expression: on
/// such a line, component tags are blocks (their lines removed, children kept);
/// elsewhere they are inline and only the tags go.
pub(super) fn flow_lines(toks: &[Tok], joined: &str, asm: &Asm) -> Vec<bool> {
    let mut first: Vec<Option<bool>> = vec![None; asm.starts.len()];
    for tok in toks {
        let flowish = match &tok.kind {
            TokKind::Text => {
                for (off, c) in joined[tok.start..tok.end].char_indices() {
                    if !c.is_whitespace() {
                        first[asm.line_of(tok.start + off)].get_or_insert(false);
                    }
                }
                continue;
            }
            TokKind::Tag(tag) => role(tag) != Role::Html,
            TokKind::Expr(_) => true,
        };
        for slot in &mut first[asm.line_of(tok.start)..=asm.line_of(tok.end.saturating_sub(1))] {
            slot.get_or_insert(flowish);
        }
    }
    first.into_iter().map(|f| f == Some(true)).collect()
}
