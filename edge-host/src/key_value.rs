//! The storage behind Spin's key-value interface: a real SQLite file in the
//! host's state folder (`--state DIR`, default `.spin/`, the folder `spin up` uses),
//! so counters and other values survive restarts and are shared by every instance
//! of the function, as they are on a platform.
//!
//! The file and table are laid out as `spin up` lays out its default store
//! (`.spin/sqlite_key_value.db`, one table keyed by store label and key), so a
//! state folder can move between the two.
//!
//! Writes are single statements in WAL mode; a connection behind a mutex is enough
//! for the host's request rates (one statement is a few microseconds, measured
//! beside the rate limiter in SECURITY.md), and it makes each operation atomic.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{params, Connection, OptionalExtension};

/// The file inside the state folder, as `spin up` names it.
pub use kb_common::spin_state::KEY_VALUE_FILE as FILE_NAME;

/// Spin's limits for one tuple: keys up to 256 bytes, values up to 1 MiB.
pub const MAX_KEY_BYTES: usize = 256;
pub const MAX_VALUE_BYTES: usize = 1 << 20;

/// Why an operation failed.
#[derive(Debug, thiserror::Error)]
pub enum KeyValueError {
    #[error("cannot create the state folder {path}: {source}")]
    Folder { path: PathBuf, source: std::io::Error },
    #[error("cannot open the key-value database {path}: {source}; is it a SQLite file? Move it away or pass another --state")]
    Open { path: PathBuf, source: rusqlite::Error },
    #[error("key-value store: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("key-value store: a key is at most {MAX_KEY_BYTES} bytes, this one is {0}")]
    KeyTooLong(usize),
    #[error("key-value store: a value is at most {MAX_VALUE_BYTES} bytes, this one is {0}")]
    ValueTooLarge(usize),
    #[error("key-value store: the database lock was poisoned by a panic")]
    Poisoned,
    #[error("key-value store: `{key}` holds {len} bytes, not a counter (an 8-byte big-endian integer, as `increment` writes)")]
    NotACounter { key: String, len: usize },
    #[error("key-value store: incrementing `{key}` by {delta} overflows a 64-bit integer")]
    Overflow { key: String, delta: i64 },
}

/// Most keys one page of [`KeyValue::keys_after`] returns (the cursor continues).
pub const KEYS_PER_PAGE: usize = 1000;

/// The stores of one host, in one SQLite file.
#[derive(Clone)]
pub struct KeyValue {
    conn: Arc<Mutex<Connection>>,
    path: Option<PathBuf>,
}

impl std::fmt::Debug for KeyValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyValue").field("path", &self.path).finish()
    }
}

impl KeyValue {
    /// Opens (creating if needed) `state/sqlite_key_value.db`.
    pub fn open(state: &Path) -> Result<KeyValue, KeyValueError> {
        std::fs::create_dir_all(state).map_err(|source| KeyValueError::Folder { path: state.to_path_buf(), source })?;
        let path = state.join(FILE_NAME);
        let open_err = |source| KeyValueError::Open { path: path.clone(), source };
        let conn = Connection::open(&path).map_err(open_err)?;
        Self::init(&conn).map_err(open_err)?;
        Ok(KeyValue { conn: Arc::new(Mutex::new(conn)), path: Some(path) })
    }

    /// A store that lives in memory only (tests of the host itself).
    pub fn in_memory() -> Result<KeyValue, KeyValueError> {
        let conn = Connection::open_in_memory()?;
        Self::init(&conn)?;
        Ok(KeyValue { conn: Arc::new(Mutex::new(conn)), path: None })
    }

    fn init(conn: &Connection) -> Result<(), rusqlite::Error> {
        // WAL: readers never wait for the writer, and a crash loses at most the
        // last transaction. Another process (a second `serve` on the same state
        // folder) waits up to 5 s for the lock rather than failing at once.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS spin_key_value (
                store TEXT NOT NULL,
                key   TEXT NOT NULL,
                value BLOB NOT NULL,
                PRIMARY KEY (store, key)
            )",
        )
    }

    /// The database file, if on disk.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    fn with<R>(&self, f: impl FnOnce(&Connection) -> Result<R, KeyValueError>) -> Result<R, KeyValueError> {
        let conn = self.conn.lock().map_err(|_| KeyValueError::Poisoned)?;
        f(&conn)
    }

    /// Runs `f` in one immediate transaction: the write lock is taken at the start,
    /// so a read and the write that depends on it are atomic against this host's
    /// other instances (the mutex) and against another process on the same file.
    fn transaction<R>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<R, KeyValueError>,
    ) -> Result<R, KeyValueError> {
        let mut conn = self.conn.lock().map_err(|_| KeyValueError::Poisoned)?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let r = f(&tx)?;
        tx.commit()?;
        Ok(r)
    }

    fn check_key(key: &str) -> Result<(), KeyValueError> {
        if key.len() > MAX_KEY_BYTES {
            return Err(KeyValueError::KeyTooLong(key.len()));
        }
        Ok(())
    }

    pub fn get(&self, store: &str, key: &str) -> Result<Option<Vec<u8>>, KeyValueError> {
        Self::check_key(key)?;
        self.with(|c| Self::select(c, store, key))
    }

    pub fn set(&self, store: &str, key: &str, value: &[u8]) -> Result<(), KeyValueError> {
        Self::check_key(key)?;
        if value.len() > MAX_VALUE_BYTES {
            return Err(KeyValueError::ValueTooLarge(value.len()));
        }
        self.with(|c| Self::upsert(c, store, key, value))
    }

    pub fn delete(&self, store: &str, key: &str) -> Result<(), KeyValueError> {
        self.with(|c| {
            c.prepare_cached("DELETE FROM spin_key_value WHERE store = ?1 AND key = ?2")?
                .execute(params![store, key])?;
            Ok(())
        })
    }

    pub fn exists(&self, store: &str, key: &str) -> Result<bool, KeyValueError> {
        Ok(self.get(store, key)?.is_some())
    }

    /// Adds `delta` to the counter at `key` (absent: 0) and returns the new value,
    /// atomically. The value is stored as 8 big-endian bytes, as Spin's SQLite
    /// store stores it, so a state folder moves between `spin up` and this host.
    pub fn increment(&self, store: &str, key: &str, delta: i64) -> Result<i64, KeyValueError> {
        Self::check_key(key)?;
        self.transaction(|tx| {
            let old = match Self::select(tx, store, key)? {
                None => 0,
                Some(bytes) => match <[u8; 8]>::try_from(bytes.as_slice()) {
                    Ok(b) => i64::from_be_bytes(b),
                    Err(_) => return Err(KeyValueError::NotACounter { key: key.to_string(), len: bytes.len() }),
                },
            };
            let new = old.checked_add(delta).ok_or_else(|| KeyValueError::Overflow { key: key.to_string(), delta })?;
            Self::upsert(tx, store, key, &new.to_be_bytes())?;
            Ok(new)
        })
    }

    /// Writes `new` at `key` if the key still holds `expected` (`None`: absent);
    /// `false` when another writer got there first and nothing was written.
    pub fn compare_and_swap(
        &self,
        store: &str,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<bool, KeyValueError> {
        Self::check_key(key)?;
        if new.len() > MAX_VALUE_BYTES {
            return Err(KeyValueError::ValueTooLarge(new.len()));
        }
        self.transaction(|tx| {
            if Self::select(tx, store, key)?.as_deref() != expected {
                return Ok(false);
            }
            Self::upsert(tx, store, key, new)?;
            Ok(true)
        })
    }

    fn select(conn: &Connection, store: &str, key: &str) -> Result<Option<Vec<u8>>, KeyValueError> {
        Ok(conn
            .prepare_cached("SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2")?
            .query_row(params![store, key], |r| r.get(0))
            .optional()?)
    }

    fn upsert(conn: &Connection, store: &str, key: &str, value: &[u8]) -> Result<(), KeyValueError> {
        conn.prepare_cached(
            "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3)
             ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
        )?
        .execute(params![store, key, value])?;
        Ok(())
    }

    /// One page of keys in order, those after `cursor` (the last key of the
    /// previous page); the second value is the cursor of the next page, `None`
    /// at the end. Pages keep one listing of a large store out of memory.
    pub fn keys_after(
        &self,
        store: &str,
        cursor: Option<&str>,
    ) -> Result<(Vec<String>, Option<String>), KeyValueError> {
        self.with(|c| {
            let mut stmt =
                c.prepare_cached("SELECT key FROM spin_key_value WHERE store = ?1 AND key > ?2 ORDER BY key LIMIT ?3")?;
            let keys = stmt
                .query_map(params![store, cursor.unwrap_or(""), KEYS_PER_PAGE as i64 + 1], |r| r.get(0))?
                .collect::<Result<Vec<String>, _>>()?;
            Ok(page(keys))
        })
    }

    pub fn keys(&self, store: &str) -> Result<Vec<String>, KeyValueError> {
        self.with(|c| {
            let mut stmt = c.prepare_cached("SELECT key FROM spin_key_value WHERE store = ?1 ORDER BY key")?;
            let keys = stmt.query_map(params![store], |r| r.get(0))?.collect::<Result<Vec<String>, _>>()?;
            Ok(keys)
        })
    }
}

/// Splits a query's `KEYS_PER_PAGE + 1` rows into a page and the next cursor.
fn page(mut keys: Vec<String>) -> (Vec<String>, Option<String>) {
    if keys.len() > KEYS_PER_PAGE {
        keys.truncate(KEYS_PER_PAGE);
        let cursor = keys.last().cloned();
        (keys, cursor)
    } else {
        (keys, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_persist_in_the_state_folder_and_stores_are_separate() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join(".spin");
        {
            let kv = KeyValue::open(&state).unwrap();
            kv.set("default", "a", b"1").unwrap();
            kv.set("default", "a", b"2").unwrap();
            kv.set("other", "a", b"x").unwrap();
            kv.set("default", "b", b"").unwrap();
        }
        let kv = KeyValue::open(&state).unwrap();
        assert!(state.join(FILE_NAME).is_file());
        assert_eq!(kv.get("default", "a").unwrap().as_deref(), Some(&b"2"[..]));
        assert_eq!(kv.get("other", "a").unwrap().as_deref(), Some(&b"x"[..]));
        assert_eq!(kv.keys("default").unwrap(), ["a", "b"]);
        assert!(kv.exists("default", "b").unwrap());
        kv.delete("default", "a").unwrap();
        kv.delete("default", "missing").unwrap();
        assert_eq!(kv.get("default", "a").unwrap(), None);
        assert!(matches!(kv.set("default", &"k".repeat(257), b""), Err(KeyValueError::KeyTooLong(257))));
        assert!(matches!(
            kv.set("default", "big", &vec![0; MAX_VALUE_BYTES + 1]),
            Err(KeyValueError::ValueTooLarge(_))
        ));
    }

    #[test]
    fn a_file_that_is_not_sqlite_is_refused_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE_NAME), b"not a database, but long enough to have a header......").unwrap();
        let e = KeyValue::open(dir.path()).unwrap_err().to_string();
        assert!(e.contains(FILE_NAME) && e.contains("--state"), "{e}");
    }

    #[test]
    fn increments_are_atomic_across_threads_and_stored_as_spin_stores_them() {
        let dir = tempfile::tempdir().unwrap();
        let kv = KeyValue::open(dir.path()).unwrap();
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let kv = kv.clone();
                std::thread::spawn(move || {
                    (0..250).map(|_| kv.increment("default", "n", 1).unwrap()).collect::<Vec<_>>()
                })
            })
            .collect();
        let mut seen: Vec<i64> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
        seen.sort_unstable();
        // Every increment saw a value of its own: none was lost.
        assert_eq!(seen, (1..=2000).collect::<Vec<i64>>());
        assert_eq!(kv.get("default", "n").unwrap().unwrap(), 2000i64.to_be_bytes());
        assert_eq!(kv.increment("default", "n", -2000).unwrap(), 0);
        kv.set("default", "text", b"12").unwrap();
        let e = kv.increment("default", "text", 1).unwrap_err().to_string();
        assert!(e.contains("`text`") && e.contains("not a counter"), "{e}");
        kv.set("default", "max", &i64::MAX.to_be_bytes()).unwrap();
        assert!(matches!(kv.increment("default", "max", 1), Err(KeyValueError::Overflow { .. })));
    }

    #[test]
    fn compare_and_swap_writes_only_over_the_value_it_saw() {
        let kv = KeyValue::in_memory().unwrap();
        assert!(kv.compare_and_swap("default", "k", None, b"a").unwrap());
        assert!(!kv.compare_and_swap("default", "k", None, b"b").unwrap());
        assert!(!kv.compare_and_swap("default", "k", Some(b"x"), b"b").unwrap());
        assert!(kv.compare_and_swap("default", "k", Some(b"a"), b"b").unwrap());
        assert_eq!(kv.get("default", "k").unwrap().as_deref(), Some(&b"b"[..]));
    }

    #[test]
    fn keys_come_in_pages_that_together_list_each_key_once() {
        let kv = KeyValue::in_memory().unwrap();
        for i in 0..(2 * KEYS_PER_PAGE + 5) {
            kv.set("default", &format!("k{i:05}"), b"").unwrap();
        }
        kv.set("other", "k", b"").unwrap();
        let (mut all, mut cursor, mut pages) = (Vec::new(), None, 0);
        loop {
            let (keys, next) = kv.keys_after("default", cursor.as_deref()).unwrap();
            assert!(keys.len() <= KEYS_PER_PAGE);
            all.extend(keys);
            pages += 1;
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(pages, 3);
        assert_eq!(all, kv.keys("default").unwrap());
        assert_eq!(all.len(), 2 * KEYS_PER_PAGE + 5);
    }
}
