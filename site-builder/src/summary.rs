//! A page's one-line summary for section listings: the first sentence of its first
//! paragraph of prose, with Markdown markup removed.

use crate::fence::Fence;

/// First sentence of the first prose paragraph (not a heading, list, table, code or
/// HTML), at most `max` characters (cut at a word), or `None` when there is none.
pub fn first_sentence(markdown: &str, max: usize) -> Option<String> {
    let mut fence: Option<Fence> = None;
    let mut para = String::new();
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
            if strip_markup(&para).split_whitespace().count() >= 3 {
                break;
            }
            para.clear();
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
            if strip_markup(&para).split_whitespace().count() >= 3 {
                break;
            }
            para.clear();
            continue;
        }
        para.push_str(t);
        para.push(' ');
    }
    let plain = strip_markup(&para);
    let plain = plain.trim();
    if plain.split_whitespace().count() < 3 {
        return None;
    }
    let end = plain.find(". ").map_or(plain.len(), |i| i + 1);
    Some(truncate_words(&plain[..end], max))
}

fn strip_markup(s: &str) -> String {
    search_core::index::highlight::plain_text(s).split_whitespace().collect::<Vec<_>>().join(" ")
}

fn truncate_words(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
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
    fn long_sentences_are_cut_at_a_word() {
        let md = format!("{} end.", "word ".repeat(100));
        let s = first_sentence(&md, 30).unwrap();
        assert!(s.chars().count() <= 31 && s.ends_with('…'), "{s}");
    }

    #[test]
    fn no_prose_no_summary() {
        assert_eq!(first_sentence("# T\n\n```\ncode here please\n```\n", 100), None);
    }
}
