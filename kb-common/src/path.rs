//! Content-relative paths (`/`-separated, no leading `/`): joining a link onto
//! the folder of the page that holds it, and the way from one page to another.
//! The build's renderer and the dialect passes both resolve links; this is the
//! one place that says what `..` and `.` mean.

/// Joins `rel` onto `dir` and resolves `.` and `..`; `None` if it leaves the root.
pub fn join(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// The path of `to` relative to the file at `from` (both from the same root), as
/// segments: `..` once per folder to climb, then the rest of `to`.
pub fn relative<'a>(from: &str, to: &'a str) -> Vec<&'a str> {
    let from_dir: Vec<&str> = from.split('/').collect();
    let from_dir = &from_dir[..from_dir.len().saturating_sub(1)];
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from_dir.iter().zip(&to_parts).take_while(|(a, b)| a == b).count();
    let common = common.min(to_parts.len().saturating_sub(1));
    let mut out = vec![".."; from_dir.len() - common];
    out.extend_from_slice(&to_parts[common..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_and_climbs() {
        assert_eq!(join("a/b", "../c/./d.md").as_deref(), Some("a/c/d.md"));
        assert_eq!(join("", "x.md").as_deref(), Some("x.md"));
        assert_eq!(join("a", "../../x.md"), None);
    }

    #[test]
    fn relative_paths() {
        assert_eq!(relative("a/b/c.html", "a/x.html").join("/"), "../x.html");
        assert_eq!(relative("a/b.html", "a/b.html").join("/"), "b.html");
        assert_eq!(relative("index.html", "it/wifi.html").join("/"), "it/wifi.html");
        assert_eq!(relative("it/wifi.html", "index.html").join("/"), "../index.html");
    }
}
