//! The harness the end-to-end tests of `site-builder` share: the workspace root,
//! the real binary run there with no LLM or Confluence settings from the caller's
//! environment, a build's outputs (`report.json`, `chunks.jsonl`), and small file
//! helpers. Each test binary includes it with `mod common;` and uses a part of it.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use search_core::chunk::{decode_jsonl, Chunk};
use serde_json::Value;

/// The environment variables a run must not inherit: the LLM settings the build
/// reads (a test that wants an LLM passes them) and the Confluence token.
const CLEARED_ENV: [&str; 4] =
    ["SPIN_VARIABLE_LLM_BASE_URL", "SPIN_VARIABLE_LLM_MODEL", "SPIN_VARIABLE_LLM_API_KEY", "CONFLUENCE_TOKEN"];

/// The workspace root (`content/`, `tests/hostile/`, `../shared` are beside it).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// The `site-builder` binary with `args`, run from the workspace root with the
/// variables of [`CLEARED_ENV`] removed.
pub fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_site-builder"));
    cmd.args(args).current_dir(repo());
    for k in CLEARED_ENV {
        cmd.env_remove(k);
    }
    cmd
}

/// Runs the binary with `args` (see [`command`]) to its end.
pub fn run(args: &[&str]) -> Output {
    run_with_env(args, &[])
}

/// Runs the binary with `args` and the variables `env` set.
pub fn run_with_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    command(args).envs(env.iter().copied()).output().expect("run site-builder")
}

/// What a run wrote to standard output.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What a run wrote to standard error.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Fails the test, with both outputs, unless the run succeeded.
#[track_caller]
pub fn assert_ok(o: &Output) {
    assert!(o.status.success(), "{}\nstderr: {}\nstdout: {}", o.status, stderr(o), stdout(o));
}

/// A site-only build of `content` into `out` (no search index), `--quiet`.
pub fn build(content: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["--no-index"];
    args.extend_from_slice(extra);
    build_with_index(content, out, &args)
}

/// A full build, search index included (needs the model: scripts/fetch-model).
pub fn build_with_index(content: &Path, out: &Path, extra: &[&str]) -> Output {
    let (content, out) = (content.to_str().expect("a UTF-8 path"), out.to_str().expect("a UTF-8 path"));
    let mut args = vec!["build", "--quiet", "--content", content, "--out", out];
    args.extend_from_slice(extra);
    run(&args)
}

/// A build's `report.json`.
pub fn report(out: &Path) -> Value {
    serde_json::from_str(&read(out, "report.json")).expect("report.json is JSON")
}

/// A build's `chunks.jsonl`.
pub fn chunks(out: &Path) -> Vec<Chunk> {
    decode_jsonl(&read(out, "chunks.jsonl")).expect("chunks.jsonl")
}

/// The text of `dir/rel`; a missing file fails the test naming it.
pub fn read(dir: &Path, rel: &str) -> String {
    fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Writes `bytes` to `dir/rel`, creating its folders.
pub fn write(dir: &Path, rel: &str, bytes: impl AsRef<[u8]>) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().expect("a file in a folder")).expect("create the folders");
    fs::write(path, bytes).expect("write the file");
}

/// Every file under `dir`, at any depth; a folder that cannot be read fails the test.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.expect("a folder entry").path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
