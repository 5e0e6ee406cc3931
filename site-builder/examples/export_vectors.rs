//! Exports a built index's chunks with their stored vectors, and a set of queries
//! with their embeddings, as JSON lines: the input of the Orama comparison
//! (`bench/orama`), so both engines search the same vectors with the same query
//! vectors and only search time is compared.
//!
//!     cargo run --release -p site-builder --example export_vectors -- \
//!         INDEX_DIR QUERIES.csv OUT_DIR
//!
//! QUERIES.csv is a QA set (its `question` column is read). Writes OUT_DIR/docs.jsonl
//! ({id, title, text, vector}) and OUT_DIR/queries.jsonl ({q, vector}).

use std::io::Write;
use std::path::PathBuf;

use site_builder::search::Searcher;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, queries, out] = args.as_slice() else {
        return Err("usage: export_vectors INDEX_DIR QUERIES.csv OUT_DIR".into());
    };
    let dir = PathBuf::from(dir);
    let out = PathBuf::from(out);
    std::fs::create_dir_all(&out)?;
    let s = Searcher::open(&dir.join("index.bin"), None)?;
    let svc = s.service()?;
    let idx = svc.index().ok_or("this example reads an index file")?;
    let mut docs = std::io::BufWriter::new(std::fs::File::create(out.join("docs.jsonl"))?);
    for d in 0..idx.len() as u32 {
        let m = idx.chunk(d)?;
        let line = serde_json::json!({ "id": m.id, "title": m.title, "text": m.text, "vector": idx.vector(d) });
        writeln!(docs, "{line}")?;
    }
    docs.flush()?;
    let qa = site_builder::eval::read_qa(&PathBuf::from(queries))?;
    let mut qs = std::io::BufWriter::new(std::fs::File::create(out.join("queries.jsonl"))?);
    for q in &qa {
        let v = svc.encoder().embed(&q.question);
        writeln!(qs, "{}", serde_json::json!({ "q": q.question, "vector": v }))?;
    }
    qs.flush()?;
    eprintln!("{} chunks, {} queries → {}", idx.len(), qa.len(), out.display());
    Ok(())
}
