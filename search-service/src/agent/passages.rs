//! A chunk's Markdown cut into the passages an extractive answer may quote:
//! sentences of paragraphs, list items, and table rows read with their header
//! (`Header: cell; Header: cell`), each with the words that say what it is about
//! but that it does not repeat (its section heading, the label or lead-in of its
//! list or table).
//!
//! A passage has to make sense on its own, which is why a row carries its
//! header (`$230` means nothing without `Fall only`), an item its list's
//! lead-in (a step under `**macOS**` is a macOS step) and why a sentence that
//! introduces a short command (`load the biokit module:`) carries the command.
//! Lines are read one by one: chunks are Markdown in the build's normalised text
//! form (`kb_dialect`'s `Target::Text`), where tab sets and admonitions are a
//! bold label line over their body, and paragraphs are often hard-wrapped.

use search_core::index::highlight;

/// What a passage is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sentence,
    /// A list item; `ordered`: a numbered list (steps, to be read in order).
    Item {
        ordered: bool,
    },
    /// A table row, with its header.
    Row,
}

/// One quotable piece of a chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Passage {
    /// What an answer shows: one line, Markdown gone but for `code` spans.
    pub text: String,
    /// Read with the passage, never shown: its heading and its block's label
    /// or lead-in.
    pub context: String,
    /// What introduces the passage's list or table when it is quoted whole:
    /// the lead-in sentence, or the heading and label ("Setting up your device
    /// (macOS)"); empty for sentences.
    pub lead: String,
    pub kind: Kind,
    /// The paragraph, list or table it belongs to, numbered within the chunk:
    /// the steps of one list share it.
    pub block: usize,
    /// The block (a list or table) this sentence introduces, when it is the
    /// lead-in ending with `:` right before one.
    pub opens: Option<usize>,
    /// A row's cells as `Header: cell` (what [`Passage::text`] joins), so a
    /// wide row can be shown by the cells that matter; empty for the others.
    pub cells: Vec<String>,
}

/// Sentences shorter than this many words say too little to quote alone.
const MIN_SENTENCE_WORDS: usize = 4;
/// Longer passages are cut at this many words (with `…`).
const MAX_WORDS: usize = 70;
/// A code block this short (lines) after a lead-in is quoted with it.
const SHORT_CODE_LINES: usize = 3;
/// Labels that name an admonition's kind, not what its body is about.
const GENERIC_LABELS: &[&str] =
    &["note", "notes", "tip", "hint", "info", "important", "warning", "caution", "danger", "example", "abstract"];

/// The block being read.
#[derive(Default)]
struct Open {
    para: Vec<String>,
    /// (numbered, indentation, text) of each item.
    items: Vec<(bool, usize, String)>,
    rows: Vec<String>,
    code: Option<Vec<String>>,
}

/// The reader's state: the heading and label in force, what was emitted.
struct Reader {
    heading: String,
    label: String,
    out: Vec<Passage>,
    blocks: usize,
    open: Open,
    /// The last sentence of the last paragraph ended with `:` and nothing
    /// followed it yet: the index of that passage.
    lead_in: Option<usize>,
    /// The line before was blank (so a line that is not indented starts a
    /// paragraph rather than continuing a list item).
    after_blank: bool,
}

/// The passages of a chunk's `text` (Markdown), in reading order; `heading` is
/// the section the chunk starts in (its last header), for chunks that do not
/// open with their heading.
pub fn split(text: &str, heading: &str) -> Vec<Passage> {
    let mut r = Reader {
        heading: clean(heading),
        label: String::new(),
        out: Vec::new(),
        blocks: 0,
        open: Open::default(),
        lead_in: None,
        after_blank: false,
    };
    for raw in text.lines() {
        r.line(raw);
    }
    r.flush();
    r.out
}

impl Reader {
    fn line(&mut self, raw: &str) {
        let after_blank = std::mem::replace(&mut self.after_blank, false);
        let t = raw.trim();
        if let Some(code) = &mut self.open.code {
            if t.starts_with("```") || t.starts_with("~~~") {
                self.flush();
            } else {
                code.push(t.to_string());
            }
            return;
        }
        if t.starts_with("```") || t.starts_with("~~~") {
            self.flush_text();
            self.open.code = Some(Vec::new());
            return;
        }
        let t = t.trim_start_matches('>').trim();
        if t.is_empty() {
            // A blank line ends a paragraph; a list may go on after it.
            self.flush_para();
            self.after_blank = true;
            return;
        }
        if t.starts_with('#') {
            self.flush();
            self.heading = clean(t.trim_start_matches('#'));
            self.label.clear();
            self.lead_in = None;
            return;
        }
        if let Some(label) = label_line(t) {
            self.flush();
            self.label = label;
            self.lead_in = None;
            return;
        }
        if t.chars().all(|c| matches!(c, '-' | '=' | '*' | '_' | ' ')) {
            return; // a rule, or a setext heading's underline
        }
        if t.starts_with('|') {
            self.flush_para();
            self.flush_items();
            self.open.rows.push(t.to_string());
            return;
        }
        if !self.open.rows.is_empty() {
            self.flush_rows();
        }
        if let Some((ordered, item)) = list_item(t) {
            self.flush_para();
            let indent = raw.len() - raw.trim_start().len();
            self.open.items.push((ordered, indent, item.to_string()));
            return;
        }
        // An indented line, or one right after an item's, continues the item.
        let indented = raw.starts_with(' ') || raw.starts_with('\t');
        if let Some((_, _, item)) = self.open.items.last_mut() {
            if indented || !after_blank {
                item.push(' ');
                item.push_str(t);
                return;
            }
        }
        self.flush_items();
        self.open.para.push(t.to_string());
    }

    /// Everything open, code included.
    fn flush(&mut self) {
        self.flush_text();
        if let Some(code) = self.open.code.take() {
            self.attach_code(&code);
        }
    }

    fn flush_text(&mut self) {
        self.flush_para();
        self.flush_items();
        self.flush_rows();
    }

    fn context(&self) -> String {
        [self.heading.as_str(), self.label.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// What introduces the block about to be emitted, and the lead-in passage.
    fn lead(&mut self) -> (String, Option<usize>) {
        if let Some(i) = self.lead_in.take() {
            return (self.out[i].text.clone(), Some(i));
        }
        let label = if GENERIC_LABELS.contains(&self.label.to_lowercase().trim_end_matches(':')) {
            ""
        } else {
            self.label.trim_end_matches(':')
        };
        let lead = match (self.heading.is_empty(), label.is_empty()) {
            (false, false) => format!("{} ({label})", self.heading),
            (false, true) => self.heading.clone(),
            (true, _) => label.to_string(),
        };
        (lead, None)
    }

    fn flush_para(&mut self) {
        if self.open.para.is_empty() {
            return;
        }
        let text = clean(&self.open.para.join(" "));
        self.open.para.clear();
        let block = self.next_block();
        let context = self.context();
        self.lead_in = None;
        let sentences = sentences(&text);
        let last = sentences.len().saturating_sub(1);
        for (i, s) in sentences.into_iter().enumerate() {
            let ends_colon = s.ends_with(':');
            if highlight::word_count(&s) < MIN_SENTENCE_WORDS && !(i == last && ends_colon) {
                continue;
            }
            self.out.push(Passage {
                text: s,
                context: context.clone(),
                lead: String::new(),
                kind: Kind::Sentence,
                block,
                opens: None,
                cells: Vec::new(),
            });
            if i == last && ends_colon {
                self.lead_in = Some(self.out.len() - 1);
            }
        }
    }

    fn flush_items(&mut self) {
        if self.open.items.is_empty() {
            return;
        }
        let items = std::mem::take(&mut self.open.items);
        let block = self.next_block();
        let (lead, opener) = self.lead();
        let context = format!("{} {lead}", self.context());
        if let Some(i) = opener {
            self.out[i].opens = Some(block);
        }
        // Items indented under another are a list of their own, led by that
        // item: a step's sub-points are not steps. A last item ending with `:`
        // leads what follows it (a command, an error message).
        let base = items.iter().map(|i| i.1).min().unwrap_or(0);
        let (mut parent, mut sub) = (String::new(), None);
        for (ordered, indent, item) in items {
            let text = clean(&item);
            let nested = indent > base;
            if !nested {
                parent.clone_from(&text);
                sub = None;
            }
            if highlight::word_count(&text) < 2 {
                continue;
            }
            let kind = Kind::Item { ordered };
            let p = if nested {
                let b = *sub.get_or_insert_with(|| self.next_block());
                Passage {
                    text,
                    context: format!("{context} {parent}"),
                    lead: parent.clone(),
                    kind,
                    block: b,
                    opens: None,
                    cells: Vec::new(),
                }
            } else {
                Passage {
                    text,
                    context: context.clone(),
                    lead: lead.clone(),
                    kind,
                    block,
                    opens: None,
                    cells: Vec::new(),
                }
            };
            self.out.push(p);
        }
        if self.out.last().is_some_and(|p| p.block >= block && p.text.ends_with(':')) {
            self.lead_in = Some(self.out.len() - 1);
        }
    }

    fn flush_rows(&mut self) {
        if self.open.rows.is_empty() {
            return;
        }
        let rows = std::mem::take(&mut self.open.rows);
        let block = self.next_block();
        let (lead, opener) = self.lead();
        let context = format!("{} {lead}", self.context());
        if let Some(i) = opener {
            self.out[i].opens = Some(block);
        }
        let is_rule = |r: &str| r.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '));
        // A header is a first row with a rule under it.
        let header: Vec<String> = match rows.get(1) {
            Some(rule) if is_rule(rule) => cells(&rows[0]).iter().map(|c| clean(c)).collect(),
            _ => Vec::new(),
        };
        let body = if header.is_empty() { &rows[..] } else { &rows[2..] };
        for row in body.iter().filter(|r| !is_rule(r)) {
            let cells = row_cells(&header, &cells(row));
            if !cells.is_empty() {
                let (context, lead, text) = (context.clone(), lead.clone(), cells.join("; "));
                self.out.push(Passage { text, context, lead, kind: Kind::Row, block, opens: None, cells });
            }
        }
    }

    /// A short command right after a lead-in ("load the biokit module:") is
    /// quoted with it. Longer code is not quoted, but its first lines are read
    /// with the lead-in ("Otherwise you get this failure:" is found by the
    /// error message the block shows).
    fn attach_code(&mut self, code: &[String]) {
        let Some(i) = self.lead_in.take() else { return };
        let lines: Vec<&str> = code
            .iter()
            .map(|l| l.trim().trim_start_matches("$ ").trim())
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        let p = &mut self.out[i];
        let short = lines.len() <= SHORT_CODE_LINES && lines.iter().all(|l| l.len() <= 100 && !l.contains('`'));
        if short && !lines.is_empty() {
            let quoted: Vec<String> = lines.iter().map(|l| format!("`{l}`")).collect();
            p.text = format!("{} {}", p.text, quoted.join(" "));
        } else {
            let read: String = lines.iter().take(SHORT_CODE_LINES).copied().collect::<Vec<_>>().join(" ");
            p.context = format!("{} {}", p.context, read.chars().take(300).collect::<String>());
        }
    }

    fn next_block(&mut self) -> usize {
        self.blocks += 1;
        self.blocks
    }
}

/// A line that is only a bold label (`**macOS**`, a tab's or admonition's
/// title in the text form) or an admonition marker (`!!! note "Title"`).
fn label_line(t: &str) -> Option<String> {
    for marker in ["!!!", "???+", "???"] {
        if let Some(rest) = t.strip_prefix(marker) {
            let rest = rest.trim();
            let title = rest.split_once(' ').map_or(rest, |x| x.1).trim().trim_matches('"');
            return Some(if title.is_empty() { rest.to_string() } else { title.to_string() });
        }
    }
    let inner = t.strip_prefix("**")?.strip_suffix("**")?;
    (!inner.is_empty() && !inner.contains("**")).then(|| clean(inner))
}

/// A list item's text, and whether its list is numbered.
fn list_item(t: &str) -> Option<(bool, &str)> {
    for marker in ["- ", "* ", "+ "] {
        if let Some(rest) = t.strip_prefix(marker) {
            return Some((false, rest));
        }
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || digits > 3 {
        return None;
    }
    let rest = &t[digits..];
    rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")).map(|r| (true, r))
}

/// A table row's cells: split at `|` outside code spans, `\|` kept.
fn cells(row: &str) -> Vec<String> {
    let row = row.trim().trim_start_matches('|');
    let row = row.strip_suffix('|').unwrap_or(row);
    let mut out = vec![String::new()];
    let (mut code, mut escaped) = (false, false);
    for c in row.chars() {
        match c {
            '|' if !code && !escaped => out.push(String::new()),
            _ => {
                if c == '`' {
                    code = !code;
                }
                if let Some(cell) = out.last_mut() {
                    if escaped && c == '|' {
                        cell.pop();
                    }
                    cell.push(c);
                }
            }
        }
        escaped = c == '\\';
    }
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

/// A row read with its header: `Header: cell` for each cell that is not
/// empty; without a header, the cells alone.
fn row_cells(header: &[String], cells: &[String]) -> Vec<String> {
    let mut parts = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let cell = clean(cell);
        if cell.is_empty() {
            continue;
        }
        match header.get(i).filter(|h| !h.is_empty()) {
            Some(h) => parts.push(format!("{h}: {cell}")),
            None => parts.push(cell),
        }
    }
    parts
}

/// HTML tags dropped from text (outside code): inline markup that says nothing.
const TAGS: &[&str] = &[
    "a", "b", "i", "u", "em", "strong", "br", "sup", "sub", "span", "div", "p", "kbd", "img", "small", "code", "mark",
];

/// Inline Markdown → what an answer shows: links and images keep their text
/// (images nothing), emphasis and HTML tags go, `code` spans stay (the widget
/// renders them, a terminal reads them), a bracketed number becomes
/// parenthesised so it is never read as a citation; white space collapsed.
pub fn clean(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '`' {
            // A code span is kept as written, up to its closing backtick.
            match chars[i + 1..].iter().position(|&x| x == '`') {
                Some(j) => {
                    out.extend(&chars[i..i + j + 2]);
                    i += j + 2;
                }
                None => i += 1,
            }
            continue;
        }
        if c == '!' && chars.get(i + 1) == Some(&'[') {
            i = skip_link(&chars, i + 1, &mut String::new());
            continue;
        }
        if c == '[' {
            let mut inner = String::new();
            let end = skip_link(&chars, i, &mut inner);
            if end > i + 1 {
                out.push_str(&inner);
                i = end;
                continue;
            }
        }
        if c == '<' {
            if let Some(end) = html_tag(&chars, i) {
                i = end;
                continue;
            }
        }
        match c {
            '*' => {}
            '_' if chars.get(i + 1) == Some(&'_') || i > 0 && chars[i - 1] == '_' => {}
            '\\' if chars.get(i + 1).is_some_and(|n| n.is_ascii_punctuation()) => {}
            _ => out.push(c),
        }
        i += 1;
    }
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    let out = out.replace(" ,", ",").replace(" .", ".").replace(" ;", ";").replace(" :", ":");
    bracketed_numbers(&out)
}

/// `[text](url)` or `[text]` at `chars[start] == '['`: the text into `inner`;
/// returns the index after it (`start + 1` if it is not a link or reference).
fn skip_link(chars: &[char], start: usize, inner: &mut String) -> usize {
    let Some(close) = chars[start + 1..].iter().position(|&c| c == ']').map(|j| start + 1 + j) else {
        return start + 1;
    };
    let text: String = chars[start + 1..close].iter().collect();
    if chars.get(close + 1) == Some(&'(') {
        if let Some(end) = chars[close + 1..].iter().position(|&c| c == ')') {
            inner.push_str(&text);
            return close + 1 + end + 1;
        }
    }
    // `[12]` stays (made parenthetical later); other brackets lose their marks.
    if text.chars().all(|c| c.is_ascii_digit()) {
        return start + 1;
    }
    inner.push_str(&text);
    close + 1
}

/// The end of an inline HTML tag of [`TAGS`] at `chars[start] == '<'`.
fn html_tag(chars: &[char], start: usize) -> Option<usize> {
    let close = chars[start..].iter().position(|&c| c == '>')? + start;
    let inner: String = chars[start + 1..close].iter().collect();
    let name = inner.trim_start_matches('/').split([' ', '/']).next().unwrap_or("").to_ascii_lowercase();
    TAGS.contains(&name.as_str()).then_some(close + 1)
}

/// `[12]` → `(12)`: an answer's `[n]` are its citations.
fn bracketed_numbers(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('[') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(']') {
            out.push('(');
            out.push_str(&after[..digits]);
            out.push(')');
            rest = &after[digits + 1..];
        } else {
            out.push('[');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Abbreviations whose full stop ends no sentence.
const ABBREVIATIONS: &[&str] = &["e.g", "i.e", "etc", "vs", "cf", "approx", "incl", "no", "fig", "ca", "resp", "esp"];

/// The sentences of a paragraph: cut after `.`, `!` or `?` followed by a space
/// and a word that does not start in lower case, outside code spans and not
/// after an abbreviation or an initial.
pub fn sentences(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut code = false;
    for (i, &c) in chars.iter().enumerate() {
        cur.push(c);
        if c == '`' {
            code = !code;
        }
        // Chinese and Japanese end a sentence with full-width marks and no
        // space after them.
        if !code && highlight::UNSPACED_ENDS.contains(&c) {
            out.push(std::mem::take(&mut cur).trim().to_string());
            continue;
        }
        if code || !matches!(c, '.' | '!' | '?') || chars.get(i + 1).is_some_and(|n| !n.is_whitespace()) {
            continue;
        }
        let next = chars[i + 1..].iter().find(|n| !n.is_whitespace());
        if next.is_some_and(|n| n.is_lowercase()) {
            continue;
        }
        let word: String = cur.trim_end_matches(['.', '!', '?']).rsplit(' ').next().unwrap_or("").to_lowercase();
        let word = word.trim_start_matches(['(', '"', '\'']);
        if c == '.' && (ABBREVIATIONS.contains(&word) || word.chars().count() == 1) {
            continue;
        }
        out.push(std::mem::take(&mut cur).trim().to_string());
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out.into_iter().map(|s| highlight::cut_words(&s, MAX_WORDS)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn japanese_sentences_are_quotable() {
        let text = "## etcd\n\n一貫性、高可用性を持ったキーバリューストアで、Kubernetesの全てのクラスター情報の保存場所として利用されています。etcdのバックアップ計画を立ててください。\n";
        let p = split(text, "etcd");
        let t: Vec<&str> = p.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(
            t,
            vec![
                "一貫性、高可用性を持ったキーバリューストアで、Kubernetesの全てのクラスター情報の保存場所として利用されています。",
                "etcdのバックアップ計画を立ててください。"
            ]
        );
    }

    #[test]
    fn rows_are_read_with_their_header() {
        let p = split(
            "## Prices for 2026–2027\n\n| Permit | Academic year | Fall only |\n| --- | --- | --- |\n| Commuter | $420 | $230 |\n| Remote | $160 | |\n",
            "",
        );
        let rows: Vec<&str> = p.iter().filter(|p| p.kind == Kind::Row).map(|p| p.text.as_str()).collect();
        assert_eq!(
            rows,
            vec!["Permit: Commuter; Academic year: $420; Fall only: $230", "Permit: Remote; Academic year: $160"]
        );
        assert_eq!(p[0].lead, "Prices for 2026–2027");
        assert!(p[0].context.contains("Prices"));
    }

    #[test]
    fn a_pipe_in_code_stays_in_its_cell() {
        assert_eq!(cells("| `a | b` | c \\| d |"), vec!["`a | b`", "c | d"]);
    }

    #[test]
    fn items_keep_their_label_and_order() {
        let p = split(
            "## Setting up your device\n\nDownload the installer for your system.\n\n**Windows**\n\n\n1. Run the `.exe` installer.\n2. Choose **eduroam**.\n\n\n**macOS**\n\n\n1. Open the `.mobileconfig` file.\n2. Click **Install**,\n   then select eduroam.\n",
            "",
        );
        let mac: Vec<&Passage> = p.iter().filter(|p| p.context.contains("macOS")).collect();
        assert_eq!(mac.len(), 2);
        assert_eq!(mac[1].text, "Click Install, then select eduroam.");
        assert_eq!(mac[0].kind, Kind::Item { ordered: true });
        assert_eq!(mac[0].lead, "Setting up your device (macOS)");
        assert_eq!(mac[0].block, mac[1].block);
        assert!(p.iter().filter(|p| p.context.contains("Windows")).all(|p| !p.context.contains("macOS")));
    }

    #[test]
    fn a_long_block_is_read_with_its_lead_in_but_not_quoted() {
        let p = split(
            "- Clear the variables first. Otherwise you get this failure:\n\n    ```sh\n    $ openstack server list\n    Error: Application credentials cannot request a scope. (HTTP 401) (Request-ID: req-23dac9b0-5fd5-4f67-a23f-129b4ca55444)\n    ```\n",
            "",
        );
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].text, "Clear the variables first. Otherwise you get this failure:");
        assert!(p[0].context.contains("cannot request a scope"), "{:?}", p[0]);
    }

    #[test]
    fn sub_points_are_a_list_of_their_own() {
        let p = split("1. Create the file:\n    - `$HOST` is the address.\n    - `$USER` is the user.\n2. Restrict it with `chmod 600`.\n", "");
        assert_eq!(p.len(), 4);
        assert_eq!((p[0].block, p[3].block), (p[0].block, p[0].block));
        assert_eq!(p[1].block, p[2].block);
        assert_ne!(p[1].block, p[0].block);
        assert_eq!(p[1].lead, "Create the file:");
    }

    #[test]
    fn hard_wrapped_paragraphs_are_read_whole() {
        let p = split(
            "The HMMER package contains tools\nto create HMM-models, e.g. from alignments. It runs\non Puhti. Fast.",
            "Intro",
        );
        let s: Vec<&str> = p.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(
            s,
            vec!["The HMMER package contains tools to create HMM-models, e.g. from alignments.", "It runs on Puhti."]
        );
        assert_eq!(p[0].context, "Intro");
    }

    #[test]
    fn a_lead_in_carries_its_short_command_and_opens_its_list() {
        let p = split(
            "To use HMMER on Puhti, load the biokit module:\n\n```bash\nmodule load biokit\n```\n\nDo this in order, as follows:\n\n- first item here\n- second item\n",
            "",
        );
        assert_eq!(p[0].text, "To use HMMER on Puhti, load the biokit module: `module load biokit`");
        assert_eq!(p[1].opens, Some(p[2].block));
        assert_eq!(p[2].lead, "Do this in order, as follows:");
    }

    #[test]
    fn markup_goes_and_numbers_in_brackets_are_not_citations() {
        assert_eq!(
            clean("See [the guide](x.md) and ![img](a.png) <u>now</u> **bold** `a_b*c` [12] __x__ [NOTE]"),
            "See the guide and now bold `a_b*c` (12) x NOTE"
        );
        assert_eq!(clean("connect to `NB-Setup` , then"), "connect to `NB-Setup`, then");
        assert_eq!(clean("ssh <username>@host"), "ssh <username>@host");
    }

    #[test]
    fn odd_markdown_never_panics() {
        for text in [
            "|",
            "| a |\n|",
            "```",
            "```\ncode",
            "[",
            "[x](",
            "![",
            "<",
            "<u",
            "`",
            "1.",
            "1. ",
            "- ",
            "**",
            "****",
            "!!!",
            "a\\",
            "é. É. ü",
            "| `a | b |\n| --- |\n| c |",
            "x:\n```\n`a`\n```",
            "1. a:\n   - b\n     - c",
        ] {
            let _ = split(text, "h");
            let _ = clean(text);
            let _ = sentences(text);
        }
    }

    #[test]
    fn sentences_end_at_full_stops_not_abbreviations_or_code() {
        assert_eq!(
            sentences("Use e.g. Puhti. Run `a. B` now! Then J. Smith said so. it is fine."),
            vec!["Use e.g. Puhti.", "Run `a. B` now!", "Then J. Smith said so. it is fine."]
        );
        assert_eq!(
            sentences("etcd 是一个键值存储。它保存集群数据！要备份吗？`a。b` 不分。"),
            vec!["etcd 是一个键值存储。", "它保存集群数据！", "要备份吗？", "`a。b` 不分。"]
        );
    }
}
