//! The insights tables, and the migrations that make them.
//!
//! Version `n` of the schema is migrations `1..=n` applied in order; each is a list
//! of statements written to be idempotent (`IF NOT EXISTS`, or guarded by what
//! they change), and `kb_insights_schema` holds one row per applied version. Why
//! idempotent rather than one transaction: Spin's SQLite interface gives every
//! instance the same database, and a statement at a time, so two instances that
//! start together may both migrate; running a migration twice must be harmless.
//! A database with a version this build does not know is left alone: the function
//! stops recording into it, and the report says which build to use.
//!
//! Tables (version 3; version 1 had the first four but `kb_answers`, version 2
//! added `kb_answers`, version 3 the last three):
//!
//! | table | one row per | columns |
//! | --- | --- | --- |
//! | `kb_events` | search or chat | `time` (Unix s), `kind` (`search`/`chat`), `mode` (the fusion mode, or `extractive`/`llm`), `question`, `answer_id` (chats: what feedback names), `visitor` (the widget's random id, if sent), `results`, `pages` and `cited` (JSON arrays of page ids: retrieved in rank order, cited), `abstained`, `degraded`, `latency_ms`, `top_score` (the best result's cosine with the question; NULL for `bm25`) |
//! | `kb_answers` | answer the chat gave | `answer_id` (the `done` event's `id`, unguessable), `time`, `question`, `answer`, `citations` (JSON array of URLs): what feedback may name, and what it is shown beside |
//! | `kb_feedback` | thumb or comment | `time`, `answer_id`, `rating` (`up`/`down`), `comment`, `question`, `answer`, `citations` (copied from the answer's `kb_answers` row, never from the client), `page` (path only), `visitor` |
//! | `kb_question_vectors` | question and encoder | the question's MiniLM vector (384 f32, little-endian), computed by a report and kept for the retention period (`created`) |
//! | `kb_page_feedback` | "Was this helpful?" on an article | `time`, `page` (the page's site-relative URL, as the index has it), `page_id` (NULL when the function could not look it up: the PostgreSQL backend), `rating` (`up`/`down`), `comment`, `visitor` |
//! | `kb_rate_limited` | client, endpoint and minute with a refused request | `time` (the minute's first second), `bucket` (`search`, `chat`, `feedback`, `insights`), `client` (a pseudonym: see below), `refused` (requests refused in that minute, at least), `rate_limit` (the limit then) |
//! | `kb_client_salts` | day | `day` (Unix days), `salt` (16 random bytes from SQLite's `randomblob`) |
//!
//! Why the new kinds of row have tables of their own rather than a `kind` in
//! `kb_events`: every report query over `kb_events` counts questions, and a row
//! that is not one would have to be filtered out of each (totals, gaps, weak
//! matches, top questions, pages, latencies, visitors), now and in every query
//! written later; in a table of its own it cannot be counted by mistake, its
//! columns mean what they say, and a rate-limit row has the key its updates need.
//!
//! **Clients are pseudonyms.** Nothing here stores an address: a rate-limited
//! client is `SHA-256(salt of the day ‖ client id)`, cut to 96 bits, where the
//! salt is drawn once a day and deleted the day after (`record::rate_limited`).
//! Within a day one address is one pseudonym (so "3 clients" means three); once
//! the salt is gone, no one can tell which address a pseudonym was, the database's
//! owner included.
//!
//! The writer does not check the version before each write: on Spin every request
//! may be a new instance, so a check would double the statements of every
//! request. It writes, and migrates only when a write fails (a missing table, a
//! missing column), then writes again; a migration therefore only ever adds
//! tables, or columns with defaults, so that rows written by the build before it
//! still fit.

use super::{Db, InsightsError, SqlValue};

/// One version's statements.
pub struct Migration {
    pub version: i64,
    pub statements: &'static [&'static str],
}

/// The schema, migration by migration.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        statements: &[
            "CREATE TABLE IF NOT EXISTS kb_events (
            id INTEGER PRIMARY KEY,
            time INTEGER NOT NULL,
            kind TEXT NOT NULL,
            mode TEXT NOT NULL,
            question TEXT NOT NULL,
            answer_id TEXT,
            visitor TEXT,
            results INTEGER NOT NULL,
            pages TEXT NOT NULL,
            cited TEXT NOT NULL,
            abstained INTEGER NOT NULL,
            degraded INTEGER NOT NULL,
            latency_ms REAL NOT NULL,
            top_score REAL
        )",
            "CREATE INDEX IF NOT EXISTS kb_events_time ON kb_events (time)",
            "CREATE INDEX IF NOT EXISTS kb_events_answer ON kb_events (answer_id) WHERE answer_id IS NOT NULL",
            "CREATE TABLE IF NOT EXISTS kb_feedback (
            id INTEGER PRIMARY KEY,
            time INTEGER NOT NULL,
            answer_id TEXT,
            rating TEXT NOT NULL,
            comment TEXT,
            question TEXT,
            answer TEXT,
            citations TEXT NOT NULL,
            page TEXT,
            visitor TEXT
        )",
            "CREATE INDEX IF NOT EXISTS kb_feedback_time ON kb_feedback (time)",
            "CREATE TABLE IF NOT EXISTS kb_question_vectors (
            question TEXT NOT NULL,
            encoder TEXT NOT NULL,
            vector BLOB NOT NULL,
            created INTEGER NOT NULL,
            PRIMARY KEY (question, encoder)
        )",
            "CREATE INDEX IF NOT EXISTS kb_question_vectors_created ON kb_question_vectors (created)",
        ],
    },
    Migration {
        version: 2,
        statements: &[
            // Feedback is taken only for an answer the function gave, and shows
            // that answer as it was given (the client's copy could say anything).
            "CREATE TABLE IF NOT EXISTS kb_answers (
            answer_id TEXT PRIMARY KEY,
            time INTEGER NOT NULL,
            question TEXT NOT NULL,
            answer TEXT NOT NULL,
            citations TEXT NOT NULL
        )",
            "CREATE INDEX IF NOT EXISTS kb_answers_time ON kb_answers (time)",
        ],
    },
    Migration {
        version: 3,
        statements: &[
            "CREATE TABLE IF NOT EXISTS kb_page_feedback (
            id INTEGER PRIMARY KEY,
            time INTEGER NOT NULL,
            page TEXT NOT NULL,
            page_id TEXT,
            rating TEXT NOT NULL,
            comment TEXT,
            visitor TEXT
        )",
            "CREATE INDEX IF NOT EXISTS kb_page_feedback_time ON kb_page_feedback (time)",
            // A reader's latest rating of a page is found by (page, visitor).
            "CREATE INDEX IF NOT EXISTS kb_page_feedback_visitor ON kb_page_feedback (page, visitor) WHERE visitor IS NOT NULL",
            // One row per client, endpoint and minute, updated as the refusals
            // of that minute are counted: the key is what the upsert names.
            "CREATE TABLE IF NOT EXISTS kb_rate_limited (
            time INTEGER NOT NULL,
            bucket TEXT NOT NULL,
            client TEXT NOT NULL,
            refused INTEGER NOT NULL,
            rate_limit INTEGER NOT NULL,
            PRIMARY KEY (time, bucket, client)
        )",
            "CREATE TABLE IF NOT EXISTS kb_client_salts (
            day INTEGER PRIMARY KEY,
            salt BLOB NOT NULL
        )",
        ],
    },
];

/// The version this build writes and reads.
pub fn latest() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// The version a database holds (0: none yet).
pub fn version(db: &dyn Db) -> Result<i64, InsightsError> {
    db.execute(
        "CREATE TABLE IF NOT EXISTS kb_insights_schema (version INTEGER PRIMARY KEY, applied INTEGER NOT NULL)",
        &[],
    )?;
    let rows = db.execute("SELECT COALESCE(MAX(version), 0) FROM kb_insights_schema", &[])?;
    rows.first()
        .and_then(|r| r.first())
        .and_then(SqlValue::int)
        .ok_or_else(|| InsightsError::Row("schema version".into()))
}

/// Brings the database to the last of `migrations` (normally [`MIGRATIONS`]);
/// returns the version it now holds. A newer database is refused, untouched.
pub fn migrate(db: &dyn Db, migrations: &[Migration], now: u64) -> Result<i64, InsightsError> {
    let known = migrations.last().map_or(0, |m| m.version);
    let found = version(db)?;
    if found > known {
        return Err(InsightsError::NewerSchema { found, known });
    }
    for m in migrations.iter().filter(|m| m.version > found) {
        for s in m.statements {
            db.execute(s, &[])?;
        }
        db.execute(
            "INSERT OR IGNORE INTO kb_insights_schema (version, applied) VALUES (?, ?)",
            &[SqlValue::Integer(m.version), SqlValue::Integer(now as i64)],
        )?;
    }
    Ok(known)
}

/// [`migrate`] to [`MIGRATIONS`], after which every statement of the versions the
/// database already holds is run again too: what the writer does when a write
/// fails, so a table dropped or a file swapped under a running function is
/// rebuilt (the statements are idempotent, so nothing else changes).
pub fn ensure(db: &dyn Db, now: u64) -> Result<i64, InsightsError> {
    let v = migrate(db, MIGRATIONS, now)?;
    for s in MIGRATIONS.iter().flat_map(|m| m.statements) {
        db.execute(s, &[])?;
    }
    Ok(v)
}
