//! The host side of `spin:sqlite/sqlite@3.1.0`, Spin's SQLite interface
//! (`spin_sdk::sqlite`): the function keeps its insights there (searches, chats
//! and feedback).
//!
//! As in Spin, a component may open only the databases its manifest grants
//! (`sqlite_databases = ["default"]` in `spin.toml`); any other label is
//! `access-denied`. A granted label other than `default` is `no-such-database`
//! (`spin up` needs runtime configuration for those, and this host has none).
//! `default` is the file `sqlite_db.db` of the state folder, the name `spin up`
//! gives it in `.spin/`, so a state folder moves between the two.
//!
//! The file is opened on the first `open` of any instance and shared by all of
//! them ([`Databases`], one connection behind a mutex, like
//! [`crate::key_value::KeyValue`]); a file that cannot be opened fails that `open`
//! with `io` naming it, and the next `open` tries again, so the host starts and
//! serves whatever the state of the file. [`crate::HostConfig::sqlite_max_bytes`]
//! caps the database's size, as a platform's quota would: past it, writes are
//! `database-full`.
//!
//! `execute` runs one statement (a string holding more is refused, not cut
//! short) with its parameters bound by position, and returns all its rows, at most
//! [`MAX_RESULT_BYTES`] of them. Each guest connection keeps its own
//! `last-insert-rowid` and `changes`, as a connection of its own would, though
//! the instances share the database connection underneath. Because they share it,
//! a transaction one instance begins (`BEGIN` … `COMMIT`) takes in the other
//! instances' statements until it ends; single statements are each atomic.
//!
//! The function imports the synchronous `open`, `execute`, `last-insert-rowid`
//! and `changes` (the guest waits; here each runs on the blocking pool, so a slow
//! disk never stalls the async runtime that drives the other instances). The
//! `-async` variants are not offered, and a component that imports them fails at
//! load with the import named.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::ErrorCode;
use wasmtime::component::{HasData, Linker, Resource};

use crate::view::{on_blocking_pool, InterfaceView};

mod generated {
    wasmtime::component::bindgen!({
        inline: "
            package spin:sqlite@3.1.0;

            interface sqlite {
                resource connection {
                    open: static func(database: string) -> result<connection, error>;
                    execute: func(statement: string, parameters: list<value>) -> result<query-result, error>;
                    last-insert-rowid: func() -> s64;
                    changes: func() -> u64;
                }

                variant error {
                    no-such-database,
                    access-denied,
                    invalid-connection,
                    database-full,
                    io(string)
                }

                record query-result {
                    columns: list<string>,
                    rows: list<row-result>,
                }

                record row-result {
                    values: list<value>
                }

                variant value {
                    integer(s64),
                    real(f64),
                    text(string),
                    blob(list<u8>),
                    null
                }
            }

            world host {
                import sqlite;
            }
        ",
        with: {
            "spin:sqlite/sqlite.connection": super::Connection,
        },
        additional_derives: [PartialEq],
        // A handle that is not in the table is the host's bug, not the guest's
        // error: such failures trap instead of surfacing as `invalid-connection`.
        imports: { default: async | trappable },
    });
}

use generated::spin::sqlite::sqlite::{self as wit, Error, QueryResult, RowResult, Value};

/// The file inside the state folder, as `spin up` names the default database.
pub use kb_common::spin_state::SQLITE_FILE as FILE_NAME;
/// The only database this host has (others need Spin's runtime configuration).
pub const DEFAULT_DATABASE: &str = "default";
/// Most host memory one result may take (its values, counted as they are held);
/// past it `execute` fails: the host's memory is not the guest's to fill.
pub const MAX_RESULT_BYTES: usize = 64 << 20;
/// Most connections one instance may hold open at once; a guest that leaks
/// handles gets an error, not the host's memory.
const MAX_OPEN: usize = 8;
/// How long a statement waits for another process's write lock on the file.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// An open guest connection: what `last-insert-rowid` and `changes` report for
/// it (0 until one of its statements sets them).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Connection {
    last_insert_rowid: i64,
    changes: u64,
}

/// Why the database file could not be opened; `open` fails with `io` naming the
/// file and this reason.
#[derive(Debug, thiserror::Error)]
enum OpenError {
    /// Its folder could not be created.
    #[error("{0}")]
    Folder(#[source] std::io::Error),
    /// SQLite could not open it, or set it up (WAL, busy timeout, size cap).
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
}

/// The databases of one host: the default one, opened on first use and shared by
/// every instance of the function.
#[derive(Clone)]
pub struct Databases {
    path: PathBuf,
    max_bytes: Option<u64>,
    conn: Arc<Mutex<Option<rusqlite::Connection>>>,
}

impl std::fmt::Debug for Databases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Databases").field("path", &self.path).field("max_bytes", &self.max_bytes).finish()
    }
}

impl Databases {
    /// The default database at `state/sqlite_db.db`, at most `max_bytes` large
    /// (`None`: as large as the disk allows). Nothing is opened yet.
    pub fn new(state: &Path, max_bytes: Option<u64>) -> Databases {
        Databases { path: state.join(FILE_NAME), max_bytes, conn: Arc::new(Mutex::new(None)) }
    }

    /// The file of the default database.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a component granted `allowed` may open `database`, and whether the
    /// database is there to open; checked before anything touches the disk.
    fn admit(database: &str, allowed: &[String]) -> Result<(), Error> {
        if !allowed.iter().any(|a| a == database) {
            return Err(Error::AccessDenied);
        }
        if database != DEFAULT_DATABASE {
            return Err(Error::NoSuchDatabase);
        }
        Ok(())
    }

    /// Opens the file if no `open` has yet: what `open` waits for.
    fn ensure_open(&self) -> Result<(), Error> {
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        if conn.is_none() {
            *conn = Some(self.connect().map_err(|e| Error::Io(format!("cannot open {}: {e}", self.path.display())))?);
        }
        Ok(())
    }

    fn connect(&self) -> Result<rusqlite::Connection, OpenError> {
        if let Some(folder) = self.path.parent() {
            std::fs::create_dir_all(folder).map_err(OpenError::Folder)?;
        }
        let conn = rusqlite::Connection::open(&self.path)?;
        Self::init(&conn, self.max_bytes)?;
        Ok(conn)
    }

    fn init(conn: &rusqlite::Connection, max_bytes: Option<u64>) -> Result<(), rusqlite::Error> {
        // As the key-value file: WAL, so readers never wait for the writer, and
        // another process on the same file waits up to 5 s for its lock.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        if let Some(max) = max_bytes {
            let page: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
            let cap = split_cap(max, page.max(512) as u64);
            let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
            conn.pragma_update(None, "max_page_count", int(cap.pages))?;
            conn.pragma_update(None, "wal_autocheckpoint", int(cap.checkpoint_frames))?;
            conn.pragma_update(None, "journal_size_limit", int(cap.log_bytes))?;
        }
        Ok(())
    }

    /// Runs one statement for the guest connection `seen`, and returns its result
    /// and the connection with what the statement changed of its counters.
    fn execute(
        &self,
        statement: &str,
        parameters: &[Value],
        seen: Connection,
    ) -> Result<(QueryResult, Connection), Error> {
        let guard = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        // `open` opened it; only a host that never did has nothing here.
        let Some(conn) = guard.as_ref() else {
            return Err(Error::Io(format!("{} is not open", self.path.display())));
        };
        run(conn, statement, parameters, seen)
    }
}

/// A size cap shared between the database and its write-ahead log.
#[derive(Debug, PartialEq, Eq)]
struct Cap {
    /// The database's pages (`max_page_count`).
    pages: u64,
    /// Log frames after which a write checkpoints (`wal_autocheckpoint`).
    checkpoint_frames: u64,
    /// What the log is cut back to after a checkpoint (`journal_size_limit`).
    log_bytes: u64,
}

/// Frames one write may add to the log past its checkpoint point (a table leaf,
/// index leaves, and the pages a split touches: five were seen); the log keeps
/// room for them. A log share smaller than this (a cap under about 150 KiB) may
/// be passed by one write's pages.
const WRITE_FRAMES: u64 = 8;

/// How a cap of `max` bytes is shared between the database and its write-ahead
/// log, which is on disk too and would otherwise grow to SQLite's checkpoint
/// point (1,000 pages) past any cap: a quarter of the cap, at most 4 MiB, goes to
/// the log (a frame is a page and a 24-byte header; the log checkpoints early
/// enough that the write which crosses the point still fits, and is cut back to
/// its share), the rest to the database's pages of `page` bytes.
fn split_cap(max: u64, page: u64) -> Cap {
    let log_bytes = (max / 4).clamp(page, 4 << 20);
    let frames = log_bytes.saturating_sub(32) / (page + 24);
    Cap {
        pages: (max.saturating_sub(log_bytes) / page).max(1),
        checkpoint_frames: frames.saturating_sub(WRITE_FRAMES).max(1),
        log_bytes,
    }
}

/// One statement on `conn`, the lock held, so no other instance's statement
/// runs between it and the counters read after it.
fn run(
    conn: &rusqlite::Connection,
    statement: &str,
    parameters: &[Value],
    mut seen: Connection,
) -> Result<(QueryResult, Connection), Error> {
    let mut stmt = prepare(conn, statement)?;
    let expected = stmt.parameter_count();
    if parameters.len() != expected {
        return Err(Error::Io(format!("the statement takes {expected} parameter(s), {} given", parameters.len())));
    }
    for (i, p) in parameters.iter().enumerate() {
        stmt.raw_bind_parameter(i + 1, p).map_err(sql_error)?;
    }
    let columns = (0..stmt.column_count())
        .map(|i| stmt.column_name(i).map(str::to_string).map_err(sql_error))
        .collect::<Result<Vec<_>, _>>()?;
    let readonly = stmt.readonly();
    let (rowid_before, total_before) = (conn.last_insert_rowid(), conn.total_changes());
    let mut rows = Vec::new();
    let mut bytes = 0usize;
    {
        let mut cursor = stmt.raw_query();
        while let Some(row) = cursor.next().map_err(sql_error)? {
            let mut values = Vec::with_capacity(columns.len());
            for i in 0..columns.len() {
                let v = value(row.get_ref(i).map_err(sql_error)?);
                bytes += held_bytes(&v);
                if bytes > MAX_RESULT_BYTES {
                    return Err(Error::Io(format!(
                        "the result is larger than {} MiB; select fewer rows or columns (LIMIT)",
                        MAX_RESULT_BYTES >> 20
                    )));
                }
                values.push(v);
            }
            rows.push(RowResult { values });
        }
    }
    // What a connection of the guest's own would report. SQLite sets the rowid on
    // an INSERT that inserts and `changes` on every INSERT, UPDATE or DELETE; a
    // value another instance's statement left on the shared connection must not
    // show through this one's SELECT or UPDATE.
    let rowid = conn.last_insert_rowid();
    if rowid != rowid_before {
        seen.last_insert_rowid = rowid;
    }
    let changes = conn.changes();
    if conn.total_changes() != total_before || (!readonly && changes == 0) {
        seen.changes = changes;
    }
    Ok((QueryResult { columns, rows }, seen))
}

/// The statement prepared (and cached); refused if the string holds more than one.
fn prepare<'c>(conn: &'c rusqlite::Connection, sql: &str) -> Result<rusqlite::CachedStatement<'c>, Error> {
    let multiple = || {
        Error::Io(
            "the string holds more than one statement; execute runs exactly one, so send them one at a time".into(),
        )
    };
    match conn.prepare_cached(sql) {
        Ok(stmt) => Ok(stmt),
        Err(rusqlite::Error::MultipleStatement) => Err(multiple()),
        Err(rusqlite::Error::Empty) => Err(Error::Io("the statement is empty".into())),
        // rusqlite prepares the rest of the string to see that it is empty, so the
        // error may be a second statement's ("no such table" for a table the first
        // creates): compile the first alone and look at what follows it.
        Err(e) => {
            let mut batch = rusqlite::Batch::new(conn, sql);
            match batch.next() {
                Ok(Some(_)) => match batch.next() {
                    Ok(None) => Err(sql_error(e)),
                    Ok(Some(_)) | Err(_) => Err(multiple()),
                },
                Ok(None) | Err(_) => Err(sql_error(e)),
            }
        }
    }
}

/// `database-full` for SQLite's "database or disk is full" (the size cap or the
/// disk), `io` with SQLite's message for anything else.
fn sql_error(e: rusqlite::Error) -> Error {
    match e.sqlite_error_code() {
        Some(ErrorCode::DiskFull) => Error::DatabaseFull,
        _ => Error::Io(e.to_string()),
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Integer(i) => ValueRef::Integer(*i),
            Value::Real(r) => ValueRef::Real(*r),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
            Value::Null => ValueRef::Null,
        }))
    }
}

/// A column's value as the guest receives it. Text that is not UTF-8 (SQLite
/// stores what it is given, e.g. `CAST(x'ff' AS TEXT)`) arrives with U+FFFD in
/// place of the bad bytes.
fn value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Integer(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

/// The host memory a value takes.
fn held_bytes(v: &Value) -> usize {
    std::mem::size_of::<Value>()
        + match v {
            Value::Text(s) => s.len(),
            Value::Blob(b) => b.len(),
            Value::Integer(_) | Value::Real(_) | Value::Null => 0,
        }
}

/// What the interface needs from the store data: the shared databases, the labels
/// this component may open, the resource table the connections live in and how
/// many of them this instance holds open.
pub type SqliteView<'a> = InterfaceView<'a, Databases, [String]>;

/// Marks the store data's SQLite view as what the interface reads.
pub struct SpinSqlite;

impl HasData for SpinSqlite {
    type Data<'a> = SqliteView<'a>;
}

/// Runs one database operation on the blocking pool.
async fn blocking<R: Send + 'static>(
    db: &Databases,
    f: impl FnOnce(&Databases) -> Result<R, Error> + Send + 'static,
) -> Result<R, Error> {
    on_blocking_pool(db, f).await.unwrap_or_else(|e| Err(Error::Io(format!("sqlite operation failed: {e}"))))
}

impl wit::Host for SqliteView<'_> {}

impl wit::HostConnection for SqliteView<'_> {
    async fn open(&mut self, database: String) -> wasmtime::Result<Result<Resource<Connection>, Error>> {
        if let Err(e) = Databases::admit(&database, self.allowed) {
            return Ok(Err(e));
        }
        if *self.open >= MAX_OPEN {
            return Ok(Err(Error::Io(format!("at most {MAX_OPEN} connections may be open at once; drop one first"))));
        }
        if let Err(e) = blocking(self.shared, Databases::ensure_open).await {
            return Ok(Err(e));
        }
        Ok(Ok(self.push_open(Connection::default())?))
    }

    async fn execute(
        &mut self,
        this: Resource<Connection>,
        statement: String,
        parameters: Vec<Value>,
    ) -> wasmtime::Result<Result<QueryResult, Error>> {
        let seen = *self.table.get(&this)?;
        let done = blocking(self.shared, move |db| db.execute(&statement, &parameters, seen)).await;
        Ok(match done {
            Ok((result, seen)) => {
                *self.table.get_mut(&this)? = seen;
                Ok(result)
            }
            Err(e) => Err(e),
        })
    }

    async fn last_insert_rowid(&mut self, this: Resource<Connection>) -> wasmtime::Result<i64> {
        Ok(self.table.get(&this)?.last_insert_rowid)
    }

    async fn changes(&mut self, this: Resource<Connection>) -> wasmtime::Result<u64> {
        Ok(self.table.get(&this)?.changes)
    }

    async fn drop(&mut self, rep: Resource<Connection>) -> wasmtime::Result<()> {
        self.drop_open(rep)
    }
}

/// Adds the interface to `linker`; `get` finds the SQLite view in the store data.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> SqliteView<'_>,
) -> wasmtime::Result<()> {
    wit::add_to_linker::<T, SpinSqlite>(linker, get)
}

#[cfg(test)]
mod tests {
    use wasmtime::component::ResourceTable;
    use wit::HostConnection as _;

    use super::*;

    /// One instance's store data, for driving the interface as the guest would.
    struct Instance {
        databases: Databases,
        allowed: Vec<String>,
        table: ResourceTable,
        open: usize,
    }

    impl Instance {
        fn new(databases: &Databases, allowed: &[&str]) -> Instance {
            Instance {
                databases: databases.clone(),
                allowed: allowed.iter().map(|s| s.to_string()).collect(),
                table: ResourceTable::new(),
                open: 0,
            }
        }

        fn view(&mut self) -> SqliteView<'_> {
            SqliteView::new(&self.databases, &self.allowed, &mut self.table, &mut self.open)
        }

        async fn open(&mut self, database: &str) -> Result<Resource<Connection>, Error> {
            self.view().open(database.into()).await.unwrap()
        }

        async fn execute(
            &mut self,
            conn: &Resource<Connection>,
            statement: &str,
            parameters: Vec<Value>,
        ) -> Result<QueryResult, Error> {
            let conn = Resource::new_borrow(conn.rep());
            self.view().execute(conn, statement.into(), parameters).await.unwrap()
        }

        async fn counters(&mut self, conn: &Resource<Connection>) -> (i64, u64) {
            let rowid = self.view().last_insert_rowid(Resource::new_borrow(conn.rep())).await.unwrap();
            let changes = self.view().changes(Resource::new_borrow(conn.rep())).await.unwrap();
            (rowid, changes)
        }
    }

    fn io(e: Error) -> String {
        match e {
            Error::Io(m) => m,
            other => panic!("expected io, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn values_of_every_type_round_trip_through_parameters() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join(".spin");
        let dbs = Databases::new(&state, None);
        let mut a = Instance::new(&dbs, &["default"]);
        let conn = a.open("default").await.unwrap();
        assert!(state.join(FILE_NAME).is_file(), "the file is created in the state folder");
        assert_eq!(a.counters(&conn).await, (0, 0));
        let create = "CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT, b BLOB, n)";
        let r = a.execute(&conn, create, vec![]).await.unwrap();
        assert_eq!(r, QueryResult { columns: vec![], rows: vec![] });
        let row = vec![
            Value::Integer(i64::MIN),
            Value::Real(-0.5),
            Value::Text("héllo 'quoted'; DROP TABLE t".into()),
            Value::Blob(vec![0, 255, 1]),
            Value::Null,
        ];
        let insert = "INSERT INTO t (i, r, s, b, n) VALUES (?, ?, ?, ?, ?)";
        a.execute(&conn, insert, row.clone()).await.unwrap();
        assert_eq!(a.counters(&conn).await, (1, 1));
        a.execute(&conn, "INSERT INTO t (i, r, s, b, n) VALUES (?1, ?2, ?3, ?4, ?5)", row.clone()).await.unwrap();
        assert_eq!(a.counters(&conn).await, (2, 1));
        let got = a.execute(&conn, "SELECT i, r, s, b, n AS absent FROM t ORDER BY id", vec![]).await.unwrap();
        assert_eq!(got.columns, ["i", "r", "s", "b", "absent"]);
        assert_eq!(got.rows, vec![RowResult { values: row.clone() }, RowResult { values: row }]);
        let got = a.execute(&conn, "UPDATE t SET i = i + 1 WHERE id > ? RETURNING id", vec![Value::Integer(0)]).await;
        assert_eq!(got.unwrap().rows.len(), 2);
        assert_eq!(a.counters(&conn).await, (2, 2), "an UPDATE leaves the rowid, sets changes");
        a.execute(&conn, "SELECT count(*) FROM t", vec![]).await.unwrap();
        assert_eq!(a.counters(&conn).await, (2, 2), "a SELECT changes neither");
        a.execute(&conn, "DELETE FROM t WHERE id = 99", vec![]).await.unwrap();
        assert_eq!(a.counters(&conn).await, (2, 0));
        let got = a.execute(&conn, "SELECT CAST(x'ff41' AS TEXT)", vec![]).await.unwrap();
        assert_eq!(got.rows[0].values, [Value::Text("\u{fffd}A".into())]);
    }

    #[tokio::test]
    async fn instances_share_the_database_and_keep_their_own_counters() {
        let dir = tempfile::tempdir().unwrap();
        let dbs = Databases::new(dir.path(), None);
        let (mut a, mut b) = (Instance::new(&dbs, &["default"]), Instance::new(&dbs, &["default"]));
        let ca = a.open("default").await.unwrap();
        let cb = b.open("default").await.unwrap();
        a.execute(&ca, "CREATE TABLE t (x)", vec![]).await.unwrap();
        a.execute(&ca, "INSERT INTO t VALUES (1)", vec![]).await.unwrap();
        b.execute(&cb, "INSERT INTO t VALUES (2), (3)", vec![]).await.unwrap();
        a.execute(&ca, "SELECT * FROM t", vec![]).await.unwrap();
        assert_eq!(a.counters(&ca).await, (1, 1));
        assert_eq!(b.counters(&cb).await, (3, 2));
        let got = b.execute(&cb, "SELECT count(*) AS n FROM t", vec![]).await.unwrap();
        assert_eq!(got.rows[0].values, [Value::Integer(3)]);
        // The data outlives the host.
        drop((a, b, dbs));
        let mut c = Instance::new(&Databases::new(dir.path(), None), &["default"]);
        let cc = c.open("default").await.unwrap();
        let got = c.execute(&cc, "SELECT sum(x) FROM t", vec![]).await.unwrap();
        assert_eq!(got.rows[0].values, [Value::Integer(6)]);
        assert_eq!(c.counters(&cc).await, (0, 0));
    }

    #[tokio::test]
    async fn only_granted_labels_open_and_only_default_exists() {
        let dir = tempfile::tempdir().unwrap();
        let dbs = Databases::new(dir.path(), None);
        let mut a = Instance::new(&dbs, &["default", "analytics"]);
        assert!(matches!(a.open("other").await, Err(Error::AccessDenied)));
        assert!(matches!(a.open("analytics").await, Err(Error::NoSuchDatabase)));
        assert!(!dir.path().join(FILE_NAME).exists(), "a refused open touches nothing");
        let mut none = Instance::new(&dbs, &[]);
        assert!(matches!(none.open("default").await, Err(Error::AccessDenied)));
    }

    #[tokio::test]
    async fn open_connections_are_bounded_and_drop_frees_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = Instance::new(&Databases::new(dir.path(), None), &["default"]);
        let mut held = Vec::new();
        for _ in 0..MAX_OPEN {
            held.push(a.open("default").await.unwrap());
        }
        let e = io(a.open("default").await.unwrap_err());
        assert!(e.contains("at most 8 connections"), "{e}");
        let first = held.remove(0);
        a.view().drop(first).await.unwrap();
        let again = a.open("default").await.unwrap();
        a.execute(&again, "SELECT 1", vec![]).await.unwrap();
        assert_eq!(a.open, MAX_OPEN);
    }

    #[tokio::test]
    async fn statements_are_one_at_a_time_with_exactly_their_parameters() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = Instance::new(&Databases::new(dir.path(), None), &["default"]);
        let conn = a.open("default").await.unwrap();
        a.execute(&conn, "CREATE TABLE t (x)", vec![]).await.unwrap();
        for sql in [
            "INSERT INTO t VALUES (1); DROP TABLE t",
            "SELECT 1; SELECT 2",
            // The second statement does not compile until the first has run.
            "CREATE TABLE u (y); INSERT INTO u VALUES (1)",
            "SELECT 1; this is not SQL",
        ] {
            let e = io(a.execute(&conn, sql, vec![]).await.unwrap_err());
            assert!(e.contains("more than one statement"), "{sql}: {e}");
        }
        let got = a.execute(&conn, "SELECT count(*) FROM t", vec![]).await.unwrap();
        assert_eq!(got.rows[0].values, [Value::Integer(0)], "nothing of a refused string ran");
        assert!(a.execute(&conn, "SELECT * FROM u", vec![]).await.is_err());
        // A trailing semicolon or comment is one statement still.
        a.execute(&conn, "SELECT 1; -- done\n ", vec![]).await.unwrap();
        let e = io(a.execute(&conn, "INSERT INTO t VALUES (?)", vec![]).await.unwrap_err());
        assert!(e.contains("takes 1 parameter(s), 0 given"), "{e}");
        let two = vec![Value::Integer(1), Value::Integer(2)];
        let e = io(a.execute(&conn, "INSERT INTO t VALUES (?)", two).await.unwrap_err());
        assert!(e.contains("takes 1 parameter(s), 2 given"), "{e}");
        let e = io(a.execute(&conn, "SELEC 1", vec![]).await.unwrap_err());
        assert!(e.contains("syntax error"), "{e}");
        assert!(io(a.execute(&conn, "  ", vec![]).await.unwrap_err()).contains("empty"));
        let e = io(a.execute(&conn, "SELECT * FROM missing", vec![]).await.unwrap_err());
        assert!(e.contains("no such table: missing"), "{e}");
    }

    #[tokio::test]
    async fn a_full_database_is_database_full_and_foreign_keys_hold() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = Instance::new(&Databases::new(dir.path(), Some(64 * 1024)), &["default"]);
        let conn = a.open("default").await.unwrap();
        a.execute(&conn, "CREATE TABLE p (id INTEGER PRIMARY KEY)", vec![]).await.unwrap();
        a.execute(&conn, "CREATE TABLE c (p INTEGER REFERENCES p (id))", vec![]).await.unwrap();
        let e = io(a.execute(&conn, "INSERT INTO c VALUES (7)", vec![]).await.unwrap_err());
        assert!(e.contains("FOREIGN KEY"), "{e}");
        a.execute(&conn, "CREATE TABLE big (b BLOB)", vec![]).await.unwrap();
        let mut full = false;
        for _ in 0..16 {
            match a.execute(&conn, "INSERT INTO big VALUES (?)", vec![Value::Blob(vec![7; 16 * 1024])]).await {
                Ok(_) => {}
                Err(Error::DatabaseFull) => {
                    full = true;
                    break;
                }
                Err(e) => panic!("{e:?}"),
            }
        }
        assert!(full, "64 KiB hold fewer than 16 blobs of 16 KiB");
        // Full is not broken: reads and deletes go on.
        a.execute(&conn, "SELECT count(*) FROM big", vec![]).await.unwrap();
        a.execute(&conn, "DELETE FROM big", vec![]).await.unwrap();
    }

    #[tokio::test]
    async fn the_cap_holds_for_the_file_and_its_log_together() {
        let dir = tempfile::tempdir().unwrap();
        let cap = 256 * 1024;
        let mut a = Instance::new(&Databases::new(dir.path(), Some(cap)), &["default"]);
        let conn = a.open("default").await.unwrap();
        a.execute(&conn, "CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)", vec![]).await.unwrap();
        a.execute(&conn, "CREATE INDEX t_b ON t (b)", vec![]).await.unwrap();
        let on_disk = || {
            ["sqlite_db.db", "sqlite_db.db-wal"]
                .iter()
                .filter_map(|f| std::fs::metadata(dir.path().join(f)).ok())
                .map(|m| m.len())
                .sum::<u64>()
        };
        let (mut written, mut largest) = (0, 0);
        for i in 0..400u32 {
            // Small rows, one statement each: the log gains pages with every write.
            let row = i.to_le_bytes().repeat(225);
            match a.execute(&conn, "INSERT INTO t (b) VALUES (?)", vec![Value::Blob(row)]).await {
                Ok(_) => written += 1,
                Err(Error::DatabaseFull) => break,
                Err(e) => panic!("{e:?}"),
            }
            largest = largest.max(on_disk());
        }
        assert!(written > 50, "{written} rows");
        assert!(largest <= cap, "{largest} bytes on disk for a cap of {cap}");
        let c = split_cap(256 << 20, 4096);
        assert_eq!((c.pages, c.log_bytes, c.checkpoint_frames), (63 * 1024, 4 << 20, 1010));
        assert_eq!(split_cap(1 << 20, 4096), Cap { pages: 192, checkpoint_frames: 55, log_bytes: 256 << 10 });
        assert_eq!(split_cap(1024, 4096), Cap { pages: 1, checkpoint_frames: 1, log_bytes: 4096 });
    }

    #[tokio::test]
    async fn results_past_the_cap_are_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = Instance::new(&Databases::new(dir.path(), None), &["default"]);
        let conn = a.open("default").await.unwrap();
        let sql = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 80) \
                   SELECT zeroblob(1048576) FROM n";
        let e = io(a.execute(&conn, sql, vec![]).await.unwrap_err());
        assert!(e.contains("larger than 64 MiB"), "{e}");
        let got = a.execute(&conn, &sql.replace("< 80", "< 8"), vec![]).await.unwrap();
        assert_eq!(got.rows.len(), 8);
    }

    #[tokio::test]
    async fn an_unusable_state_folder_is_io_and_retried_on_the_next_open() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        std::fs::write(&state, b"a file where the folder should be").unwrap();
        let mut a = Instance::new(&Databases::new(&state, None), &["default"]);
        let e = io(a.open("default").await.unwrap_err());
        assert!(e.starts_with("cannot open ") && e.contains(FILE_NAME), "{e}");
        assert_eq!(a.open, 0);
        // Fixed behind the host's back: the next open succeeds.
        std::fs::remove_file(&state).unwrap();
        let conn = a.open("default").await.unwrap();
        a.execute(&conn, "SELECT 1", vec![]).await.unwrap();
        // A file that is not SQLite is refused the same way.
        let other = dir.path().join("other");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join(FILE_NAME), vec![b'x'; 4096]).unwrap();
        let mut b = Instance::new(&Databases::new(&other, None), &["default"]);
        let e = io(b.open("default").await.unwrap_err());
        assert!(e.contains(FILE_NAME) && e.contains("not a database"), "{e}");
    }
}
