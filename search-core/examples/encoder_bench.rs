//! Times the encoder:
//! `cargo run --release -p search-core --example encoder_bench -- MODEL_DIR [RUNS] [batch]`.
//! Prints the p50 / p90 of embedding a 12-word-piece query (or the text in the
//! `QUERY` environment variable) as a JSON line, and with `batch` also the
//! throughput on 32 texts of 256 tokens. `MODEL_DIR` holds a sentence-transformers
//! model (packed here) or a built `encoder.bin` (any model the build packs, e5's
//! included; `pack_s` is then 0).

use std::time::Instant;

use search_core::container::AlignedBytes;
use search_core::encoder::{pack, Encoder};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("usage: encoder_bench MODEL_DIR [RUNS]"));
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(200);
    let batch = args.next().as_deref() == Some("batch");
    let read = |f: &str| std::fs::read(dir.join(f)).expect("model file");
    let t = Instant::now();
    let packed = if dir.join("encoder.bin").is_file() {
        read("encoder.bin")
    } else {
        pack::pack(
            &read("model.safetensors"),
            &String::from_utf8_lossy(&read("tokenizer.json")),
            &String::from_utf8_lossy(&read("config.json")),
            256,
        )
        .expect("pack")
    };
    let pack_s = t.elapsed().as_secs_f64();
    let bytes = AlignedBytes::new(&packed);
    let t = Instant::now();
    let enc = Encoder::open(bytes.as_slice()).expect("open");
    let open_us = t.elapsed().as_secs_f64() * 1e6;
    let query =
        std::env::var("QUERY").unwrap_or_else(|_| "how many GPU hours does my project have left this month".into());
    let query = query.as_str();
    let ids = enc.tokenize(query);
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        std::hint::black_box(enc.embed(query));
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{{\"bench\":\"query\",\"tokens\":{},\"runs\":{runs},\"p50_ms\":{:.3},\"p90_ms\":{:.3},\"open_us\":{open_us:.1},\"pack_s\":{pack_s:.2},\"encoder_bytes\":{}}}",
        ids.len(),
        times[runs / 2],
        times[runs * 9 / 10],
        packed.len()
    );
    if !batch {
        return;
    }
    let text = "Running jobs on the cluster requires a project and a batch script. ".repeat(30);
    let seqs: Vec<Vec<u32>> = (0..32).map(|_| enc.tokenize(&text)).collect();
    let t = Instant::now();
    std::hint::black_box(enc.embed_tokens(&seqs));
    let s = t.elapsed().as_secs_f64();
    println!(
        "{{\"bench\":\"batch\",\"texts\":32,\"tokens_each\":{},\"seconds\":{s:.3},\"texts_per_s\":{:.2}}}",
        seqs[0].len(),
        32.0 / s
    );
}
