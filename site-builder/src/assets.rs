//! The files a page links to, once the site is written: which of them a browser
//! would run script in, reported with the line of the link, and the site's
//! manifest, the list of the files the build wrote itself.
//!
//! A linked file is copied into the site as it is: the CMS's users' bytes. An SVG
//! with a `<script>` or an `onload`, an `.html` file, an XML document: opened on
//! their own from a host that serves them with their type and no policy (Spin's
//! fileserver, most static hosts), they run script as the site. `site-builder
//! serve` sandboxes every copied file and serves HTML and XML ones as downloads
//! (`edge_host::static_files::headers`), which is why it needs to know which files
//! the build wrote ([`write_manifest`]); other hosts need the headers SECURITY.md
//! lists. Either way [`active_content`] names each such link in the report, so the
//! people who write the pages can see it.

use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::path::Path;

use crate::output::{Staging, WriteError};
use crate::report::Warning;

/// How much of a linked file is read to judge it.
const READ_LIMIT: u64 = 8 * 1024 * 1024;

/// Writes [`kb_common::site_manifest::MANIFEST`] into the staging folder: every file
/// in it but `copied` (the content files the build copied, as `assets_used` lists
/// them) is one the build wrote itself. Call it last, just before the commit, so
/// that nothing written later is missing from the list.
pub fn write_manifest(staging: &Staging, copied: &[String]) -> Result<(), WriteError> {
    let root = staging.path("");
    let copied_set: BTreeSet<&str> = copied.iter().map(String::as_str).collect();
    let mut generated = Vec::new();
    for entry in walkdir::WalkDir::new(&root).into_iter().flatten() {
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(&root) else { continue };
        let rel = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/");
        if rel != kb_common::site_manifest::MANIFEST && !copied_set.contains(rel.as_str()) {
            generated.push(rel);
        }
    }
    generated.sort();
    let copied: Vec<String> = copied_set.into_iter().map(str::to_string).collect();
    staging.write(
        kb_common::site_manifest::MANIFEST,
        kb_common::site_manifest::manifest_json(&generated, &copied).as_bytes(),
    )
}

/// A warning for every link from a page to a file a browser would run script in:
/// HTML, XHTML and XML documents, and SVG drawings with script (a `<script>`, an
/// `on…` handler, a `javascript:` URL, HTML in a `<foreignObject>`, an XSLT
/// stylesheet). `pages` are each page's source file (relative to `content`) and
/// the content files it uses (`Rendered::assets`); the line is the first of the
/// page that names the file. Each file is read once, however many pages link it.
pub fn active_content<'a>(
    content: &Path,
    pages: impl IntoIterator<Item = (&'a str, &'a BTreeSet<String>)>,
) -> Vec<Warning> {
    let mut judged: HashMap<&'a str, Option<String>> = HashMap::new();
    let mut warnings = Vec::new();
    for (source, assets) in pages {
        let first = warnings.len();
        let mut text: Option<String> = None;
        for asset in assets {
            let why = judged.entry(asset.as_str()).or_insert_with(|| judge(&content.join(asset), asset));
            let Some(why) = why else { continue };
            let text = text.get_or_insert_with(|| {
                String::from_utf8_lossy(&std::fs::read(content.join(source)).unwrap_or_default()).into_owned()
            });
            warnings.push(Warning {
                file: source.to_string(),
                line: line_naming(text, asset),
                message: format!(
                    "links to `{asset}`, {why}: opened on its own from the site, a browser would run its script as the site; `site-builder serve` sandboxes it{}, other hosts need the headers in SECURITY.md (\"Files a page links to\")",
                    if why.starts_with("an SVG") { "" } else { " and serves it as a download" }
                ),
            });
        }
        // A page's warnings in the order of its lines.
        warnings[first..].sort_by_key(|w| w.line);
    }
    warnings
}

/// The first line (1-based) of `page` that names `asset`'s file, as written or
/// percent-encoded.
fn line_naming(page: &str, asset: &str) -> Option<usize> {
    let name = asset.rsplit('/').next().unwrap_or(asset);
    let encoded = kb_common::percent::encode_segment(name);
    page.lines().position(|l| l.contains(name) || l.contains(&encoded)).map(|i| i + 1)
}

/// Why the file at `path` (the content file `rel`) holds active content, if it does.
fn judge(path: &Path, rel: &str) -> Option<String> {
    let ext = rel.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "html" | "htm" | "shtml" | "xhtml" | "xht" | "mht" | "mhtml" => Some("an HTML document".into()),
        "xml" | "xsl" | "xslt" | "rss" | "atom" => Some("an XML document (it may carry XHTML script)".into()),
        "svg" | "svgz" => {
            let file = std::fs::File::open(path).ok()?;
            let mut bytes = Vec::new();
            if ext == "svgz" {
                flate2::read::GzDecoder::new(file).take(READ_LIMIT).read_to_end(&mut bytes).ok()?;
            } else {
                file.take(READ_LIMIT).read_to_end(&mut bytes).ok()?;
            }
            svg_script(&String::from_utf8_lossy(&bytes)).map(|what| format!("an SVG drawing with {what}"))
        }
        _ => None,
    }
}

/// What in an SVG document could run script, if anything: the first found of a
/// script element, an event handler attribute, a script URL, embedded HTML or
/// documents, or a stylesheet processing instruction (XSLT).
fn svg_script(svg: &str) -> Option<&'static str> {
    let lower = svg.to_ascii_lowercase();
    for (needle, what) in [
        ("<script", "a <script> element"),
        ("<foreignobject", "HTML inside it (<foreignObject>)"),
        ("<iframe", "an <iframe>"),
        ("<embed", "an <embed>"),
        ("<object", "an <object>"),
        ("<handler", "a <handler> element"),
        ("<?xml-stylesheet", "a stylesheet processing instruction (XSLT)"),
    ] {
        if lower.contains(needle) {
            return Some(what);
        }
    }
    if has_event_handler(&lower) {
        return Some("an event handler attribute (on…=)");
    }
    let squeezed = squeeze(&lower);
    if squeezed.contains("javascript:") || squeezed.contains("vbscript:") {
        return Some("a script URL (javascript:)");
    }
    None
}

/// Whether any tag of `lower` (lowercased markup) has an `on…=` attribute.
fn has_event_handler(lower: &str) -> bool {
    let b = lower.as_bytes();
    let mut in_tag = false;
    let mut quote = 0u8;
    for i in 0..b.len() {
        let c = b[i];
        if !in_tag {
            in_tag = c == b'<';
            continue;
        }
        if quote != 0 {
            if c == quote {
                quote = 0;
            }
            continue;
        }
        match c {
            b'>' => in_tag = false,
            b'"' | b'\'' => quote = c,
            b'o' if i > 0
                && matches!(b[i - 1], b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'"' | b'\'')
                && b.get(i + 1) == Some(&b'n') =>
            {
                let rest = &b[i + 2..];
                let name = rest.iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'-').count();
                let after = rest[name..].iter().find(|c| !c.is_ascii_whitespace());
                if name > 0 && after == Some(&b'=') {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// `lower` with character references decoded (numeric ones, `&colon;`, `&tab;`,
/// `&newline;`) and whitespace and control characters removed: how a browser reads
/// a URL in an attribute, near enough to find a script scheme however it is spelt.
fn squeeze(lower: &str) -> String {
    let mut out = String::with_capacity(lower.len());
    let mut rest = lower;
    while let Some(c) = rest.chars().next() {
        if c == '&' {
            if let Some(end) = rest[1..].find(';').filter(|e| *e <= 12) {
                let entity = &rest[1..1 + end];
                let decoded = match entity {
                    "colon" => Some(':'),
                    "tab" | "newline" => Some(' '),
                    _ => entity
                        .strip_prefix('#')
                        .and_then(|n| match n.strip_prefix('x') {
                            Some(hex) => u32::from_str_radix(hex, 16).ok(),
                            None => n.parse().ok(),
                        })
                        .and_then(char::from_u32),
                };
                if let Some(d) = decoded {
                    if !d.is_whitespace() && !d.is_control() {
                        out.extend(d.to_lowercase());
                    }
                    rest = &rest[end + 2..];
                    continue;
                }
            }
        }
        if !c.is_whitespace() && !c.is_control() {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_with_script_is_told_from_a_plain_drawing() {
        assert_eq!(svg_script(r#"<svg xmlns="http://www.w3.org/2000/svg"><circle r="4" fill="red"/></svg>"#), None);
        // Words that only look like handlers or schemes, in text and values.
        assert_eq!(svg_script(r#"<svg><title>Turn on = off; javascript is off</title><g class="x"/></svg>"#), None);
        assert_eq!(svg_script(r#"<svg><text font-family="one">only</text></svg>"#), None);
        for (svg, what) in [
            ("<svg><script>alert(1)</script></svg>", "<script>"),
            ("<svg><SCRIPT href='x.js'/></svg>", "<script>"),
            (r#"<svg onload="alert(1)"/>"#, "event handler"),
            (r#"<svg><rect/ONclick = "x()"></svg>"#, "event handler"),
            (r#"<svg><set attributeName="x" onbegin='x()'/></svg>"#, "event handler"),
            (r#"<svg><rect width="1"onmouseover="x()"/></svg>"#, "event handler"),
            (r#"<svg><a href="java&#x09;script&colon;alert(1)"><text>x</text></a></svg>"#, "script URL"),
            (r#"<svg><a xlink:href=" &#106;avascript:alert(1)">x</a></svg>"#, "script URL"),
            (r#"<svg><animate attributeName="href" to="javascript:alert(1)"/></svg>"#, "script URL"),
            ("<svg><foreignObject><div>x</div></foreignObject></svg>", "foreignObject"),
            ("<?xml-stylesheet type=\"text/xsl\" href=\"x.xsl\"?><svg/>", "XSLT"),
        ] {
            let got = svg_script(svg).unwrap_or_else(|| panic!("{svg}: not flagged"));
            assert!(got.contains(what), "{svg}: {got}");
        }
    }

    #[test]
    fn links_to_active_files_are_warned_at_their_line() {
        let dir = tempfile::tempdir().unwrap();
        let c = dir.path();
        std::fs::create_dir_all(c.join("it/files")).unwrap();
        std::fs::write(c.join("it/files/d.svg"), "<svg onload='fetch(\"/api/health\")'/>").unwrap();
        std::fs::write(c.join("it/files/plain.svg"), "<svg><rect width='1'/></svg>").unwrap();
        std::fs::write(c.join("it/files/my report.html"), "<p>hi</p>").unwrap();
        std::fs::write(c.join("it/files/map.png"), [0x89, b'P', b'N', b'G']).unwrap();
        std::fs::write(
            c.join("it/page.md"),
            "---\ntitle: T\n---\n# T\n\n![map](files/map.png)\n![plain](files/plain.svg)\n\n![d](files/d.svg)\n\nSee [the report](files/my%20report.html).\n",
        )
        .unwrap();
        std::fs::write(c.join("it/other.md"), "# O\n\n<img src=\"files/d.svg\">\n").unwrap();
        let assets = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<BTreeSet<String>>();
        let page = assets(&["it/files/d.svg", "it/files/map.png", "it/files/my report.html", "it/files/plain.svg"]);
        let other = assets(&["it/files/d.svg"]);
        let w = active_content(c, [("it/page.md", &page), ("it/other.md", &other)]);
        let got: Vec<(&str, Option<usize>, bool)> =
            w.iter().map(|w| (w.file.as_str(), w.line, w.message.contains("download"))).collect();
        assert_eq!(
            got,
            [("it/page.md", Some(9), false), ("it/page.md", Some(11), true), ("it/other.md", Some(3), false)],
            "{w:#?}"
        );
        assert!(w[0].message.contains("`it/files/d.svg`, an SVG drawing with an event handler"), "{}", w[0].message);
        assert!(w[1].message.contains("an HTML document"), "{}", w[1].message);
    }

    #[test]
    fn the_manifest_lists_what_the_build_wrote_and_not_what_it_copied() {
        let dir = tempfile::tempdir().unwrap();
        let staging = Staging::new(&dir.path().join("site")).unwrap();
        for f in ["index.html", "it/page.html", "assets/search.js", "it/files/d.svg", "it/files/f.html"] {
            staging.write(f, b"x").unwrap();
        }
        write_manifest(&staging, &["it/files/d.svg".into(), "it/files/f.html".into()]).unwrap();
        let bytes = std::fs::read(staging.path(kb_common::site_manifest::MANIFEST)).unwrap();
        let m = kb_common::site_manifest::Manifest::parse(&bytes).unwrap();
        for f in ["index.html", "it/page.html", "assets/search.js"] {
            assert!(m.generated(f), "{f}");
        }
        for f in ["it/files/d.svg", "it/files/f.html", kb_common::site_manifest::MANIFEST] {
            assert!(!m.generated(f), "{f}");
        }
    }
}
