//! Writing the build's outputs so that a failed or interrupted build never leaves a
//! half-written file: every file is written beside its destination and renamed into
//! place, and the site is assembled in a staging folder that replaces the old site
//! in one rename.

use std::fs;
use std::path::{Path, PathBuf};

pub use kb_common::write::{write_atomic, WriteError};

/// A folder being filled, that replaces `dest` only when [`Staging::commit`] is called.
/// Dropped without a commit, it removes itself and `dest` is untouched.
pub struct Staging {
    dir: PathBuf,
    dest: PathBuf,
    committed: bool,
}

impl Staging {
    pub fn new(dest: &Path) -> Result<Staging, WriteError> {
        let parent = dest.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(parent).map_err(WriteError::on(parent))?;
        let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
        let dir = parent.join(format!(".{name}.staging.{}", std::process::id()));
        if dir.exists() {
            fs::remove_dir_all(&dir).map_err(WriteError::on(&dir))?;
        }
        fs::create_dir_all(&dir).map_err(WriteError::on(&dir))?;
        Ok(Staging { dir, dest: dest.to_path_buf(), committed: false })
    }

    /// Path of `rel` inside the staging folder.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Writes `rel` (a `/`-separated path) into the staging folder.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), WriteError> {
        let path = self.path(rel);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(WriteError::on(dir))?;
        }
        fs::write(&path, bytes).map_err(WriteError::on(&path))
    }

    /// Swaps the staged folder in for `dest`.
    pub fn commit(mut self) -> Result<(), WriteError> {
        let old = self.dest.with_file_name(format!(
            ".{}.old.{}",
            self.dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            std::process::id()
        ));
        if self.dest.exists() {
            fs::rename(&self.dest, &old).map_err(WriteError::on(&self.dest))?;
        }
        fs::rename(&self.dir, &self.dest).map_err(WriteError::on(&self.dest))?;
        self.committed = true;
        if old.exists() {
            fs::remove_dir_all(&old).map_err(WriteError::on(&old))?;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_replaces_only_on_commit() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("site");
        fs::create_dir_all(&dest).unwrap();
        fs::write(dest.join("old.html"), "old").unwrap();
        {
            let s = Staging::new(&dest).unwrap();
            s.write("a/new.html", b"new").unwrap();
        } // dropped: no commit
        assert!(dest.join("old.html").exists());
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 1, "staging folder left behind");
        let s = Staging::new(&dest).unwrap();
        s.write("a/new.html", b"new").unwrap();
        s.commit().unwrap();
        assert!(!dest.join("old.html").exists());
        assert_eq!(fs::read_to_string(dest.join("a/new.html")).unwrap(), "new");
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 1);
    }
}
