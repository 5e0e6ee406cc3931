//! The files of the state folder (`.spin/` by default) where the local host keeps
//! what Spin would keep between runs, named as `spin up` names them, so that the
//! command line can read them without hosting a component.

/// The key-value stores (`spin:key-value`, `wasi:keyvalue`).
pub const KEY_VALUE_FILE: &str = "sqlite_key_value.db";
/// The SQLite database `default` (`spin:sqlite`): the insights log.
pub const SQLITE_FILE: &str = "sqlite_db.db";
