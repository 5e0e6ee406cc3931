//! The index split into fragments for the browser engine, so that a site on any
//! static host searches without the edge function and a reader downloads only
//! what a query touches (the shape of Pagefind's index).
//!
//! [`split`] turns an [`Index`] into these files (`site-builder build` writes them
//! under `OUT/site/_search/`, compressed):
//!
//! | file | holds |
//! | --- | --- |
//! | `manifest.json` ([`Manifest`]) | counts, BM25 parameters, the first term of every shard, which page each chunk is on |
//! | `lens.bin` | every chunk's field-weighted length (`f32`, little-endian), for BM25's length norm |
//! | `t/{i}.bin` | shard `i` of the vocabulary: a run of sorted terms and their postings (a [`crate::container`] file, magic `KBTERMS`) |
//! | `c/{i}.json` | group `i` of the completion table: every prefix (two characters or more) of a term, with the term it completes to (`[[prefix, term], …]`, sorted) |
//! | `r/{chunk}.json` | one chunk's display record ([`ChunkMeta`]), for its title, link and snippet |
//!
//! A site may also carry the semantic side ([`semantic`]: the query encoder and
//! every chunk's vector), with which [`Engine::search_semantic`] ranks the fused
//! modes.
//!
//! [`Engine`] answers `bm25` queries (and `partial` ones, as you type) from the
//! fragments it has been given and says which others a query needs. The
//! completion table is the index's own completion ([`bm25::complete_prefix`])
//! computed at build time for every prefix a reader can type, so a word being
//! typed costs one small table group and the completion's shard, not every shard
//! of its prefix range. It scores
//! through [`super::bm25`] and orders through [`super::fusion`], the code the
//! edge runs, so both give the same results and scores.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use super::highlight::Highlighter;
use super::lang::LangTag;
use super::{analyzer, bm25, compound, fusion, relevance, ChunkMeta, Index, IndexError, Mode, SearchParams};
use crate::container::{check_offsets, AlignedBytes, Container, ContainerError, Writer};
use crate::response::{SearchResponse, SearchResult, Timings};

pub mod semantic;
use semantic::{Dense, WithNorms};
pub use semantic::{Semantic, ENCODER, VECTORS};

/// Format of the fragments (the manifest says it; an engine refuses others).
pub const FORMAT: u32 = 2;
const SHARD_MAGIC: [u8; 8] = *b"KBTERMS\0";

/// What a browser engine loads first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    pub chunks: usize,
    pub pages: usize,
    pub avg_len: f32,
    pub k1: f32,
    pub b: f32,
    /// How deep BM25's list is read before ordering (the edge's `depth`).
    pub depth: usize,
    /// Chunk ids in order as runs of one page: `[page, count]`.
    pub page_runs: Vec<[u32; 2]>,
    /// The first term of each shard, ascending; shard `i` is `t/{i}.bin`.
    pub shards: Vec<String>,
    /// The first prefix of each completion group, ascending; group `i` is `c/{i}.json`.
    pub completions: Vec<String>,
    /// The initials whose spelling list exists: `v/{c}.txt` ([`SpellingList`]),
    /// what the typo reading ([`super::typo`]) looks a slip's neighbours up in.
    /// Empty in fragments written before it.
    #[serde(default)]
    pub spelling: Vec<char>,
    /// The index's languages ([`super::IndexInfo::languages`]): what a query is
    /// read in. Empty for English (and in fragments written before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub languages: Vec<String>,
    /// Every language a chunk is in ([`super::IndexInfo::chunk_languages`]):
    /// what a search in one language keeps. Empty when every chunk is English.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunk_languages: Vec<String>,
    /// Each chunk's language as runs `[place in chunk_languages, count]`, in
    /// chunk order (a page's chunks, and a language folder's pages, are
    /// neighbours: a few runs per language).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lang_runs: Vec<[u32; 2]>,
    /// The sets of languages chunks stand in for
    /// ([`super::IndexInfo::stand_in_sets`]). Empty when none does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stand_in_sets: Vec<Vec<String>>,
    /// Each chunk's stand-in set as runs `[number from 1 in stand_in_sets (0:
    /// none), count]`, in chunk order (a page's chunks are neighbours).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stand_in_runs: Vec<[u32; 2]>,
}

/// Fragment names.
pub const MANIFEST: &str = "manifest.json";
pub const LENS: &str = "lens.bin";

pub fn shard_name(i: usize) -> String {
    format!("t/{i}.bin")
}

pub fn record_name(doc: u32) -> String {
    format!("r/{doc}.json")
}

pub fn completion_name(i: usize) -> String {
    format!("c/{i}.json")
}

pub fn spelling_name(initial: char) -> String {
    format!("v/{initial}.txt")
}

/// Why fragments could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FragmentError {
    #[error("search manifest: {0}; rebuild the site with `site-builder build`")]
    Manifest(String),
    #[error("search fragment `{file}`: {message}; rebuild the site with `site-builder build`")]
    Fragment { file: String, message: String },
    #[error("`{0}` is not a fragment of this index")]
    Unknown(String),
    #[error("index: {0}")]
    Index(#[from] IndexError),
}

fn bad(file: &str, message: impl std::fmt::Display) -> FragmentError {
    FragmentError::Fragment { file: file.to_string(), message: message.to_string() }
}

/// The split index: every file's name and bytes (uncompressed), manifest first.
pub struct Fragments {
    pub manifest: Manifest,
    pub files: Vec<(String, Vec<u8>)>,
}

/// Splits `idx` into fragments, each vocabulary shard about `shard_bytes` of
/// postings (before compression). Records are one per chunk: a query shows ten
/// or twenty chunks of as many pages, so per-page files would carry the page's
/// other sections for nothing.
pub fn split(idx: &Index<'_>, shard_bytes: usize) -> Result<Fragments, IndexError> {
    split_with(idx, shard_bytes, &[])
}

/// One initial's spelling list (`v/{c}.txt`): a line `term df` per term (in
/// an index of several languages `term i:n i:n …`, the chunks of the
/// language at place `i` of [`Manifest::chunk_languages`] that have it), an
/// empty line, then a word per line. Plain text, read by hand: a serde format
/// cost the browser engine's wasm more than the whole typo reading.
#[derive(Debug, Default, PartialEq)]
pub struct SpellingList {
    /// Every plain ASCII term that starts with the initial, and how many chunks
    /// of each language have it: `(place in chunk_languages, chunks)`, place 0
    /// alone in an index of one language.
    pub terms: Vec<(String, Vec<(usize, usize)>)>,
    /// The words of the language that start with it once folded (`ü`, `û`
    /// under `u`; the encoder's [`crate::encoder::Encoder::dictionary`]):
    /// never corrected.
    pub words: Vec<String>,
}

impl SpellingList {
    fn to_text(&self) -> Vec<u8> {
        let mut out = String::new();
        for (t, counts) in &self.terms {
            out.push_str(t);
            match counts.as_slice() {
                [(0, n)] => out.push_str(&format!(" {n}")),
                _ => counts.iter().for_each(|(l, n)| out.push_str(&format!(" {l}:{n}"))),
            }
            out.push('\n');
        }
        out.push('\n');
        for w in &self.words {
            out.push_str(w);
            out.push('\n');
        }
        out.into_bytes()
    }

    fn parse(text: &str) -> Option<SpellingList> {
        let (terms, words) = text.split_once("\n\n").unwrap_or((text, ""));
        let terms = terms
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| {
                let (t, counts) = l.split_once(' ')?;
                let counts = counts
                    .split(' ')
                    .map(|c| match c.split_once(':') {
                        Some((l, n)) => Some((l.parse().ok()?, n.parse().ok()?)),
                        None => Some((0, c.parse().ok()?)),
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some((t.to_string(), counts))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(SpellingList { terms, words: words.lines().filter(|l| !l.is_empty()).map(str::to_string).collect() })
    }
}

/// [`split`], with the encoder's `dictionary` in the spelling lists, as the
/// build writes them: the browser then reads a query's typos as the edge does.
pub fn split_with(idx: &Index<'_>, shard_bytes: usize, dictionary: &[String]) -> Result<Fragments, IndexError> {
    let n = idx.len();
    let page_runs = runs(n, |d| idx.page_of(d));
    let mut files = Vec::new();
    let lens: Vec<u8> = (0..n).flat_map(|d| idx.doc_len_of(d as u32).to_le_bytes()).collect();
    files.push((LENS.to_string(), lens));

    // Shard `i` is named in the manifest by its first term.
    let mut shards: Vec<String> = Vec::new();
    let mut cur = ShardWriter::default();
    for (term, docs, tfs) in idx.vocabulary() {
        if !cur.is_empty() && cur.bytes + term.len() + docs.len() * 8 > shard_bytes {
            files.push((shard_name(shards.len() - 1), std::mem::take(&mut cur).finish()));
        }
        if cur.is_empty() {
            shards.push(String::from_utf8_lossy(term).into_owned());
        }
        cur.push(term, docs, tfs);
    }
    if !cur.is_empty() {
        files.push((shard_name(shards.len() - 1), cur.finish()));
    }
    // The completion table: every prefix of two characters or more of every term
    // (the shortest a reader's word being typed is read at), with what the index
    // completes it to. Grouped by sorted range like the shards.
    let mut prefixes: BTreeSet<String> = BTreeSet::new();
    for (term, _, _) in idx.vocabulary() {
        let Ok(t) = std::str::from_utf8(term) else { continue };
        for (n, (i, c)) in t.char_indices().enumerate() {
            if n >= 1 {
                prefixes.insert(t[..i + c.len_utf8()].to_string());
            }
        }
    }
    let mut completions: Vec<String> = Vec::new();
    let mut group: Vec<(String, String)> = Vec::new();
    let mut group_bytes = 0;
    for p in prefixes {
        let Some(c) = bm25::Postings::completion(idx, &p) else { continue };
        group_bytes += p.len() + c.len() + 6;
        group.push((p, c));
        if group_bytes > shard_bytes / 2 {
            completions.push(group[0].0.clone());
            files.push((completion_name(completions.len() - 1), serde_json::to_vec(&group).unwrap_or_default()));
            group.clear();
            group_bytes = 0;
        }
    }
    if let Some((first, _)) = group.first() {
        completions.push(first.clone());
        files.push((completion_name(completions.len() - 1), serde_json::to_vec(&group).unwrap_or_default()));
    }
    let spelling = spelling_lists(idx, dictionary, &mut files);
    for d in 0..n as u32 {
        let meta = idx.chunk(d)?;
        files.push((record_name(d), serde_json::to_vec(&meta).map_err(|e| IndexError::Invalid(e.to_string()))?));
    }
    let info = idx.info();
    let lang_runs =
        if info.chunk_languages.is_empty() { Vec::new() } else { runs(n, |d| u32::from(idx.lang_index(d))) };
    let stand_in_runs =
        if info.stand_in_sets.is_empty() { Vec::new() } else { runs(n, |d| u32::from(idx.stand_in_index(d))) };
    let p = idx.default_params(10);
    let manifest = Manifest {
        format: FORMAT,
        chunks: n,
        pages: idx.info().pages,
        avg_len: idx.avg_len_value(),
        k1: p.k1,
        b: p.b,
        depth: p.depth,
        page_runs,
        shards,
        completions,
        spelling,
        languages: info.languages.clone(),
        chunk_languages: info.chunk_languages.clone(),
        lang_runs,
        stand_in_sets: info.stand_in_sets.clone(),
        stand_in_runs,
    };
    let json = serde_json::to_vec(&manifest).map_err(|e| IndexError::Invalid(e.to_string()))?;
    files.insert(0, (MANIFEST.to_string(), json));
    Ok(Fragments { manifest, files })
}

/// `[value, count]` runs of `of` over chunks `0..n`, in chunk order.
fn runs(n: usize, of: impl Fn(u32) -> u32) -> Vec<[u32; 2]> {
    let mut runs: Vec<[u32; 2]> = Vec::new();
    for d in 0..n as u32 {
        let v = of(d);
        match runs.last_mut() {
            Some(run) if run[0] == v => run[1] += 1,
            _ => runs.push([v, 1]),
        }
    }
    runs
}

/// The spelling lists ([`Manifest::spelling`]) added to `files`; returns their
/// initials. Only plain ASCII terms, by their initials `a`..`z`: a slip's
/// neighbour in English is never anything else, and in another Latin
/// alphabet its term is folded to ASCII as every term is (`Schlüssel` →
/// `schluessel`'s stem); a word of another script is not corrected here.
/// Dictionary words are filed by their folded initial too
/// ([`analyzer::folded_initial`]): a slip in *Überwachung* is looked up in
/// the `u` list, its terms and its words alike.
fn spelling_lists(idx: &Index<'_>, dictionary: &[String], files: &mut Vec<(String, Vec<u8>)>) -> Vec<char> {
    let mut lists: std::collections::BTreeMap<char, SpellingList> = Default::default();
    for (term, docs, _) in idx.vocabulary() {
        let Ok(t) = std::str::from_utf8(term) else { continue };
        if t.len() >= 2 && t.bytes().all(|b| b.is_ascii_lowercase()) {
            let mut counts: Vec<(usize, usize)> = Vec::new();
            for &d in docs {
                // Place 0 for every chunk of an index of one language.
                let l = usize::from(idx.lang_index(d));
                match counts.iter_mut().find(|c| c.0 == l) {
                    Some(c) => c.1 += 1,
                    None => counts.push((l, 1)),
                }
            }
            counts.sort_unstable();
            lists.entry(t.as_bytes()[0] as char).or_default().terms.push((t.to_string(), counts));
        }
    }
    for w in dictionary {
        if let Some(list) = analyzer::folded_initial(w).and_then(|c| lists.get_mut(&c)) {
            list.words.push(w.clone());
        }
    }
    for (c, list) in &lists {
        files.push((spelling_name(*c), list.to_text()));
    }
    lists.into_keys().collect()
}

#[derive(Default)]
struct ShardWriter {
    bytes: usize,
    terms: Vec<u8>,
    terms_off: Vec<u32>,
    post_off: Vec<u32>,
    /// Chunk ids as gaps from the previous posting of the term (the first as is):
    /// small numbers, which compress.
    gaps: Vec<u32>,
    tfs: Vec<f32>,
}

impl ShardWriter {
    fn is_empty(&self) -> bool {
        self.terms_off.len() <= 1
    }

    fn push(&mut self, term: &[u8], docs: &[u32], tfs: &[f32]) {
        if self.terms_off.is_empty() {
            self.terms_off.push(0);
            self.post_off.push(0);
        }
        self.terms.extend_from_slice(term);
        self.terms_off.push(self.terms.len() as u32);
        let mut prev = 0;
        for &d in docs {
            self.gaps.push(d - prev);
            prev = d;
        }
        self.tfs.extend_from_slice(tfs);
        self.post_off.push(self.gaps.len() as u32);
        self.bytes += term.len() + docs.len() * 8;
    }

    fn finish(self) -> Vec<u8> {
        let mut w = Writer::new(SHARD_MAGIC, FORMAT);
        w.add_u32("terms.off", &self.terms_off);
        w.add("terms", self.terms);
        w.add_u32("post.off", &self.post_off);
        w.add_u32("post.gap", &self.gaps);
        w.add_f32("post.tf", &self.tfs);
        w.finish()
    }
}

/// One vocabulary shard, decoded.
struct Shard {
    terms: Vec<u8>,
    terms_off: Vec<u32>,
    post_off: Vec<u32>,
    docs: Vec<u32>,
    tfs: Vec<f32>,
}

impl Shard {
    fn open(file: &str, bytes: &[u8], chunks: usize) -> Result<Shard, FragmentError> {
        let aligned = AlignedBytes::new(bytes);
        let c = Container::open(aligned.as_slice(), SHARD_MAGIC, FORMAT).map_err(|e| bad(file, e))?;
        let get = |e: ContainerError| bad(file, e);
        let terms_off = c.u32s("terms.off").map_err(get)?.to_vec();
        let terms = c.bytes("terms").map_err(get)?.to_vec();
        let post_off = c.u32s("post.off").map_err(get)?.to_vec();
        let gaps = c.u32s("post.gap").map_err(get)?;
        let tfs = c.f32s("post.tf").map_err(get)?.to_vec();
        check_offsets("terms.off", &terms_off, terms.len()).map_err(get)?;
        check_offsets("post.off", &post_off, gaps.len()).map_err(get)?;
        if terms_off.is_empty() || post_off.len() != terms_off.len() || tfs.len() != gaps.len() {
            return Err(bad(file, "the term, posting and frequency counts disagree"));
        }
        let term = |i: usize| &terms[terms_off[i] as usize..terms_off[i + 1] as usize];
        if (1..terms_off.len() - 1).any(|i| term(i - 1) >= term(i)) {
            return Err(bad(file, "terms are not in ascending order"));
        }
        let mut docs = Vec::with_capacity(gaps.len());
        for t in 0..post_off.len() - 1 {
            let mut prev: u32 = 0;
            for (k, &g) in gaps[post_off[t] as usize..post_off[t + 1] as usize].iter().enumerate() {
                let d = prev.checked_add(g).filter(|&d| (d as usize) < chunks && (k == 0 || g > 0));
                let Some(d) = d else { return Err(bad(file, "a posting names a chunk the index does not have")) };
                docs.push(d);
                prev = d;
            }
        }
        Ok(Shard { terms, terms_off, post_off, docs, tfs })
    }

    fn len(&self) -> usize {
        self.terms_off.len() - 1
    }

    fn term(&self, i: usize) -> &[u8] {
        &self.terms[self.terms_off[i] as usize..self.terms_off[i + 1] as usize]
    }

    /// Index of `t` in the shard, if it is one of its terms.
    fn find(&self, t: &[u8]) -> Option<usize> {
        let i = bm25::lower_bound(self.len(), |i| self.term(i), t);
        (i < self.len() && self.term(i) == t).then_some(i)
    }

    fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.post_off[i] as usize..self.post_off[i + 1] as usize
    }
}

/// One step of a search: either the files it still needs, or the answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Fetch these fragments, [`Engine::add`] them and ask again.
    Need(Vec<String>),
    Done(SearchResponse),
}

/// A `bm25` search engine over the fragments given so far.
pub struct Engine {
    manifest: Manifest,
    /// The first chunk of each page run, ascending (memory by the manifest's
    /// size, not by the chunk count it claims).
    run_starts: Vec<u32>,
    lens: Option<Vec<f32>>,
    shards: HashMap<usize, Shard>,
    completions: HashMap<usize, HashMap<String, String>>,
    /// The spelling lists given, by initial `a`..`z` (sorted lists searched in
    /// place: a map per list would cost the wasm more than the lookups save).
    spelling: Vec<Option<SpellingList>>,
    records: HashMap<u32, ChunkMeta>,
    /// The manifest's languages, read.
    langs: super::lang::Languages,
    /// The first chunk of each language run ([`Manifest::lang_runs`]).
    lang_starts: Vec<u32>,
    /// The first chunk of each stand-in run ([`Manifest::stand_in_runs`]).
    stand_in_starts: Vec<u32>,
    /// The language searches are restricted to ([`Engine::set_language`]).
    lang: Option<LangTag>,
}

impl Engine {
    /// Opens the engine on the manifest's bytes.
    pub fn open(manifest: &[u8]) -> Result<Engine, FragmentError> {
        let m: Manifest = serde_json::from_slice(manifest).map_err(|e| FragmentError::Manifest(e.to_string()))?;
        if m.format != FORMAT {
            return Err(FragmentError::Manifest(format!(
                "format {} where this engine reads format {FORMAT}",
                m.format
            )));
        }
        if m.shards.windows(2).any(|w| w[0] >= w[1]) || m.completions.windows(2).any(|w| w[0] >= w[1]) {
            return Err(FragmentError::Manifest("shards are not in ascending order".into()));
        }
        // Chunk ids are u32 (and usize is 32 bits in the browser): counts past that
        // are a corrupt manifest, and every sum below is checked.
        if u32::try_from(m.chunks).is_err() || m.chunks.checked_mul(4).is_none() {
            return Err(FragmentError::Manifest(format!("{} chunks is more than an index holds", m.chunks)));
        }
        let run_starts = starts_of(&m.page_runs, m.pages, m.chunks, "page")?;
        let lang_starts = if m.chunk_languages.is_empty() && m.lang_runs.is_empty() {
            Vec::new()
        } else {
            starts_of(&m.lang_runs, m.chunk_languages.len(), m.chunks, "language")?
        };
        let stand_in_starts = if m.stand_in_sets.is_empty() && m.stand_in_runs.is_empty() {
            Vec::new()
        } else {
            starts_of(&m.stand_in_runs, m.stand_in_sets.len() + 1, m.chunks, "stand-in")?
        };
        let langs = super::lang::Languages::read(&m.languages, &m.chunk_languages).map_err(|code| {
            FragmentError::Manifest(format!(
                "the site is in {code}, which this engine does not read; build the site with the engine that reads its languages"
            ))
        })?;
        Ok(Engine {
            manifest: m,
            run_starts,
            lens: None,
            shards: HashMap::new(),
            completions: HashMap::new(),
            spelling: (0..26).map(|_| None).collect(),
            records: HashMap::new(),
            langs,
            lang_starts,
            stand_in_starts,
            lang: None,
        })
    }

    /// Restricts the searches that follow to `lang` (`None`: every language),
    /// as `GET /api/search?lang=` does: the reader's language, which a page
    /// sets once (or on "Search all languages"), not a word of each query.
    pub fn set_language(&mut self, lang: Option<LangTag>) {
        self.lang = lang;
    }

    /// Whether chunk `doc` is one `lang` asks for (every chunk without a
    /// filter), as [`Index`] filters it.
    fn in_language(&self, lang: Option<LangTag>) -> impl Fn(u32) -> bool + '_ {
        let m = &self.manifest;
        let keep = lang.map(|tag| super::lang::InLanguage::new(tag, &m.chunk_languages, &m.stand_in_sets));
        move |doc| match &keep {
            None => true,
            Some(k) => k.keeps(self.lang_of(doc), run_value(&self.stand_in_starts, &m.stand_in_runs, doc)),
        }
    }

    /// Chunk `doc`'s place in [`Manifest::chunk_languages`] (0 in an index of
    /// one language), by the language runs.
    fn lang_of(&self, doc: u32) -> usize {
        run_value(&self.lang_starts, &self.manifest.lang_runs, doc)
    }

    /// The page of chunk `doc` ([`relevance::NO_PAGE`] for a chunk the index does not have).
    fn page_of(&self, doc: u32) -> u32 {
        match self.run_starts.partition_point(|&s| s <= doc).checked_sub(1) {
            Some(r) if (doc as usize) < self.manifest.chunks => self.manifest.page_runs[r][0],
            _ => relevance::NO_PAGE,
        }
    }

    /// Takes in a fragment the engine asked for (its name as [`Step::Need`] gave it).
    pub fn add(&mut self, file: &str, bytes: &[u8]) -> Result<(), FragmentError> {
        let unknown = || FragmentError::Unknown(file.to_string());
        if file == LENS {
            if bytes.len() != self.manifest.chunks * 4 {
                return Err(bad(file, format!("{} bytes for {} chunks", bytes.len(), self.manifest.chunks)));
            }
            let lens = bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            self.lens = Some(lens);
        } else if let Some(i) = file.strip_prefix("t/").and_then(|s| s.strip_suffix(".bin")) {
            let i: usize = i.parse().map_err(|_| unknown())?;
            if i >= self.manifest.shards.len() {
                return Err(unknown());
            }
            let shard = Shard::open(file, bytes, self.manifest.chunks)?;
            self.shards.insert(i, shard);
        } else if let Some(i) = file.strip_prefix("c/").and_then(|s| s.strip_suffix(".json")) {
            let i: usize = i.parse().map_err(|_| unknown())?;
            if i >= self.manifest.completions.len() {
                return Err(unknown());
            }
            let pairs: Vec<(String, String)> = serde_json::from_slice(bytes).map_err(|e| bad(file, e))?;
            self.completions.insert(i, pairs.into_iter().collect());
        } else if let Some(c) = file.strip_prefix("v/").and_then(|s| s.strip_suffix(".txt")) {
            let c = c.parse::<char>().ok().filter(|c| self.manifest.spelling.contains(c)).ok_or_else(unknown)?;
            let slot = letter(c).ok_or_else(unknown)?;
            let list = std::str::from_utf8(bytes)
                .ok()
                .and_then(SpellingList::parse)
                .ok_or_else(|| bad(file, "not a spelling list (`term df` lines, an empty line, words)"))?;
            if list.terms.iter().map(|t| &t.0).chain(&list.words).any(|t| analyzer::folded_initial(t) != Some(c)) {
                return Err(bad(file, "a term of another initial"));
            }
            let places = self.manifest.chunk_languages.len().max(1);
            if list.terms.iter().flat_map(|t| &t.1).any(|&(l, _)| l >= places) {
                return Err(bad(file, "a count for a language the index does not have"));
            }
            if list.terms.windows(2).any(|w| w[0].0 >= w[1].0) || list.words.windows(2).any(|w| w[0] >= w[1]) {
                return Err(bad(file, "not in ascending order"));
            }
            self.spelling[slot] = Some(list);
        } else if let Some(d) = file.strip_prefix("r/").and_then(|s| s.strip_suffix(".json")) {
            let d: u32 = d.parse().map_err(|_| unknown())?;
            if d as usize >= self.manifest.chunks {
                return Err(unknown());
            }
            let meta: ChunkMeta = serde_json::from_slice(bytes).map_err(|e| bad(file, e))?;
            self.records.insert(d, meta);
        } else {
            return Err(unknown());
        }
        Ok(())
    }

    /// The shard that holds `term` if the vocabulary has it.
    fn shard_of(&self, term: &[u8]) -> Option<usize> {
        self.manifest.shards.partition_point(|first| first.as_bytes() <= term).checked_sub(1)
    }

    /// The vocabulary shards a query reads: one per term, and for a word being
    /// typed every shard its completions may be in.
    fn shards_for(&self, query: &str, partial: bool) -> BTreeSet<usize> {
        let mut need: BTreeSet<usize> = analyzer::every_reading(query, self.langs.every())
            .iter()
            .filter_map(|t| self.shard_of(t.as_bytes()))
            .collect();
        if partial {
            for p in typed_prefixes(query) {
                if let Some(c) = self.completion_group(&p).and_then(|g| self.completions.get(&g)?.get(&p)) {
                    // The completion, and the terms it is read as.
                    need.extend(self.shard_of(c.as_bytes()));
                    need.extend(
                        analyzer::every_reading(c, self.langs.every())
                            .iter()
                            .filter_map(|t| self.shard_of(t.as_bytes())),
                    );
                }
            }
        }
        // A compound no chunk has is read as its parts (`compound`): once its
        // own term's shard is in and lacks it, the shards of the terms it may
        // split into are needed too.
        let head = if partial { bm25::split_last_word(query).0 } else { query };
        let unknown = |t: &str| {
            let shard = self.shard_of(t.as_bytes()).and_then(|i| self.shards.get(&i));
            shard.is_some_and(|s| s.find(t.as_bytes()).is_none())
        };
        let parts = compound::candidates(head, self.langs.every(), &unknown);
        need.extend(parts.iter().filter_map(|t| self.shard_of(t.as_bytes())));
        need
    }

    /// How many chunks in the languages `covered` marks have `term`, as
    /// [`Index::df_among`] counts them: from its shard when that is in, else
    /// from its initial's spelling list (`None`: neither has it, or neither is
    /// in).
    fn df(&self, term: &str, covered: &[bool]) -> Option<usize> {
        let counted = |l: usize| covered.get(l).copied().unwrap_or(false);
        if let Some(shard) = self.shard_of(term.as_bytes()).and_then(|i| self.shards.get(&i)) {
            let i = shard.find(term.as_bytes())?;
            return Some(shard.docs[shard.range(i)].iter().filter(|&&d| counted(self.lang_of(d))).count());
        }
        let list = self.spelling_of(term)?;
        let i = list.terms.binary_search_by(|t| t.0.as_str().cmp(term)).ok()?;
        Some(list.terms[i].1.iter().filter(|(l, _)| counted(*l)).map(|c| c.1).sum())
    }

    /// Whether `word` is a word of the language, by its initial's spelling list.
    fn is_word(&self, word: &str) -> bool {
        self.spelling_of(word).is_some_and(|l| l.words.binary_search_by(|w| w.as_str().cmp(word)).is_ok())
    }

    /// The spelling list of `word`'s folded initial, if given.
    fn spelling_of(&self, word: &str) -> Option<&SpellingList> {
        self.spelling.get(letter(analyzer::folded_initial(word)?)?)?.as_ref()
    }

    /// The query as the index searches it, once its words' shards are in: the
    /// fragments a possible typo still needs (`Err`: the spelling lists of the
    /// initials of the words no chunk has, then the shards of the corrected
    /// words), or the corrected text (`Ok`, `None` when nothing was a slip;
    /// [`super::typo`]).
    fn spelled(&self, query: &str, partial: bool) -> Result<Option<String>, Vec<String>> {
        if self.manifest.spelling.is_empty() {
            return Ok(None);
        }
        let Some(lang) = self.langs.spelling(query, self.lang) else { return Ok(None) };
        let covered = super::lang::spelled_in(lang, &self.manifest.chunk_languages);
        let mut initials: Vec<char> = super::typo::suspects(query, partial, lang)
            .iter()
            .filter(|s| self.df(&s.term, &covered).is_none())
            .filter_map(|s| analyzer::folded_initial(&s.word))
            .filter(|&c| self.manifest.spelling.contains(&c) && self.spelling_of(&c.to_string()).is_none())
            .collect();
        initials.sort_unstable();
        initials.dedup();
        if !initials.is_empty() {
            return Err(initials.into_iter().map(spelling_name).collect());
        }
        let Some(c) = super::typo::correct(query, partial, lang, |t| self.df(t, &covered), |w| self.is_word(w)) else {
            return Ok(None);
        };
        let need: Vec<String> = self
            .shards_for(&c.text, partial)
            .into_iter()
            .filter(|i| !self.shards.contains_key(i))
            .map(shard_name)
            .collect();
        if need.is_empty() {
            Ok(Some(c.text))
        } else {
            Err(need)
        }
    }

    /// The completion group that holds prefix `p` if the table has it.
    fn completion_group(&self, p: &str) -> Option<usize> {
        self.manifest.completions.partition_point(|first| first.as_str() <= p).checked_sub(1)
    }

    /// The completion groups the word being typed needs, not yet given.
    fn missing_completions(&self, query: &str) -> Vec<String> {
        let groups: BTreeSet<usize> = typed_prefixes(query).iter().filter_map(|p| self.completion_group(p)).collect();
        groups.into_iter().filter(|g| !self.completions.contains_key(g)).map(completion_name).collect()
    }

    /// Answers page `page` (1-based) of `k` results for `query` in `bm25` mode, as
    /// `GET /api/search?mode=bm25` would (with `partial`, the last word is being
    /// typed), or says which fragments that needs first.
    pub fn search(&self, query: &str, k: usize, page: usize, partial: bool) -> Step {
        // As `Service::rank` asks the index: one result further tells whether a
        // next page exists.
        let p = SearchParams {
            mode: Mode::Bm25,
            depth: self.manifest.depth,
            k1: self.manifest.k1,
            b: self.manifest.b,
            partial,
            ..SearchParams::defaults(1)
        };
        match self.prepare(query, partial) {
            Err(need) => Step::Need(need),
            Ok(searched) => self.rank_page(query, searched.as_deref(), p, k, page, None),
        }
    }

    /// What ranking `query` needs first: the fragments still missing (`Err`),
    /// or, with all of them in, the query as it is searched (`Ok`: corrected
    /// when a word was a slip, [`Engine::spelled`]).
    fn prepare(&self, query: &str, partial: bool) -> Result<Option<String>, Vec<String>> {
        let need = self.missing(query, partial);
        if need.is_empty() {
            self.spelled(query, partial)
        } else {
            Err(need)
        }
    }

    /// The fragments a query's words still need before it can be ranked.
    fn missing(&self, query: &str, partial: bool) -> Vec<String> {
        let mut need: Vec<String> = Vec::new();
        if self.lens.is_none() {
            need.push(LENS.to_string());
        }
        if partial {
            // The completion table first: which shards the word being typed needs
            // depends on what it completes to.
            need.extend(self.missing_completions(query));
        }
        if need.iter().all(|f| f == LENS) {
            need.extend(
                self.shards_for(query, partial).into_iter().filter(|i| !self.shards.contains_key(i)).map(shard_name),
            );
        }
        need
    }

    /// Page `page` of `k` results ranked with `p` (its `k` is set here), as
    /// `Service::search` ranks them at the edge: in the engine's language
    /// ([`Engine::set_language`]) and, when that has no good match but every
    /// language has, in every language (`lang_fallback`). `searched` is
    /// [`Engine::prepare`]'s corrected query; every fragment it named is in.
    fn rank_page(
        &self,
        query: &str,
        searched: Option<&str>,
        p: SearchParams,
        k: usize,
        page: usize,
        dense: Option<Dense<'_>>,
    ) -> Step {
        let k = k.max(1);
        let page = page.max(1);
        let offset = (page - 1) * k;
        let wanted = offset + k;
        let text = searched.unwrap_or(query);
        let p = fusion::for_query(&SearchParams { k: wanted + 1, lang: self.lang, ..p }, text);
        let mut ranked = self.rank(text, &p, dense.as_ref());
        let mut fallback = None;
        if let Some(tag) = p.lang.filter(|_| !ranked.evidence.matched()) {
            let all = self.rank(text, &SearchParams { lang: None, ..p }, dense.as_ref());
            if all.evidence.matched() {
                (ranked, fallback) = (all, Some(tag));
            }
        }
        let Ranked { mut hits, evidence, terms } = ranked;
        let has_more = hits.len() > wanted;
        hits.truncate(wanted);
        hits.drain(..offset.min(hits.len()));
        let missing: Vec<String> =
            hits.iter().filter(|h| !self.records.contains_key(&h.doc)).map(|h| record_name(h.doc)).collect();
        if !missing.is_empty() {
            return Step::Need(missing);
        }
        let weights = bm25::idf_weights(self, &terms);
        let mut hl = Highlighter::by_idf(text, &weights);
        let results = hits
            .iter()
            .enumerate()
            .filter_map(|(i, h)| {
                Some(SearchResult::from_chunk(offset + i + 1, self.records.get(&h.doc)?.clone(), h, &mut hl))
            })
            .collect();
        Step::Done(SearchResponse {
            query: query.to_string(),
            mode: p.mode,
            k,
            page,
            results,
            matched: evidence.matched(),
            corrected: searched.map(str::to_string),
            lang: if fallback.is_some() { None } else { p.lang.map(|t| t.to_string()) },
            lang_fallback: fallback.map(|t| t.to_string()),
            has_more,
            timings_ms: Timings::default(),
            encode_cached: false,
        })
    }

    /// `text` ranked with `p`, as `Index::candidates` and `Index::fuse` rank
    /// it: BM25 from the fragments and, with `dense`, the query's vector
    /// against every chunk, both in `p.lang` only when it is set. No hits when
    /// there is no good match.
    fn rank(&self, text: &str, p: &SearchParams, dense: Option<&Dense<'_>>) -> Ranked {
        let depth = p.depth.max(p.k);
        let bm25::QueryReading { terms, readings } = bm25::read_query(self, text, p.mode, p.partial, p.lang);
        let keep = self.in_language(p.lang);
        let (dense_list, mut sparse) = match dense {
            Some(d) => (d.top_where(depth, &keep), bm25::scores(&WithNorms(self, d.norms()), terms.clone(), p.k1, p.b)),
            None => (Vec::new(), bm25::scores(self, terms.clone(), p.k1, p.b)),
        };
        if p.lang.is_some() {
            sparse.retain(|s| keep(s.0));
        }
        let mut evidence = relevance::Evidence {
            cosine: (p.mode != Mode::Bm25).then(|| dense_list.first().map(|d| d.1)).flatten(),
            lexical: relevance::lexical_of(self, &readings, sparse.first().map(|s| s.0)),
            agree: relevance::agree(&dense_list, &sparse, |d| self.page_of(d)),
        };
        if p.lang.is_some() {
            evidence = evidence.in_language(p.mode != Mode::Bm25 && dense.is_some(), !sparse.is_empty());
        }
        sparse.truncate(depth);
        let fused = fusion::fuse(p, &dense_list, &sparse, |doc| dense.map(|d| d.score(doc)));
        let shown = relevance::shown_over(self, &readings, evidence, p.mode);
        let mut hits = fusion::finish(p, fused, |d| self.page_of(d), shown);
        if !evidence.matched() {
            // No good match: what `Service::search` answers (empty, `matched` false).
            hits.clear();
        }
        Ranked { hits, evidence, terms }
    }
}

/// One ranking of a query ([`Engine::rank`]).
struct Ranked {
    hits: Vec<super::Hit>,
    evidence: relevance::Evidence,
    /// The query's terms as read (for the snippets' weights).
    terms: Vec<String>,
}

/// The first chunk of each run of `runs` (`[what, count]`), checked: every
/// `what` below `kinds`, the runs covering exactly `chunks` chunks. Memory by
/// the manifest's size, not by the chunk count it claims.
fn starts_of(runs: &[[u32; 2]], kinds: usize, chunks: usize, what: &str) -> Result<Vec<u32>, FragmentError> {
    let mut starts = Vec::with_capacity(runs.len());
    let mut covered: usize = 0;
    for &[kind, count] in runs {
        starts.push(covered as u32);
        match covered.checked_add(count as usize) {
            Some(c) if (kind as usize) < kinds && c <= chunks => covered = c,
            _ => return Err(FragmentError::Manifest(format!("a {what} run is outside the index"))),
        }
    }
    if covered != chunks {
        return Err(FragmentError::Manifest(format!("{what} runs cover {covered} of {chunks} chunks")));
    }
    Ok(starts)
}

/// The value of the run holding chunk `doc` (`starts` from [`starts_of`]
/// over `runs`); 0 without runs.
fn run_value(starts: &[u32], runs: &[[u32; 2]], doc: u32) -> usize {
    match starts.partition_point(|&s| s <= doc).checked_sub(1) {
        Some(r) => runs[r][0] as usize,
        None => 0,
    }
}

/// The slot of a spelling list's initial (`a`..`z`).
fn letter(c: char) -> Option<usize> {
    c.is_ascii_lowercase().then(|| (c as u8 - b'a') as usize)
}

/// The lowercased prefixes of `query`'s last word that [`bm25::partial_terms`]
/// may complete ([`bm25::word_prefixes`]), as the completion table keys them.
fn typed_prefixes(query: &str) -> Vec<String> {
    let (_, last) = bm25::split_last_word(query);
    bm25::word_prefixes(last).into_iter().map(str::to_lowercase).filter(|p| !p.is_empty()).collect()
}

/// The fragments given so far as a source of postings (shards not given are
/// simply absent: [`Engine::search`] asks for them first).
impl bm25::Postings for Engine {
    type List<'s>
        = bm25::PostingIter<'s>
    where
        Self: 's;

    fn chunks(&self) -> usize {
        self.manifest.chunks
    }

    fn avg_len(&self) -> f32 {
        self.manifest.avg_len
    }

    fn postings(&self, term: &str) -> Option<(usize, bm25::PostingIter<'_>)> {
        let shard = self.shards.get(&self.shard_of(term.as_bytes())?)?;
        let r = shard.range(shard.find(term.as_bytes())?);
        let lens = self.lens.as_deref().unwrap_or(&[]);
        Some((r.len(), bm25::PostingIter::new(&shard.docs[r.clone()], &shard.tfs[r], lens)))
    }

    fn doc_norm(&self, _doc: u32) -> f32 {
        1.0
    }

    /// From the completion table (the index's own scan, made at build time).
    fn completion(&self, p: &str) -> Option<String> {
        self.completions.get(&self.completion_group(p)?)?.get(p).cloned()
    }

    fn languages(&self) -> &super::lang::Languages {
        &self.langs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::container::AlignedBytes;
    use crate::index::tests::{chunk, params, unit};
    use crate::index::{build, VectorStorage};

    /// An index of 60 chunks on 20 pages over a small vocabulary, so that terms
    /// repeat across chunks and pages.
    fn corpus() -> AlignedBytes {
        let words = [
            "parking", "permit", "park", "parkway", "printer", "print", "eduroam", "network", "password", "reset",
            "storage", "quota", "upload", "allas", "bucket", "puhti", "batch", "job", "gpu", "module",
        ];
        let mut chunks = Vec::new();
        for i in 0..60usize {
            let text: Vec<&str> = (0..12).map(|j| words[(i * 7 + j * j * 3 + j) % words.len()]).collect();
            let page = format!("p{}", i / 3);
            let mut c = chunk(&format!("{page}_{i}"), &page, words[i % words.len()], &text.join(" "));
            c.text = format!("{} --gres=nvme:{}", c.text, i % 4);
            if i % 9 == 0 {
                // A compound keeps its words as written: "parking" beside the stem "park".
                c.text.push_str(" see buying-a-parking-permit");
            }
            c.index_text = c.text.clone();
            chunks.push(c);
        }
        let dim = 8;
        let vecs: Vec<f32> =
            (0..chunks.len()).flat_map(|i| unit(&[1.0, i as f32, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])).collect();
        AlignedBytes::new(&build(&chunks, &vecs, dim, &params(VectorStorage::F16)))
    }

    /// Runs a search to its end, handing the engine every fragment it asks for;
    /// returns the answer and how many fragments it fetched.
    fn run(
        e: &mut Engine,
        files: &HashMap<String, Vec<u8>>,
        q: &str,
        k: usize,
        page: usize,
        partial: bool,
    ) -> (SearchResponse, usize) {
        let mut fetched = 0;
        // The word's shards, its parts' (a compound), the spelling lists of
        // the words no chunk has, the shards of the words they are read as.
        for _ in 0..5 {
            match e.search(q, k, page, partial) {
                Step::Done(r) => return (r, fetched),
                Step::Need(names) => {
                    for n in names {
                        e.add(&n, &files[&n]).unwrap();
                        fetched += 1;
                    }
                }
            }
        }
        panic!("no answer after five rounds for {q:?}");
    }

    #[test]
    fn the_fragments_answer_as_the_index_does() {
        let bytes = corpus();
        let idx = Index::open(bytes.as_slice()).unwrap();
        let frags = split(&idx, 256).unwrap();
        assert!(frags.manifest.shards.len() > 5, "{:?}", frags.manifest.shards);
        let files: HashMap<String, Vec<u8>> = frags.files.into_iter().collect();
        let mut e = Engine::open(&files[MANIFEST]).unwrap();
        let queries = [
            ("parking permit", false),
            ("how do I reset my eduroam password", false),
            ("--gres=nvme:2 batch job", false),
            ("upload to allas bucket", false),
            ("print", false),
            ("zebra", false),
            ("parking per", true),
            ("gpu modu", true),
            ("pa", true),
            ("allas buck", true),
            ("parki", true),
            ("where do I parki", true),
        ];
        // The word being typed is read as the word it becomes, analysed: the stem
        // the pages use, not the compound's word as written.
        assert_eq!(idx.partial_terms("parki"), vec!["park".to_string()]);
        for (q, partial) in queries {
            for (k, page) in [(3, 1), (3, 2), (10, 1)] {
                let (got, _) = run(&mut e, &files, q, k, page, partial);
                let p = SearchParams { k: page * k + 1, mode: Mode::Bm25, partial, ..idx.default_params(k) };
                let mut want = idx.search(q, None, &p);
                let has_more = want.len() > page * k;
                want.truncate(page * k);
                want.drain(..((page - 1) * k).min(want.len()));
                let want: Vec<(String, f32, Option<f32>)> =
                    want.iter().map(|h| (idx.chunk(h.doc).unwrap().id, h.score, h.bm25)).collect();
                let got_hits: Vec<(String, f32, Option<f32>)> =
                    got.results.iter().map(|r| (r.chunk_id.clone(), r.score, r.bm25)).collect();
                assert_eq!(got_hits, want, "{q:?} k {k} page {page}");
                assert_eq!(got.has_more, has_more, "{q:?}");
                assert!(got.results.iter().enumerate().all(|(i, r)| r.rank == (page - 1) * k + i + 1));
                // Snippets as the index's own service cuts them: the ranking's
                // terms (the word being typed as its completions), in the
                // chunk's language.
                let weights = idx.candidates(q, None, &p).weights;
                let mut hl = crate::index::highlight::Highlighter::by_idf(q, &weights);
                for (r, h) in got.results.iter().zip(&want) {
                    let m = idx.chunk(idx_doc(&idx, &h.0)).unwrap();
                    let lang = crate::index::lang::Lang::from_tag(m.lang()).unwrap();
                    assert_eq!(r.snippet, hl.snippet_in(&m.text, lang), "{q:?}");
                }
            }
        }
        assert!(run(&mut e, &files, "parking permit", 3, 1, false).0.results.len() == 3);
    }

    fn idx_doc(idx: &Index<'_>, id: &str) -> u32 {
        (0..idx.len() as u32).find(|&d| idx.chunk(d).unwrap().id == id).unwrap()
    }

    /// Pages in German and English (one chunk of a German page detected as
    /// English; the English parking page, untranslated, stands in for
    /// German): their chunks and index.
    #[cfg(feature = "languages")]
    fn german_and_english() -> (Vec<crate::Chunk>, AlignedBytes) {
        let de = [
            "Verbinden Sie Ihren Laptop mit dem WLAN eduroam",
            "Drucken Sie Dokumente an jedem Drucker auf dem Campus",
            "Setzen Sie Ihr Passwort im Kundenportal zurück",
        ];
        let en = [
            "Connect your laptop to the eduroam wireless network",
            "Print documents on any printer on campus",
            "Reset your password in the customer portal",
            "Parking permits are sold per semester",
        ];
        let mut chunks = Vec::new();
        for (i, text) in de.iter().chain(&en).enumerate() {
            let german = i < de.len();
            for part in 0..2 {
                let page = format!("p{i}");
                let mut c = chunk(&format!("{page}_{part}"), &page, text, &format!("{text}. Teil {part} eduroam"));
                c.lang = if german && part == 0 { "de" } else { "en" }.into();
                if text.starts_with("Parking") {
                    c.stands_in = vec!["de".into()];
                }
                c.index_text = c.text.clone();
                chunks.push(c);
            }
        }
        let vecs: Vec<f32> = (0..chunks.len()).flat_map(|i| unit(&[1.0, i as f32, 0.0, 0.0])).collect();
        let bytes = AlignedBytes::new(&build(&chunks, &vecs, 4, &params(VectorStorage::F16)));
        (chunks, bytes)
    }

    /// [`german_and_english`], split: a search in one language answers from
    /// its chunks and its stand-ins as the index does, and one with no match
    /// there answers from every language and says so, as `Service::search`
    /// does.
    #[test]
    #[cfg(feature = "languages")]
    fn a_search_in_one_language_answers_as_the_edge_does() {
        let (chunks, bytes) = german_and_english();
        let idx = Index::open(bytes.as_slice()).unwrap();
        let frags = split(&idx, 128).unwrap();
        assert_eq!(frags.manifest.chunk_languages, ["de", "en"]);
        assert_eq!(frags.manifest.lang_runs.len(), 6, "{:?}", frags.manifest.lang_runs);
        assert_eq!(frags.manifest.stand_in_sets, [["de"]]);
        assert_eq!(frags.manifest.stand_in_runs, [[0, 12], [1, 2]]);
        let stands_in_for =
            |id: &str, tag: LangTag| chunks.iter().any(|c| c.id == id && c.stands_in.iter().any(|l| tag.covers(l)));
        let files: HashMap<String, Vec<u8>> = frags.files.into_iter().collect();
        let mut e = Engine::open(&files[MANIFEST]).unwrap();
        let ids = |r: &SearchResponse| r.results.iter().map(|r| r.chunk_id.clone()).collect::<Vec<_>>();
        let edge = |q: &str, lang: Option<&str>| {
            let p =
                SearchParams { k: 6, mode: Mode::Bm25, lang: lang.and_then(LangTag::parse), ..idx.default_params(5) };
            let p = fusion::for_query(&p, q);
            let c = idx.candidates(q, None, &p);
            let hits = if c.evidence.matched() { idx.fuse(&c, None, &p) } else { Vec::new() };
            (hits.iter().take(5).map(|h| idx.chunk(h.doc).unwrap().id).collect::<Vec<_>>(), c.evidence.matched())
        };
        for q in [
            "Drucker Campus",
            "printer campus",
            "eduroam",
            "Passwort zurücksetzen",
            "parking semester",
            "where is the parking for the semester",
        ] {
            for lang in [None, Some("de"), Some("en"), Some("fr")] {
                e.set_language(lang.and_then(LangTag::parse));
                let (got, _) = run(&mut e, &files, q, 5, 1, false);
                let (want, matched) = edge(q, lang);
                if matched || lang.is_none() {
                    assert_eq!(ids(&got), want, "{q:?} in {lang:?}");
                    assert_eq!(got.lang.as_deref(), lang, "{q:?}");
                    assert_eq!(got.lang_fallback, None, "{q:?}");
                    let tag = lang.and_then(LangTag::parse);
                    let kept =
                        |r: &SearchResult| tag.is_none_or(|t| t.covers(&r.lang) || stands_in_for(&r.chunk_id, t));
                    assert!(got.results.iter().all(kept), "{q:?} {lang:?}");
                } else {
                    // No match in the language: every language's answer, said.
                    let (all, all_matched) = edge(q, None);
                    assert_eq!(ids(&got), all, "{q:?} in {lang:?}");
                    if all_matched {
                        assert_eq!((got.lang.as_deref(), got.lang_fallback.as_deref()), (None, lang), "{q:?}");
                    } else {
                        assert_eq!((got.lang.as_deref(), got.lang_fallback.as_deref()), (lang, None), "{q:?}");
                    }
                }
            }
        }
        e.set_language(LangTag::parse("de"));
        // The parking page has no German translation: a German search shows
        // it (its words read in German: "permit" is one, "semester" is not).
        let (r, _) = run(&mut e, &files, "permit", 5, 1, false);
        assert_eq!((r.lang.as_deref(), r.lang_fallback.as_deref()), (Some("de"), None), "{r:?}");
        assert_eq!((r.results[0].chunk_id.as_str(), r.results[0].lang.as_str()), ("p6_0", "en"), "{r:?}");
        // An English question is read in German there (its words are no
        // German page's, nor all the parking page's): every language, said.
        let (r, _) = run(&mut e, &files, "where do I buy a parking permit for the semester", 5, 1, false);
        assert_eq!(r.lang_fallback.as_deref(), Some("de"), "{r:?}");
        assert_eq!(r.results[0].chunk_id, "p6_0", "{r:?}");
        // The Wi-Fi page has one (p0): its English words are not searched in
        // German but by falling back to every language, said.
        let (r, _) = run(&mut e, &files, "wireless network", 5, 1, false);
        assert_eq!(r.lang_fallback.as_deref(), Some("de"), "no German chunk has these words: {r:?}");
        assert_eq!(r.results[0].chunk_id, "p3_0", "{r:?}");
        let (r, _) = run(&mut e, &files, "Drucker Campus", 5, 1, false);
        assert_eq!((r.lang.as_deref(), r.results[0].chunk_id.as_str()), (Some("de"), "p1_0"));
    }

    /// Runs that do not cover the chunks, or name a language or stand-in set
    /// the manifest does not list, are refused.
    #[test]
    #[cfg(feature = "languages")]
    fn runs_the_manifest_does_not_cover_are_refused() {
        let (_, bytes) = german_and_english();
        let idx = Index::open(bytes.as_slice()).unwrap();
        let m = split(&idx, 128).unwrap().manifest;
        let whole = m.chunks as u32;
        for (bad, what) in [
            (Manifest { lang_runs: vec![[0, 3]], ..m.clone() }, "language run"),
            (Manifest { lang_runs: vec![[2, whole]], ..m.clone() }, "language run"),
            (Manifest { chunk_languages: Vec::new(), ..m.clone() }, "language run"),
            (Manifest { stand_in_runs: vec![[0, 3]], ..m.clone() }, "stand-in run"),
            (Manifest { stand_in_runs: vec![[2, whole]], ..m.clone() }, "stand-in run"),
            (Manifest { stand_in_sets: Vec::new(), ..m.clone() }, "stand-in run"),
        ] {
            let err = Engine::open(&serde_json::to_vec(&bad).unwrap()).err().unwrap().to_string();
            assert!(err.contains(what), "{err}");
        }
    }

    /// An index of one German chunk per `(page, title, text)`.
    #[cfg(feature = "languages")]
    fn german_index(pages: &[(&str, &str, &str)]) -> AlignedBytes {
        let pages: Vec<_> = pages.iter().map(|&(p, t, x)| (p, t, x, "de")).collect();
        index_in(&pages)
    }

    /// An index of one chunk per `(page, title, text, language)`.
    #[cfg(feature = "languages")]
    fn index_in(pages: &[(&str, &str, &str, &str)]) -> AlignedBytes {
        let mut chunks = Vec::new();
        for &(page, title, text, lang) in pages {
            let mut c = chunk(&format!("{page}_0"), page, title, text);
            c.lang = lang.into();
            c.index_text = c.text.clone();
            chunks.push(c);
        }
        let vecs: Vec<f32> = (0..chunks.len()).flat_map(|i| unit(&[1.0, i as f32, 0.0, 0.0])).collect();
        AlignedBytes::new(&build(&chunks, &vecs, 4, &params(VectorStorage::F16)))
    }

    #[test]
    #[cfg(feature = "languages")]
    fn a_compound_no_chunk_has_is_read_as_its_parts_as_the_edge_reads_it() {
        let pages = [
            ("netz", "Netzwerk", "Das Netzwerk des Clusters verteilt Routen an jeden Knoten."),
            ("verw", "Verwaltung", "Die Verwaltung läuft auf einem eigenen Server und hält Daten."),
            ("etcd", "etcd", "Alle Daten des Clusters liegen in etcd, einem verteilten Speicher."),
            ("pods", "Pods", "Ein Pod hat Container und Labels; der Cluster plant ihn auf einen Knoten."),
            ("jobs", "Jobs", "Ein Job startet Container, bis sie fertig sind; ihre Daten bleiben."),
        ];
        let bytes = german_index(&pages);
        let idx = Index::open(bytes.as_slice()).unwrap();
        let frags = split(&idx, 32).unwrap();
        assert!(frags.manifest.shards.len() > 10, "{:?}", frags.manifest.shards);
        let files: HashMap<String, Vec<u8>> = frags.files.into_iter().collect();
        let mut e = Engine::open(&files[MANIFEST]).unwrap();
        let top = |r: &SearchResponse| r.results.first().map(|r| r.page_id.clone());
        for (q, partial) in [
            ("Netzwerkrouten", false),
            ("Welcher Verwaltungsserver", false),
            ("Welcher Verwaltungsserver hält Da", true),
            ("Clusterdaten", false),
            ("Containerlabels", false),
            ("Zauberrouten", false),
        ] {
            let (got, _) = run(&mut e, &files, q, 3, 1, partial);
            let p = SearchParams { k: 4, mode: Mode::Bm25, partial, ..idx.default_params(3) };
            let mut want = idx.search(q, None, &p);
            want.truncate(3);
            let want: Vec<(String, f32)> = want.iter().map(|h| (idx.chunk(h.doc).unwrap().id, h.score)).collect();
            let got_hits: Vec<(String, f32)> = got.results.iter().map(|r| (r.chunk_id.clone(), r.score)).collect();
            assert_eq!(got_hits, want, "{q:?}");
        }
        // The query's compounds were read as their parts: a fresh engine
        // fetches the shards of the parts once it knows no chunk has the word.
        let mut fresh = Engine::open(&files[MANIFEST]).unwrap();
        let (r, fetched) = run(&mut fresh, &files, "Netzwerkrouten", 3, 1, false);
        assert_eq!(top(&r).as_deref(), Some("netz"), "{r:?}");
        assert!(fetched > 3, "lengths, the word's shard, the parts' shards, a record: {fetched}");
        let (r, _) = run(&mut fresh, &files, "Verwaltungsserver", 3, 1, false);
        assert_eq!(top(&r).as_deref(), Some("verw"), "{r:?}");
    }

    /// A word whose first letter is accented (*Überwachung*) is read in the
    /// browser as at the edge: its spelling list is its folded initial's, its
    /// terms and its dictionary words alike (before, the browser had no list
    /// for `ü` and read no slip in such a word).
    #[test]
    #[cfg(feature = "languages")]
    fn a_slip_in_a_word_with_an_accented_initial_is_read_as_the_edge_reads_it() {
        let pages = [
            ("ueber", "Überwachung", "Die Überwachung der Knoten meldet jeden Ausfall sofort."),
            ("sicht", "Übersicht", "Eine Übersicht aller Dienste und ihrer Knoten."),
            ("umzug", "Umzug", "Der Umzug eines Dienstes auf andere Knoten."),
            ("aender", "Änderungen", "Änderungen an Diensten werden protokolliert."),
        ];
        let bytes = german_index(&pages);
        let idx = Index::open(bytes.as_slice()).unwrap();
        let dictionary: Vec<String> = ["umzug", "änderungen", "überwachung"].map(String::from).to_vec();
        let frags = split_with(&idx, 32, &dictionary).unwrap();
        assert!(!frags.manifest.spelling.iter().any(|c| !c.is_ascii_lowercase()), "{:?}", frags.manifest.spelling);
        let files: HashMap<String, Vec<u8>> = frags.files.into_iter().collect();
        let u = String::from_utf8_lossy(&files[&spelling_name('u')]).into_owned();
        assert!(u.ends_with("umzug\nüberwachung\n"), "words filed by their folded initial, in order: {u:?}");
        let lang = crate::index::lang::Lang::from_tag("de").unwrap();
        let edge = |q: &str| {
            crate::index::typo::correct(q, false, lang, |t| idx.df(t), |w| dictionary.iter().any(|d| d == w))
                .map(|c| c.text)
        };
        for (q, read) in [
            ("Überwahcung der Knoten", Some("Überwachung der Knoten")),
            ("Überwachng", Some("Überwachung")),
            ("Änderngen", Some("Änderungen")),
            ("Übersihct", Some("Übersicht")),
        ] {
            assert_eq!(edge(q).as_deref(), read, "the edge reads {q:?}");
            let mut e = Engine::open(&files[MANIFEST]).unwrap();
            let (got, _) = run(&mut e, &files, q, 3, 1, false);
            assert_eq!(got.corrected.as_deref(), read, "the browser reads {q:?} as the edge does");
        }
    }

    /// In an index of several languages a slip is read only into a term of
    /// the reader's language, by the edge and the browser alike: Spanish
    /// *mantenga*, which no Spanish page has, is not Portuguese *mantenha*.
    #[test]
    #[cfg(feature = "languages")]
    fn a_slip_is_read_only_into_a_term_of_its_own_language() {
        let bytes = index_in(&[
            ("nodos", "Nodos", "Los nodos guardan los datos del clúster.", "es"),
            ("vol", "Volumen", "Un volumen conserva los datos de los nodos.", "es"),
            ("pt", "Volume", "Mantenha os dados num volume; mantenha os nós.", "pt-br"),
        ]);
        let idx = Index::open(bytes.as_slice()).unwrap();
        let frags = split_with(&idx, 32, &[]).unwrap();
        let files: HashMap<String, Vec<u8>> = frags.files.into_iter().collect();
        let es = crate::index::lang::Lang::from_tag("es").unwrap();
        let covered = crate::index::lang::spelled_in(es, &idx.info().chunk_languages);
        assert_eq!(covered, [true, false], "{:?}", idx.info().chunk_languages);
        // Every chunk counted, the Portuguese term would be the reading.
        let anywhere = |q: &str| crate::index::typo::correct(q, false, es, |t| idx.df(t), |_| false).map(|c| c.text);
        assert_eq!(anywhere("mantenga los datos").as_deref(), Some("mantenha los datos"));
        let edge = |q: &str| {
            crate::index::typo::correct(q, false, es, |t| idx.df_among(t, &covered), |_| false).map(|c| c.text)
        };
        for (q, read) in [("mantenga los datos", None), ("un volmuen de datos", Some("un volumen de datos"))] {
            assert_eq!(edge(q).as_deref(), read, "the edge reads {q:?}");
            let mut e = Engine::open(&files[MANIFEST]).unwrap();
            e.set_language(crate::index::lang::LangTag::parse("es"));
            let (got, _) = run(&mut e, &files, q, 3, 1, false);
            assert_eq!(got.corrected.as_deref(), read, "the browser reads {q:?} as the edge does");
        }
    }

    #[test]
    fn a_query_fetches_only_its_shards_and_records() {
        let bytes = corpus();
        let idx = Index::open(bytes.as_slice()).unwrap();
        let frags = split(&idx, 256).unwrap();
        let total = frags.files.len();
        let files: HashMap<String, Vec<u8>> = frags.files.into_iter().collect();
        let mut e = Engine::open(&files[MANIFEST]).unwrap();
        let Step::Need(first) = e.search("eduroam", 5, 1, false) else { panic!("nothing loaded yet") };
        assert_eq!(first, vec![LENS.to_string(), shard_name(e.shard_of(b"eduroam").unwrap())]);
        let (r, fetched) = run(&mut e, &files, "eduroam", 5, 1, false);
        assert_eq!(fetched, 2 + r.results.len(), "lengths, one shard, one record per result");
        assert!(fetched < total / 10, "{fetched} of {total}");
        // Asked again: nothing more to fetch.
        assert_eq!(run(&mut e, &files, "eduroam", 5, 1, false).1, 0);
    }

    #[test]
    fn bad_fragments_are_refused_by_name() {
        let bytes = corpus();
        let idx = Index::open(bytes.as_slice()).unwrap();
        let files: HashMap<String, Vec<u8>> = split(&idx, 256).unwrap().files.into_iter().collect();
        assert!(matches!(Engine::open(b"{}"), Err(FragmentError::Manifest(_))));
        let mut m: Manifest = serde_json::from_slice(&files[MANIFEST]).unwrap();
        m.format = 99;
        let err = Engine::open(&serde_json::to_vec(&m).unwrap()).err().unwrap().to_string();
        assert!(err.contains("format 99") && err.contains("site-builder build"), "{err}");
        // A manifest claiming a billion chunks costs what its own bytes do: no
        // table the size of the claim is made. Past u32 it is refused (on wasm32,
        // where usize is 32 bits, already by the JSON reader).
        let mut huge = m.clone();
        huge.format = FORMAT;
        (huge.chunks, huge.pages, huge.page_runs) = (1_000_000_000, 1, vec![[0, 1_000_000_000]]);
        let e = Engine::open(&serde_json::to_vec(&huge).unwrap()).unwrap();
        assert_eq!((e.page_of(999_999_999), e.page_of(1_000_000_000)), (0, u32::MAX));
        let past = String::from_utf8(serde_json::to_vec(&huge).unwrap())
            .unwrap()
            .replace("\"chunks\":1000000000", "\"chunks\":4294967296");
        assert!(matches!(Engine::open(past.as_bytes()), Err(FragmentError::Manifest(_))));
        let mut e = Engine::open(&files[MANIFEST]).unwrap();
        assert!(matches!(e.add("t/9999.bin", b""), Err(FragmentError::Unknown(_))));
        assert!(matches!(e.add("../etc/passwd", b""), Err(FragmentError::Unknown(_))));
        let err = e.add(LENS, &[0u8; 3]).unwrap_err().to_string();
        assert!(err.contains("lens.bin"), "{err}");
        let mut shard = files[&shard_name(0)].clone();
        let last = shard.len() - 1;
        shard[last] ^= 0xff;
        shard.truncate(last - 100);
        assert!(e.add(&shard_name(0), &shard).is_err());
        assert!(e.add(&record_name(0), b"{not json").unwrap_err().to_string().contains("r/0.json"));
        // Every prefix of every shard: an error, never a panic.
        for (name, bytes) in files.iter().filter(|(n, _)| n.starts_with("t/")) {
            for cut in (0..bytes.len()).step_by(7) {
                let _ = e.add(name, &bytes[..cut]);
            }
        }
        // Spelling lists: an initial the manifest does not name, another
        // initial's terms, a count that is no number, terms out of order.
        let c = *m.spelling.first().expect("the corpus has spelling lists");
        let name = spelling_name(c);
        assert!(e.add(&name, &files[&name]).is_ok());
        assert!(matches!(e.add("v/\u{e9}.txt", b""), Err(FragmentError::Unknown(_))));
        assert!(matches!(e.add("v/ab.txt", b""), Err(FragmentError::Unknown(_))));
        for bad in [
            "zz 3\n\n".to_string(),
            format!("{c}x many\n\n"),
            format!("{c}b 1\n{c}a 1\n\n"),
            format!("{c}a 1\n\nzulu\n"),
            // Counts by language: a place the index has not, one that is no
            // number, one too large for any.
            format!("{c}a 0:1 9:2\n\n"),
            format!("{c}a x:1\n\n"),
            format!("{c}a 99999999999999999999999:1\n\n"),
        ] {
            let err = e.add(&name, bad.as_bytes()).unwrap_err().to_string();
            assert!(err.contains(&name), "{bad:?}: {err}");
        }
        for cut in (0..files[&name].len()).step_by(3) {
            let _ = e.add(&name, &files[&name][..cut]);
        }
    }
}
