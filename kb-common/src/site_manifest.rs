//! `OUT/site/_kb/site.json`: the files of a site the build wrote itself, as
//! opposed to those it copied from the content folder because a page links to
//! them. The build writes it ([`manifest_json`]); the local host reads it
//! ([`Manifest::parse`]) to serve the first kind as pages of the site and the
//! second sandboxed (SECURITY.md, "Files a page links to").
//!
//! One owner for the format, outside the host, so that the build needs no
//! wasmtime to write it.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// Where the build lists the files it wrote itself, relative to the site folder.
pub const MANIFEST: &str = "_kb/site.json";
/// The version of [`MANIFEST`]'s format.
pub const MANIFEST_FORMAT: u64 = 1;

/// The document itself.
#[derive(Serialize, Deserialize)]
struct Document<T> {
    format: u64,
    generated: T,
    copied: T,
}

/// The build's [`MANIFEST`]: `generated` are the files it wrote itself,
/// `copied` the ones it copied from the content folder. A path in both (an asset
/// that overwrote a page) counts as copied.
pub fn manifest_json(generated: &[String], copied: &[String]) -> String {
    let doc = Document { format: MANIFEST_FORMAT, generated, copied };
    // Serialising a struct of strings cannot fail.
    format!("{}\n", serde_json::to_string(&doc).unwrap_or_default())
}

/// The files of a site the build wrote itself (from its [`MANIFEST`]).
#[derive(Debug, Default)]
pub struct Manifest {
    generated: HashSet<String>,
}

impl Manifest {
    /// Reads a [`manifest_json`] document; `None` if it is not one (another
    /// format version, or not this document at all).
    pub fn parse(bytes: &[u8]) -> Option<Manifest> {
        let doc: Document<HashSet<String>> = serde_json::from_slice(bytes).ok()?;
        if doc.format != MANIFEST_FORMAT {
            return None;
        }
        let mut generated = doc.generated;
        generated.retain(|p| !doc.copied.contains(p));
        Some(Manifest { generated })
    }

    /// Whether the build wrote `rel` (`/`-separated, relative to the site) itself.
    pub fn generated(&self, rel: &str) -> bool {
        self.generated.contains(rel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_names_what_the_build_wrote_and_a_copy_wins() {
        let json = manifest_json(
            &["index.html".into(), "it/f.html".into(), "assets/search.js".into()],
            &["it/f.html".into(), "it/d.svg".into()],
        );
        let m = Manifest::parse(json.as_bytes()).unwrap();
        assert!(m.generated("index.html") && m.generated("assets/search.js"));
        // An asset that overwrote a page is the user's file.
        assert!(!m.generated("it/f.html") && !m.generated("it/d.svg") && !m.generated("other.html"));
        assert!(Manifest::parse(b"{\"format\": 2, \"generated\": [], \"copied\": []}").is_none());
        assert!(Manifest::parse(b"{\"format\": 1, \"generated\": [1], \"copied\": []}").is_none());
        assert!(Manifest::parse(b"{\"format\": 1, \"generated\": []}").is_none());
        assert!(Manifest::parse(b"[]").is_none());
    }
}
