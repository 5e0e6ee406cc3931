//! What the dialect passes ask about the rest of the knowledge base, answered
//! from the pages the build read: where a wikilink leads (Obsidian's rules, in
//! `kb_dialect::obsidian::Vault`), another page's body for a transclusion or a
//! glossary entry, and `--8<--` snippets from the folders MkDocs projects keep
//! them in.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use kb_dialect::obsidian::Vault;
use kb_dialect::Resolver;

use crate::parse::Page;

/// Every page and file of the knowledge base, as the dialect passes see it.
pub struct KnowledgeBase<'a> {
    vault: Vault,
    pages: HashMap<&'a str, &'a Page>,
    snippets: SnippetDir,
}

impl<'a> KnowledgeBase<'a> {
    /// `generated` are pages the build writes without a file (tag listings):
    /// links to them resolve like links to any page.
    pub fn new(
        pages: &'a [Page],
        generated: &[String],
        assets: &HashSet<String>,
        snippets: SnippetDir,
    ) -> KnowledgeBase<'a> {
        let named: Vec<(String, String, Vec<String>)> = pages
            .iter()
            .map(|p| (p.source.clone(), p.title.clone(), p.aliases.clone()))
            .chain(generated.iter().map(|g| (g.clone(), String::new(), Vec::new())))
            .collect();
        let mut files: Vec<String> = assets.iter().cloned().collect();
        files.sort();
        KnowledgeBase {
            vault: Vault::new(&named, &files),
            pages: pages.iter().map(|p| (p.source.as_str(), p)).collect(),
            snippets,
        }
    }

    /// The resolver for one page: relative names resolve from where it is.
    pub fn for_page<'k>(&'k self, source: &'k str) -> PageResolver<'k, 'a> {
        PageResolver { kb: self, source }
    }
}

/// [`KnowledgeBase`] seen from one page.
pub struct PageResolver<'k, 'a> {
    kb: &'k KnowledgeBase<'a>,
    source: &'k str,
}

impl Resolver for PageResolver<'_, '_> {
    fn source(&self) -> &str {
        self.source
    }

    fn snippet(&self, name: &str) -> Option<String> {
        self.kb.snippets.get(name)
    }

    fn page(&self, target: &str) -> Option<String> {
        self.kb.vault.page(self.source, target)
    }

    fn asset(&self, target: &str) -> Option<String> {
        self.kb.vault.asset(self.source, target)
    }

    fn body(&self, path: &str) -> Option<String> {
        self.kb.pages.get(path).map(|p| p.body.clone())
    }

    fn title(&self, path: &str) -> Option<String> {
        self.kb.pages.get(path).map(|p| p.title.clone())
    }
}

/// Looks up `--8<--` snippets in the places MkDocs projects keep them.
pub struct SnippetDir {
    dirs: Vec<PathBuf>,
}

impl SnippetDir {
    pub fn new(content: &Path) -> SnippetDir {
        let dirs = ["snippets", "_snippets", "includes", "_includes", ""].iter().map(|d| content.join(d)).collect();
        SnippetDir { dirs }
    }

    fn get(&self, name: &str) -> Option<String> {
        if name.contains("..") || name.starts_with('/') {
            return None;
        }
        self.dirs.iter().find_map(|d| std::fs::read_to_string(d.join(name)).ok())
    }
}
