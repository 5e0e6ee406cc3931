//! One tenant of a database, read through [`Sql`](super::Sql): the tenant's
//! row, the candidates of a query (one round trip per step) and the records of
//! the hits, cached while the tenant's generation is unchanged.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use search_core::index::lang::{Lang, Languages};
use search_core::index::relevance::{self, Evidence};
use search_core::index::{analyzer, bm25, compound, fusion, Candidates, ChunkMeta, Hit, IndexInfo, Mode, SearchParams};

use super::lexical::{postings_of, Completions, DocPostings, Lexical};
use super::schema::{partition, SCHEMA_VERSION};
use super::sql::{vector_text, Sql, SqlError, Value};
use super::statements::{
    selecting_terms, weight_bound, Term, BM25, BM25_BOUNDED, BM25_MARGIN, CANDIDATE_CAP, COMPLETIONS, SELECTION_DF,
    TERMS, TERMS_V1,
};

/// Why the PostgreSQL backend could not answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Sql(#[from] SqlError),
    #[error("tenant `{0}` is not in the database; publish it with `site-builder publish --tenant {0}`")]
    NoTenant(String),
    #[error(
        "the database holds schema version {found}, this build reads versions 1 to {SCHEMA_VERSION}; publish again with a matching site-builder"
    )]
    Schema { found: i32 },
    #[error("unexpected row from PostgreSQL ({0}); is this a database written by `site-builder publish`?")]
    Row(String),
}

/// A tenant as last read: its id, settings and BM25 statistics.
#[derive(Debug, Clone)]
pub struct Tenant {
    pub id: i32,
    /// The database's schema version.
    pub schema: i32,
    pub generation: i64,
    pub chunks: usize,
    pub avg_len: f32,
    pub info: IndexInfo,
}

impl Tenant {
    /// The languages queries are read in (`IndexInfo::languages` and
    /// `chunk_languages`), as the bundled index reads them.
    pub fn langs(&self) -> Languages {
        let query = self.info.languages.iter().filter_map(|t| Lang::from_tag(t)).filter(|l| l.supported()).collect();
        Languages::new(query, &self.info.chunk_languages)
    }

    fn terms_statement(&self) -> &'static str {
        if self.schema == 1 {
            TERMS_V1
        } else {
            TERMS
        }
    }
}

/// The candidates' side data: page, sparse norm and exact cosine of each.
struct Side {
    page: HashMap<u32, u32>,
    cosine: HashMap<u32, f32>,
    /// The candidates not in English: their language tags (from `meta`).
    lang: HashMap<u32, String>,
    /// The candidates that stand in for languages (`ChunkMeta::stands_in`).
    stands_in: HashMap<u32, Vec<String>>,
    /// Each BM25 candidate's own lexical evidence (the query's, with it as the
    /// best chunk), and that of a candidate BM25 did not score: what decides
    /// whether a result is shown ([`Evidence::of_hit`]).
    lexical: HashMap<u32, f32>,
    lexical_none: f32,
}

/// One tenant of a database, read through `Sql`.
pub struct Store {
    sql: Box<dyn Sql>,
    name: String,
    tenant: Mutex<Option<Tenant>>,
    /// Records by doc, valid for `tenant`'s generation.
    records: Mutex<HashMap<u32, ChunkMeta>>,
    /// See [`selecting_terms`].
    selection_df: usize,
    /// How the BM25 candidates of this store's queries were chosen.
    choices: Mutex<Choices>,
    /// See [`CANDIDATE_CAP`].
    candidate_cap: usize,
}

/// Records kept per instance at most (a few megabytes of text).
const RECORDS_KEPT: usize = 2048;

/// How a query's BM25 candidates were chosen (see [`Store::choices`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Choices {
    /// Every query term chose (few chunks, or no common term).
    pub all_terms: usize,
    /// Common terms left out, and the threshold proved the choice exact.
    pub bounded: usize,
    /// Common terms left out, and the exact choice made instead: the proof
    /// failed (a second statement), or the threshold reached the cap.
    pub fell_back: usize,
    /// Of those, how many because more than the cap of candidates passed the
    /// threshold (the exact choice then made in the same statement).
    pub capped: usize,
}

impl Store {
    /// Tenant `name` of the database `sql` reaches. Nothing is read until the
    /// first query, so a database that is down when an instance starts only fails
    /// the requests made while it is down.
    pub fn new(sql: Box<dyn Sql>, name: &str) -> Store {
        Store {
            sql,
            name: name.to_string(),
            tenant: Mutex::new(None),
            records: Mutex::new(HashMap::new()),
            selection_df: SELECTION_DF,
            choices: Mutex::new(Choices::default()),
            candidate_cap: CANDIDATE_CAP,
        }
    }

    /// The document frequency up to which a term chooses BM25 candidates
    /// ([`selecting_terms`]; `usize::MAX`: every term, the exact choice).
    pub fn with_selection_df(mut self, df: usize) -> Store {
        self.selection_df = df;
        self
    }

    /// How many candidates the threshold may let through ([`CANDIDATE_CAP`]).
    pub fn with_candidate_cap(mut self, cap: usize) -> Store {
        self.candidate_cap = cap.max(1);
        self
    }

    /// How the BM25 candidates of the queries so far were chosen.
    pub fn choices(&self) -> Choices {
        self.choices.lock().map(|c| *c).unwrap_or_default()
    }

    fn count(&self, f: impl FnOnce(&mut Choices)) {
        if let Ok(mut c) = self.choices.lock() {
            f(&mut c);
        }
    }

    pub fn tenant_name(&self) -> &str {
        &self.name
    }

    /// The tenant as last read, reading it if it never was.
    pub fn tenant(&self) -> Result<Tenant, StoreError> {
        if let Some(t) = self.tenant.lock().ok().and_then(|t| t.clone()) {
            return Ok(t);
        }
        self.reload()
    }

    /// Reads the schema version and the tenant row afresh (a front end checks the
    /// database is there before it starts a longer task, such as a chat).
    pub fn reload(&self) -> Result<Tenant, StoreError> {
        let rows = self.sql.query("SELECT version FROM kb_schema", &[]).map_err(|e| match e {
            SqlError::Query(m) if m.contains("kb_schema") => StoreError::NoTenant(self.name.clone()),
            e => e.into(),
        })?;
        let found = rows.first().and_then(|r| r.first()).and_then(Value::int).unwrap_or(0);
        if !(1..=SCHEMA_VERSION).contains(&found) {
            return Err(StoreError::Schema { found });
        }
        let rows = self.sql.query(
            "SELECT id, generation, chunks, avg_len, info FROM kb_tenants WHERE name = $1::text",
            &[Value::Text(self.name.clone())],
        )?;
        let row = rows.first().ok_or_else(|| StoreError::NoTenant(self.name.clone()))?;
        let bad = || StoreError::Row("kb_tenants".into());
        let info: IndexInfo = serde_json::from_str(row.get(4).and_then(Value::text).ok_or_else(bad)?)
            .map_err(|e| StoreError::Row(format!("kb_tenants.info: {e}")))?;
        let t = Tenant {
            id: row.first().and_then(Value::int).ok_or_else(bad)?,
            schema: found,
            generation: row.get(1).and_then(Value::big).ok_or_else(bad)?,
            chunks: row.get(2).and_then(Value::int).and_then(|n| usize::try_from(n).ok()).ok_or_else(bad)?,
            avg_len: row.get(3).and_then(Value::real).ok_or_else(bad)?,
            info,
        };
        if let Ok(mut cur) = self.tenant.lock() {
            *cur = Some(t.clone());
        }
        if let Ok(mut r) = self.records.lock() {
            r.clear();
        }
        Ok(t)
    }

    /// The document frequency of each of the analysed `terms` the tenant has.
    pub fn term_dfs(&self, terms: &[String]) -> Result<HashMap<String, usize>, StoreError> {
        let t = self.tenant()?;
        let rows = self.sql.query(t.terms_statement(), &[Value::Int(t.id), Value::TextArray(terms.to_vec())])?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                let term = r.get(3).and_then(Value::text)?;
                let df = r.get(5).and_then(Value::int).and_then(|n| usize::try_from(n).ok())?;
                Some((term.to_string(), df))
            })
            .collect())
    }

    /// The default parameters the tenant's index was published with.
    pub fn default_params(&self, k: usize) -> Result<SearchParams, StoreError> {
        Ok(SearchParams::of_index(&self.tenant()?.info, k))
    }

    /// How the tenant's encoder's cosines read on the reference scale.
    pub fn cosine_scale(&self) -> Result<search_core::index::relevance::CosineScale, StoreError> {
        Ok(self.tenant()?.info.cosine_scale())
    }

    /// Both sides' candidates, read `p.depth` deep, and the side data fusion needs.
    /// The statements run in this order: completions of a word being typed, the
    /// query's terms (the tenant read again if a publish landed), the dense
    /// side, the BM25 postings, and every candidate's page, norm and cosine.
    fn candidates(
        &self,
        query: &str,
        qvec: Option<&[f32]>,
        p: &SearchParams,
    ) -> Result<(Candidates, Side), StoreError> {
        let mut t = self.tenant()?;
        let depth = p.depth.max(p.k);
        // In one language, each side is read four times as deep and the other
        // languages' candidates dropped (as the bundled index's graph walk does).
        let read = if p.lang.is_some() { depth.saturating_mul(4) } else { depth };
        let lex = self.lexical(&mut t, query, p)?;
        let mut dense_ids = self.dense_ids(&t, qvec, p, read)?;
        let mut postings = self.bm25_postings(&t, &lex, p, read)?;

        let mut docs: Vec<u32> = dense_ids.iter().copied().chain(postings.keys().copied()).collect();
        docs.sort_unstable();
        docs.dedup();
        let (mut side, norms) = self.side(&t, &docs, qvec, p.lang.is_some())?;
        if let Some(tag) = p.lang {
            let keep = |d: &u32| {
                let stands_in = side.stands_in.get(d).map_or(&[][..], Vec::as_slice);
                search_core::index::lang::keeps(tag, side.lang.get(d).map_or("", String::as_str), stands_in)
            };
            dense_ids.retain(keep);
            postings.retain(|d, _| keep(d));
        }

        let mut dense: Vec<(u32, f32)> =
            dense_ids.iter().filter_map(|d| side.cosine.get(d).map(|&c| (*d, c))).collect();
        dense.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        dense.truncate(depth);

        let mut sparse = lex.rescore(&postings, &norms, p);
        let mut evidence = Evidence {
            cosine: qvec.and((p.mode != Mode::Bm25).then(|| dense.first().map(|d| d.1)).flatten()),
            lexical: lex.evidence(&postings, sparse.first().map(|s| s.0)),
            agree: relevance::agree(&dense, &sparse, |d| side.page.get(&d).copied().unwrap_or(relevance::NO_PAGE)),
        };
        if p.lang.is_some() {
            evidence = evidence.in_language(qvec.is_some() && p.mode != Mode::Bm25, !sparse.is_empty());
        }
        sparse.truncate(depth);
        side.lexical = sparse.iter().map(|s| (s.0, lex.evidence(&postings, Some(s.0)))).collect();
        side.lexical_none = lex.evidence(&postings, None);
        let weights = lex.weights();
        let readings = lex.readings.clone();
        Ok((Candidates { dense, sparse, evidence, weights, readings }, side))
    }

    /// The query's BM25 side as the tenant's vocabulary reads it: its terms, with
    /// the completions a word being typed needs, and their statistics. Re-reads
    /// the tenant into `t` when a publish landed since it was read.
    fn lexical(&self, t: &mut Tenant, query: &str, p: &SearchParams) -> Result<Lexical, StoreError> {
        let (wanted, completions) = self.completions(t, query, p)?;
        let rows = self.sql.query(t.terms_statement(), &[Value::Int(t.id), Value::TextArray(wanted)])?;
        let first = rows.first().ok_or_else(|| StoreError::NoTenant(self.name.clone()))?;
        if first.first().and_then(Value::big) != Some(t.generation) {
            // A publish landed since the tenant was read: its settings may differ.
            *t = self.reload()?;
        }
        let bad = || StoreError::Row("kb_terms".into());
        let chunks = first.get(1).and_then(Value::int).and_then(|n| usize::try_from(n).ok()).ok_or_else(bad)?;
        let avg_len = first.get(2).and_then(Value::real).ok_or_else(bad)?;
        let mut vocab: HashMap<String, Term> = HashMap::new();
        for r in &rows {
            if let (Some(Value::Text(term)), Some(id), Some(df), Some(ub), Some(ub_avg)) = (
                r.get(3),
                r.get(4).and_then(Value::int),
                r.get(5).and_then(Value::int),
                r.get(6).and_then(Value::real),
                r.get(7).and_then(Value::real),
            ) {
                vocab.insert(term.clone(), Term { id, df: usize::try_from(df).unwrap_or(0), ub, ub_avg });
            }
        }
        let mut lex = Lexical {
            chunks,
            avg_len,
            vocab,
            completions,
            langs: t.langs(),
            qterms: Vec::new(),
            readings: Vec::new(),
            ids: HashMap::new(),
        };
        let read = bm25::read_query(&lex.snapshot(), query, p.mode, p.partial, p.lang);
        (lex.qterms, lex.readings) = (read.terms, read.readings);
        lex.ids = lex.qterms.iter().filter_map(|q| lex.vocab.get(q).map(|v| (q.clone(), v.id))).collect();
        Ok(lex)
    }

    /// The analysed terms of `query` to look up, and for a partial query the
    /// completion of each prefix of the word being typed (`None`: no term has it).
    fn completions(&self, t: &Tenant, query: &str, p: &SearchParams) -> Result<(Vec<String>, Completions), StoreError> {
        let (_, last) = bm25::split_last_word(query);
        let mut completions: HashMap<String, Option<String>> = HashMap::new();
        let langs = t.langs();
        let mut wanted: Vec<String> = analyzer::every_reading(query, langs.every());
        // The parts a compound no chunk has may split into (`compound`), for
        // every long word at once: one round trip, a few dozen rows more.
        let head = if p.partial { bm25::split_last_word(query).0 } else { query };
        wanted.extend(compound::candidates(head, langs.every(), &|_| true));
        if p.partial && p.mode != Mode::Dense {
            let prefixes: Vec<String> = bm25::word_prefixes(last).into_iter().map(str::to_lowercase).collect();
            if !prefixes.is_empty() {
                let rows = self.sql.query(
                    COMPLETIONS,
                    &[Value::Int(t.id), Value::TextArray(prefixes), Value::Int(bm25::COMPLETION_SCAN as i32)],
                )?;
                for r in rows {
                    let (Some(Value::Text(prefix)), c) = (r.first(), r.get(1)) else { continue };
                    let c = c.and_then(Value::text).map(str::to_string);
                    if let Some(c) = &c {
                        wanted.extend(analyzer::every_reading(c, langs.every()));
                        wanted.push(c.clone());
                    }
                    completions.insert(prefix.clone(), c);
                }
            }
        }
        wanted.sort();
        wanted.dedup();
        Ok((wanted, completions))
    }

    /// The dense side's candidates, nearest first (none for `bm25` or without a
    /// query vector).
    fn dense_ids(
        &self,
        t: &Tenant,
        qvec: Option<&[f32]>,
        p: &SearchParams,
        depth: usize,
    ) -> Result<Vec<u32>, StoreError> {
        let q = match (p.mode, qvec) {
            (Mode::Bm25, _) | (_, None) => return Ok(Vec::new()),
            (_, Some(q)) => q,
        };
        let ef = if p.ef == 0 { 2 * depth } else { p.ef };
        let rows = self.sql.query(
            "SELECT doc FROM kb_dense($1::int4, $2::text::halfvec, $3::int4, $4::int4)",
            &[Value::Int(t.id), Value::Text(vector_text(q)), Value::Int(depth as i32), Value::Int(ef as i32)],
        )?;
        Ok(rows.iter().filter_map(|r| r.first().and_then(Value::int)).map(|d| d as u32).collect())
    }

    /// The postings of the BM25 candidates: chosen by the rarer terms with the
    /// bounded statement when that is proven exact, else by all terms.
    fn bm25_postings(
        &self,
        t: &Tenant,
        lex: &Lexical,
        p: &SearchParams,
        depth: usize,
    ) -> Result<DocPostings, StoreError> {
        if lex.ids.is_empty() {
            return Ok(HashMap::new());
        }
        let mut known: Vec<(i32, usize)> =
            lex.qterms.iter().filter_map(|q| lex.vocab.get(q)).map(|v| (v.id, v.df)).collect();
        known.sort_unstable();
        known.dedup();
        let all: Vec<i32> = known.iter().map(|k| k.0).collect();
        let select = selecting_terms(&mut known, lex.chunks, self.selection_df);
        let params = |select: Vec<i32>| {
            vec![
                Value::Int(t.id),
                Value::Double(lex.chunks as f64),
                Value::IntArray(select),
                Value::IntArray(all.clone()),
                Value::Double(p.k1.into()),
                Value::Double(p.b.into()),
                Value::Double(f64::from(lex.avg_len).max(1e-9)),
            ]
        };
        let exhaustive = |params: Vec<Value>| -> Result<DocPostings, StoreError> {
            let mut v = params;
            v.push(Value::Int((depth + BM25_MARGIN) as i32));
            Ok(postings_of(&self.sql.query(BM25, &v)?))
        };
        if select.len() == all.len() {
            let postings = exhaustive(params(select))?;
            self.count(|c| c.all_terms += 1);
            return Ok(postings);
        }
        // What the terms left out of the choice can add to a chunk at most.
        let others: Vec<i32> = all.iter().copied().filter(|id| !select.contains(id)).collect();
        let stored = p.k1 == t.info.bm25.k1 && p.b == t.info.bm25.b;
        let left_out: f64 = lex
            .vocab
            .values()
            .filter(|v| others.contains(&v.id))
            .map(|v| weight_bound(v, lex.chunks, lex.avg_len, p.k1, stored))
            .sum();
        let mut v = params(select);
        v.extend([
            Value::Int((2 * depth) as i32),
            Value::Int(depth as i32),
            Value::Double(left_out),
            Value::Int(self.candidate_cap.min(i32::MAX as usize) as i32),
            Value::Int((depth + BM25_MARGIN) as i32),
        ]);
        let rows = self.sql.query(BM25_BOUNDED, &v)?;
        let passed = rows.first().and_then(|r| r.get(4)).and_then(Value::int).unwrap_or(0);
        let found = postings_of(&rows);
        // Proven exact when the threshold let fewer than the cap through and θ,
        // now in exact f32, is above what a chunk with only left-out terms can
        // score. θ is the `depth`-th exact score of the best candidates returned,
        // so it is at most the `depth`-th of all chunks: a lower bound, as the
        // proof needs.
        if usize::try_from(passed).unwrap_or(0) >= self.candidate_cap {
            // The statement made the exact choice itself.
            self.count(|c| {
                c.fell_back += 1;
                c.capped += 1;
            });
            return Ok(found);
        }
        let proven = found.len() >= depth
            && lex.rescore(&found, &HashMap::new(), p).get(depth - 1).is_some_and(|s| left_out < f64::from(s.1));
        if proven {
            self.count(|c| c.bounded += 1);
            return Ok(found);
        }
        let postings = exhaustive(params(all.clone()))?;
        self.count(|c| c.fell_back += 1);
        Ok(postings)
    }

    /// Every candidate's page (numbered in the order first seen), norm and exact
    /// cosine with the query on the reference scale (none without a query
    /// vector), and with `langs` its language.
    fn side(
        &self,
        t: &Tenant,
        docs: &[u32],
        qvec: Option<&[f32]>,
        langs: bool,
    ) -> Result<(Side, HashMap<u32, f32>), StoreError> {
        let mut side = Side {
            page: HashMap::new(),
            cosine: HashMap::new(),
            lang: HashMap::new(),
            stands_in: HashMap::new(),
            lexical: HashMap::new(),
            lexical_none: 0.0,
        };
        let mut norms: HashMap<u32, f32> = HashMap::new();
        if docs.is_empty() {
            return Ok((side, norms));
        }
        // Without a query vector (bm25) the cosine column is NULL; the
        // language is read from the record only for a search in one language.
        let lang = if langs { "c.meta::json->>'lang', c.meta::json->>'stands_in'" } else { "NULL::text, NULL::text" };
        let stmt = format!(
            "SELECT c.doc, c.page_id, n.norm, -(c.embedding::vector <#> $3::text::vector)::float4, {lang} FROM {} c \
             JOIN kb_norms n ON n.tenant = c.tenant AND n.doc = c.doc WHERE c.doc = ANY($2::int4[]) AND c.tenant = $1::int4",
            partition(t.id)
        );
        let params = [
            Value::Int(t.id),
            Value::IntArray(docs.iter().map(|&d| d as i32).collect()),
            qvec.map_or(Value::Null, |q| Value::Text(vector_text(q))),
        ];
        let mut pages: HashMap<String, u32> = HashMap::new();
        let scale = t.info.cosine_scale();
        for r in self.sql.query(&stmt, &params)? {
            let (Some(d), Some(Value::Text(page)), Some(norm)) =
                (r.first().and_then(Value::int), r.get(1), r.get(2).and_then(Value::real))
            else {
                continue;
            };
            let next = pages.len() as u32;
            side.page.insert(d as u32, *pages.entry(page.clone()).or_insert(next));
            norms.insert(d as u32, norm);
            if let Some(c) = r.get(3).and_then(Value::real) {
                side.cosine.insert(d as u32, scale.apply(c));
            }
            if let Some(Value::Text(lang)) = r.get(4) {
                side.lang.insert(d as u32, lang.clone());
            }
            // A record this build wrote; one that does not read stands in for none.
            if let Some(Value::Text(json)) = r.get(5) {
                side.stands_in.insert(d as u32, serde_json::from_str(json).unwrap_or_default());
            }
        }
        Ok((side, norms))
    }

    /// The hits of `query`, fused and put in order, best first: the bundled
    /// index's [`search_core::index::Index::search`] over this tenant.
    pub fn search(
        &self,
        query: &str,
        qvec: Option<&[f32]>,
        p: &SearchParams,
    ) -> Result<(Vec<Hit>, Candidates), StoreError> {
        let (c, side) = self.candidates(query, qvec, p)?;
        let cosine = &side.cosine;
        let dense_of = |d: u32| qvec.and_then(|_| cosine.get(&d).copied());
        let hits = fusion::fuse(p, &c.dense, &c.sparse, dense_of);
        let shown = |h: &Hit| {
            let lexical = side.lexical.get(&h.doc).copied().filter(|_| h.bm25.is_some()).unwrap_or(side.lexical_none);
            c.evidence.shows(Evidence::of_hit(p.mode, h, lexical))
        };
        let page_of = |d| side.page.get(&d).copied().unwrap_or(u32::MAX);
        Ok((fusion::finish(p, hits, page_of, shown), c))
    }

    /// The records of `docs`, fetched in one statement (those not cached).
    pub fn prefetch(&self, docs: &[u32]) -> Result<(), StoreError> {
        let missing: Vec<i32> = {
            let cached = self.records.lock().map(|r| r.keys().copied().collect::<HashSet<u32>>()).unwrap_or_default();
            docs.iter().filter(|d| !cached.contains(d)).map(|&d| d as i32).collect()
        };
        if missing.is_empty() {
            return Ok(());
        }
        let t = self.tenant()?;
        let rows = self.sql.query(
            &format!("SELECT doc, meta FROM {} WHERE doc = ANY($2::int4[]) AND tenant = $1::int4", partition(t.id)),
            &[Value::Int(t.id), Value::IntArray(missing)],
        )?;
        let mut fetched = Vec::with_capacity(rows.len());
        for r in rows {
            let (Some(d), Some(Value::Text(meta))) = (r.first().and_then(Value::int), r.get(1)) else { continue };
            let meta: ChunkMeta =
                serde_json::from_str(meta).map_err(|e| StoreError::Row(format!("kb_chunks.meta of doc {d}: {e}")))?;
            fetched.push((d as u32, meta));
        }
        if let Ok(mut r) = self.records.lock() {
            if r.len() + fetched.len() > RECORDS_KEPT {
                r.clear();
            }
            r.extend(fetched);
        }
        Ok(())
    }

    /// The record of chunk `doc`.
    pub fn chunk(&self, doc: u32) -> Result<ChunkMeta, StoreError> {
        if let Some(m) = self.records.lock().ok().and_then(|r| r.get(&doc).cloned()) {
            return Ok(m);
        }
        self.prefetch(&[doc])?;
        self.records
            .lock()
            .ok()
            .and_then(|r| r.get(&doc).cloned())
            .ok_or_else(|| StoreError::Row(format!("no chunk {doc} in tenant `{}`", self.name)))
    }

    /// The cosine of each of `docs` with `q` (0 for a chunk no longer there).
    pub fn dense_scores(&self, q: &[f32], docs: &[u32]) -> Result<Vec<f32>, StoreError> {
        if docs.is_empty() {
            return Ok(Vec::new());
        }
        let t = self.tenant()?;
        let rows = self.sql.query(
            &format!(
                "SELECT doc, -(embedding::vector <#> $3::text::vector)::float4 FROM {} WHERE doc = ANY($2::int4[]) AND tenant = $1::int4",
                partition(t.id)
            ),
            &[Value::Int(t.id), Value::IntArray(docs.iter().map(|&d| d as i32).collect()), Value::Text(vector_text(q))],
        )?;
        let by: HashMap<u32, f32> = rows
            .iter()
            .filter_map(|r| Some((r.first().and_then(Value::int)? as u32, r.get(1).and_then(Value::real)?)))
            .collect();
        Ok(docs.iter().map(|d| by.get(d).copied().unwrap_or(0.0)).collect())
    }
}

/// Parameters for a query that cannot be read its tenant's settings (the
/// database is down): the build's defaults, for a query that will fail anyway
/// with the reason.
pub fn fallback_params(k: usize) -> SearchParams {
    SearchParams::defaults(k)
}
