//! The schema's one owner: the tables `site-builder publish` creates, the
//! migration from version 1, the terms' recount, and the names of tenants and
//! their partitions.

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

/// The partition of tenant `id`'s chunks.
pub fn partition(id: i32) -> String {
    format!("kb_chunks_{id}")
}
