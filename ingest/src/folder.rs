//! What the Confluence and web runs share about the content folder they fill:
//! their state files (read, written only when changed, and how often while pages
//! are written) and the relative links between its pages.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kb_common::percent::encode_segment;
use kb_common::write::{write_atomic, WriteError};
use serde::Serialize;

/// The longest a run goes without saving the state file while pages are written.
pub const STATE_SAVE_INTERVAL: Duration = Duration::from_millis(250);

/// Why a run's state file could not be read or saved.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Unreadable, or not a state file of this version.
    #[error("{}: {message}; delete it to start over (every page will be fetched again)", path.display())]
    Unusable { path: PathBuf, message: String },
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// Reads a run's state file (JSON); a missing file is a first run.
pub(crate) fn load_json_state<T: serde::de::DeserializeOwned + Default>(path: &Path) -> Result<T, StateError> {
    let unusable = |message: String| StateError::Unusable { path: path.to_path_buf(), message };
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| unusable(format!("not a state file: {e}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
        Err(e) => Err(unusable(e.to_string())),
    }
}

/// Writes a run's state file atomically; an unchanged state is not rewritten, so
/// a run that changed nothing writes nothing.
pub(crate) fn save_json_state<T: Serialize>(path: &Path, state: &T) -> Result<(), StateError> {
    let json = serde_json::to_string_pretty(state)
        .map_err(|e| StateError::Unusable { path: path.to_path_buf(), message: e.to_string() })?;
    if std::fs::read(path).is_ok_and(|old| old == json.as_bytes()) {
        return Ok(());
    }
    Ok(write_atomic(path, json.as_bytes())?)
}

/// `target` (relative to OUT) seen from the folder `from_dir`.
pub(crate) fn relative(from_dir: &[&str], target: &str) -> String {
    let parts: Vec<&str> = target.split('/').collect();
    let (dirs, file) = parts.split_at(parts.len() - 1);
    let common = from_dir.iter().zip(dirs).take_while(|(a, b)| a == b).count();
    let mut out: Vec<String> = vec!["..".to_string(); from_dir.len() - common];
    out.extend(dirs[common..].iter().map(|d| encode_segment(d)));
    out.extend(file.iter().map(|f| encode_segment(f)));
    out.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(relative(&[], "it/vpn.md"), "it/vpn.md");
        assert_eq!(relative(&["it"], "it/vpn.md"), "vpn.md");
        assert_eq!(relative(&["it", "net"], "finance/index.md"), "../../finance/index.md");
        assert_eq!(relative(&["it"], "index.md"), "../index.md");
    }
}
