//! Percent-encoding for the links the build and ingestion write: everything but
//! RFC 3986's unreserved characters (`A–Z a–z 0–9 - _ . ~`) is encoded, so a page
//! title or a file name is always one safe path segment, whatever it contains.

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// Everything but the unreserved characters.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');
/// The same, keeping the `/` between segments.
const PATH: &AsciiSet = &SEGMENT.remove(b'/');

/// One path segment: `a/b c` → `a%2Fb%20c`.
pub fn encode_segment(s: &str) -> String {
    utf8_percent_encode(s, SEGMENT).to_string()
}

/// A `/`-separated path: `it services/vpn.html` → `it%20services/vpn.html`.
pub fn encode_path(p: &str) -> String {
    utf8_percent_encode(p, PATH).to_string()
}

/// `%XX` escapes decoded, bytes that are not UTF-8 replaced (a `%` without two hex
/// digits stays as it is): a URL path segment as a name to write a file under.
pub fn decode_lossy(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_and_paths() {
        assert_eq!(encode_segment("a/b c?#%é"), "a%2Fb%20c%3F%23%25%C3%A9");
        assert_eq!(encode_segment("Keep-this_one.~"), "Keep-this_one.~");
        assert_eq!(encode_path("it services/vpn.html"), "it%20services/vpn.html");
        assert_eq!(decode_lossy("caf%C3%A9%20menu%zz%FF"), "café menu%zz\u{FFFD}");
        assert_eq!(encode_path("../a b/#x"), "../a%20b/%23x");
        assert_eq!(encode_path("a b/ü.html"), "a%20b/%C3%BC.html");
    }
}
