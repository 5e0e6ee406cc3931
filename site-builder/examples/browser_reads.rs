//! Whether the browser engine reads a knowledge base's questions as the edge
//! does: for each question of the QA files, the fragments the build would
//! write (split in memory from `INDEX_DIR/index.bin`, the encoder's dictionary
//! in the spelling lists) answered by `search_core::index::fragments::Engine`
//! beside the service's own `bm25` answer, both unfiltered by language as the
//! browser asks without a reader's language.
//!
//!     cargo run --release -p site-builder --no-default-features --example browser_reads -- INDEX_DIR QA.csv…
//!
//! A `.txt` file is read as queries, one per line (`#` starts a comment), as
//! `eval/slips-accented-initial.txt`.
//!
//! Prints one JSON object: questions, how many each side read as a slip,
//! the questions whose reading or results differ (none, when the browser
//! is faithful), and the spelling lists' bytes (raw and gzipped; and with one
//! count per term, as an index of one language writes them).

use std::collections::HashMap;
use std::path::PathBuf;

use search_core::index::fragments::{self, Engine, Step, MANIFEST};
use search_core::index::{Index, Mode, SearchParams};
use site_builder::browser::SHARD_BYTES;
use site_builder::search::Searcher;

/// The browser's answer to `q`, fetching what it asks for from `files`.
fn browse(e: &mut Engine, files: &HashMap<String, Vec<u8>>, q: &str) -> Result<(Option<String>, Vec<String>), String> {
    for _ in 0..8 {
        match e.search(q, 5, 1, false) {
            Step::Done(r) => return Ok((r.corrected, r.results.into_iter().map(|r| r.chunk_id).collect())),
            Step::Need(names) => {
                for n in names {
                    let bytes = files.get(&n).ok_or_else(|| format!("{q:?} asks for {n}, which the split has not"))?;
                    e.add(&n, bytes).map_err(|err| format!("{n}: {err}"))?;
                }
            }
        }
    }
    Err(format!("no answer after eight rounds for {q:?}"))
}

/// The questions of a QA file, or the lines of a `.txt` file.
fn queries(file: &str) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    if file.ends_with(".txt") {
        return Ok(site_builder::eval::read_queries(&PathBuf::from(file))?);
    }
    Ok(site_builder::eval::read_qa(&PathBuf::from(file))?.into_iter().map(|q| q.question).collect())
}

/// The spelling lists' bytes: as written, gzipped, and both again with each
/// term's counts by language summed into one.
fn spelling_bytes(files: &HashMap<String, Vec<u8>>) -> serde_json::Value {
    let gz = |b: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut e, b).map(|_| e.finish().map(|v| v.len()).unwrap_or(0)).unwrap_or(0)
    };
    let (mut raw, mut zipped, mut one, mut one_zipped) = (0, 0, 0, 0);
    for bytes in files.iter().filter(|(n, _)| n.starts_with("v/")).map(|(_, b)| b) {
        let text = String::from_utf8_lossy(bytes);
        let (terms, words) = text.split_once("\n\n").unwrap_or((&text, ""));
        let summed: String = terms
            .lines()
            .map(|l| match l.split_once(' ') {
                Some((t, c)) => {
                    let n: usize = c.split(' ').filter_map(|c| c.rsplit(':').next()?.parse::<usize>().ok()).sum();
                    format!("{t} {n}\n")
                }
                None => format!("{l}\n"),
            })
            .collect::<String>()
            + "\n"
            + words;
        raw += bytes.len();
        zipped += gz(bytes);
        one += summed.len();
        one_zipped += gz(summed.as_bytes());
    }
    serde_json::json!({"raw": raw, "gzip": zipped, "one_count_raw": one, "one_count_gzip": one_zipped})
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, qas @ ..] = args.as_slice() else {
        return Err("usage: browser_reads INDEX_DIR QA.csv…".into());
    };
    let s = Searcher::open(&PathBuf::from(dir).join("index.bin"), None)?;
    let svc = s.service()?;
    let bytes = std::fs::read(PathBuf::from(dir).join("index.bin"))?;
    let idx = Index::open(&bytes)?;
    let files: HashMap<String, Vec<u8>> =
        fragments::split_with(&idx, SHARD_BYTES, &svc.encoder().dictionary())?.files.into_iter().collect();
    let params = SearchParams { mode: Mode::Bm25, ..svc.default_params(5) };
    let (mut questions, mut edge_read, mut browser_read) = (0, 0, 0);
    let mut differ = Vec::new();
    for file in qas {
        for q in queries(file)? {
            questions += 1;
            let want = svc.search(&q, &params, 1, &|| 0.0)?;
            let want_ids: Vec<String> = want.results.into_iter().map(|r| r.chunk_id).collect();
            let mut e = Engine::open(&files[MANIFEST])?;
            let (got, got_ids) = browse(&mut e, &files, &q)?;
            edge_read += usize::from(want.corrected.is_some());
            browser_read += usize::from(got.is_some());
            if got != want.corrected || got_ids != want_ids {
                differ.push(serde_json::json!({"q": q, "edge": want.corrected, "browser": got,
                    "same_results": got_ids == want_ids}));
            }
        }
    }
    let out = serde_json::json!({"questions": questions, "edge_read": edge_read,
        "browser_read": browser_read, "differ": differ, "spelling_bytes": spelling_bytes(&files)});
    println!("{out}");
    Ok(())
}
