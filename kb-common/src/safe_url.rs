//! Which URLs may reach an attribute of a page the site serves: the one check every
//! part of the build uses (frontmatter, Markdown links and images, raw HTML, the
//! sanitiser's last pass, Confluence storage links).
//!
//! Pages come from a CMS that many people edit and the site is public, so a URL in
//! an `href` or `src` is a stored-XSS vector unless it can only navigate. Allowed:
//!
//! * `http:` and `https:`;
//! * `mailto:`, because help-desk pages link the desk's e-mail addresses (a
//!   `mailto:` link opens the mail client; it cannot run script in the page);
//! * relative URLs (`wifi.html`, `../img/a.png`, `#setup`, `?q=x`, `/search.html`),
//!   which inherit the page's own `https:` scheme;
//! * protocol-relative URLs (`//host/x`): kept, because they also inherit the page's
//!   scheme and so are exactly as harmless as an absolute `https://host/x` link,
//!   which is allowed anyway.
//!
//! Everything else is refused: `javascript:`, `vbscript:`, `data:` (an HTML or SVG
//! document that runs script when opened), `file:`, and any scheme not listed above.
//!
//! The scheme is found the way browsers find it (WHATWG URL parsing): leading and
//! trailing C0 controls and spaces are ignored and tabs and newlines anywhere are
//! removed, so `" java\tscript:"` is `javascript:`. Character references are the
//! caller's business only for raw HTML, where [`decode_html_attr`] undoes them the
//! way an HTML parser would; Markdown link destinations arrive decoded from
//! pulldown-cmark. A URL that still holds another control character is refused
//! outright: no real link carries one, and browsers differ on what they do with it.

/// Schemes a link or image may use (lowercase, without the colon).
pub const ALLOWED_SCHEMES: [&str; 3] = ["http", "https", "mailto"];

/// Why a URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnsafeUrl {
    #[error(
        "the `{scheme}:` scheme is not allowed in a link or image (it can run script or embed a document); \
         link with https:, http:, mailto: or a relative path instead"
    )]
    Scheme { scheme: String },
    #[error("the URL contains a control character; retype the link")]
    ControlCharacter,
}

/// Whether `url` may be put into an attribute as it is (see the module docs).
pub fn check(url: &str) -> Result<(), UnsafeUrl> {
    // WHATWG URL parsing, step 1 and 3: strip leading/trailing C0 control or space,
    // remove every ASCII tab or newline.
    let trimmed = url.trim_matches(|c: char| c <= ' ');
    let cleaned: String = trimmed.chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect();
    if cleaned.chars().any(|c| c.is_control()) {
        return Err(UnsafeUrl::ControlCharacter);
    }
    match scheme(&cleaned) {
        None => Ok(()),
        Some(s) if ALLOWED_SCHEMES.contains(&s.to_ascii_lowercase().as_str()) => Ok(()),
        Some(s) => Err(UnsafeUrl::Scheme { scheme: s.to_ascii_lowercase() }),
    }
}

/// Shorthand for `check(url).is_ok()`.
pub fn is_safe(url: &str) -> bool {
    check(url).is_ok()
}

/// The scheme of an already cleaned URL: an ASCII letter, then letters, digits,
/// `+`, `-` or `.`, then `:`. `None` for a relative URL.
fn scheme(url: &str) -> Option<&str> {
    let colon = url.find(':')?;
    let s = &url[..colon];
    let mut chars = s.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))).then_some(s)
}

/// Decodes the character references in a raw HTML attribute value the way an HTML
/// parser does for what matters here: numeric references (decimal and hex, with or
/// without the `;`) and the named ones that can spell out URL syntax or whitespace
/// (`&colon;`, `&Tab;`, `&NewLine;`, …). Other named references stay as written;
/// none of them is an ASCII letter, digit or `:`, so none can change the scheme.
pub fn decode_html_attr(value: &str) -> String {
    const NAMED: &[(&str, char)] = &[
        ("colon", ':'),
        ("Tab", '\t'),
        ("NewLine", '\n'),
        ("amp", '&'),
        ("AMP", '&'),
        ("lt", '<'),
        ("LT", '<'),
        ("gt", '>'),
        ("GT", '>'),
        ("quot", '"'),
        ("QUOT", '"'),
        ("apos", '\''),
        ("sol", '/'),
        ("bsol", '\\'),
        ("period", '.'),
        ("plus", '+'),
        ("hyphen", '-'),
        ("dash", '-'),
        ("excl", '!'),
        ("num", '#'),
        ("percnt", '%'),
        ("lpar", '('),
        ("rpar", ')'),
        ("semi", ';'),
        ("equals", '='),
        ("quest", '?'),
        ("commat", '@'),
        ("nbsp", '\u{a0}'),
    ];
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        if let Some(num) = rest.strip_prefix('#') {
            let (hex, digits) = match num.strip_prefix(['x', 'X']) {
                Some(h) => (true, h),
                None => (false, num),
            };
            let len = digits.find(|c: char| !(if hex { c.is_ascii_hexdigit() } else { c.is_ascii_digit() }));
            let len = len.unwrap_or(digits.len());
            if len > 0 {
                // Overlong numbers are U+FFFD for a parser; so they are here.
                let n = u32::from_str_radix(&digits[..len.min(8)], if hex { 16 } else { 10 }).unwrap_or(0xFFFD);
                let c = match n {
                    0 => '\u{FFFD}',
                    _ => char::from_u32(n).unwrap_or('\u{FFFD}'),
                };
                out.push(if len > 8 { '\u{FFFD}' } else { c });
                let after = &digits[len..];
                rest = after.strip_prefix(';').unwrap_or(after);
                continue;
            }
            out.push('&');
            continue;
        }
        match NAMED.iter().find(|(name, _)| rest.starts_with(name) && rest[name.len()..].starts_with(';')) {
            Some((name, c)) => {
                out.push(*c);
                rest = &rest[name.len() + 1..];
            }
            None => out.push('&'),
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn navigation_is_allowed() {
        for ok in [
            "https://x.example/a",
            "HTTP://x.example",
            "mailto:help@x.example",
            "wifi.html#setup",
            "../img/a.png",
            "#top",
            "?q=1",
            "/search.html",
            "//cdn.example/x",
            "",
            "a b.md",
            "dir/file:with-colon-after-slash",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn script_and_document_schemes_are_refused_however_spelled() {
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            " javascript:alert(1)",
            "\u{1}javascript:alert(1)",
            "java\tscript:alert(1)",
            "java\nscript:alert(1)",
            "jav\r\nascript:alert(1)",
            "vbscript:msgbox(1)",
            "data:text/html;base64,PHNjcmlwdD4=",
            "DATA:image/svg+xml,<svg onload=alert(1)>",
            "file:///etc/passwd",
            "tel:123",
            "x-unknown:thing",
        ] {
            assert!(check(bad).is_err(), "{bad:?}");
        }
        assert_eq!(check("java\u{0}script:alert(1)"), Err(UnsafeUrl::ControlCharacter));
        assert_eq!(check("javascript:x"), Err(UnsafeUrl::Scheme { scheme: "javascript".into() }));
    }

    #[test]
    fn html_references_are_decoded_before_the_check() {
        assert_eq!(decode_html_attr("&#106;avascript&colon;alert(1)"), "javascript:alert(1)");
        assert_eq!(decode_html_attr("&#x6A&#x61vascript:"), "javascript:");
        assert_eq!(decode_html_attr("java&Tab;script:"), "java\tscript:");
        assert_eq!(decode_html_attr("java&#0000009;script:"), "java\tscript:");
        assert_eq!(decode_html_attr("a&amp;b&bogus;c&#;"), "a&b&bogus;c&#;");
        assert_eq!(decode_html_attr("&#99999999999;x"), "\u{FFFD}x");
        assert!(check(&decode_html_attr("jav&#x09;ascript&#58;alert(1)")).is_err());
    }
}
