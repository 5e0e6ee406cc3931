//! Fenced code blocks as CommonMark defines them, for the stages that read
//! Markdown line by line (normalising, chunking, summaries, titles): they must all
//! agree on what is code, or a `# comment` in a shell block becomes a heading.

use crate::Line;

/// An open code fence: its character and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fence {
    ch: char,
    len: usize,
}

impl Fence {
    /// The fence a line opens, if it opens one: three or more backticks or
    /// tildes after any indentation; a backtick fence's info string may not
    /// contain a backtick (```` ```x``` ```` is inline code, not a fence).
    pub fn open(line: &str) -> Option<Fence> {
        // Any indentation is accepted: fences inside list items are indented,
        // and the callers do not track list nesting.
        let t = line.trim_start();
        let ch = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
        let len = t.chars().take_while(|c| *c == ch).count();
        if len < 3 {
            return None;
        }
        if ch == '`' && t[len..].contains('`') {
            return None;
        }
        Some(Fence { ch, len })
    }

    /// Whether `line` closes this fence (same character, at least as long, nothing else).
    pub fn closes(&self, line: &str) -> bool {
        let t = line.trim();
        t.chars().count() >= self.len && t.chars().all(|c| c == self.ch)
    }

    /// The fence as text, e.g. "```".
    pub fn marker(&self) -> String {
        std::iter::repeat_n(self.ch, self.len).collect()
    }
}

/// Tracks fenced code over consecutive lines: the one reader of "is this line
/// code" that line-by-line passes share.
#[derive(Debug, Default)]
pub struct Fences(Option<Fence>);

impl Fences {
    /// Whether `line` (without any blockquote markers) is fenced code, its
    /// opening and closing fences included.
    pub fn code(&mut self, line: &str) -> bool {
        match self.0 {
            Some(f) => {
                if f.closes(line) {
                    self.0 = None;
                }
                true
            }
            None => {
                self.0 = Fence::open(line);
                self.0.is_some()
            }
        }
    }
}

/// Copies `lines`, handing the blocks that start outside fenced code to `block`:
/// at such a line `i`, `block(lines, i, out)` may take the lines `i..end` (writing
/// what they become to `out`) and return `end`, past `i`; a line it leaves
/// (`None`), and every line of fenced code, is copied as it is.
pub(crate) fn rewrite_outside_fences(
    lines: &[Line],
    mut block: impl FnMut(&[Line], usize, &mut Vec<Line>) -> Option<usize>,
) -> Vec<Line> {
    let mut out = Vec::with_capacity(lines.len());
    let mut fence: Option<Fence> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i].1;
        if let Some(f) = fence {
            if f.closes(line) {
                fence = None;
            }
        } else if let Some(end) = block(lines, i, &mut out) {
            i = end;
            continue;
        } else {
            fence = Fence::open(line);
        }
        out.push(lines[i].clone());
        i += 1;
    }
    out
}

/// The lines of `text` outside fenced code blocks (the fence lines left out
/// too): what a line reader that only looks at prose walks.
pub fn prose_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut fences = Fences::default();
    text.lines().filter(move |line| !fences.code(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_and_closes() {
        let f = Fence::open("```bash title=\"x\"").unwrap();
        assert!(f.closes("```"));
        assert!(f.closes("  `````  "));
        assert!(!f.closes("~~~"));
        assert!(!f.closes("``` x"));
        let t = Fence::open("~~~~").unwrap();
        assert!(!t.closes("~~~"));
        assert_eq!(t.marker(), "~~~~");
    }

    #[test]
    fn prose_lines_skip_fenced_code() {
        let md = "a\n```sh\n# not prose\n```\nb\n~~~~\nc\n~~~\nd\n~~~~\ne\n";
        assert_eq!(prose_lines(md).collect::<Vec<_>>(), ["a", "b", "e"]);
    }

    #[test]
    fn inline_code_is_not_a_fence() {
        assert_eq!(Fence::open("```  PDAL (2026). DOI  ```"), None);
        assert_eq!(Fence::open("``two``"), None);
        assert!(Fence::open("~~~ has ` inside").is_some());
    }
}
