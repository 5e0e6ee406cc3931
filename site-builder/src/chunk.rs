//! Chunk stage: a page's Markdown → header sections → chunks of bounded size.
//!
//! The advising paper's method: split on headers up to a level (default 2, H1/H2),
//! keep the header line in the chunk, then split sections longer than `chunk_size`
//! characters with `overlap` characters carried over from one part to the next.
//!
//! How a long section is cut: its text becomes a sequence of *units* — words of
//! prose, and whole fenced code blocks and whole tables — each tagged with the
//! strength of the boundary that follows it (paragraph, line, sentence, word). A
//! chunk is filled greedily, then its end is moved back to the strongest boundary in
//! its second half, so paragraphs beat lines beat sentences beat words. The next
//! chunk starts with the tail of the previous one, at most `overlap` characters,
//! beginning at a sentence (or stronger) boundary when one is in reach. Code blocks
//! and tables are cut (at line / row boundaries) only when one alone exceeds the
//! limit. Sizes are in characters (Unicode scalar values), not bytes.

use std::borrow::Cow;

use crate::fence::Fence;
use crate::parse::strip_heading_attrs;
use kb_common::slug;

/// How pages are chunked (`--header-levels`, `--chunk-size`, `--overlap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkOptions {
    /// Split on headers of this level and above (1–6).
    pub header_levels: u8,
    /// Upper bound of a chunk's length, in characters.
    pub chunk_size: usize,
    /// Characters repeated from the end of one part at the start of the next.
    pub overlap: usize,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        ChunkOptions { header_levels: 2, chunk_size: 2000, overlap: 400 }
    }
}

/// Why a set of chunk options cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    #[error("--header-levels must be between 1 and 6, got {0}")]
    HeaderLevels(u8),
    #[error("--chunk-size must be at least 100 characters, got {0}")]
    ChunkSize(usize),
    #[error("--overlap ({overlap}) must be smaller than half of --chunk-size ({chunk_size})")]
    Overlap { overlap: usize, chunk_size: usize },
}

impl ChunkOptions {
    pub fn validate(self) -> Result<Self, OptionsError> {
        if !(1..=6).contains(&self.header_levels) {
            return Err(OptionsError::HeaderLevels(self.header_levels));
        }
        if self.chunk_size < 100 {
            return Err(OptionsError::ChunkSize(self.chunk_size));
        }
        if self.overlap * 2 >= self.chunk_size {
            return Err(OptionsError::Overlap { overlap: self.overlap, chunk_size: self.chunk_size });
        }
        Ok(self)
    }
}

/// A chunk of one page, before filtering and enrichment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawChunk {
    /// Position in the page, from 0.
    pub n: u32,
    /// Header trail of the section, outermost first.
    pub headers: Vec<String>,
    /// Id of the section's heading (empty before the first heading).
    pub anchor: String,
    /// The chunk's Markdown, header line included for the first part of a section.
    pub text: String,
    /// Byte offset of the section in the chunked Markdown (for line numbers).
    pub section_offset: usize,
}

/// Splits one page's Markdown (the [`kb_dialect::Target::Text`] form).
pub fn chunk_page(markdown: &str, opts: &ChunkOptions) -> Vec<RawChunk> {
    let mut out = Vec::new();
    for section in sections(markdown, opts.header_levels) {
        for text in split_section(&section.text, opts) {
            out.push(RawChunk {
                n: out.len() as u32,
                headers: section.headers.clone(),
                anchor: section.anchor.clone(),
                text,
                section_offset: section.offset,
            });
        }
    }
    out
}

struct Section {
    headers: Vec<String>,
    anchor: String,
    text: String,
    offset: usize,
}

/// Cuts the document at every heading of level ≤ `max_level`.
fn sections(markdown: &str, max_level: u8) -> Vec<Section> {
    let mut cuts: Vec<(usize, Vec<String>, String)> = vec![(0, Vec::new(), String::new())];
    let mut trail: Vec<(u8, String)> = Vec::new();
    for h in slug::headings(markdown) {
        if h.level > max_level {
            continue;
        }
        trail.retain(|(l, _)| *l < h.level);
        trail.push((h.level, h.text.clone()));
        // Cut at the start of the heading's line (it may sit in a list item).
        let start = markdown[..h.range.start].rfind('\n').map_or(0, |i| i + 1);
        cuts.push((start, trail.iter().map(|(_, t)| t.clone()).collect(), h.id));
    }
    let mut out = Vec::new();
    for (i, (start, headers, anchor)) in cuts.iter().enumerate() {
        let end = cuts.get(i + 1).map_or(markdown.len(), |c| c.0);
        if end <= *start {
            continue;
        }
        let text = tidy_headings(&markdown[*start..end]);
        if i == 0 && text.trim().is_empty() {
            continue;
        }
        out.push(Section { headers: headers.clone(), anchor: anchor.clone(), text, offset: *start });
    }
    out
}

/// Drops `{ #id }` attribute lists from heading lines: they are markup, not text.
fn tidy_headings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('#') && line.trim_end().ends_with('}') {
            out.push_str(strip_heading_attrs(line.trim_end()));
            out.push('\n');
        } else {
            out.push_str(line);
        }
    }
    out
}

/// Strength of the boundary after a unit: lower is a better place to cut.
const PARAGRAPH: u8 = 0;
const LINE: u8 = 1;
const SENTENCE: u8 = 2;
const WORD: u8 = 3;
const CHAR: u8 = 4;

#[derive(Debug)]
struct Unit<'a> {
    text: Cow<'a, str>,
    chars: usize,
    brk: u8,
}

/// Splits a section into chunks of at most `chunk_size` characters.
fn split_section(text: &str, opts: &ChunkOptions) -> Vec<String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        // An empty section still yields its (empty) chunk so that the filter stage
        // can report it rather than have it vanish.
        return vec![String::new()];
    }
    if trimmed.chars().count() <= opts.chunk_size {
        return vec![trimmed.to_string()];
    }
    let mut units = Vec::new();
    for (block, atomic) in blocks(text) {
        push_block(block, atomic, opts.chunk_size, &mut units);
    }
    merge(&units, opts)
}

/// Blocks separated by blank lines; a fenced code block and a run of table rows are
/// single blocks (`atomic = true`). Each block carries its trailing blank lines.
fn blocks(text: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut pos = 0;
    let mut kind: Option<bool> = None; // Some(atomic) while a block is open
    let mut fence: Option<Fence> = None;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim();
        if let Some(f) = fence {
            pos += line.len();
            i += 1;
            if f.closes(line) {
                fence = None;
                // Swallow blank lines after the fence into the block.
                while i < lines.len() && lines[i].trim().is_empty() {
                    pos += lines[i].len();
                    i += 1;
                }
                out.push((&text[start..pos], true));
                start = pos;
                kind = None;
            }
            continue;
        }
        let opens = Fence::open(line);
        let is_table_row = t.starts_with('|');
        if opens.is_some() || (is_table_row && kind == Some(false)) || (!is_table_row && kind == Some(true)) {
            // Close whatever is open before a fence, or when prose meets a table.
            if pos > start {
                out.push((&text[start..pos], kind == Some(true)));
                start = pos;
            }
            kind = None;
        }
        if opens.is_some() {
            fence = opens;
            kind = Some(true);
            pos += line.len();
            i += 1;
            continue;
        }
        if t.is_empty() {
            pos += line.len();
            i += 1;
            if kind.is_some() && !(i < lines.len() && lines[i].trim().is_empty()) {
                out.push((&text[start..pos], kind == Some(true)));
                start = pos;
                kind = None;
            }
            continue;
        }
        kind.get_or_insert(is_table_row);
        pos += line.len();
        i += 1;
    }
    if pos > start {
        out.push((&text[start..pos], kind == Some(true) || fence.is_some()));
    }
    out
}

fn push_block<'a>(block: &'a str, atomic: bool, limit: usize, units: &mut Vec<Unit<'a>>) {
    let chars = block.chars().count();
    if atomic && chars <= limit {
        units.push(Unit { text: Cow::Borrowed(block), chars, brk: PARAGRAPH });
        return;
    }
    if atomic {
        push_oversized_block(block, limit, units);
        return;
    }
    let first = units.len();
    for line in block.split_inclusive('\n') {
        push_prose_line(line, limit, units);
    }
    if units.len() > first {
        if let Some(last) = units.last_mut() {
            last.brk = PARAGRAPH;
        }
    }
}

/// A code block or table longer than the limit: cut at line (row) boundaries into
/// pieces that each stand alone — a code piece reopens and closes its fence, a
/// table piece repeats the header row — so every chunk still renders correctly.
fn push_oversized_block<'a>(block: &'a str, limit: usize, units: &mut Vec<Unit<'a>>) {
    let lines: Vec<&str> = block.split_inclusive('\n').collect();
    let first = lines.first().map_or("", |l| l.trim());
    let (head, body, tail): (String, &[&str], String) = if let Some(fence) = Fence::open(first) {
        let close = lines.iter().rposition(|l| fence.closes(l)).filter(|&i| i > 0).unwrap_or(lines.len());
        (format!("{first}\n"), &lines[1..close], format!("{}\n", fence.marker()))
    } else if lines.len() > 2 {
        (lines[..2].concat(), &lines[2..], String::new())
    } else {
        (String::new(), &lines[..], String::new())
    };
    let overhead = head.chars().count() + tail.chars().count();
    let room = limit.saturating_sub(overhead);
    if room < limit / 2 {
        // A header as big as the chunk: plain line cuts are the best we can do.
        for line in &lines {
            push_piece(line, LINE, limit, units);
        }
        return;
    }
    let mut piece = String::new();
    let mut piece_chars = 0;
    let flush = |piece: &mut String, piece_chars: &mut usize, units: &mut Vec<Unit<'a>>| {
        if !piece.is_empty() {
            let text = format!("{head}{piece}{tail}");
            units.push(Unit { chars: text.chars().count(), text: Cow::Owned(text), brk: PARAGRAPH });
            piece.clear();
            *piece_chars = 0;
        }
    };
    for line in body {
        let n = line.chars().count();
        if n > room {
            flush(&mut piece, &mut piece_chars, units);
            // One line longer than a chunk: it is cut by characters, unwrapped.
            push_piece(line, LINE, limit, units);
            continue;
        }
        if piece_chars + n > room {
            flush(&mut piece, &mut piece_chars, units);
        }
        piece.push_str(line);
        piece_chars += n;
    }
    flush(&mut piece, &mut piece_chars, units);
}

/// A line of prose → word units, marking sentence and line ends.
fn push_prose_line<'a>(line: &'a str, limit: usize, units: &mut Vec<Unit<'a>>) {
    let first = units.len();
    for word in line.split_inclusive(' ') {
        let core = word.trim_end();
        let brk = if core.ends_with(['.', '!', '?', ':', ';']) { SENTENCE } else { WORD };
        push_piece(word, brk, limit, units);
    }
    if units.len() > first {
        if let Some(last) = units.last_mut() {
            last.brk = last.brk.min(LINE);
        }
    }
}

/// Pushes `piece` as one unit, or as character runs when it alone exceeds `limit`.
fn push_piece<'a>(piece: &'a str, brk: u8, limit: usize, units: &mut Vec<Unit<'a>>) {
    let chars = piece.chars().count();
    if chars <= limit {
        units.push(Unit { text: Cow::Borrowed(piece), chars, brk });
        return;
    }
    if piece.contains(' ') && brk < WORD {
        for word in piece.split_inclusive(' ') {
            push_piece(word, WORD, limit, units);
        }
        if let Some(last) = units.last_mut() {
            last.brk = brk;
        }
        return;
    }
    let mut start = 0;
    let mut count = 0;
    for (i, _) in piece.char_indices() {
        if count == limit {
            units.push(Unit { text: Cow::Borrowed(&piece[start..i]), chars: count, brk: CHAR });
            start = i;
            count = 0;
        }
        count += 1;
    }
    units.push(Unit { text: Cow::Borrowed(&piece[start..]), chars: count, brk });
}

/// Greedy packing of units into chunks, with boundary-aware cuts and overlap.
fn merge(units: &[Unit<'_>], opts: &ChunkOptions) -> Vec<String> {
    let n = units.len();
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev_end = 0;
    while start < n {
        let mut end = start;
        let mut len = 0;
        while end < n && len + units[end].chars <= opts.chunk_size {
            len += units[end].chars;
            end += 1;
        }
        if end == start {
            end = start + 1; // cannot happen: every unit fits; stay safe anyway
        }
        if end < n {
            end = best_cut(units, start, end, prev_end, opts.chunk_size / 2);
        }
        let text: String = units[start..end].iter().map(|u| u.text.as_ref()).collect();
        let text = text.trim().to_string();
        if !text.is_empty() {
            out.push(text);
        }
        if end >= n {
            break;
        }
        prev_end = end;
        start = overlap_start(units, start, end, opts);
    }
    out
}

/// Moves the cut back to the strongest boundary that keeps the chunk at least
/// `min_len` long and still adds a unit past `prev_end`.
fn best_cut(units: &[Unit<'_>], start: usize, end: usize, prev_end: usize, min_len: usize) -> usize {
    let mut best = end;
    let mut best_brk = units[end - 1].brk;
    let mut acc = 0;
    for (k, unit) in units.iter().enumerate().take(end).skip(start) {
        acc += unit.chars;
        if acc >= min_len && k + 1 > prev_end && unit.brk <= best_brk {
            best = k + 1;
            best_brk = unit.brk;
        }
    }
    best
}

/// Where the chunk after `[start, end)` begins: the longest tail of at most
/// `overlap` characters that starts at a sentence or stronger boundary, else the
/// longest tail that starts at a word; the next unit must still fit after it.
fn overlap_start(units: &[Unit<'_>], start: usize, end: usize, opts: &ChunkOptions) -> usize {
    let budget = opts.overlap.min(opts.chunk_size.saturating_sub(units[end].chars));
    let mut acc = 0;
    let mut best_strong = None;
    let mut best_any = end;
    let mut s = end;
    while s > start + 1 && acc + units[s - 1].chars <= budget {
        acc += units[s - 1].chars;
        s -= 1;
        if units[s - 1].brk <= SENTENCE {
            best_strong = Some(s);
        }
        if units[s - 1].brk <= WORD {
            best_any = s;
        }
    }
    best_strong.unwrap_or(best_any)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(size: usize, overlap: usize) -> ChunkOptions {
        ChunkOptions { header_levels: 2, chunk_size: size, overlap }
    }

    fn sentence(i: usize) -> String {
        format!("Sentence number {i} explains one more fact about registration. ")
    }

    /// Longest suffix of `a` that is a prefix of `b`.
    fn shared(a: &str, b: &str) -> usize {
        (1..=a.len().min(b.len()))
            .rev()
            .find(|&k| a.is_char_boundary(a.len() - k) && b.is_char_boundary(k) && a.ends_with(&b[..k]))
            .unwrap_or(0)
    }

    #[test]
    fn splits_on_h1_h2_and_keeps_headers() {
        let md =
            "Lead text.\n\n# Title\n\nIntro.\n\n## First\n\nOne.\n\n### Deep\n\nStill first.\n\n## Second\n\nTwo.\n";
        let chunks = chunk_page(md, &ChunkOptions::default());
        let view: Vec<_> = chunks.iter().map(|c| (c.n, c.headers.join(" > "), c.anchor.as_str())).collect();
        assert_eq!(
            view,
            vec![
                (0, String::new(), ""),
                (1, "Title".into(), "title"),
                (2, "Title > First".into(), "first"),
                (3, "Title > Second".into(), "second")
            ]
        );
        assert!(chunks[2].text.starts_with("## First"));
        assert!(chunks[2].text.contains("### Deep\n\nStill first."));
        let deeper = chunk_page(md, &ChunkOptions { header_levels: 3, ..ChunkOptions::default() });
        assert_eq!(deeper.len(), 5);
        assert_eq!(deeper[3].headers, vec!["Title", "First", "Deep"]);
    }

    #[test]
    fn long_sections_respect_size_and_overlap() {
        let mut body = String::from("## Long\n\n");
        for p in 0..12 {
            for s in 0..6 {
                body.push_str(&sentence(p * 10 + s));
            }
            body.push_str("\n\n");
        }
        let o = opts(1000, 200);
        let chunks = chunk_page(&body, &o);
        assert!(chunks.len() >= 4, "{}", chunks.len());
        for c in &chunks {
            assert!(c.text.chars().count() <= 1000, "{}", c.text.chars().count());
            assert_eq!(c.anchor, "long");
        }
        for w in chunks.windows(2) {
            let k = shared(&w[0].text, &w[1].text);
            assert!(k > 0 && k <= 200, "overlap {k}");
            // The overlap starts at a sentence start.
            assert!(w[1].text.starts_with("Sentence number"), "{}", &w[1].text[..40]);
        }
        // Nothing is lost: every sentence is in some chunk.
        for p in 0..12 {
            for s in 0..6 {
                let needle = sentence(p * 10 + s);
                assert!(chunks.iter().any(|c| c.text.contains(needle.trim())), "lost {needle}");
            }
        }
    }

    #[test]
    fn paragraph_boundaries_are_preferred() {
        // Two paragraphs of ~700 chars: the cut must fall between them, not mid-paragraph.
        let para = |tag: &str| format!("{tag} {}\n\n", "word ".repeat(140));
        let md = format!("{}{}", para("alpha"), para("omega"));
        let chunks = chunk_page(&md, &opts(1000, 100));
        assert!(chunks[0].text.starts_with("alpha") && !chunks[0].text.contains("omega"));
        assert!(chunks.last().unwrap().text.contains("omega"));
    }

    #[test]
    fn code_blocks_and_tables_are_not_cut() {
        let code = format!("```bash\n{}```\n\n", "srun --gres=nvme:100 ./job\n\n".repeat(20));
        let table = format!("| a | b |\n|---|---|\n{}\n", "| cell one | cell two |\n".repeat(20));
        let prose = "Some prose that fills space. ".repeat(25);
        let md = format!("## S\n\n{prose}\n\n{code}{prose}\n\n{table}{prose}\n");
        let chunks = chunk_page(&md, &opts(1000, 200));
        for c in &chunks {
            assert!(c.text.chars().count() <= 1000);
            let fences = c.text.lines().filter(|l| Fence::open(l).is_some() || l.trim() == "```").count();
            assert_eq!(fences % 2, 0, "fence cut: {}", c.text);
            if c.text.contains("| cell") {
                assert!(c.text.contains(table.trim_end()), "table cut");
            }
        }
        assert!(chunks.iter().any(|c| c.text.contains(code.trim_end())));
    }

    #[test]
    fn oversized_code_block_is_cut_at_lines() {
        let code = format!("```\n{}```\n", "x = compute(1, 2, 3)\n".repeat(100));
        let chunks = chunk_page(&code, &opts(500, 100));
        assert!(chunks.len() > 4);
        for c in &chunks {
            assert!(c.text.chars().count() <= 500);
            assert!(c.text.starts_with("```\n") && c.text.ends_with("\n```"), "piece not fenced: {}", c.text);
            for line in c.text.lines() {
                assert!(line == "```" || line == "x = compute(1, 2, 3)", "cut inside a line: {line:?}");
            }
        }
        let lines: usize = chunks.iter().map(|c| c.text.matches("compute").count()).sum();
        assert_eq!(lines, 100, "lines lost or repeated");
    }

    #[test]
    fn oversized_table_repeats_its_header() {
        let table = format!("| Flag | Meaning |\n|---|---|\n{}", "| --gres=nvme:100 | local disk |\n".repeat(60));
        let chunks = chunk_page(&table, &opts(600, 100));
        assert!(chunks.len() >= 3);
        for c in &chunks {
            assert!(c.text.chars().count() <= 600);
            assert!(c.text.starts_with("| Flag | Meaning |\n|---|---|\n"), "{}", c.text);
        }
        let rows: usize = chunks.iter().map(|c| c.text.matches("local disk").count()).sum();
        assert_eq!(rows, 60);
    }

    #[test]
    fn unbroken_text_is_cut_by_characters() {
        let md = "é".repeat(2500);
        let chunks = chunk_page(&md, &opts(1000, 100));
        assert!(chunks.iter().all(|c| c.text.chars().count() <= 1000));
        assert!(chunks.iter().map(|c| c.text.chars().count()).sum::<usize>() >= 2500);
    }

    #[test]
    fn empty_sections_are_kept_for_the_filters() {
        let chunks = chunk_page("# T\n\n## Empty\n\n## Full\n\nText.\n", &ChunkOptions::default());
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks[1].text, "## Empty");
    }

    #[test]
    fn ids_are_deterministic() {
        let md = "# A\n\ntext\n\n## B\n\nmore\n";
        assert_eq!(chunk_page(md, &ChunkOptions::default()), chunk_page(md, &ChunkOptions::default()));
    }

    #[test]
    fn heading_attributes_are_not_chunk_text() {
        let chunks = chunk_page("## Modules {#module-table}\n\nText\n", &ChunkOptions::default());
        assert_eq!(chunks[0].anchor, "module-table");
        assert_eq!(chunks[0].text, "## Modules\n\nText");
    }

    #[test]
    fn options_are_validated() {
        assert!(ChunkOptions::default().validate().is_ok());
        assert_eq!(
            ChunkOptions { header_levels: 0, ..Default::default() }.validate(),
            Err(OptionsError::HeaderLevels(0))
        );
        assert!(ChunkOptions { chunk_size: 50, ..Default::default() }.validate().is_err());
        assert!(ChunkOptions { overlap: 1000, ..Default::default() }.validate().is_err());
    }
}
