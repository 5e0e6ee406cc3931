//! The index in PostgreSQL + pgvector, for knowledge bases that outgrow one
//! component: the schema (its one owner: `site-builder publish` writes it, the
//! edge function and `site-builder eval --postgres` read it) and the ranking over
//! it, which gives the bundled ranking.
//!
//! No I/O here either: statements go through the [`Sql`] trait, which the edge
//! function implements over Spin's `spin:postgres/postgres@4.2.0` and the CLI over
//! a native client. Every statement casts its parameters (`$1::int4`) and results
//! to plain types, so a client needs only the handful of [`Value`]s Spin's
//! interface carries (it has no float arrays and no pgvector types: vectors
//! travel as text).
//!
//! How a query runs against a tenant (one round trip each):
//!
//! 1. the tenant's statistics (generation, N, mean length) and the query terms'
//!    ids and document frequencies (and, while a word is being typed, the
//!    completion of each of its prefixes, by the same rule as the index);
//! 2. dense candidates from the tenant's HNSW index (`kb_dense`, `ef` chosen per
//!    query);
//! 3. BM25 candidates: Postgres sums BM25 over the postings to choose the top
//!    `depth` (+ a margin), and returns their postings of the query terms, from
//!    which [`bm25::rescore`] computes the scores in `f32` in the index's order
//!    of additions, so they equal the bundled scores to the bit. On a large
//!    tenant the common terms only score ([`selecting_terms`]) and a threshold
//!    over the terms' weight bounds proves the choice exact ([`BM25_BOUNDED`]),
//!    or the full choice runs after it;
//! 4. every candidate's page, sparse norm and exact cosine (f32 vector against
//!    the query), so the fusion sees what the bundled scan gives it;
//! 5. the records of the hits kept (cached per instance while the tenant's
//!    generation is unchanged).
//!
//! Then [`fusion::fuse`] and [`fusion::finish`], the same code as the bundled
//! index. Tenants are isolated by construction: every chunk row lives in its
//! tenant's partition (`kb_chunks_<id>`, with its own HNSW index), term ids are
//! the tenant's own, and every statement names the tenant.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use search_core::index::analyzer;
use search_core::index::bm25::{self, Postings};
use search_core::index::fusion::{self, Order};
use search_core::index::{Candidates, ChunkMeta, Hit, IndexInfo, Mode, SearchParams};

/// The schema version `site-builder publish` writes (migrating a database of
/// version 1 to it); kept in `kb_schema`. The reader also reads version 1; a
/// database at any other version is refused with both numbers.
pub const SCHEMA_VERSION: i32 = 2;

/// The embedding dimension the schema declares (MiniLM's).
pub const DIM: usize = search_core::encoder::DIM;

/// The schema, created by the first `site-builder publish` on a database (one
/// transaction). Documented in ARCHITECTURE.md ("The PostgreSQL schema").
pub const SCHEMA: &str = r#"
CREATE TABLE kb_schema (version int NOT NULL);
-- One row per tenant: its BM25 statistics, the index's settings (IndexInfo as
-- JSON: default mode, fusion weights, BM25 k1/b, encoder fingerprint), and a
-- generation that every publish increments (readers drop cached records on change).
CREATE TABLE kb_tenants (
    id serial PRIMARY KEY,
    name text NOT NULL UNIQUE,
    generation bigint NOT NULL DEFAULT 0,
    chunks int NOT NULL DEFAULT 0,
    avg_len real NOT NULL DEFAULT 0,
    info text NOT NULL DEFAULT '{}',
    published timestamptz
);
-- One row per chunk, partitioned by tenant (kb_chunks_<tenant id>, each with its
-- own HNSW index): `doc` is the chunk's number within its tenant, stable across
-- publishes while the chunk id exists; `meta` the display record (ChunkMeta
-- JSON); `len` its field-weighted BM25 length;
-- `terms` the term ids it has postings under (what a rewrite deletes); `digest`
-- what an incremental publish compares.
CREATE TABLE kb_chunks (
    tenant int NOT NULL,
    doc int NOT NULL,
    chunk_id text NOT NULL,
    page_id text NOT NULL,
    digest bytea NOT NULL,
    len real NOT NULL,
    terms int[] NOT NULL,
    meta text NOT NULL,
    embedding halfvec(384) NOT NULL,
    PRIMARY KEY (tenant, doc),
    UNIQUE (tenant, chunk_id)
) PARTITION BY LIST (tenant);
-- Each chunk's sparse (BM25) vector's L2 norm, for the `dot` mode: apart from
-- the chunks because it depends on the tenant's mean length, so it changes for
-- every chunk whenever any chunk's length does, and a narrow table is cheap to
-- rewrite where the chunks (records, vectors, HNSW entries) are not.
CREATE TABLE kb_norms (
    tenant int NOT NULL,
    doc int NOT NULL,
    norm real NOT NULL,
    PRIMARY KEY (tenant, doc)
);
-- The vocabulary of each tenant, in byte order (COLLATE "C", as the index sorts
-- it): the term's id, its document frequency, and what bounds its BM25 weight
-- in any chunk: `ub`, the largest tf / (tf + k1 (1 - b + b len / ub_avg)) over
-- its postings, at the tenant's mean length `ub_avg` when they were last
-- written (ub_avg 0: not known, and 1 bounds it). The bound lets a query leave
-- common terms out of the candidate choice and still prove the choice exact.
CREATE TABLE kb_terms (
    tenant int NOT NULL,
    term text COLLATE "C" NOT NULL,
    id int NOT NULL UNIQUE,
    df int NOT NULL,
    ub real NOT NULL DEFAULT 1,
    ub_avg real NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, term)
);
CREATE SEQUENCE kb_term_ids AS int;
-- One row per (term, chunk): the field-weighted term frequency and, beside it,
-- the chunk's length, so BM25 is summed without a join. The key carries both
-- (INCLUDE), so a term's postings are read from the index alone (an index-only
-- scan, once VACUUM has marked the pages visible) rather than from heap pages
-- scattered by later publishes.
CREATE TABLE kb_postings (
    term int NOT NULL,
    doc int NOT NULL,
    tf real NOT NULL,
    len real NOT NULL,
    PRIMARY KEY (term, doc) INCLUDE (tf, len)
);
-- Dense candidates of one tenant: its partition's HNSW index, read `ef` wide
-- (hnsw.ef_search bounds how many rows an HNSW scan returns, so it must be at
-- least n). The SET clause scopes the setting to the call.
CREATE FUNCTION kb_dense(t int, q halfvec, n int, ef int) RETURNS TABLE (doc int)
LANGUAGE plpgsql STABLE SET hnsw.ef_search = 40 AS $fn$
BEGIN
    PERFORM set_config('hnsw.ef_search', greatest(n, ef)::text, true);
    RETURN QUERY EXECUTE format('SELECT doc FROM %I ORDER BY embedding <#> $1 LIMIT $2', 'kb_chunks_' || t)
        USING q, n;
END
$fn$;
"#;

/// What turns a database of schema version 1 into version 2 (run by
/// `site-builder publish` in one transaction, followed by [`RECOUNT`] over each
/// tenant's terms, so an existing tenant keeps its chunks and gains its bounds).
pub const MIGRATE_FROM_1: &str =
    "ALTER TABLE kb_terms ADD COLUMN ub real NOT NULL DEFAULT 1, ADD COLUMN ub_avg real NOT NULL DEFAULT 0";

/// Each of the terms `$1` recounted from its postings: its document frequency
/// and its weight bound (`kb_terms.ub`) for BM25 `k1` `$2`, `b` `$3` and mean
/// length `$4`. Publish runs it over the terms a publish touched, and over all of
/// a tenant's terms when `k1` or `b` change.
pub const RECOUNT: &str = "UPDATE kb_terms t SET df = c.n, ub = c.u, ub_avg = $4::float8 \
     FROM (SELECT term, count(*)::int4 AS n, \
         max(tf::float8 / (tf::float8 + $2::float8 * (1 - $3::float8 + $3::float8 * len::float8 / $4::float8)))::float4 AS u \
         FROM kb_postings WHERE term = ANY($1::int4[]) GROUP BY term) c \
     WHERE t.id = c.term";

/// Whether `name` may name a tenant: 1 to 63 ASCII letters, digits, `-` or `_`
/// (safe in a message, a log line and a URL). `publish --tenant` and the
/// function's `tenant` variable both check it here.
pub fn valid_tenant(name: &str) -> bool {
    !name.is_empty() && name.len() <= 63 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A database address (a URL or a key=value string) without its password, for
/// messages and logs; the CLI and the function both print addresses through it.
pub fn redact(url: &str) -> String {
    if !url.contains("://") {
        return url
            .split_whitespace()
            .map(|kv| if kv.starts_with("password=") { "password=***" } else { kv })
            .collect::<Vec<_>>()
            .join(" ");
    }
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => match url[s + 3..at].split_once(':') {
            Some((user, _)) => format!("{}{user}:***{}", &url[..s + 3], &url[at..]),
            None => url.to_string(),
        },
        _ => url.to_string(),
    }
}

/// The partition of tenant `id`'s chunks.
pub fn partition(id: i32) -> String {
    format!("kb_chunks_{id}")
}

/// A parameter or a column value: what Spin's PostgreSQL interface carries and
/// these statements use.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i32),
    BigInt(i64),
    Real(f32),
    Double(f64),
    Text(String),
    IntArray(Vec<i32>),
    TextArray(Vec<String>),
}

impl Value {
    fn int(&self) -> Option<i32> {
        match *self {
            Value::Int(v) => Some(v),
            Value::BigInt(v) => i32::try_from(v).ok(),
            _ => None,
        }
    }

    fn big(&self) -> Option<i64> {
        match *self {
            Value::Int(v) => Some(v.into()),
            Value::BigInt(v) => Some(v),
            _ => None,
        }
    }

    fn real(&self) -> Option<f32> {
        match *self {
            Value::Real(v) => Some(v),
            Value::Double(v) => Some(v as f32),
            _ => None,
        }
    }

    fn text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }
}

/// Why a statement failed, as the client reports it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SqlError {
    /// No connection could be made (refused, unreachable, not allowed).
    #[error("cannot connect to PostgreSQL: {0}")]
    Connect(String),
    /// The server refused the statement.
    #[error("PostgreSQL: {0}")]
    Query(String),
}

/// Runs one statement and returns its rows. The edge function's client opens its
/// connection lazily and fails over between URLs; that is the client's business.
pub trait Sql: Send + Sync {
    fn query(&self, statement: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, SqlError>;
}

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

/// How many BM25 candidates past `depth` Postgres's float8 ranking returns for
/// the exact `f32` rescoring to choose from, so a near tie at the boundary
/// cannot leave out a chunk the bundled index keeps.
const BM25_MARGIN: usize = 32;

/// Prefix completions for a word being typed: the index's rule
/// ([`bm25::best_completion`]) in SQL. Per prefix, the first
/// [`bm25::COMPLETION_SCAN`] terms from the prefix on that start with it (those
/// are contiguous in byte order), identifier terms left out, the highest document
/// frequency first and the first in order among equals.
const COMPLETIONS: &str = "SELECT p, (SELECT c.term FROM (SELECT term, df FROM kb_terms \
     WHERE tenant = $1::int4 AND term >= p AND term < p || chr(1114111) ORDER BY term LIMIT $3::int4) c \
     WHERE NOT starts_with(c.term, '=') ORDER BY c.df DESC, c.term LIMIT 1) \
     FROM unnest($2::text[]) AS p";

/// The tenant's statistics, and each known query term's id, df and the two
/// weight-bound columns named (`kb_terms.ub, ub_avg` from schema version 2 on).
macro_rules! terms {
    ($bounds:literal) => {
        concat!(
            "SELECT k.generation, k.chunks, k.avg_len, t.term, t.id, t.df, ",
            $bounds,
            " FROM kb_tenants k LEFT JOIN kb_terms t ON t.tenant = k.id AND t.term = ANY($2::text[]) WHERE k.id = $1::int4"
        )
    };
}

/// The tenant's statistics, and each known query term's id, df and weight bound.
const TERMS: &str = terms!("t.ub, t.ub_avg");

/// [`TERMS`] on a database of schema version 1, which has no bounds: each
/// reads as unknown, so a function of this version can be deployed before
/// `site-builder publish` migrates the database.
const TERMS_V1: &str = terms!("1::float4, 0::float4");

/// One term's BM25 weight in a chunk, in SQL (`p` a posting; `$5` k1, `$6` b,
/// `$7` the mean length), as [`BM25`] sums it.
macro_rules! weight {
    () => {
        "p.tf * ($5::float8 + 1) / (p.tf + $5::float8 * (1 - $6::float8 + $6::float8 * p.len / $7::float8))"
    };
}

/// The postings of the query terms `$4` of each chunk of `from` (a CTE with a
/// `doc` column), looked up chunk by chunk. The lateral subquery's `OFFSET 0`
/// keeps the planner from flattening it: it cannot see how few chunks `from`
/// holds (its estimate is the `LIMIT`) nor how many postings a term has (an
/// array's terms are unknown to it), and at a million chunks it chose to hash
/// every posting of every query term, 300,000 rows, for 132 chunks.
macro_rules! chunk_postings {
    ($from:literal) => {
        concat!(
            "SELECT p.doc, p.term, p.tf, p.len FROM ",
            $from,
            " CROSS JOIN LATERAL (SELECT p.doc, p.term, p.tf, p.len FROM kb_postings p \
             WHERE p.doc = ",
            $from,
            ".doc AND p.term = ANY($4::int4[]) OFFSET 0) p"
        )
    };
}

/// BM25 candidates: the top `$8` chunks by BM25 summed in float8 (for choosing
/// them), then their postings of the query terms (for scoring them exactly).
/// Every number is float8 on purpose: an integer meeting a literal like 0.5
/// becomes `numeric`, which cost 5 of 12 ms on a six-term CSC query.
const BM25: &str = concat!(
    "WITH q AS MATERIALIZED (SELECT id, ln(1 + ($2::float8 - df::float8 + 0.5) / (df::float8 + 0.5)) AS w \
         FROM kb_terms WHERE tenant = $1::int4 AND id = ANY($3::int4[])), \
     top AS MATERIALIZED (SELECT p.doc FROM q JOIN kb_postings p ON p.term = q.id GROUP BY p.doc \
         ORDER BY sum(q.w * ",
    weight!(),
    ") DESC, p.doc LIMIT $8::int4) ",
    chunk_postings!("top")
);

/// What the terms left out of the choice (`q.sel` false) add to the chunk
/// `from.doc` of a CTE `from`, in float8: each looked up by (term, chunk) in the postings' key, the way the
/// threshold's few hundred or few thousand chunks are cheapest to score.
macro_rules! left_out_sum {
    ($from:literal) => {
        concat!(
            "coalesce((SELECT sum(q.w * ",
            weight!(),
            ") FROM q JOIN kb_postings p ON p.term = q.id WHERE NOT q.sel AND p.doc = ",
            $from,
            ".doc), 0)"
        )
    };
}

/// BM25 candidates when some query terms (the common ones) do not choose: a
/// threshold algorithm in one statement, after MaxScore. `agg` sums the
/// choosing terms `$3` per chunk (`s`); the best `$8` of it are scored in full
/// (`s` plus what the left-out terms add), and the `$9`-th of those full scores
/// is θ, a lower bound on the exact `$9`-th score. A chunk whose `s` is below
/// θ − `$10` (`$10` bounds what the left-out terms can add) cannot reach θ, so
/// the candidates are the chunks of `agg` at or above that line (`keep`, at
/// most `$11` of them). They are scored in full the same way, and only the
/// best `$12` come back, with their postings of every query term `$4` for the
/// exact rescoring and, on every row, how many chunks `keep` held: a proven
/// choice needs no more than the bundled ranking reads, so the rows, the side
/// data and the rescoring stay `depth`-sized however many chunks the threshold
/// let through. When `keep` reaches the cap, the same statement makes the
/// exact choice instead (`whole`: `agg`'s sums plus every posting of the
/// left-out terms, so the choosing terms are not summed twice; the branch not
/// taken is never executed, its filter being a one-time one). Whether the
/// choice is proven exact otherwise is decided by the caller
/// ([`Store::candidates`]).
const BM25_BOUNDED: &str = concat!(
    "WITH q AS MATERIALIZED (SELECT id, id = ANY($3::int4[]) AS sel, \
         ln(1 + ($2::float8 - df::float8 + 0.5) / (df::float8 + 0.5)) AS w \
         FROM kb_terms WHERE tenant = $1::int4 AND id = ANY($4::int4[])), \
     agg AS MATERIALIZED (SELECT p.doc, sum(q.w * ",
    weight!(),
    ") AS s FROM q JOIN kb_postings p ON p.term = q.id WHERE q.sel GROUP BY p.doc), \
     top AS MATERIALIZED (SELECT doc, s FROM agg ORDER BY s DESC, doc LIMIT $8::int4), \
     theta AS MATERIALIZED (SELECT coalesce((SELECT f FROM (SELECT top.s + ",
    left_out_sum!("top"),
    " AS f FROM top) t ORDER BY f DESC OFFSET $9::int4 - 1 LIMIT 1), 0) AS v), \
     keep AS MATERIALIZED (SELECT doc, s FROM agg WHERE s >= (SELECT v FROM theta) - $10::float8 \
         ORDER BY s DESC, doc LIMIT $11::int4), \
     scored AS (SELECT keep.doc, keep.s + ",
    left_out_sum!("keep"),
    " AS f FROM keep), \
     n AS MATERIALIZED (SELECT count(*)::int4 AS kept FROM keep), \
     whole AS (SELECT d.doc, sum(d.x) AS f FROM (SELECT doc, s AS x FROM agg UNION ALL \
         SELECT p.doc, q.w * ",
    weight!(),
    " FROM q JOIN kb_postings p ON p.term = q.id WHERE NOT q.sel) d GROUP BY d.doc), \
     best AS MATERIALIZED ( \
         (SELECT doc FROM scored WHERE (SELECT kept FROM n) < $11::int4 ORDER BY f DESC, doc LIMIT $12::int4) \
         UNION ALL \
         (SELECT doc FROM whole WHERE (SELECT kept FROM n) >= $11::int4 ORDER BY f DESC, doc LIMIT $12::int4)) \
     SELECT c.doc, c.term, c.tf, c.len, n.kept FROM n CROSS JOIN (",
    chunk_postings!("best"),
    ") c"
);

/// At most this many candidates does [`BM25_BOUNDED`] return by default
/// ([`Store::with_candidate_cap`]); a query whose threshold lets more through is
/// answered by the exact choice instead, made in the same statement.
pub const CANDIDATE_CAP: usize = 8192;

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

/// A known query term as [`TERMS`] reads it.
#[derive(Debug, Clone, Copy)]
struct Term {
    id: i32,
    df: usize,
    /// `kb_terms.ub` and `ub_avg`.
    ub: f32,
    ub_avg: f32,
}

/// The most term `t` can add to a chunk's BM25 score at mean length `avg_len`,
/// with a little slack for float rounding. For one posting, the weight
/// tf / (tf + k1 (1 - b) + k1 b len / A) grows with A at most in proportion
/// (for A' > A the denominator shrinks by less than A / A'), so a bound taken at
/// an older mean length stays a bound scaled by `max(1, A' / A)`; and the
/// weight never exceeds 1. `stored`: whether `ub` was computed for these k1, b.
fn weight_bound(t: &Term, chunks: usize, avg_len: f32, k1: f32, stored: bool) -> f64 {
    let idf = f64::from(bm25::idf(t.df, chunks));
    let w = if stored && t.ub_avg > 0.0 {
        (f64::from(t.ub) * (f64::from(avg_len) / f64::from(t.ub_avg)).max(1.0)).min(1.0)
    } else {
        1.0
    };
    idf * (f64::from(k1) + 1.0) * w * (1.0 + 1e-4) + 1e-6
}

/// Which query terms choose the BM25 candidates (`$3` of [`BM25`]; all of them
/// score the chosen ones): every term in at most `max(cutoff, N / 20)` chunks,
/// and always the two rarest. Summing a term that is in a fifth of a million
/// chunks costs hundreds of thousands of rows for a contribution its low idf
/// keeps small; left out of the choice, it still counts in every candidate's
/// exact score. A knowledge base of at most [`SELECTION_DF`] chunks (CSC has
/// 4,439) always gets the exact choice.
fn selecting_terms(known: &mut [(i32, usize)], chunks: usize, cutoff: usize) -> Vec<i32> {
    let limit = cutoff.max(chunks / 20);
    known.sort_by_key(|&(id, df)| (df, id));
    known.iter().enumerate().filter(|(i, (_, df))| *i < 2 || *df <= limit).map(|(_, (id, _))| *id).collect()
}

/// The document frequency up to which a term always chooses BM25 candidates
/// ([`selecting_terms`]); past it, up to 5 % of the chunks. The terms left out
/// only score, and [`BM25_BOUNDED`]'s threshold proves the choice exact or the
/// full choice runs (docs/benchmarks/postgres.md, "The BM25 choice made exact at a million
/// chunks": 200 of 200 rankings identical 100 deep).
pub const SELECTION_DF: usize = 5_000;

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

    /// Which of the analysed `terms` some chunk of the tenant has.
    pub fn known_terms(&self, terms: &[String]) -> Result<HashSet<String>, StoreError> {
        let t = self.tenant()?;
        let rows = self.sql.query(t.terms_statement(), &[Value::Int(t.id), Value::TextArray(terms.to_vec())])?;
        Ok(rows.iter().filter_map(|r| r.get(3).and_then(Value::text)).map(str::to_string).collect())
    }

    /// The default parameters the tenant's index was published with.
    pub fn default_params(&self, k: usize) -> Result<SearchParams, StoreError> {
        Ok(SearchParams::of_index(&self.tenant()?.info, k))
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
        let lex = self.lexical(&mut t, query, p)?;
        let dense_ids = self.dense_ids(&t, qvec, p, depth)?;
        let postings = self.bm25_postings(&t, &lex, p, depth)?;

        let mut docs: Vec<u32> = dense_ids.iter().copied().chain(postings.keys().copied()).collect();
        docs.sort_unstable();
        docs.dedup();
        let (side, norms) = self.side(&t, &docs, qvec)?;

        let mut dense: Vec<(u32, f32)> =
            dense_ids.iter().filter_map(|d| side.cosine.get(d).map(|&c| (*d, c))).collect();
        dense.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        dense.truncate(depth);

        let mut sparse = lex.rescore(&postings, &norms, p);
        sparse.truncate(depth);
        Ok((Candidates { dense, sparse }, side))
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
        let mut lex = Lexical { chunks, avg_len, vocab, completions, qterms: Vec::new(), ids: HashMap::new() };
        lex.qterms = match (p.mode, p.partial) {
            (Mode::Dense, _) => Vec::new(),
            (_, true) => bm25::partial_terms(&lex.snapshot(), query),
            (_, false) => analyzer::terms(query),
        };
        lex.ids = lex.qterms.iter().filter_map(|q| lex.vocab.get(q).map(|v| (q.clone(), v.id))).collect();
        Ok(lex)
    }

    /// The analysed terms of `query` to look up, and for a partial query the
    /// completion of each prefix of the word being typed (`None`: no term has it).
    fn completions(&self, t: &Tenant, query: &str, p: &SearchParams) -> Result<(Vec<String>, Completions), StoreError> {
        let (_, last) = bm25::split_last_word(query);
        let mut completions: HashMap<String, Option<String>> = HashMap::new();
        let mut wanted: Vec<String> = analyzer::terms(query);
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
                        wanted.extend(analyzer::terms(c));
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
    /// cosine with the query (none without a query vector).
    fn side(&self, t: &Tenant, docs: &[u32], qvec: Option<&[f32]>) -> Result<(Side, HashMap<u32, f32>), StoreError> {
        let mut side = Side { page: HashMap::new(), cosine: HashMap::new() };
        let mut norms: HashMap<u32, f32> = HashMap::new();
        if docs.is_empty() {
            return Ok((side, norms));
        }
        // Without a query vector (bm25) the cosine column is NULL.
        let stmt = format!(
            "SELECT c.doc, c.page_id, n.norm, -(c.embedding::vector <#> $3::text::vector)::float4 FROM {} c \
             JOIN kb_norms n ON n.tenant = c.tenant AND n.doc = c.doc WHERE c.doc = ANY($2::int4[]) AND c.tenant = $1::int4",
            partition(t.id)
        );
        let params = [
            Value::Int(t.id),
            Value::IntArray(docs.iter().map(|&d| d as i32).collect()),
            qvec.map_or(Value::Null, |q| Value::Text(vector_text(q))),
        ];
        let mut pages: HashMap<String, u32> = HashMap::new();
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
                side.cosine.insert(d as u32, c);
            }
        }
        Ok((side, norms))
    }

    /// The hits of `query`, fused and put in order, best first: the bundled
    /// index's [`search_core::index::Index::search`] over this tenant.
    pub fn search(&self, query: &str, qvec: Option<&[f32]>, p: &SearchParams) -> Result<Vec<Hit>, StoreError> {
        let (c, side) = self.candidates(query, qvec, p)?;
        let cosine = &side.cosine;
        let dense_of = |d: u32| qvec.and_then(|_| cosine.get(&d).copied());
        let hits = fusion::fuse(p, &c.dense, &c.sparse, dense_of);
        Ok(fusion::finish(p, hits, |d| side.page.get(&d).copied().unwrap_or(u32::MAX)))
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

/// Rows of (doc, term id, tf, len, …), as [`BM25`] and [`BM25_BOUNDED`]
/// return them, per doc.
fn postings_of(rows: &[Vec<Value>]) -> DocPostings {
    let mut postings: DocPostings = HashMap::new();
    for r in rows {
        if let (Some(d), Some(term), Some(tf), Some(len)) = (
            r.first().and_then(Value::int),
            r.get(1).and_then(Value::int),
            r.get(2).and_then(Value::real),
            r.get(3).and_then(Value::real),
        ) {
            postings.entry(d as u32).or_default().push((term, tf, len));
        }
    }
    postings
}

/// Parameters for a query that cannot be read its tenant's settings (the
/// database is down): the build's defaults, for a query that will fail anyway
/// with the reason.
pub fn fallback_params(k: usize) -> SearchParams {
    SearchParams {
        k,
        mode: Mode::Convex,
        alpha: 0.5,
        rrf_k: 60.0,
        depth: 100,
        norm_depth: 10,
        collapse_pages: false,
        order: Order::PAGES,
        k1: 1.2,
        b: 0.75,
        exact: false,
        ef: 0,
        partial: false,
    }
}

/// A vector as pgvector's text form (`[0.1,0.2,…]`), each value in Rust's
/// shortest round-trip form, so Postgres parses back the same `f32`.
pub fn vector_text(v: &[f32]) -> String {
    let mut s = String::with_capacity(v.len() * 12 + 2);
    s.push('[');
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        // NaN or infinity cannot be stored; a zero keeps the statement valid.
        let x = if x.is_finite() { *x } else { 0.0 };
        s.push_str(&format!("{x}"));
    }
    s.push(']');
    s
}

/// The completion of each prefix of the word being typed (`None`: no term has it).
type Completions = HashMap<String, Option<String>>;

/// A chunk's postings of the query's terms: (term id, tf, length).
type DocPostings = HashMap<u32, Vec<(i32, f32, f32)>>;

/// The BM25 side of one query over a tenant as last read ([`Store::lexical`]).
struct Lexical {
    chunks: usize,
    avg_len: f32,
    vocab: HashMap<String, Term>,
    completions: Completions,
    /// The query's analysed terms (with the completion of a word being typed).
    qterms: Vec<String>,
    /// Their ids in `kb_terms`, for the terms the tenant has.
    ids: HashMap<String, i32>,
}

impl Lexical {
    fn snapshot(&self) -> Snapshot<'_> {
        Snapshot { chunks: self.chunks, avg_len: self.avg_len, vocab: &self.vocab, completions: &self.completions }
    }

    /// The exact BM25 scores of the chunks in `postings`, best first, as the
    /// bundled index scores them (`norms` missing: 1).
    fn rescore(&self, postings: &DocPostings, norms: &HashMap<u32, f32>, p: &SearchParams) -> Vec<(u32, f32, f32)> {
        bm25::rescore(
            &self.snapshot(),
            self.qterms.clone(),
            postings.iter().map(|(&d, list)| {
                let lookup: HashMap<i32, (f32, f32)> = list.iter().map(|&(t, tf, len)| (t, (tf, len))).collect();
                (d, lookup)
            }),
            |term, doc_terms: &HashMap<i32, (f32, f32)>| self.ids.get(term).and_then(|id| doc_terms.get(id)).copied(),
            |d| norms.get(&d).copied().unwrap_or(1.0),
            p.k1,
            p.b,
        )
    }
}

/// What one query learnt of the tenant's vocabulary, as a source of postings
/// for [`bm25::partial_terms`] (which asks only whether a term exists and what a
/// prefix completes to); the lists themselves stay in Postgres.
struct Snapshot<'s> {
    chunks: usize,
    avg_len: f32,
    vocab: &'s HashMap<String, Term>,
    completions: &'s HashMap<String, Option<String>>,
}

impl Postings for Snapshot<'_> {
    type List<'l>
        = std::iter::Empty<(u32, f32, f32)>
    where
        Self: 'l;

    fn chunks(&self) -> usize {
        self.chunks
    }

    fn avg_len(&self) -> f32 {
        self.avg_len
    }

    fn postings(&self, term: &str) -> Option<(usize, Self::List<'_>)> {
        self.vocab.get(term).map(|t| (t.df, std::iter::empty()))
    }

    fn doc_norm(&self, _doc: u32) -> f32 {
        1.0
    }

    fn completion(&self, p: &str) -> Option<String> {
        self.completions.get(p).cloned().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_terms_do_not_choose_candidates_but_the_two_rarest_always_do() {
        // Below the cutoff every term chooses.
        assert_eq!(selecting_terms(&mut [(1, 4000), (2, 10), (3, 4439)], 4439, SELECTION_DF), vec![2, 1, 3]);
        // A million chunks: the limit is 50,000; the common terms only score.
        let mut q = [(1, 300_000), (2, 150), (3, 25_000), (4, 9_000), (5, 60_000)];
        assert_eq!(selecting_terms(&mut q, 1_000_000, SELECTION_DF), vec![2, 4, 3]);
        // Only common terms: the two rarest choose.
        let mut q = [(1, 300_000), (2, 150_000), (3, 90_000)];
        assert_eq!(selecting_terms(&mut q, 1_000_000, SELECTION_DF), vec![3, 2]);
        assert_eq!(selecting_terms(&mut [(1, 300_000)], 1_000_000, usize::MAX), vec![1]);
    }

    #[test]
    fn a_weight_bound_taken_at_one_mean_length_bounds_every_posting_at_another() {
        let (k1, b, chunks) = (1.2f32, 0.75f32, 1000);
        let postings = [(1.0f32, 3.0f32), (2.0, 40.0), (7.5, 120.0), (1.0, 400.0), (30.0, 35.0)];
        for then in [20.0f32, 80.0, 300.0] {
            let ub =
                postings.iter().map(|&(tf, len)| bm25::bm25_tf(tf, len, then, k1, b) / (k1 + 1.0)).fold(0.0, f32::max);
            let t = Term { id: 1, df: postings.len(), ub, ub_avg: then };
            for now in [5.0f32, 20.0, 79.0, 81.0, 300.0, 5000.0] {
                let bound = weight_bound(&t, chunks, now, k1, true);
                let idf = bm25::idf(t.df, chunks);
                for &(tf, len) in &postings {
                    let w = f64::from(idf * bm25::bm25_tf(tf, len, now, k1, b));
                    assert!(w <= bound, "tf {tf} len {len} at {now} (bound from {then}): {w} > {bound}");
                }
                // Never looser than the weight's own ceiling, idf (k1 + 1).
                assert!(bound <= f64::from(idf * (k1 + 1.0)) * 1.001, "{bound}");
            }
        }
        // A bound computed for other k1 and b, or never computed, is the ceiling.
        let unknown = Term { id: 1, df: 5, ub: 0.1, ub_avg: 0.0 };
        let ceiling = f64::from(bm25::idf(5, chunks) * (k1 + 1.0));
        let near = |x: f64| (x / ceiling - 1.0).abs() < 1e-3;
        assert!(near(weight_bound(&unknown, chunks, 50.0, k1, true)));
        let other = Term { ub_avg: 50.0, ..unknown };
        assert!(near(weight_bound(&other, chunks, 50.0, k1, false)));
        assert!(weight_bound(&other, chunks, 50.0, k1, true) < ceiling / 5.0);
    }

    #[test]
    fn passwords_are_left_out_of_messages() {
        assert_eq!(redact("postgres://kb:secret@db:5432/kb"), "postgres://kb:***@db:5432/kb");
        assert_eq!(redact("postgres://kb@db/kb"), "postgres://kb@db/kb");
        assert_eq!(redact("host=db user=kb password=secret"), "host=db user=kb password=***");
    }

    #[test]
    fn tenant_names_are_checked() {
        assert!(valid_tenant("physics-2") && valid_tenant(&"x".repeat(63)));
        for bad in ["", "a b", "x;drop", "é", &"x".repeat(64)] {
            assert!(!valid_tenant(bad), "{bad}");
        }
    }

    #[test]
    fn vectors_travel_as_text_that_parses_back_to_the_same_floats() {
        let v = [0.1f32, -1.0e-7, 0.333_333_34, f32::NAN];
        let t = vector_text(&v);
        assert_eq!(t, "[0.1,-0.0000001,0.33333334,0]");
        let back: Vec<f32> = t.trim_matches(['[', ']']).split(',').map(|x| x.parse().unwrap()).collect();
        assert_eq!(&back[..3], &v[..3]);
    }
}
