//! The site's own words in the reader's language: every string the built-in
//! templates and `page.js` show around a page's text (the skip link, the search
//! box, "On this page", previous / next, "Was this page helpful?", the footer…),
//! one [`Strings`] per language, and what `<html>` says of a language (its
//! direction) and what a language switcher calls it (its own name).
//!
//! The one owner of those strings: the templates read them as `t.*` (a
//! [`crate::site::Frame`] field) and `page.js` gets its share ([`PageScript`])
//! as JSON on its script tag ([`page_script_json`]). The chat widget, which other
//! sites embed without our templates, keeps a table of its own in `widget.js`,
//! for the same languages ([`LANGUAGES`]; a test keeps the two lists equal).
//!
//! A string with a `{name}` in it is a pattern the template fills (`{site}`,
//! `{n}`, `{title}`, `{list}`…): word order differs between languages, so the
//! number or name goes where the language puts it.

mod tables;

use serde::Serialize;

/// The languages with a table, by primary subtag; any other language reads
/// the English one.
pub const LANGUAGES: [&str; 12] = ["en", "de", "fr", "es", "fi", "sv", "ja", "zh", "pt", "it", "nl", "ko"];

/// The strings of the built-in templates in one language.
#[derive(Debug, Serialize)]
pub struct Strings {
    /// The language of this table (`en`, `zh`): English is also every
    /// language without a table of its own.
    pub lang: &'static str,
    // base.html
    pub skip_link: &'static str,
    /// `{site}`: the site's name.
    pub search_label: &'static str,
    pub search_placeholder: &'static str,
    pub search_button: &'static str,
    /// The header's row of top sections (and, on a phone, its menu).
    pub sections: &'static str,
    pub more: &'static str,
    /// `{n}` articles, singular and plural.
    pub articles_one: &'static str,
    pub articles_other: &'static str,
    /// Before the build date in the footer.
    pub built: &'static str,
    pub footer_label: &'static str,
    pub browse: &'static str,
    /// The chat launcher's label (`data-title` of the widget's script).
    pub widget_title: &'static str,
    /// The site's name when neither the build's options nor the pages give
    /// one, in the site's main language.
    pub site_name: &'static str,
    // macros.html
    pub breadcrumb: &'static str,
    /// `{title}`: the sidebar's section.
    pub sidebar_label: &'static str,
    pub browse_all_pages: &'static str,
    /// `{title}`: a section.
    pub pages_in: &'static str,
    // page.html
    pub on_this_page: &'static str,
    pub last_updated: &'static str,
    pub version: &'static str,
    pub tags: &'static str,
    pub more_in_section: &'static str,
    pub in_section: &'static str,
    pub section_badge: &'static str,
    pub helpful: &'static str,
    pub yes: &'static str,
    pub no: &'static str,
    pub missing: &'static str,
    pub optional: &'static str,
    pub comment_hint: &'static str,
    pub send_feedback: &'static str,
    pub pager_label: &'static str,
    pub previous: &'static str,
    pub next: &'static str,
    pub view_original: &'static str,
    /// The language switcher's name.
    pub languages: &'static str,
    // section.html
    pub topics_one: &'static str,
    pub topics_other: &'static str,
    pub no_articles: &'static str,
    pub topics: &'static str,
    pub articles: &'static str,
    /// `{tag}`: the title of a tag's listing page.
    pub tag_title: &'static str,
    // home.html
    /// `{list}`: the first top sections, joined by the three below.
    pub hero_lead: &'static str,
    pub hero_lead_empty: &'static str,
    pub list_sep: &'static str,
    pub list_and: &'static str,
    pub list_more: &'static str,
    pub browse_by_topic: &'static str,
    /// The home page's heading when its sections are the site's languages.
    pub browse_by_language: &'static str,
    /// `{n}`: the section's pages; then, for screen readers, `{title}`.
    pub view_all: &'static str,
    pub view_all_in: &'static str,
    // 404.html
    pub not_found_title: &'static str,
    pub not_found_heading: &'static str,
    /// The lead, the link home in it (`{site}`) and what follows the link.
    pub not_found_lead: &'static str,
    pub not_found_home: &'static str,
    pub not_found_end: &'static str,
    pub browse_section: &'static str,
    pub go_home: &'static str,
    /// `{page}`: the linked title, on the redirect from a page's old address.
    pub moved: &'static str,
    // search.html
    pub search_title: &'static str,
    /// Without JavaScript: where the words searched for are.
    pub search_query_hint: &'static str,
    /// Without JavaScript (or the service): browse instead.
    pub search_notice: &'static str,
    pub all_sections_and_articles: &'static str,
    /// What `page.js` says.
    pub js: PageScript,
    /// What `search.js` says (the dropdown and the results page).
    pub search: SearchScript,
}

/// The strings `search.js` shows, under the names it reads them by. A
/// `{q}` is the query in the language's quotation marks (`quote`), `{n}` a
/// number, `{lang}` a language's own name, `{title}` a page's; `_one` /
/// `_other` pairs are the singular and the plural.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchScript {
    /// `{q}`: the query, quoted as the language quotes.
    pub quote: &'static str,
    pub unavailable: &'static str,
    pub browse_instead: &'static str,
    pub in_browser: &'static str,
    pub in_browser_semantic: &'static str,
    pub in_browser_loading: &'static str,
    pub busy: &'static str,
    /// `{n}`: seconds, from `seconds_one` / `seconds_other`.
    pub busy_for: &'static str,
    pub seconds_one: &'static str,
    pub seconds_other: &'static str,
    /// `{lang}`: the language asked for, which had no match.
    pub lang_fallback: &'static str,
    pub all_languages: &'static str,
    pub in_language: &'static str,
    pub search_all_languages: &'static str,
    pub only_language: &'static str,
    pub showing_results_for: &'static str,
    pub browse_label: &'static str,
    pub all_sections: &'static str,
    pub browse_all_sections: &'static str,
    pub ask_assistant: &'static str,
    pub or_ask: &'static str,
    pub suggestions_label: &'static str,
    pub no_results: &'static str,
    pub check_spelling: &'static str,
    pub overview: &'static str,
    pub see_all: &'static str,
    pub articles_one: &'static str,
    pub articles_other: &'static str,
    pub sections_one: &'static str,
    pub sections_other: &'static str,
    /// `{articles}`: `articles_one` / `_other` filled.
    pub found_for: &'static str,
    pub results_for: &'static str,
    /// `{example}`: `example`, quoted.
    pub type_hint: &'static str,
    pub example: &'static str,
    pub searching: &'static str,
    pub more_failed: &'static str,
    pub try_again: &'static str,
    pub more_sections_in: &'static str,
    pub show_more: &'static str,
    pub matching_one: &'static str,
    pub matching_other: &'static str,
    pub best_first: &'static str,
    pub show_sections_one: &'static str,
    pub show_sections_other: &'static str,
    pub show_fewer: &'static str,
}

/// The strings `page.js` shows (copy buttons, the theme button, the thanks
/// for a page rating), under the names it reads them by.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageScript {
    pub copy: &'static str,
    pub copied: &'static str,
    /// The button when the clipboard refused.
    pub copy_fallback: &'static str,
    pub copy_code: &'static str,
    /// `{lang}`: the code's language (`Bash`).
    pub copy_lang_code: &'static str,
    pub code_copied: &'static str,
    pub copy_failed: &'static str,
    /// `{mode}`: one of the three below.
    pub theme: &'static str,
    /// `{theme}`: the text above; `{next}`: the mode a click chooses.
    pub theme_switch: &'static str,
    pub theme_system: &'static str,
    pub theme_light: &'static str,
    pub theme_dark: &'static str,
    pub sending: &'static str,
    pub thanks: &'static str,
    /// `{n}`: seconds to wait.
    pub too_many: &'static str,
    /// `{status}`: the HTTP status.
    pub not_sent: &'static str,
    pub offline: &'static str,
}

/// The strings for a language tag: its primary subtag's table, English when
/// there is none. Chinese has the Simplified table only, so a Traditional
/// tag (`zh-tw`, `zh-hk`, `zh-hant`) reads English rather than another script.
pub fn strings(tag: &str) -> &'static Strings {
    let Some(key) = search_core::index::lang::strings_key(tag) else { return &tables::EN };
    tables::ALL.iter().copied().find(|s| s.lang == key).unwrap_or(&tables::EN)
}

/// `page.js`'s strings as JSON for its script tag, or `None` for English:
/// `page.js` carries the English ones itself, so an English page (the most
/// common, and every page of a template folder that predates this) sends none.
pub fn page_script_json(strings: &Strings) -> Option<String> {
    (strings.lang != "en").then(|| serde_json::to_string(&strings.js).unwrap_or_default())
}

/// `search.js`'s strings as JSON for its script tag, or `None` for English
/// (`search.js` carries the English ones itself).
pub fn search_script_json(strings: &Strings) -> Option<String> {
    (strings.lang != "en").then(|| serde_json::to_string(&strings.search).unwrap_or_default())
}

/// `rtl` for a language written right to left (Arabic, Hebrew, Persian, Urdu),
/// else `None`: what `<html dir>` says.
pub fn direction(tag: &str) -> Option<&'static str> {
    let primary = tag.split(['-', '_']).next().unwrap_or_default().to_ascii_lowercase();
    matches!(primary.as_str(), "ar" | "he" | "iw" | "fa" | "ur").then_some("rtl")
}

/// A language's name in that language, as a switcher lists it ("Deutsch",
/// "日本語", "中文 (简体)"); a tag it does not know stays the tag.
pub fn native_name(tag: &str) -> String {
    let tag = tag.to_ascii_lowercase().replace('_', "-");
    let primary = tag.split('-').next().unwrap_or_default();
    tables::NAMES_BY_TAG
        .iter()
        .find(|(t, _)| *t == tag)
        .or_else(|| tables::NAMES.iter().find(|(t, _)| *t == primary))
        .map_or(tag.clone(), |(_, name)| (*name).to_string())
}

/// The site's main language: the tag of the most pages (the first in
/// alphabetical order on a tie, as [`crate::language`] chooses), English
/// when there are none.
pub fn main_language<'a>(tags: impl IntoIterator<Item = &'a str>) -> String {
    let mut count: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for t in tags {
        *count.entry(t).or_default() += 1;
    }
    crate::language::commonest(&count).map_or_else(|| "en".into(), |(t, _)| t.into())
}

/// The language of a listing (a section, a tag's page): its pages' language
/// when they share one, else the site's.
pub fn common_language<'a>(mut tags: impl Iterator<Item = &'a str>, site: &'a str) -> &'a str {
    match tags.next() {
        Some(first) if tags.all(|t| t == first) => first,
        _ => site,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_reads_its_languages_table_or_english() {
        assert_eq!(strings("de").on_this_page, "Auf dieser Seite");
        assert_eq!(strings("de-AT").lang, "de");
        assert_eq!(strings("pt_BR").lang, "pt");
        assert_eq!(strings("zh-cn").lang, "zh");
        assert_eq!(strings("zh-Hans").lang, "zh");
        assert_eq!(strings("ja").search_button, "検索");
        assert_eq!(strings("ko-KR").lang, "ko");
        // No table: English, also for Chinese in the other script.
        for tag in ["ru", "zh-tw", "zh-Hant-HK", "", "x"] {
            assert_eq!(strings(tag).lang, "en", "{tag}");
        }
        assert_eq!(strings("en").skip_link, "Skip to content");
    }

    #[test]
    fn every_language_is_translated_not_copied() {
        let en = serde_json::to_value(strings("en")).unwrap();
        let en = en.as_object().unwrap();
        for lang in LANGUAGES.iter().filter(|l| **l != "en") {
            let s = strings(lang);
            assert_eq!(s.lang, *lang);
            let other = serde_json::to_value(s).unwrap();
            // Words English shares with a language ("Version", "Tags", "(optional)")
            // may stay; most must not.
            let same: Vec<&String> = en
                .keys()
                .filter(|k| !["js", "search", "list_sep"].contains(&k.as_str()) && en[*k] == other[k.as_str()])
                .collect();
            assert!(same.len() <= 6, "{lang}: {same:?} are still English");
            let js_same = en["js"].as_object().unwrap().iter().filter(|(k, v)| other["js"][k.as_str()] == **v).count();
            assert!(js_same <= 1, "{lang}: page.js strings still English");
        }
    }

    #[test]
    fn patterns_keep_their_placeholders_in_every_language() {
        let holes = |s: &str| -> Vec<String> {
            // In any order: word order differs between languages.
            let mut h: Vec<String> =
                s.split('{').skip(1).filter_map(|p| p.split_once('}')).map(|(name, _)| name.to_string()).collect();
            h.sort();
            h
        };
        let en = serde_json::to_value(strings("en")).unwrap();
        for lang in LANGUAGES {
            let v = serde_json::to_value(strings(lang)).unwrap();
            let fields = v
                .as_object()
                .unwrap()
                .iter()
                .chain(v["js"].as_object().unwrap())
                .chain(v["search"].as_object().unwrap());
            for (k, value) in fields.filter(|(_, v)| v.is_string()) {
                let english = en
                    .get(k)
                    .or_else(|| en["js"].get(k))
                    .or_else(|| en["search"].get(k))
                    .and_then(|e| e.as_str())
                    .unwrap();
                assert_eq!(holes(value.as_str().unwrap()), holes(english), "{lang}.{k}");
            }
        }
    }

    #[test]
    fn only_other_languages_send_page_js_strings() {
        assert_eq!(page_script_json(strings("en")), None);
        assert_eq!(page_script_json(strings("ru")), None, "English read for Russian");
        let de: serde_json::Value = serde_json::from_str(&page_script_json(strings("de")).unwrap()).unwrap();
        assert_eq!(de["copy"], "Kopieren");
        assert_eq!(de["copyLangCode"], "{lang}-Code kopieren");
    }

    /// page.js carries English itself: what it falls back to must be the table's.
    #[test]
    fn page_js_carries_the_english_table() {
        let script = include_str!("../../templates/static/page.js");
        let en = serde_json::to_value(&strings("en").js).unwrap();
        for (key, text) in en.as_object().unwrap() {
            let line = format!("{key}: {text},");
            let last = format!("{key}: {text}\n");
            assert!(script.contains(&line) || script.contains(&last), "page.js lacks {line}");
        }
    }

    /// search.js carries English itself: its table must be the English one,
    /// and every language's must fill the same placeholders.
    #[test]
    fn search_js_carries_the_english_table() {
        let script = include_str!("../../templates/static/search.js");
        let en = serde_json::to_value(&strings("en").search).unwrap();
        for (key, text) in en.as_object().unwrap() {
            // As JavaScript writes it: non-ASCII as \u escapes.
            let js: String = text
                .as_str()
                .unwrap()
                .chars()
                .map(|c| if c.is_ascii() { c.to_string() } else { format!("\\u{:04x}", c as u32) })
                .collect();
            assert!(script.contains(&format!("{key}: '{js}',")), "search.js lacks {key}: '{js}'");
        }
        assert_eq!(search_script_json(strings("en")), None);
        let de: serde_json::Value = serde_json::from_str(&search_script_json(strings("de")).unwrap()).unwrap();
        assert_eq!(de.as_object().unwrap().len(), en.as_object().unwrap().len());
        for lang in LANGUAGES.iter().filter(|l| **l != "en") {
            let other = serde_json::to_value(&strings(lang).search).unwrap();
            let same: Vec<&String> =
                en.as_object().unwrap().iter().filter(|(k, v)| other[k.as_str()] == **v).map(|(k, _)| k).collect();
            assert!(same.len() <= 2, "{lang}: {same:?} still English");
        }
    }

    /// widget.js has a label table of its own (sites embed it without our
    /// templates): the same languages as this one.
    #[test]
    fn the_widget_speaks_the_same_languages() {
        let script = include_str!("../../templates/static/widget.js");
        let table = script.split("const LABELS = {").nth(1).and_then(|t| t.split("\n  };").next()).unwrap();
        let langs: Vec<&str> = table
            .lines()
            .filter_map(|l| l.strip_prefix("    ")?.split_once(": {").map(|(k, _)| k))
            .filter(|k| k.len() == 2)
            .collect();
        assert_eq!(langs, LANGUAGES);
    }

    #[test]
    fn directions_and_names() {
        assert_eq!(direction("ar"), Some("rtl"));
        assert_eq!(direction("he-IL"), Some("rtl"));
        assert_eq!(direction("fa"), Some("rtl"));
        assert_eq!(direction("ur"), Some("rtl"));
        assert_eq!(direction("de"), None);
        assert_eq!(direction("arn"), None, "Mapuche is not Arabic");
        assert_eq!(native_name("de"), "Deutsch");
        assert_eq!(native_name("de-AT"), "Deutsch");
        assert_eq!(native_name("ja"), "日本語");
        assert_eq!(native_name("zh-cn"), "中文 (简体)");
        assert_eq!(native_name("zh-TW"), "中文 (繁體)");
        assert_eq!(native_name("pt-br"), "Português (Brasil)");
        assert_eq!(native_name("ko"), "한국어");
        assert_eq!(native_name("qq"), "qq");
    }

    #[test]
    fn the_main_language_has_the_most_pages() {
        assert_eq!(main_language(["de", "en", "de"]), "de");
        assert_eq!(main_language(["en", "zh-cn"]), "en", "a tie: the first tag");
        assert_eq!(main_language([]), "en");
        assert_eq!(common_language(["de", "de"].into_iter(), "en"), "de");
        assert_eq!(common_language(["de", "ja"].into_iter(), "en"), "en");
        assert_eq!(common_language([].into_iter(), "fr"), "fr");
    }
}
