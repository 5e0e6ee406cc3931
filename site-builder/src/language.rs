//! The language stage: which language each page is written in, from what its
//! author or its tool says, else from its text.
//!
//! In order:
//! 1. the frontmatter: `lang`, `language` or `locale` (`de`, `de-AT`, `pt_BR`);
//! 2. the folder convention of the tool that wrote it: a top-level folder named
//!    for a language (`de/…`, as Hugo's `content/de/…` is copied), Hugo's
//!    `content/<lang>/…` and Docusaurus's `i18n/<lang>/…`. A top-level folder
//!    counts only when at least two of them name languages: a help desk's
//!    `it/` folder is IT, not Italian;
//! 3. detection from the page's text (`whatlang`, trigram profiles): taken when
//!    it is reliable, and for a language other than the knowledge base's main
//!    one only from enough prose (a page of commands or a table of names
//!    detects as anything) in a language the analyzer reads (placeholder
//!    "lorem ipsum" detects as Latin); a page in two languages is the language
//!    of its first 3,000 characters of prose;
//! 4. else the language of the page's section: of the pages said or clearly
//!    detected in its nearest folder that has at least two of them, when two
//!    in three agree (a short page under Docusaurus's `docs/` beside
//!    `i18n/de/` is English however many German pages the site has);
//! 5. else the knowledge base's main language (the most pages' among those
//!    said or detected), English when nothing tells.
//!
//! The result is a BCP 47 tag as written (`zh-cn`, `pt-br`: what `<html lang>`
//! shows and translations are linked by) and the analyzer's reading of it
//! ([`Lang`]).

use std::collections::{BTreeMap, BTreeSet};

use search_core::index::analyzer::is_paired;
use search_core::index::lang::Lang;
use serde::Serialize;

use crate::parse::Page;

/// How a page's language was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum How {
    Frontmatter,
    /// Hugo's `about.de.md` beside `about.md`.
    File,
    Folder,
    Detected,
    /// Too little prose to tell: the language of the pages around it
    /// ([`section_languages`]).
    Section,
    /// Nothing told: the knowledge base's main language.
    Default,
}

/// One page's language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PageLanguage {
    /// The tag, lowercased (`de`, `zh-cn`).
    pub tag: String,
    #[serde(skip)]
    pub lang: Lang,
    pub how: How,
}

/// Prose (letters) a page needs before detection may call it something other
/// than the knowledge base's main language.
const MIN_LETTERS_OTHER: usize = 400;
/// Detection's confidence needed for the same.
const MIN_CONFIDENCE_OTHER: f64 = 0.5;

/// The language of every page of a knowledge base, in the pages' order.
pub fn resolve(pages: &[Page]) -> Vec<PageLanguage> {
    let folders = language_folders(pages);
    let suffixed = file_languages(pages.iter().map(|p| p.source.as_str()));
    let said: Vec<Option<PageLanguage>> =
        pages.iter().zip(&suffixed).map(|(p, file)| said(p, file.as_deref(), &folders)).collect();
    let detected: Vec<Option<(String, f64, usize)>> =
        pages.iter().zip(&said).map(|(p, s)| if s.is_some() { None } else { detect(&p.body) }).collect();
    let main = main_language(&said, &detected);
    let clear: Vec<Option<&str>> = said
        .iter()
        .zip(&detected)
        .map(|(s, d)| match (s, d) {
            (Some(s), _) => Some(s.tag.as_str()),
            (None, Some(d)) if is_clear(d) => Some(d.0.as_str()),
            _ => None,
        })
        .collect();
    let sections = section_languages(pages, &clear);
    pages
        .iter()
        .zip(said.iter().zip(&detected))
        .map(|(p, (s, d))| {
            if let Some(s) = s {
                return s.clone();
            }
            match (d, sections.of(&p.source)) {
                (Some(d), _) if is_clear(d) => page_language(&d.0, How::Detected),
                (Some(d), Some(s)) if d.0 == s => page_language(s, How::Detected),
                (_, Some(s)) => page_language(s, How::Section),
                (Some(d), None) if d.0 == main => page_language(&d.0, How::Detected),
                _ => page_language(&main, How::Default),
            }
        })
        .collect()
}

/// Whether a detection is clear enough to call a page another language than
/// the knowledge base's main one: enough prose, confident, a language the
/// analyzer reads.
fn is_clear((tag, confidence, letters): &(String, f64, usize)) -> bool {
    *confidence >= MIN_CONFIDENCE_OTHER
        && *letters >= MIN_LETTERS_OTHER
        && Lang::from_tag(tag).is_some_and(|l| l != Lang::OTHER)
}

/// The pages whose language is clear (said, or clearly detected), counted by
/// folder: a page with too little prose to tell takes its section's.
struct SectionLanguages<'a> {
    /// Folder (`docs/guides`, no trailing slash) → language → pages under it.
    by_folder: BTreeMap<&'a str, BTreeMap<&'a str, usize>>,
}

/// The fewest clear pages a folder needs to speak for its others.
const MIN_SECTION_PAGES: usize = 2;

fn section_languages<'a>(pages: &'a [Page], clear: &[Option<&'a str>]) -> SectionLanguages<'a> {
    let mut by_folder: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for (p, tag) in pages.iter().zip(clear) {
        let Some(tag) = tag else { continue };
        for folder in folders_of(&p.source) {
            *by_folder.entry(folder).or_default().entry(tag).or_default() += 1;
        }
    }
    SectionLanguages { by_folder }
}

/// A source's enclosing folders, nearest first, the root left out (the root's
/// vote is the main language's).
fn folders_of(source: &str) -> impl Iterator<Item = &str> {
    source.char_indices().rev().filter(|&(_, c)| c == '/').map(move |(i, _)| &source[..i])
}

impl SectionLanguages<'_> {
    /// The language of the nearest folder of `source` with at least
    /// [`MIN_SECTION_PAGES`] clear pages, when two in three of them agree.
    fn of(&self, source: &str) -> Option<&str> {
        let counts = folders_of(source)
            .filter_map(|f| self.by_folder.get(f))
            .find(|c| c.values().sum::<usize>() >= MIN_SECTION_PAGES)?;
        let total: usize = counts.values().sum();
        let (tag, n) = commonest(counts)?;
        (n * 3 >= total * 2).then_some(tag)
    }
}

/// The language of one chunk of a page: the page's, unless the page's was
/// detected (not said) and the chunk's own prose is clearly another language
/// the analyzer reads: a page in two languages (a cookie notice in English,
/// then in Finnish) is indexed each part in its own.
pub fn of_chunk(page: &PageLanguage, text: &str) -> String {
    if matches!(page.how, How::Frontmatter | How::File | How::Folder) {
        return page.tag.clone();
    }
    match detect(text) {
        Some((tag, confidence, letters))
            if tag != page.tag
                && confidence >= MIN_CONFIDENCE_OTHER
                && letters >= MIN_LETTERS_OTHER / 2
                && Lang::from_tag(&tag).is_some_and(|l| l != Lang::OTHER) =>
        {
            tag
        }
        _ => page.tag.clone(),
    }
}

/// What the frontmatter, the file's name (`file`, [`file_languages`]) or the
/// folder says.
fn said(page: &Page, file: Option<&str>, folders: &BTreeSet<String>) -> Option<PageLanguage> {
    for key in ["lang", "language", "locale"] {
        if let Some(tag) = page.meta.get(key).and_then(|v| v.as_str()).and_then(normal_tag) {
            return Some(page_language(&tag, How::Frontmatter));
        }
    }
    if let Some(tag) = file {
        return Some(page_language(tag, How::File));
    }
    folder_tag(&page.source, folders).map(|t| page_language(&t, How::Folder))
}

/// The language each file's name gives, Hugo's translation by file name:
/// `about.de.md` is the German `about.md`. Only where the name without the
/// language is another page's too (`about.md`, `about.fr.md`): a lone
/// `setup.it.md` is not taken for Italian.
pub fn file_languages<'a>(sources: impl Iterator<Item = &'a str> + Clone) -> Vec<Option<String>> {
    let mut bases: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for s in sources.clone() {
        *bases.entry(file_language(s).map_or_else(|| s.to_string(), |(base, _)| base)).or_default() += 1;
    }
    sources.map(|s| file_language(s).filter(|(base, _)| bases[base] >= 2).map(|(_, tag)| tag)).collect()
}

/// `dir/about.de.md` → (`dir/about.md`, `de`) when the part before the
/// extension names a language.
pub fn file_language(source: &str) -> Option<(String, String)> {
    let stem = crate::parse::strip_page_extension(source);
    let ext = &source[stem.len()..];
    let (base, suffix) = stem.rsplit_once('.')?;
    if base.is_empty() || base.ends_with('/') {
        return None;
    }
    let tag = is_language_folder(suffix)?;
    Some((format!("{base}{ext}"), tag))
}

/// The longest tag read (what RFC 5646 asks every implementation to hold).
/// A page's tag names files (a site's results page in it, `search.TAG.html`):
/// a longer one in a page's frontmatter would fail the build on the file
/// system's limit, so it is no tag.
const MAX_TAG: usize = 35;

fn page_language(tag: &str, how: How) -> PageLanguage {
    PageLanguage { tag: tag.to_string(), lang: Lang::from_tag(tag).unwrap_or(Lang::OTHER), how }
}

/// `tag` lowercased with `-`, when it is shaped like a language tag
/// (`de`, `pt-BR`, `zh_Hans`, `gsw`) of at most [`MAX_TAG`] characters.
fn normal_tag(tag: &str) -> Option<String> {
    let t = tag.trim().replace('_', "-").to_ascii_lowercase();
    if t.len() > MAX_TAG {
        return None;
    }
    let mut parts = t.split('-');
    let primary = parts.next()?;
    let ok = (2..=3).contains(&primary.len())
        && primary.bytes().all(|b| b.is_ascii_lowercase())
        && parts.all(|p| (2..=8).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphanumeric()));
    ok.then_some(t)
}

/// Whether a folder name names a language the analyzer knows by name.
fn is_language_folder(name: &str) -> Option<String> {
    let tag = normal_tag(name)?;
    // Three-letter folders (`api`, `faq`, `ops`) are too often words.
    (tag.split('-').next()?.len() == 2 && Lang::from_tag(&tag).is_some_and(|l| l != Lang::OTHER)).then_some(tag)
}

/// The top-level folders that name languages, when at least two do.
fn language_folders(pages: &[Page]) -> BTreeSet<String> {
    language_folders_of(pages.iter().map(|p| p.source.as_str()))
}

/// [`language_folders`] of pages' source paths: the tags (`de`, `pt-br`).
pub fn language_folders_of<'a>(sources: impl Iterator<Item = &'a str>) -> BTreeSet<String> {
    let tops: BTreeSet<String> =
        sources.filter_map(|s| s.split_once('/').and_then(|(top, _)| is_language_folder(top))).collect();
    if tops.len() >= 2 {
        tops
    } else {
        BTreeSet::new()
    }
}

/// The top-level folders that each hold one language, whatever their names:
/// `english/` beside `suomeksi/`, as a help desk names them (folder → tag).
/// A folder counts when nine in ten of its pages (at least two) share a
/// language, and only when at least two folders count and no two share a
/// language: topics of one language (a German `Studium` beside `Forschung`)
/// are no language folders. Pages at the root are in none. What
/// [`language_folders_of`] reads from the names, this reads from the pages'
/// languages once they are resolved.
pub fn content_folders<'a>(pages: impl Iterator<Item = (&'a str, &'a str)>) -> BTreeMap<String, String> {
    let mut by_top: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for (source, tag) in pages {
        if let Some((top, _)) = source.split_once('/') {
            *by_top.entry(top).or_default().entry(tag).or_default() += 1;
        }
    }
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (top, counts) in by_top {
        let total: usize = counts.values().sum();
        let Some((tag, n)) = commonest(&counts) else { continue };
        if total >= 2 && n * 10 >= total * 9 {
            out.insert(top.to_string(), tag.to_string());
        }
    }
    let languages: BTreeSet<&String> = out.values().collect();
    if out.len() < 2 || languages.len() < out.len() {
        return BTreeMap::new();
    }
    out
}

/// The language a top-level folder stands for among `folders` (those of
/// [`language_folders_of`]): `de/` → `de`.
pub fn folder_language(name: &str, folders: &BTreeSet<String>) -> Option<String> {
    is_language_folder(name).filter(|t| folders.contains(t))
}

/// The language a page's path names: a language folder at the top, or the one
/// after `content/` (Hugo) or `i18n/` (Docusaurus).
pub fn folder_tag(source: &str, folders: &BTreeSet<String>) -> Option<String> {
    let segments: Vec<&str> = source.split('/').collect();
    if let [top, _, ..] = segments.as_slice() {
        if let Some(t) = is_language_folder(top).filter(|t| folders.contains(t)) {
            return Some(t);
        }
    }
    segments.windows(3).find(|w| matches!(w[0], "content" | "i18n")).and_then(|w| is_language_folder(w[1]))
}

/// The detected language of a page's body: (tag, confidence, letters of prose),
/// when detection is reliable.
fn detect(body: &str) -> Option<(String, f64, usize)> {
    let prose = prose_of(body);
    let letters = prose.chars().filter(|c| c.is_alphabetic()).count();
    let paired = prose.chars().filter(|&c| is_paired(c)).count();
    // whatlang reads the script with the most characters, and counts Han,
    // hiragana and katakana apart: a Japanese glossary entry naming
    // Deployment, Namespace and Persistent Volume has more Latin letters than
    // kanji or kana, and was read as Catalan. A character of those scripts
    // says what two or three letters do; when they are a third of the
    // letters, the page is written in them, and they alone are read.
    let info = if paired * 3 >= letters && paired > 0 {
        let unspaced: String =
            prose.chars().map(|c| if c.is_alphabetic() && !is_paired(c) { ' ' } else { c }).collect();
        whatlang::detect(&unspaced)?
    } else {
        whatlang::detect(&prose)?
    };
    info.is_reliable().then(|| (iso639_1(info.lang().code()), info.confidence(), letters))
}

/// The body's prose, for detection: no code blocks, inline code, links' targets,
/// HTML tags or comments, or template tags, about the first 3,000 characters.
fn prose_of(body: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    // Translators keep the original in HTML comments (Kubernetes' Chinese pages
    // hold their English source so): a comment is not the page's prose.
    let body = without_templates(&without_comments(body));
    for line in body.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced || line.starts_with("    ") || t.starts_with('<') || t.starts_with("{{") {
            continue;
        }
        let mut inline = false;
        for part in t.split('`') {
            if !inline {
                out.push_str(part);
            }
            inline = !inline;
        }
        out.push('\n');
        if out.len() > 3_000 {
            break;
        }
    }
    search_core::index::highlight::plain_text(&out)
}

/// `text` without its HTML comments (an unclosed one runs to the end).
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("<!--") {
        out.push_str(&rest[..open]);
        match rest[open + 4..].find("-->") {
            Some(close) => rest = &rest[open + 4 + close + 3..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// `text` without its template tags, each read as a space: Hugo's shortcodes
/// (`{{< glossary_tooltip term_id="cluster" text="クラスター" >}}`), Jinja's and
/// Liquid's `{% … %}`. Their names and parameters are Latin letters, however
/// the page is written: a Japanese glossary entry with five of them was
/// detected as Catalan. An opening never closed is left as it is.
fn without_templates(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    // One scan for either opening, from where the last tag ended: looking for
    // each opening apart rescanned the rest of a page for the one it does not
    // have after every tag, quadratic in a page of many tags.
    let opening =
        |s: &str| s.match_indices('{').map(|(i, _)| i).find(|&i| matches!(s.as_bytes().get(i + 1), Some(b'{' | b'%')));
    while let Some(at) = opening(rest) {
        let close = if rest.as_bytes()[at + 1] == b'{' { "}}" } else { "%}" };
        let Some(end) = rest[at + 2..].find(close) else { break };
        out.push_str(&rest[..at]);
        out.push(' ');
        rest = &rest[at + 2 + end + 2..];
    }
    out.push_str(rest);
    out
}

/// The most pages' language among those said or detected (English when none).
fn main_language(said: &[Option<PageLanguage>], detected: &[Option<(String, f64, usize)>]) -> String {
    let said = said.iter().flatten().map(|s| s.tag.as_str());
    crate::i18n::main_language(said.chain(detected.iter().flatten().map(|(tag, _, _)| tag.as_str())))
}

/// The commonest tag of `counts` and its count; of several as common, the
/// first in alphabetical order (every choice of a language by count breaks
/// ties so: the site's main language, a section's, a language folder's).
pub fn commonest<'a>(counts: &BTreeMap<&'a str, usize>) -> Option<(&'a str, usize)> {
    counts.iter().map(|(&t, &n)| (t, n)).max_by_key(|&(t, n)| (n, std::cmp::Reverse(t)))
}

/// The ISO 639-1 code of an ISO 639-3 one where one exists (the rest stay as
/// they are: a three-letter tag is valid BCP 47).
fn iso639_1(code: &str) -> String {
    search_core::index::lang::iso639_1_of(code).unwrap_or(code).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(source: &str, meta: &[(&str, &str)], body: &str) -> Page {
        let mut p = crate::parse::testing::page(source, body);
        for (k, v) in meta {
            p.meta.insert((*k).into(), serde_json::Value::String((*v).into()));
        }
        p
    }

    const DE: &str = "Ein Deployment stellt deklarative Updates für Pods und ReplicaSets bereit. Sie beschreiben \
        einen gewünschten Zustand in einem Deployment, und der Deployment-Controller ändert den tatsächlichen \
        Zustand mit einer kontrollierten Rate in den gewünschten Zustand. Sie können Deployments definieren, um \
        neue ReplicaSets zu erstellen, oder um vorhandene Deployments zu entfernen und alle ihre Ressourcen mit \
        neuen Deployments zu übernehmen.";
    const EN: &str = "A Deployment provides declarative updates for Pods and ReplicaSets. You describe a desired \
        state in a Deployment, and the Deployment Controller changes the actual state to the desired state at a \
        controlled rate. You can define Deployments to create new ReplicaSets, or to remove existing Deployments \
        and adopt all their resources with new Deployments.";

    fn tags(pages: &[Page]) -> Vec<(String, How)> {
        resolve(pages).into_iter().map(|l| (l.tag, l.how)).collect()
    }

    #[test]
    fn the_frontmatter_then_the_folder_then_the_text_says() {
        let pages = [
            page("de/a.md", &[], EN),
            page("en/a.md", &[("lang", "pt_BR")], EN),
            page("other/b.md", &[], DE),
            page("en/c.md", &[], "kubectl apply -f x.yaml"),
        ];
        assert_eq!(
            tags(&pages),
            [
                ("de".into(), How::Folder),
                ("pt-br".into(), How::Frontmatter),
                ("de".into(), How::Detected),
                ("en".into(), How::Folder)
            ]
        );
    }

    #[test]
    fn hugos_file_names_say_the_language_beside_the_original() {
        let pages = [
            page("about.md", &[], EN),
            page("about.de.md", &[], DE),
            page("docs/_index.fr.md", &[], EN),
            page("docs/_index.md", &[], EN),
            page("setup.it.md", &[], EN),
            page("v1.2.md", &[], EN),
            page("x.pt-br.md", &[("lang", "es")], EN),
            page("x.md", &[], EN),
        ];
        assert_eq!(
            tags(&pages),
            [
                ("en".into(), How::Detected),
                ("de".into(), How::File),
                ("fr".into(), How::File),
                ("en".into(), How::Detected),
                // Alone, `.it` is part of the name.
                ("en".into(), How::Detected),
                ("en".into(), How::Detected),
                ("es".into(), How::Frontmatter),
                ("en".into(), How::Detected),
            ]
        );
        assert_eq!(file_language("a/b.zh-cn.md"), Some(("a/b.md".into(), "zh-cn".into())));
        assert_eq!(file_language("a/.de.md"), None);
        assert_eq!(file_language("a/b.md"), None);
    }

    #[test]
    fn one_folder_named_like_a_language_is_not_a_language() {
        // `it/` of a help desk is IT; detection reads the English.
        let pages = [page("it/vpn.md", &[], EN), page("finance/fees.md", &[], EN)];
        assert_eq!(tags(&pages), [("en".into(), How::Detected), ("en".into(), How::Detected)]);
    }

    #[test]
    fn hugo_and_docusaurus_folders_name_the_language() {
        let folders = BTreeSet::new();
        assert_eq!(folder_tag("content/fr/docs/a.md", &folders).as_deref(), Some("fr"));
        assert_eq!(
            folder_tag("i18n/zh-CN/docusaurus-plugin-content-docs/current/a.md", &folders).as_deref(),
            Some("zh-cn")
        );
        assert_eq!(folder_tag("docs/content.md", &folders), None);
    }

    #[test]
    fn short_or_unclear_text_takes_the_main_language() {
        let pages =
            [page("a.md", &[], DE), page("b.md", &[], DE), page("c.md", &[], "Pods und so: `kubectl get pods`.")];
        let got = tags(&pages);
        assert_eq!(got[2].0, "de", "{got:?}");
        assert!(matches!(got[2].1, How::Detected | How::Default), "{got:?}");
        // Nothing at all: English.
        assert_eq!(tags(&[page("x.md", &[], "`x`")]), [("en".into(), How::Default)]);
    }

    #[test]
    fn a_short_page_takes_its_sections_language_not_the_sites() {
        // Docusaurus: the default locale's pages under `docs/`, German under
        // `i18n/de/`, more German pages than English ones. A short English
        // page under `docs/` is English, as its section is.
        let de = |p: &str| page(&format!("i18n/de/docusaurus-plugin-content-docs/current/{p}"), &[], DE);
        let short = "Run `npm start`. See the guide.";
        let en = format!("{EN} {EN}");
        let pages = [
            de("a.md"),
            de("b.md"),
            de("c.md"),
            de("d.md"),
            page("docs/a.md", &[], &en),
            page("docs/guides/b.md", &[], &en),
            page("docs/guides/c.md", &[], short),
            page("docs/d.md", &[], short),
            page("intro.md", &[], short),
        ];
        let got = tags(&pages);
        assert_eq!(got[0], ("de".into(), How::Folder));
        assert_eq!(got[4], ("en".into(), How::Detected));
        // `docs/guides/` has one clear page: its section is `docs/`.
        assert_eq!(got[6], ("en".into(), How::Section), "{got:?}");
        assert_eq!(got[7], ("en".into(), How::Section), "{got:?}");
        // At the root, the site's main language.
        assert_eq!(got[8].0, "de", "{got:?}");
    }

    #[test]
    fn a_section_of_mixed_languages_speaks_for_no_page() {
        let short = "Run `npm start`. See the guide.";
        let (de, en) = (format!("{DE} {DE}"), format!("{EN} {EN}"));
        let pages = [
            page("x/a.md", &[], &de),
            page("x/b.md", &[], &en),
            page("x/c.md", &[], short),
            page("y/a.md", &[], &de),
            page("y/b.md", &[], &de),
        ];
        // x/ is split 1:1, so c.md takes the main language (German, 3 of 4).
        assert_eq!(tags(&pages)[2].0, "de");
        assert_eq!(tags(&pages)[2].1, How::Default);
    }

    #[test]
    fn folders_holding_one_language_each_are_language_folders() {
        let folders = |pages: &[(&'static str, &'static str)]| content_folders(pages.iter().copied());
        let got = folders(&[
            ("english/a.md", "en"),
            ("english/b.md", "en"),
            ("suomeksi/a.md", "fi"),
            ("suomeksi/b.md", "fi"),
            ("index.md", "en"),
        ]);
        assert_eq!(got, [("english", "en"), ("suomeksi", "fi")].map(|(f, t)| (f.to_string(), t.to_string())).into());
        // Nine in ten is one language; a folder of one page is no folder of a language.
        let mut pages = vec![("de/x.md", "de"); 9];
        pages.extend([("de/y.md", "en"), ("en/x.md", "en"), ("en/y.md", "en"), ("misc/z.md", "fr")]);
        assert_eq!(folders(&pages).len(), 2);
        // Topics of one language each, two of them English: no language folders.
        let topics = [
            ("it/a.md", "en"),
            ("it/b.md", "en"),
            ("hr/a.md", "en"),
            ("hr/b.md", "en"),
            ("fi/a.md", "fi"),
            ("fi/b.md", "fi"),
        ];
        assert!(folders(&topics).is_empty());
        // One language folder alone, or mixed folders: none.
        assert!(folders(&[("english/a.md", "en"), ("english/b.md", "en")]).is_empty());
        assert!(folders(&[("a/x.md", "en"), ("a/y.md", "fi"), ("b/x.md", "fi"), ("b/y.md", "en")]).is_empty());
    }

    #[test]
    fn the_original_kept_in_comments_is_not_the_pages_language() {
        let zh = "<!--\nA Deployment provides declarative updates for Pods and ReplicaSets, and you describe a \
            desired state in a Deployment.\n-->\n一个 Deployment 为 Pod 和 ReplicaSet 提供声明式的更新能力。你负责描述 Deployment \
            中的目标状态，而 Deployment 控制器以受控速率更改实际状态，使其变为期望状态。";
        assert_eq!(tags(&[page("a.md", &[], zh)])[0].0, "zh");
        assert_eq!(without_comments("a<!-- b -->c<!-- d"), "ac");
    }

    #[test]
    fn template_tags_in_a_line_are_not_the_pages_prose() {
        // A Japanese glossary entry whose Hugo shortcodes and product names
        // spell more Latin letters than its sentences spell kana and kanji:
        // read with the shortcodes, whatlang took it for Catalan, and a
        // Japanese question searched in Japanese never found it.
        let ja = "Kubernetesでは、{{< glossary_tooltip term_id=\"controller\" text=\"コントローラー\" >}}は\
            {{< glossary_tooltip term_id=\"cluster\" text=\"クラスター\" >}}の状態を見守り、必要なときに変更を加える\
            制御ループです。{{< glossary_tooltip text=\"kube-apiserver\" term_id=\"kube-apiserver\" >}}から状態を\
            読みます。例えば、Deploymentコントローラー、Daemonsetコントローラー、Namespaceコントローラー、\
            Persistent Volumeコントローラーは{{< glossary_tooltip term_id=\"kube-controller-manager\" \
            text=\"kube-controller-manager\" >}}の中で動きます。{{% note %}}詳しくは{{< glossary_tooltip \
            term_id=\"control-plane\" text=\"コントロールプレーン\" >}}を参照してください。{{% /note %}}";
        assert_eq!(tags(&[page("a.md", &[], ja)])[0].0, "ja");
        assert_eq!(without_templates("a{{< b c=\"d\" >}}e{% f %}g{{ h"), "a e g{{ h");
        assert_eq!(without_templates("{a}{{%b%}}{%c%}d"), "{a}  d");
        // A page of many tags and none of the other kind, or of lone braces,
        // is read in one pass.
        let many = "{{< t >}}x".repeat(200_000);
        assert_eq!(without_templates(&many), " x".repeat(200_000));
        let braces = "{ {x} ".repeat(200_000);
        assert_eq!(without_templates(&braces), braces);
    }

    #[test]
    fn each_part_of_a_page_in_two_languages_is_its_own() {
        let fi = "Käytämme vain välttämättömiä evästeitä varmistaaksemme palveluiden toimivuuden. Nämä evästeet \
            ovat tarpeellisia palveluiden käytössä, eikä niitä voi poistaa käytöstä. Istunto ylläpitää istuntoasi \
            ja poistetaan, kun suljet selaimen. Kieli muistaa valitsemasi kielen.";
        let page = PageLanguage { tag: "en".into(), lang: Lang::EN, how: How::Detected };
        assert_eq!(of_chunk(&page, EN), "en");
        assert_eq!(of_chunk(&page, fi), "fi");
        assert_eq!(of_chunk(&page, "`sbatch job.sh`"), "en");
        // What the author or the folder said stands.
        let said = PageLanguage { how: How::Frontmatter, ..page };
        assert_eq!(of_chunk(&said, fi), "en");
    }

    #[test]
    fn malformed_tags_are_not_languages() {
        for bad in ["", "german!", "<script>", "d", "12", "de-", "de-x"] {
            assert_eq!(normal_tag(bad), None, "{bad:?}");
        }
        assert_eq!(normal_tag(" zh_Hans ").as_deref(), Some("zh-hans"));
        let p = page("a.md", &[("lang", "<b>")], EN);
        assert_eq!(tags(&[p]), [("en".into(), How::Detected)]);
        // Shaped like a tag but longer than any: not one.
        let long = format!("de{}", "-aaaaaaaa".repeat(60));
        assert_eq!(normal_tag(&long), None);
        assert_eq!(normal_tag("ca-ES-valencia").as_deref(), Some("ca-es-valencia"));
        let p = page("a.md", &[("lang", long.as_str())], EN);
        assert_eq!(tags(&[p]), [("en".into(), How::Detected)]);
    }
}
