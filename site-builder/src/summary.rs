//! A page's one-line summary for section listings: the first sentence of its first
//! paragraph of prose, with Markdown markup removed. A sentence about the page
//! rather than its subject says little on a card ([`opening`]): "This section
//! provides instructions for building containers on Roihu" loses its first words
//! ("Instructions for building containers on Roihu."); one with nothing left to
//! say once they go ("This page contains information about IT services at
//! Northbridge.", "Here you will find…", "Welcome to…") is passed over for the
//! next sentence, or the next paragraph.

use search_core::index::highlight::{has_unspaced, word_count, UNSPACED_ENDS};

use crate::fence::Fence;

/// Where the first sentence of `text` ends: after `. ` or a full-width `。`,
/// `！` or `？` (Chinese and Japanese put no space after them).
fn sentence_end(text: &str) -> usize {
    let latin = text.find(". ").map(|i| i + 1);
    // Each of the marks is three bytes in UTF-8.
    let unspaced = text.find(UNSPACED_ENDS).map(|i| i + '。'.len_utf8());
    match (latin, unspaced) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b).unwrap_or(text.len()),
    }
}

/// First sentence that is not filler ([`opening`]) of the first prose paragraphs
/// (not a heading, list, table, code or HTML), at most `max` characters (cut at
/// a word), or `None` when there is none.
pub fn first_sentence(markdown: &str, max: usize) -> Option<String> {
    paragraphs(markdown).iter().find_map(|p| sentence_of(p)).map(|s| truncate_words(&s, max))
}

/// The first sentence of a paragraph of plain text that is not filler, with
/// words about the page itself taken off.
fn sentence_of(paragraph: &str) -> Option<String> {
    let mut rest = paragraph.trim();
    while !rest.is_empty() {
        let end = sentence_end(rest);
        let sentence = rest[..end].trim();
        if word_count(sentence) >= 3 {
            match opening(sentence) {
                Opening::Subject => return Some(sentence.to_string()),
                Opening::AboutThePage(subject) => return Some(subject),
                Opening::Filler => {}
            }
        }
        rest = &rest[end..];
    }
    None
}

/// The prose paragraphs of a page, as plain text, each of at least three words.
fn paragraphs(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence: Option<Fence> = None;
    let mut para = String::new();
    let mut end_paragraph = |para: &mut String| {
        let plain = strip_markup(para);
        if word_count(&plain) >= 3 {
            out.push(plain);
        }
        para.clear();
    };
    for line in markdown.lines() {
        let t = line.trim();
        if let Some(f) = fence {
            if f.closes(line) {
                fence = None;
            }
            continue;
        }
        if let Some(f) = Fence::open(line) {
            fence = Some(f);
            end_paragraph(&mut para);
            continue;
        }
        let structural = t.starts_with('#')
            || t.starts_with('|')
            || t.starts_with('<')
            || t.starts_with('>')
            || t.starts_with("!!!")
            || t.starts_with("???")
            || t.starts_with("- ")
            || t.starts_with("* ")
            || t.starts_with("**") && t.ends_with("**")
            || t.chars().next().is_some_and(|c| c.is_ascii_digit()) && t.contains(". ")
            || line.starts_with("    ");
        if t.is_empty() || structural {
            end_paragraph(&mut para);
            continue;
        }
        para.push_str(t);
        para.push(' ');
    }
    end_paragraph(&mut para);
    out
}

/// What a page is said to be, in a sentence about the page itself.
const PAGE_NOUNS: [&str; 14] = [
    "page",
    "article",
    "section",
    "document",
    "space",
    "wiki",
    "site",
    "category",
    "guide",
    "area",
    "base",
    "topic",
    "portal",
    "collection",
];
/// How such a sentence says the page holds something ("This page contains…").
const HOLDS: [&str; 11] =
    ["contains", "provides", "gives", "has", "includes", "lists", "collects", "offers", "holds", "presents", "gathers"];
/// Verbs that make a sentence about the page only before a word of [`CONTAINERS`]
/// ("This page is an overview of…"; "This page is out of date" is news).
const IS: [&str; 3] = ["is", "will", "serves"];
/// Words that only say the page holds something, before what it holds
/// ("information about", "an overview of"): taken off with their preposition.
const CONTAINERS: [&str; 9] =
    ["information", "info", "details", "overview", "introduction", "list", "collection", "summary", "index"];
/// Words that may come before them ("some general information on").
const QUALIFIERS: [&str; 12] =
    ["a", "an", "the", "some", "general", "basic", "useful", "more", "all", "brief", "short", "you"];
const PREPOSITIONS: [&str; 6] = ["about", "on", "of", "regarding", "concerning", "to"];
/// What is left of a sentence about the page must be this long to say something.
const MIN_SUBJECT_WORDS: usize = 5;

/// What a sentence's opening makes of it.
#[derive(Debug, PartialEq)]
pub enum Opening {
    /// It speaks of the page's subject: kept as it is.
    Subject,
    /// It speaks of the page, then of a subject: the subject, as a sentence
    /// ("This section provides instructions for…" → "Instructions for…").
    AboutThePage(String),
    /// It speaks of the page alone ("This page contains information about IT
    /// services.", "Here you will find…", "In this article you'll learn…",
    /// "Welcome to…"): passed over.
    Filler,
}

/// Reads the opening of a sentence (see [`Opening`]).
pub fn opening(sentence: &str) -> Opening {
    let tokens: Vec<&str> = sentence.split_whitespace().collect();
    let w: Vec<String> =
        tokens.iter().map(|t| t.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'').to_lowercase()).collect();
    let at = |i: usize, set: &[&str]| w.get(i).is_some_and(|x| set.contains(&x.as_str()));
    // "Here you will find…", "On this page you can find…", "In this article you'll learn…".
    let you_find = w.iter().take(6).position(|x| x == "you" || x == "you'll").is_some_and(|you| {
        let intro = &w[..you];
        let leads = intro == ["here"] || intro == ["below"] || intro.len() >= 3 && intro[1] == "this";
        leads && w[you + 1..].iter().take(2).any(|v| matches!(v.as_str(), "find" | "learn" | "read" | "see"))
    });
    if you_find || w.starts_with(&["welcome".to_string(), "to".to_string()]) {
        return Opening::Filler;
    }
    // "This (help) page contains…", "This section is an overview of…".
    let about = matches!(w.first().map(String::as_str), Some("this" | "the"))
        .then(|| (1..=3).find(|&i| at(i, &PAGE_NOUNS)))
        .flatten()
        .filter(|&noun| at(noun + 1, &HOLDS) || at(noun + 1, &IS) && (noun + 2..noun + 6).any(|i| at(i, &CONTAINERS)));
    let Some(noun) = about else { return Opening::Subject };
    // What it holds, without "(some general) information about" and the like.
    let mut start = noun + 2;
    while at(start, &IS) || at(start, &["be"]) {
        start += 1;
    }
    let qualified = (start..tokens.len()).find(|&i| !at(i, &QUALIFIERS)).unwrap_or(tokens.len());
    if at(qualified, &CONTAINERS) && at(qualified + 1, &PREPOSITIONS) {
        start = qualified + 2;
    } else if at(start, &["you"]) {
        start += 1;
    }
    let subject = tokens.get(start..).unwrap_or_default().join(" ");
    if subject.split_whitespace().count() < MIN_SUBJECT_WORDS {
        return Opening::Filler;
    }
    let mut chars = subject.chars();
    Opening::AboutThePage(chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default())
}

fn strip_markup(s: &str) -> String {
    search_core::index::highlight::plain_text(s).split_whitespace().collect::<Vec<_>>().join(" ")
}

fn truncate_words(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    if has_unspaced(s) {
        // No space to cut at: at the character, about as much to read.
        let cut: String = s.chars().take(max / 2).collect();
        return format!("{}…", cut.trim_end_matches(['、', '，', ',', ';', ':']));
    }
    let cut: String = s.chars().take(max).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(a, _)| a);
    format!("{}…", cut.trim_end_matches([',', ';', ':']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_prose_sentence() {
        let md = "# Wi-Fi\n\n!!! note\n\n- list\n\nConnect to **eduroam** with your [NetID](id.md). Then more.\n";
        assert_eq!(first_sentence(md, 180).as_deref(), Some("Connect to eduroam with your NetID."));
    }

    #[test]
    fn a_japanese_paragraph_gives_its_first_sentence() {
        let md = "# etcd\n\n一貫性、高可用性を持ったキーバリューストアです。バックアップ計画を立ててください。\n";
        assert_eq!(first_sentence(md, 180).as_deref(), Some("一貫性、高可用性を持ったキーバリューストアです。"));
        let long = format!("{}。", "キーバリューストア".repeat(30));
        let s = first_sentence(&long, 40).unwrap();
        assert_eq!(s.chars().count(), 21, "{s}");
        assert!(s.ends_with('…'), "{s}");
    }

    #[test]
    fn long_sentences_are_cut_at_a_word() {
        let md = format!("{} end.", "word ".repeat(100));
        let s = first_sentence(&md, 30).unwrap();
        assert!(s.chars().count() <= 31 && s.ends_with('…'), "{s}");
    }

    #[test]
    fn sentences_about_the_page_are_passed_over_or_shortened() {
        let md = "# IT\n\nThis page contains information about IT services at Northbridge.\n\n## Sections\n\n- [VPN](vpn.md)\n";
        assert_eq!(first_sentence(md, 180), None, "a card says nothing rather than filler");
        let md = "Welcome to the library pages.\n\nBorrow up to 30 books at a time.\n";
        assert_eq!(first_sentence(md, 180).as_deref(), Some("Borrow up to 30 books at a time."));
        let md = "This section provides instructions for building containers with Apptainer on Roihu. More.\n";
        assert_eq!(
            first_sentence(md, 180).as_deref(),
            Some("Instructions for building containers with Apptainer on Roihu.")
        );
        for (sentence, subject) in [
            (
                "This page contains information about CSC's next supercomputer Roihu, now available.",
                "CSC's next supercomputer Roihu, now available.",
            ),
            (
                "This guide gives you some examples and hints on running language models.",
                "Some examples and hints on running language models.",
            ),
            (
                "This page lists current IT problems that the Service Desk knows of.",
                "Current IT problems that the Service Desk knows of.",
            ),
        ] {
            assert_eq!(opening(sentence), Opening::AboutThePage(subject.into()), "{sentence}");
        }
        for filler in [
            "This page contains information about campus services at Northbridge.",
            "This section is an overview of the services.",
            "This help page gives you some general information on parking.",
            "Here you will find answers to common questions.",
            "On this page you can find the instructions.",
            "In this article, you'll learn how to reset a password.",
            "Welcome to the Satama container registry.",
        ] {
            assert_eq!(opening(filler), Opening::Filler, "{filler}");
        }
        for subject in [
            "This page describes how to renew a permit online.",
            "This is the best way to connect from home.",
            "This page is out of date since the move to Roihu.",
            "The shuttle has a stop at the library.",
            "You will find the printer on floor 2.",
            "Connect to eduroam with your NetID.",
        ] {
            assert_eq!(opening(subject), Opening::Subject, "{subject}");
        }
    }

    #[test]
    fn no_prose_no_summary() {
        assert_eq!(first_sentence("# T\n\n```\ncode here please\n```\n", 100), None);
    }
}
