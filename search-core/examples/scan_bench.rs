//! Times the exact dense scan over a built index, natively or in wasm:
//! `cargo run --release -p search-core --example scan_bench -- DIR [RUNS] [DEPTH]`
//! reads every `*.bin` index in DIR (say the same pages built with `--vectors
//! i16` and `--vectors f16`), takes RUNS chunks' own vectors as queries, and
//! prints one JSON line per index: the p50 / p90 of `Index::dense_top`. In wasm,
//! through edge-host's `run_command`, DIR is the preopened `/model`.

use std::time::Instant;

use search_core::container::AlignedBytes;
use search_core::index::Index;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("usage: scan_bench DIR [RUNS] [DEPTH]"));
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(200);
    let depth: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(100);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("DIR")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    files.sort();
    for path in files {
        let bytes = AlignedBytes::new(&std::fs::read(&path).expect("index file"));
        let Ok(idx) = Index::open(bytes.as_slice()) else { continue };
        let n = idx.len().max(1);
        let queries: Vec<Vec<f32>> = (0..runs).map(|i| idx.vector(((i * 7919) % n) as u32)).collect();
        let mut times = Vec::with_capacity(runs);
        for q in &queries {
            let t = Instant::now();
            std::hint::black_box(idx.dense_top(q, depth));
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{{\"index\":{:?},\"vectors\":{:?},\"chunks\":{},\"runs\":{runs},\"depth\":{depth},\"p50_ms\":{:.3},\"p90_ms\":{:.3}}}",
            path.file_name().unwrap_or_default(),
            format!("{:?}", idx.info().vectors),
            idx.len(),
            times[runs / 2],
            times[runs * 9 / 10]
        );
    }
}
