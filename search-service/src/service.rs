//! The search service that every front end shares: an index and its encoder, read
//! in place, answering a query with the JSON document that `GET /api/search`
//! serves and `site-builder search --json` prints, and describing itself for
//! `GET /api/health`.
//!
//! The results themselves are the engine's wire format
//! ([`search_core::response`]), re-exported here. Like the rest of the crate this
//! does no I/O; the caller passes a clock so the stage timings can be reported
//! without this module knowing where time comes from.

use serde::{Deserialize, Serialize};

use std::collections::HashMap;
use std::sync::Mutex;

use crate::pg::{Store, StoreError};
use search_core::encoder::{Encoder, EncoderError};
use search_core::index::highlight::Highlighter;
use search_core::index::lang::{self, Lang, LangChoice, LangTag};
use search_core::index::relevance::Evidence;
use search_core::index::typo::{self, Correction};
use search_core::index::{analyzer, compound, fusion, ChunkMeta, Hit, Index, IndexError, Mode, SearchParams};
use search_core::query_cache::QueryCache;
pub use search_core::response::{SearchResponse, SearchResult, Timings};

/// Why a service could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("index: {0}")]
    Index(#[from] IndexError),
    #[error("encoder: {0}")]
    Encoder(#[from] EncoderError),
    #[error(
        "the encoder was not made with the weights that built the index; rebuild both with one `site-builder build`"
    )]
    Mismatch,
    /// The PostgreSQL backend could not answer (down, refused, no such tenant).
    #[error("search backend: {0}")]
    Store(#[from] StoreError),
}

/// Where the chunks, vectors and postings are read from.
pub enum Corpus<'a> {
    /// The index file, read in place (bundled in the component, or opened by the CLI).
    Bundled(Index<'a>),
    /// One tenant of a PostgreSQL database ([`crate::pg`]).
    Postgres(Store),
}

/// An index and the encoder that embedded it, both borrowed from their files'
/// bytes, or the encoder and a tenant in PostgreSQL: one ranking either way.
pub struct Service<'a> {
    corpus: Corpus<'a>,
    encoder: Encoder<'a>,
    /// Recent query vectors ([`Service::with_query_cache`]); `None`: every query
    /// is encoded (what the evaluation wants, to time the encoder).
    cache: Option<Mutex<QueryCache>>,
}

/// What `GET /api/health` reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Health {
    pub status: String,
    pub index: IndexHealth,
    pub encoder: EncoderHealth,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexHealth {
    /// Format version of the index searched: `index.bin`'s, or the one a
    /// PostgreSQL tenant was published at (0: before formats were recorded).
    pub format_version: u32,
    pub chunks: usize,
    pub pages: usize,
    pub terms: usize,
    pub dim: usize,
    /// "i16", "f16", "f32" or "int8".
    pub vectors: String,
    /// Whether dense search walks an HNSW graph rather than scanning.
    pub graph: bool,
    pub default_mode: Mode,
    /// Build time, RFC 3339 UTC.
    pub built: String,
    pub built_unix: u64,
    /// Where the index is read from: "bundled" (in the component) or "postgres".
    pub backend: String,
    /// The PostgreSQL tenant searched.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tenant: Option<String>,
    /// What the operator should do: set when a tenant was published at
    /// another index format than the one queries are read at.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub notice: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EncoderHealth {
    pub name: String,
    pub format_version: u32,
    /// The weights' fingerprint (hex), the same one the index records.
    pub fingerprint: String,
    pub dim: usize,
    pub max_tokens: usize,
    /// How text beyond `max_tokens` was embedded at build time.
    pub long_text: String,
}

/// One query, as every caller asks it.
#[derive(Debug, Clone, Copy)]
pub struct Query<'q> {
    pub text: &'q str,
    pub params: SearchParams,
    /// Ranked results to skip (the pages before this one).
    pub offset: usize,
    /// The query's vector when the caller has it already (the extractive agent
    /// embeds a question once and reuses it); `None`: embedded here if the mode
    /// uses one.
    pub vector: Option<&'q [f32]>,
    /// Whether to find out if results exist past this page ([`Ranked::has_more`]).
    pub count_more: bool,
}

/// The hits of one query, best first, and what each stage took.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub hits: Vec<Hit>,
    /// Results exist past these (only when the query asked, `count_more`).
    pub has_more: bool,
    pub timings: Timings,
    /// The query's vector came from the query cache.
    pub encode_cached: bool,
    /// Whether anything matched well enough to show
    /// ([`search_core::index::relevance`]).
    pub evidence: Evidence,
    /// The query as searched, when words of it were read as the words one
    /// slip away ([`search_core::index::typo`]).
    pub corrected: Option<Correction>,
    /// The idf of the query's terms the chunks have: what snippets weigh the
    /// query's words by.
    pub weights: Vec<(String, f32)>,
    /// The query's vector when this search embedded it (`None` when the
    /// caller brought one, and in `bm25`), so that a second search of the
    /// same words need not embed them again.
    pub vector: Option<Vec<f32>>,
}

impl Ranked {
    /// The snippet cutter for these results of `query`: the words as searched
    /// (its slips read as [`Ranked::corrected`] says), windows weighed by their
    /// rarity, as the ranking weighed them.
    pub fn highlighter(&self, query: &str) -> Highlighter {
        let searched = self.corrected.as_ref().map_or(query, |c| c.text.as_str());
        Highlighter::by_idf(searched, &self.weights)
    }
}

impl<'a> Service<'a> {
    /// Opens an index and its encoder in place (both 64-byte aligned) and checks
    /// that they belong together.
    pub fn open(index: &'a [u8], encoder: &'a [u8]) -> Result<Service<'a>, ServiceError> {
        let index = Index::open(index)?;
        let encoder = Encoder::open(encoder)?;
        if index.info().encoder_fingerprint != encoder.fingerprint() {
            return Err(ServiceError::Mismatch);
        }
        Ok(Service { corpus: Corpus::Bundled(index), encoder, cache: None })
    }

    /// The encoder and a tenant in PostgreSQL. Nothing is read from the database
    /// yet (see [`Store::new`]); the encoder is checked against the tenant's at
    /// every query, since a publish may change it.
    pub fn postgres(encoder: &'a [u8], store: Store) -> Result<Service<'a>, ServiceError> {
        Ok(Service { corpus: Corpus::Postgres(store), encoder: Encoder::open(encoder)?, cache: None })
    }

    /// Keeps the vectors of the last `capacity` distinct queries, so a query asked
    /// again skips the encoder (see [`search_core::query_cache`]).
    pub fn with_query_cache(mut self, capacity: usize) -> Service<'a> {
        self.cache = Some(Mutex::new(QueryCache::new(capacity)));
        self
    }

    /// The query cache's hits and misses so far (`None` without a cache).
    pub fn query_cache_stats(&self) -> Option<(u64, u64)> {
        self.cache.as_ref().and_then(|c| c.lock().ok().map(|c| c.stats()))
    }

    /// The index file, when the corpus is bundled.
    pub fn index(&self) -> Option<&Index<'a>> {
        match &self.corpus {
            Corpus::Bundled(i) => Some(i),
            Corpus::Postgres(_) => None,
        }
    }

    pub fn corpus(&self) -> &Corpus<'a> {
        &self.corpus
    }

    /// The default parameters of the corpus (its index's settings), for `k`
    /// results. A database that cannot be read yet gives the build's defaults;
    /// the query then fails with the reason.
    pub fn default_params(&self, k: usize) -> SearchParams {
        match &self.corpus {
            Corpus::Bundled(i) => i.default_params(k),
            Corpus::Postgres(s) => s.default_params(k).unwrap_or_else(|_| crate::pg::fallback_params(k)),
        }
    }

    /// How the corpus's encoder's cosines read on the reference scale
    /// ([`search_core::index::relevance::CosineScale`]); the reference itself
    /// when a database cannot be read yet (the query then fails with the reason).
    pub fn cosine_scale(&self) -> search_core::index::relevance::CosineScale {
        match &self.corpus {
            Corpus::Bundled(i) => i.info().cosine_scale(),
            Corpus::Postgres(s) => s.cosine_scale().unwrap_or(search_core::index::relevance::CosineScale::REFERENCE),
        }
    }

    /// Reads what a query needs before it is asked (the tenant, for PostgreSQL),
    /// so a front end can refuse early with the reason.
    pub fn ready(&self) -> Result<(), ServiceError> {
        match &self.corpus {
            Corpus::Bundled(_) => Ok(()),
            Corpus::Postgres(s) => self.check(&s.reload()?.info),
        }
    }

    fn check(&self, info: &search_core::index::IndexInfo) -> Result<(), ServiceError> {
        if info.encoder_fingerprint != self.encoder.fingerprint() {
            return Err(ServiceError::Mismatch);
        }
        Ok(())
    }

    /// The record of chunk `doc`.
    pub fn chunk(&self, doc: u32) -> Result<ChunkMeta, ServiceError> {
        match &self.corpus {
            Corpus::Bundled(i) => Ok(i.chunk(doc)?),
            Corpus::Postgres(s) => Ok(s.chunk(doc)?),
        }
    }

    /// The cosine of each of `docs` with `q`.
    pub fn dense_scores(&self, q: &[f32], docs: &[u32]) -> Result<Vec<f32>, ServiceError> {
        match &self.corpus {
            Corpus::Bundled(i) => Ok(docs.iter().map(|&d| i.dense_score(q, d)).collect()),
            Corpus::Postgres(s) => Ok(s.dense_scores(q, docs)?),
        }
    }

    /// The words of `query`, as written, that no chunk uses: every analysed
    /// term of the word is missing from the vocabulary, in each language the
    /// query is read in ([`lang::Languages::reading`]), and a compound is not
    /// read as two parts chunks have ([`compound`]). Identifier terms (the
    /// `=` forms, whose parts are terms of their own), contractions ("I'd")
    /// and stop words of a language the query is read in are not asked
    /// about; a possessive is read without its "'s". The extractive agent
    /// reads a weak match with such a word as a question about something the
    /// knowledge base never mentions.
    pub fn unknown_words(&self, query: &str) -> Result<Vec<String>, ServiceError> {
        let langs = self.languages()?;
        let read: Vec<Lang> = match langs.reading(query, None).as_ref() {
            [] => vec![Lang::EN],
            some => some.to_vec(),
        };
        let words = asked_words(query, &read);
        if words.is_empty() {
            return Ok(Vec::new());
        }
        // Each word's terms, and the terms its parts may be (a compound).
        let mut all: Vec<String> = words.iter().flat_map(|(_, ts)| ts.iter().cloned()).collect();
        for (w, _) in &words {
            all.extend(compound::candidates(w, &read, &|_| true));
        }
        all.sort();
        all.dedup();
        let dfs: HashMap<String, usize> = match &self.corpus {
            Corpus::Bundled(i) => all.iter().filter_map(|t| Some((t.clone(), i.df(t)?))).collect(),
            Corpus::Postgres(s) => s.term_dfs(&all)?,
        };
        let df = |t: &str| dfs.get(t).copied().unwrap_or(0);
        let splits = |w: &str| {
            read.iter().any(|&l| {
                let mut reading = analyzer::terms_in(w, l);
                let before = reading.clone();
                compound::decompound(w, l, &mut reading, &df);
                reading != before
            })
        };
        let mut out: Vec<String> = Vec::new();
        for (w, terms) in words {
            let known = terms.iter().any(|t| dfs.contains_key(t)) || splits(&w);
            if !known && !out.iter().any(|o| o.eq_ignore_ascii_case(&w)) {
                out.push(w);
            }
        }
        Ok(out)
    }

    pub fn encoder(&self) -> &Encoder<'a> {
        &self.encoder
    }

    /// The query as it is searched: its words that no chunk has, one slip from
    /// words that chunks have, read as those ([`typo`]). The PostgreSQL tier
    /// asks for the document frequencies of the query's words first, and of
    /// their neighbours only for a word no chunk has that is no dictionary word.
    fn correct(&self, text: &str, params: &SearchParams) -> Result<Option<Correction>, ServiceError> {
        // In the language the search reads the query in; none when it reads
        // it in several ([`lang::Languages::spelling`]).
        let Some(lang) = self.languages()?.spelling(text, params.lang) else { return Ok(None) };
        let partial = params.partial;
        match &self.corpus {
            Corpus::Bundled(i) => {
                let covered = lang::spelled_in(lang, &i.info().chunk_languages);
                Ok(typo::correct(text, partial, lang, |t| i.df_among(t, &covered), |w| self.encoder.is_word(w)))
            }
            Corpus::Postgres(s) => {
                let suspects = typo::suspects(text, partial, lang);
                if suspects.is_empty() {
                    return Ok(None);
                }
                let known = s.term_dfs(&suspects.iter().map(|w| w.term.clone()).collect::<Vec<_>>())?;
                // The words `typo::correct` will try, in its order.
                let slips: Vec<&str> = suspects
                    .iter()
                    .filter(|w| !known.contains_key(&w.term) && !self.encoder.is_word(&w.word))
                    .map(|w| w.word.as_str())
                    .take(typo::MAX_SLIPS)
                    .collect();
                if slips.is_empty() {
                    return Ok(None);
                }
                // Counted over every language: a slip on a tenant of several
                // languages may be read into another's term (the bundled
                // index counts the reader's language only, `Index::df_among`).
                let mut dfs = s.term_dfs(&typo::neighbour_terms(slips, lang))?;
                dfs.extend(known);
                Ok(typo::correct(text, partial, lang, |t| dfs.get(t).copied(), |w| self.encoder.is_word(w)))
            }
        }
    }

    /// The query's vector, when `mode` uses one.
    pub fn embed_for(&self, query: &str, mode: Mode) -> Option<Vec<f32>> {
        (mode != Mode::Bm25).then(|| self.embed_query(query).0)
    }

    /// The query's vector, and whether it came from the query cache. The lock is
    /// not held while encoding: natively, threads that share a service encode in
    /// parallel (and two of them may both miss on one text, which costs time only).
    fn embed_query(&self, query: &str) -> (Vec<f32>, bool) {
        // With the model's query prefix (e5's `query: `; none for MiniLM).
        let Some(cache) = &self.cache else { return (self.encoder.encode_query(query), false) };
        let tokens = self.encoder.tokenize_query(query);
        if let Some(v) = cache.lock().ok().and_then(|mut c| c.get(&tokens)) {
            return (v, true);
        }
        let v = self.encoder.embed_tokens(std::slice::from_ref(&tokens));
        if let Ok(mut c) = cache.lock() {
            c.insert(tokens, v.clone());
        }
        (v, false)
    }

    /// The one way a query is ranked, whoever asks (the API, the agents, the
    /// evaluation): the query embedded unless the caller brings its vector, both
    /// sides' candidates read, fused, and the page cut out, with each stage timed.
    /// `clock` returns milliseconds from any fixed origin.
    pub fn rank(&self, q: &Query<'_>, clock: &dyn Fn() -> f64) -> Result<Ranked, ServiceError> {
        let t0 = clock();
        let corrected = self.correct(q.text, &q.params)?;
        let text = corrected.as_ref().map_or(q.text, |c| c.text.as_str());
        // A vector the caller brings was made from the words as written.
        let given = if corrected.is_some() { None } else { q.vector };
        let wanted = q.offset + q.params.k;
        // One result further tells whether a next page exists; only pages ask,
        // since a deeper read can add a candidate to the fusion.
        let deep = fusion::for_query(&SearchParams { k: wanted + usize::from(q.count_more), ..q.params }, text);
        // Reading typos is lexical work: it counts with the search.
        let tc = clock();
        let (embedded, encode_cached) = match given {
            None if q.params.mode != Mode::Bm25 => {
                let (v, cached) = self.embed_query(text);
                (Some(v), cached)
            }
            _ => (None, false),
        };
        let qvec = if q.params.mode == Mode::Bm25 { None } else { given.or(embedded.as_deref()) };
        let t1 = clock();
        let (mut hits, cands, t2) = match &self.corpus {
            Corpus::Bundled(index) => {
                let cands = index.candidates(text, qvec, &deep);
                let t2 = clock();
                (index.fuse(&cands, qvec, &deep), cands, t2)
            }
            Corpus::Postgres(store) => {
                self.check(&store.tenant()?.info)?;
                let (hits, cands) = store.search(text, qvec, &deep)?;
                (hits, cands, clock())
            }
        };
        let has_more = hits.len() > wanted;
        hits.truncate(wanted);
        hits.drain(..q.offset.min(hits.len()));
        if let Corpus::Postgres(store) = &self.corpus {
            // The records of the page, in one statement rather than one per result.
            store.prefetch(&hits.iter().map(|h| h.doc).collect::<Vec<_>>())?;
        }
        let t3 = clock();
        let encode = if embedded.is_some() { t1 - tc } else { 0.0 };
        Ok(Ranked {
            hits,
            has_more,
            encode_cached,
            evidence: cands.evidence,
            weights: cands.weights,
            vector: embedded,
            corrected,
            timings: Timings { encode, search: (t2 - t1) + (tc - t0), fuse: t3 - t2, total: t3 - t0 },
        })
    }

    /// [`Service::rank`] in `q.params.lang`; when that language has no good
    /// match and every language together has one, the latter, with the
    /// language asked for: a reader whose language has no page on a subject
    /// finds the page in another (the multilingual encoder reads across
    /// languages). The search and the agents rank through here.
    pub fn rank_in_language(
        &self,
        q: &Query<'_>,
        clock: &dyn Fn() -> f64,
    ) -> Result<(Ranked, Option<LangTag>), ServiceError> {
        let ranked = self.rank(q, clock)?;
        let Some(tag) = q.params.lang.filter(|_| !ranked.evidence.matched()) else { return Ok((ranked, None)) };
        // The same words as searched (slips read in the language asked for,
        // as the browser's engine reads them once for both searches) and their
        // vector again: the one embedded, else the one brought (of the words
        // as written, so only when none was a slip).
        let text = ranked.corrected.as_ref().map_or(q.text, |c| c.text.as_str());
        let vector = ranked.vector.as_deref().or(q.vector.filter(|_| ranked.corrected.is_none()));
        let params = SearchParams { lang: None, ..q.params };
        let mut all = self.rank(&Query { text, params, vector, ..*q }, clock)?;
        if !all.evidence.matched() {
            return Ok((ranked, None));
        }
        if all.corrected.is_none() {
            all.corrected.clone_from(&ranked.corrected);
        }
        // The reader waited for both searches, and for the one embedding.
        all.timings.total += ranked.timings.total;
        all.timings.encode += ranked.timings.encode;
        all.encode_cached |= ranked.encode_cached;
        Ok((all, Some(tag)))
    }

    /// The language an answer quotes first: the reader's (`reader`, the page
    /// the widget is on) when some chunk is in it, else the question's
    /// ([`Service::question_language`]), else the corpus's one language. The
    /// reader's page is the better guide: on the Kubernetes sets a search in
    /// the reader's language finds the page for 0.800 of the questions, one in
    /// the language read from the question's words 0.773 (French read as
    /// another Latin language; docs/benchmarks/languages.md).
    pub fn answer_language(&self, reader: Option<LangTag>, text: &str) -> Option<LangTag> {
        let has = |tag: LangTag| lang::covered(tag, &self.chunk_languages()).contains(&true);
        reader.filter(|&t| has(t)).or_else(|| self.question_language(text)).or_else(|| self.only_language())
    }

    /// The one language of a corpus whose chunks are all in it, when that is
    /// not English: a German help centre's answers say their own words in
    /// German whatever the question's words tell.
    fn only_language(&self) -> Option<LangTag> {
        match self.languages().ok()?.every() {
            [one] if *one != Lang::EN => LangTag::parse(one.code()),
            _ => None,
        }
    }

    /// Every language a chunk is in (`IndexInfo::chunk_languages`; empty when
    /// all are English, or when the PostgreSQL tenant cannot be read).
    fn chunk_languages(&self) -> std::borrow::Cow<'_, [String]> {
        // Borrowed from the index: every search without a `lang` asks.
        match &self.corpus {
            Corpus::Bundled(i) => std::borrow::Cow::Borrowed(&i.info().chunk_languages),
            Corpus::Postgres(s) => s.tenant().map(|t| t.info.chunk_languages).unwrap_or_default().into(),
        }
    }

    /// The corpus's languages ([`lang::Languages`]): the index's, or the
    /// PostgreSQL tenant's as the bundled index reads them.
    fn languages(&self) -> Result<std::borrow::Cow<'_, lang::Languages>, ServiceError> {
        Ok(match &self.corpus {
            Corpus::Bundled(i) => std::borrow::Cow::Borrowed(i.languages()),
            Corpus::Postgres(s) => std::borrow::Cow::Owned(s.tenant()?.langs()),
        })
    }

    /// The language `text` is in, among the corpus's (every language a chunk
    /// is in), when the corpus has several and the words tell
    /// ([`lang::Languages::of_query`]): what an agent searches first, so that it
    /// quotes pages in the reader's language. `None` for a corpus in one
    /// language.
    pub fn question_language(&self, text: &str) -> Option<LangTag> {
        // Every language a chunk is in, not only those queries are read in
        // (at least 5 % of the chunks): a German section of 4 % is still where
        // a German question's pages are.
        let langs = self.languages().unwrap_or_default();
        if langs.every().len() < 2 {
            return None;
        }
        LangTag::parse(langs.of_query(text)?.code())
    }

    /// The language a search is kept to, as its caller chose
    /// ([`LangChoice`]): without a choice, the question's own
    /// ([`Service::question_language`]; a German question on a site in eight
    /// languages finds the German page, not its seven translations), with the
    /// fallback of [`Service::rank_in_language`] when that language has no
    /// good match.
    pub fn search_language(&self, choice: LangChoice, text: &str) -> Option<LangTag> {
        match choice {
            LangChoice::Question => self.question_language(text),
            LangChoice::Every => None,
            LangChoice::Only(t) => Some(t),
        }
    }

    /// Answers `query` with page `page` (1-based) of `p.k` results, rendered as
    /// `GET /api/search` returns them.
    pub fn search(
        &self,
        query: &str,
        p: &SearchParams,
        page: usize,
        clock: &dyn Fn() -> f64,
    ) -> Result<SearchResponse, ServiceError> {
        let page = page.max(1);
        let offset = (page - 1) * p.k;
        let q = Query { text: query, params: *p, offset, vector: None, count_more: true };
        let (mut ranked, lang_fallback) = self.rank_in_language(&q, clock)?;
        let matched = ranked.evidence.matched();
        if !matched {
            // No good match: the nearest chunks of nonsense are not results.
            ranked.hits.clear();
            ranked.has_more = false;
        }
        let t = clock();
        let searched = ranked.corrected.as_ref().map(|c| c.text.clone());
        let mut hl = ranked.highlighter(query);
        let results = ranked
            .hits
            .iter()
            .enumerate()
            .map(|(i, h)| self.result(offset + i + 1, h, &mut hl))
            .collect::<Result<Vec<_>, _>>()?;
        let render = clock() - t;
        Ok(SearchResponse {
            query: query.to_string(),
            mode: p.mode,
            k: p.k,
            page,
            results,
            matched,
            corrected: searched,
            lang: if lang_fallback.is_some() { None } else { p.lang.map(|t| t.to_string()) },
            lang_fallback: lang_fallback.map(|t| t.to_string()),
            has_more: ranked.has_more,
            encode_cached: ranked.encode_cached,
            timings_ms: Timings {
                fuse: ranked.timings.fuse + render,
                total: ranked.timings.total + render,
                ..ranked.timings
            },
        })
    }

    /// Renders one hit as a result at `rank`, its snippet cut by `hl` (the query's).
    pub fn result(&self, rank: usize, h: &Hit, hl: &mut Highlighter) -> Result<SearchResult, ServiceError> {
        Ok(SearchResult::from_chunk(rank, self.chunk(h.doc)?, h, hl))
    }

    /// What `GET /api/health` reports (for PostgreSQL, read from the tenant's row).
    pub fn health(&self) -> Result<Health, ServiceError> {
        let (info, chunks, graph, backend, vectors) = match &self.corpus {
            Corpus::Bundled(i) => {
                let info = i.info().clone();
                let vectors = format!("{:?}", info.vectors).to_lowercase();
                (info.clone(), info.chunks, i.has_graph(), Backend::Bundled, vectors)
            }
            Corpus::Postgres(s) => {
                let t = s.tenant()?;
                self.check(&t.info)?;
                // halfvec: pgvector's f16, the bundled default.
                (t.info, t.chunks, true, Backend::Postgres { tenant: s.tenant_name().to_string() }, "f16".into())
            }
        };
        let cfg = self.encoder.config();
        let (backend, tenant) = match backend {
            Backend::Bundled => ("bundled".to_string(), None),
            Backend::Postgres { tenant } => ("postgres".to_string(), Some(tenant)),
        };
        let notice = tenant.as_deref().and_then(|t| stale_format(t, info.format));
        Ok(Health {
            status: "ok".into(),
            index: IndexHealth {
                format_version: info.format,
                chunks,
                pages: info.pages,
                terms: info.terms,
                dim: info.dim,
                vectors,
                graph,
                default_mode: info.default_mode,
                built: rfc3339(info.built_unix),
                built_unix: info.built_unix,
                backend,
                tenant,
                notice,
            },
            encoder: EncoderHealth {
                name: info.encoder.clone(),
                format_version: self.encoder.version(),
                fingerprint: format!("{:016x}", self.encoder.fingerprint()),
                dim: search_core::encoder::DIM,
                max_tokens: cfg.max_tokens,
                long_text: info.long_text.clone(),
            },
        })
    }
}

enum Backend {
    Bundled,
    Postgres { tenant: String },
}

/// The words of `query` [`Service::unknown_words`] asks about, with their
/// terms in every language of `read` (identifier forms aside): none of a
/// contraction, a number, or a stop word of one of those languages.
fn asked_words(query: &str, read: &[Lang]) -> Vec<(String, Vec<String>)> {
    query
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .map(|w| w.strip_suffix("'s").or_else(|| w.strip_suffix("\u{2019}s")).unwrap_or(w))
        .filter(|w| !w.contains('\'') && !w.contains('\u{2019}') && !w.chars().all(|c| c.is_ascii_digit()))
        .filter_map(|w| {
            let mut terms = Vec::new();
            for &l in read {
                let reading: Vec<String> =
                    analyzer::terms_in(w, l).into_iter().filter(|t| !t.starts_with('=')).collect();
                if reading.is_empty() {
                    return None;
                }
                terms.extend(reading);
            }
            Some((w.to_string(), terms))
        })
        .collect()
}

/// What to do about a tenant published at index format `format` when queries
/// are read at [`search_core::index::VERSION`]: its terms were analysed by
/// another analyzer (format 4 reads French and Italian elided articles off), so
/// some query words no longer meet them. It still answers; publishing the
/// index again rewrites exactly the chunks whose terms changed.
fn stale_format(tenant: &str, format: u32) -> Option<String> {
    let now = search_core::index::VERSION;
    (format != now).then(|| {
        let when = match format {
            0 => "before index formats were recorded (format 3 or older)".to_string(),
            f => format!("at index format {f}"),
        };
        format!(
            "tenant {tenant} was published {when}; this service reads queries at format {now}: rebuild the \
             index and run `site-builder publish --tenant {tenant}` so that its terms match"
        )
    })
}

/// Seconds since the Unix epoch as an RFC 3339 UTC timestamp (whole seconds).
/// The one date formatter of the workspace: the index's build time, feedback
/// lines and the builder's `last_updated` default all come from here.
pub fn rfc3339(unix: u64) -> String {
    use time::format_description::well_known::Rfc3339;
    // Past year 9999 RFC 3339 has no form; no clock reads that, but say so.
    i64::try_from(unix)
        .ok()
        .and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok())
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_else(|| "9999-12-31T23:59:59Z".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use search_core::chunk::Chunk;
    use search_core::testing;

    #[test]
    fn a_tenant_at_another_format_is_told_to_publish_again() {
        let now = search_core::index::VERSION;
        assert_eq!(stale_format("demo", now), None);
        let before = stale_format("demo", 0).expect("a notice");
        assert!(
            before.contains("format 3 or older") && before.contains("site-builder publish --tenant demo"),
            "{before}"
        );
        let older = stale_format("physics", now - 1).expect("a notice");
        assert!(
            older.contains(&format!("at index format {}", now - 1)) && older.contains("--tenant physics"),
            "{older}"
        );
    }

    #[test]
    fn unknown_words_are_the_words_no_chunk_uses() {
        let chunks = [
            testing::chunk(
                "a",
                "parking",
                "Parking permits",
                "Buy a parking permit online; permits are checked daily.",
            ),
            testing::chunk("b", "wifi", "Wi-Fi", "Connect to eduroam with your university account."),
        ];
        let (index, encoder) = testing::files(&chunks);
        let svc = Service::open(index.as_slice(), encoder.as_slice()).unwrap();
        // "permits" and "Parking" stem to indexed terms; "Netflix" and "gym" are
        // in no chunk; stop words, numbers and contractions are not asked about.
        assert_eq!(
            svc.unknown_words("Can I'd buy Parking permits for the gym's 2026 members, or reset Netflix?").unwrap(),
            vec!["gym", "members", "reset", "Netflix"]
        );
        assert_eq!(svc.unknown_words("How do I connect to eduroam?").unwrap(), Vec::<String>::new());
        // A compound is known when its parts are.
        assert_eq!(svc.unknown_words("university-account eduroam").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn unknown_words_are_read_in_the_corpus_language() {
        let chunks = [
            german(testing::chunk("a", "druck", "Drucken", "Die Kosten für den Drucker stehen im Konto.")),
            german(testing::chunk("b", "wlan", "WLAN", "Verbinden Sie sich mit eduroam und Ihrem Konto.")),
        ];
        let (index, encoder) = testing::files(&chunks);
        let svc = Service::open(index.as_slice(), encoder.as_slice()).unwrap();
        // German stop words are not asked about, German forms stem to the
        // pages' terms, and a compound whose parts the pages use is known;
        // read as English, every word here but "eduroam" was unknown.
        assert_eq!(
            svc.unknown_words("Wie sehe ich die Druckerkosten in meinem Konto und verbinde eduroam?").unwrap(),
            vec!["sehe"]
        );
        assert_eq!(svc.unknown_words("Wo ist der Zauberstab?").unwrap(), vec!["Zauberstab"]);
        // A German corpus answers in German, whatever the question's words say.
        let say = |q: &str| svc.answer_language(None, q).map(|t| t.to_string());
        assert_eq!((say("eduroam").as_deref(), say("How do I print?").as_deref()), (Some("de"), Some("de")));
    }

    #[test]
    fn a_query_without_a_good_match_gets_no_results() {
        let chunks = [
            testing::chunk("a", "parking", "Parking permits", "Buy a parking permit online for the semester."),
            testing::chunk("b", "wifi", "Wi-Fi", "Connect to eduroam with your university account."),
        ];
        let (index, encoder) = testing::files(&chunks);
        let svc = Service::open(index.as_slice(), encoder.as_slice()).unwrap();
        // Without a vector the lexical evidence decides: the synthetic encoder's
        // cosines mean nothing, MiniLM's are what the thresholds were set on.
        let p = SearchParams { mode: Mode::Bm25, ..svc.default_params(5) };
        let hit = svc.search("parking permit", &p, 1, &|| 0.0).unwrap();
        assert!(hit.matched);
        assert_eq!(hit.results.first().map(|r| r.page_id.as_str()), Some("parking"));
        // A known word among nonsense is not a match, however it ranks.
        let ranked = svc
            .rank(&Query { text: "xqzv parking blorf", params: p, offset: 0, vector: None, count_more: true }, &|| 0.0)
            .unwrap();
        assert!(!ranked.hits.is_empty() && !ranked.evidence.matched(), "{:?}", ranked.evidence);
        let none = svc.search("xqzv parking blorf", &p, 1, &|| 0.0).unwrap();
        assert!(!none.matched && none.results.is_empty() && !none.has_more);
        let json = serde_json::to_value(&none).unwrap();
        assert_eq!(json["matched"], false);
        assert_eq!(json["results"], serde_json::json!([]));
    }

    /// `c`, a page in German.
    fn german(mut c: Chunk) -> Chunk {
        c.lang = "de".into();
        c
    }

    #[test]
    fn a_search_in_a_language_without_a_match_falls_back_to_every_language() {
        let chunks = [
            testing::chunk("a", "parking", "Parking permits", "Buy a parking permit online for the semester."),
            testing::chunk("c", "library", "Library", "Borrow books with your student card at the library desk."),
            testing::chunk(
                "d",
                "print",
                "Printing",
                "Print documents on any campus printer; the cost comes off your balance.",
            ),
            german(testing::chunk("b", "wlan", "WLAN", "Verbinden Sie sich mit eduroam und Ihrem Konto.")),
            german(testing::chunk("e", "mensa", "Mensa", "Die Mensa hat montags bis freitags geöffnet.")),
        ];
        let (index, encoder) = testing::files(&chunks);
        let svc = Service::open(index.as_slice(), encoder.as_slice()).unwrap();
        let p = SearchParams { mode: Mode::Bm25, ..svc.default_params(5) };
        let de = SearchParams { lang: LangTag::parse("de"), ..p };
        // German pages match: German results, said so.
        let r = svc.search("eduroam", &de, 1, &|| 0.0).unwrap();
        assert_eq!(
            r.results.iter().map(|r| (r.page_id.as_str(), r.lang.as_str())).collect::<Vec<_>>(),
            [("wlan", "de")]
        );
        assert_eq!((r.lang.as_deref(), r.lang_fallback.as_deref()), (Some("de"), None));
        // No German page on parking: the English page, and the language asked for.
        let r = svc.search("parking permit", &de, 1, &|| 0.0).unwrap();
        assert!(r.matched, "{r:?}");
        assert_eq!(
            r.results.iter().map(|r| (r.page_id.as_str(), r.lang.as_str())).collect::<Vec<_>>(),
            [("parking", "en")]
        );
        assert_eq!((r.lang, r.lang_fallback.as_deref()), (None, Some("de")));
        let json = serde_json::to_value(svc.search("parking permit", &de, 1, &|| 0.0).unwrap()).unwrap();
        assert_eq!((json.get("lang"), &json["lang_fallback"]), (None, &serde_json::json!("de")));
        // A ranking carries the vector it searched (what a fallback searches
        // again rather than embed the words twice); none in `bm25`.
        let convex = SearchParams { mode: Mode::Convex, ..de };
        let q = Query { text: "parking permit", params: convex, offset: 0, vector: None, count_more: false };
        let (ranked, _) = svc.rank_in_language(&q, &|| 0.0).unwrap();
        assert_eq!(ranked.vector, svc.embed_for("parking permit", Mode::Convex));
        let q = Query { params: de, ..q };
        assert_eq!(svc.rank_in_language(&q, &|| 0.0).unwrap().0.vector, None);
        // Nothing anywhere: no results, no fallback.
        let r = svc.search("xqzv blorf", &de, 1, &|| 0.0).unwrap();
        assert!(!r.matched && r.results.is_empty() && r.lang_fallback.is_none());
        assert_eq!(r.lang.as_deref(), Some("de"));
    }

    #[test]
    fn a_question_is_searched_first_in_its_own_language() {
        let chunks = [
            testing::chunk("a", "wifi", "Wi-Fi", "Connect to eduroam with your university account."),
            german(testing::chunk("b", "wlan", "WLAN", "Verbinden Sie sich mit eduroam und Ihrem Konto.")),
        ];
        let (index, encoder) = testing::files(&chunks);
        let svc = Service::open(index.as_slice(), encoder.as_slice()).unwrap();
        let tag = |q: &str| svc.question_language(q).map(|t| t.to_string());
        assert_eq!(tag("Wie verbinde ich mich mit dem eduroam?").as_deref(), Some("de"));
        assert_eq!(tag("How do I connect to the eduroam network?").as_deref(), Some("en"));
        assert_eq!(tag("eduroam"), None, "a keyword says no language");
        // A search without a choice reads the question's; `all` every one.
        let choose = |c: LangChoice, q: &str| svc.search_language(c, q).map(|t| t.to_string());
        assert_eq!(choose(LangChoice::Question, "Wie geht eduroam?").as_deref(), Some("de"));
        assert_eq!(choose(LangChoice::Every, "Wie geht eduroam?"), None);
        assert_eq!(choose(LangChoice::Only(LangTag::parse("en").unwrap()), "Wie geht eduroam?").as_deref(), Some("en"));
        // Ranked in it: the German page for the German question, though the
        // English one shares the word.
        let p = SearchParams {
            mode: Mode::Bm25,
            lang: svc.search_language(LangChoice::Question, "Wie geht eduroam?"),
            ..svc.default_params(5)
        };
        let q = Query { text: "Wie geht eduroam?", params: p, offset: 0, vector: None, count_more: false };
        let (ranked, fell_back) = svc.rank_in_language(&q, &|| 0.0).unwrap();
        let pages: Vec<String> = ranked.hits.iter().map(|h| svc.chunk(h.doc).unwrap().page_id).collect();
        assert_eq!((pages, fell_back), (vec!["wlan".to_string()], None));
        // A corpus in one language: no language to prefer.
        let (index, encoder) = testing::files(&chunks[..1]);
        let one = Service::open(index.as_slice(), encoder.as_slice()).unwrap();
        assert_eq!(one.question_language("Wie verbinde ich mich mit dem eduroam?"), None);
        // The reader's language, when the corpus has it, before the question's.
        let answer = |reader: &str, q: &str| svc.answer_language(LangTag::parse(reader), q).map(|t| t.to_string());
        assert_eq!(answer("de", "eduroam").as_deref(), Some("de"));
        assert_eq!(answer("de", "How do I connect to the eduroam network?").as_deref(), Some("de"));
        assert_eq!(answer("en", "Wie verbinde ich mich mit dem eduroam?").as_deref(), Some("en"));
        assert_eq!(answer("fr", "Wie verbinde ich mich mit dem eduroam?").as_deref(), Some("de"), "no French page");
        assert_eq!(svc.answer_language(None, "eduroam"), None);
        assert_eq!(one.answer_language(LangTag::parse("en"), "eduroam").map(|t| t.to_string()).as_deref(), Some("en"));
    }

    #[test]
    fn rfc3339_matches_known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_798_761_599), "2026-12-31T23:59:59Z");
        assert_eq!(rfc3339(4_107_542_400), "2100-03-01T00:00:00Z");
        assert_eq!(rfc3339(u64::MAX), "9999-12-31T23:59:59Z");
    }
}
