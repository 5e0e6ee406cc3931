//! Writing a file so that a failed or interrupted run never leaves it half-written:
//! the bytes go to a temporary file beside the destination, are synced, and the
//! temporary file is renamed over the destination (atomic on one file system).
//! The build's outputs, the embedding cache, ingested pages and the ingest state
//! file are all written this way.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A file or folder that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}: {source}")]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl WriteError {
    /// Maps an I/O error on `path` to a [`WriteError`] naming it
    /// (`fs::create_dir_all(p).map_err(WriteError::on(p))`).
    pub fn on(path: &Path) -> impl FnOnce(std::io::Error) -> WriteError + '_ {
        move |source| WriteError { path: path.to_path_buf(), source }
    }
}

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename), creating
/// the parent folders. On failure the temporary file is removed and the old
/// content of `path`, if any, is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(WriteError::on(dir))?;
    }
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(WriteError::on(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_leaves_no_temp() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("x/report.json");
        write_atomic(&p, b"{}").unwrap();
        write_atomic(&p, b"{\"a\":1}").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"a\":1}");
        assert_eq!(fs::read_dir(tmp.path().join("x")).unwrap().count(), 1);
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_names_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        // A folder where the file should go: the rename fails.
        let p = tmp.path().join("taken");
        fs::create_dir_all(p.join("inside")).unwrap();
        let err = write_atomic(&p, b"new").unwrap_err();
        assert_eq!(err.path, p);
        assert!(p.join("inside").is_dir(), "the destination is untouched");
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 1, "no temporary file left behind");
    }
}
