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
pub const FILE_NAME: &str = "sqlite_key_value.db";

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
}

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

    fn check_key(key: &str) -> Result<(), KeyValueError> {
        if key.len() > MAX_KEY_BYTES {
            return Err(KeyValueError::KeyTooLong(key.len()));
        }
        Ok(())
    }

    pub fn get(&self, store: &str, key: &str) -> Result<Option<Vec<u8>>, KeyValueError> {
        Self::check_key(key)?;
        self.with(|c| {
            Ok(c.prepare_cached("SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2")?
                .query_row(params![store, key], |r| r.get(0))
                .optional()?)
        })
    }

    pub fn set(&self, store: &str, key: &str, value: &[u8]) -> Result<(), KeyValueError> {
        Self::check_key(key)?;
        if value.len() > MAX_VALUE_BYTES {
            return Err(KeyValueError::ValueTooLarge(value.len()));
        }
        self.with(|c| {
            c.prepare_cached(
                "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
            )?
            .execute(params![store, key, value])?;
            Ok(())
        })
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

    pub fn keys(&self, store: &str) -> Result<Vec<String>, KeyValueError> {
        self.with(|c| {
            let mut stmt = c.prepare_cached("SELECT key FROM spin_key_value WHERE store = ?1 ORDER BY key")?;
            let keys = stmt.query_map(params![store], |r| r.get(0))?.collect::<Result<Vec<String>, _>>()?;
            Ok(keys)
        })
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
}
