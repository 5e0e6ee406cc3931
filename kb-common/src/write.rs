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

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename, then the
/// folder synced so that the rename itself survives a crash), creating the
/// parent folders. On failure the temporary file is removed and the old content
/// of `path`, if any, is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).map_err(WriteError::on(dir))?;
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // A random name of its own: two writers of one path (threads of one process
    // included) never share a temporary file. Dropped, it is removed.
    let prefix = format!(".{file_name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // The mode a plain `File::create` gives (0666 less the umask), not a
    // temporary file's 0600: a site is often served by another user.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut tmp = builder.tempfile_in(dir).map_err(WriteError::on(path))?;
    tmp.write_all(bytes).and_then(|()| tmp.as_file().sync_all()).map_err(WriteError::on(path))?;
    tmp.persist(path).map_err(|e| WriteError { path: path.to_path_buf(), source: e.error })?;
    sync_dir(dir).map_err(WriteError::on(dir))
}

/// Makes the folder's entries durable (a rename is a change of the folder).
#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

/// Elsewhere a folder cannot be opened to sync it; the rename is what it is.
#[cfg(not(unix))]
fn sync_dir(_: &Path) -> std::io::Result<()> {
    Ok(())
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
    fn writers_of_one_path_at_once_never_mix_or_leave_temporaries() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("state.json");
        let contents: Vec<Vec<u8>> = (0..8u8).map(|i| vec![b'a' + i; 64 * 1024]).collect();
        std::thread::scope(|s| {
            for c in &contents {
                let p = &p;
                s.spawn(move || {
                    for _ in 0..20 {
                        write_atomic(p, c).unwrap();
                    }
                });
            }
        });
        // Whole, and one writer's: a shared temporary file (the pid-named one
        // this replaced) could interleave two writers' bytes or lose a rename.
        let got = fs::read(&p).unwrap();
        assert!(contents.contains(&got), "{} bytes of mixed content", got.len());
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 1, "no temporary file left behind");
    }

    #[cfg(unix)]
    #[test]
    fn the_file_gets_the_mode_a_plain_create_gives() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let plain = tmp.path().join("plain.html");
        fs::File::create(&plain).unwrap();
        let atomic = tmp.path().join("atomic.html");
        write_atomic(&atomic, b"<p>").unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&atomic), mode(&plain));
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
