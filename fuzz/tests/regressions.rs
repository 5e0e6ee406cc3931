//! Replays the committed seeds (`corpus/TARGET/`) and every crash a fuzzer found
//! (`regressions/TARGET/`) through the harnesses, on stable: each must run to the
//! end without a panic.

use std::path::Path;

#[test]
fn every_seed_and_regression_replays_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut replayed = 0;
    for (name, run) in kb_fuzz::TARGETS {
        for dir in ["corpus", "regressions"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir).join(name)) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')) {
                    continue;
                }
                let data = std::fs::read(&path).unwrap();
                let outcome = std::panic::catch_unwind(|| run(&data));
                assert!(outcome.is_ok(), "{name}: {} panics", path.display());
                replayed += 1;
            }
        }
    }
    assert!(replayed > 0, "no seeds found under {}", root.display());
}

/// The `fragments` harness's semantic half is reached: a genuine `vectors.bin`
/// opens beside the synthetic encoder and is searched in every fused mode, and
/// damaged copies of it are refused or searched, never a panic.
#[test]
fn the_semantic_side_is_exercised() {
    let genuine = kb_fuzz::fragments::genuine_vectors();
    assert!(kb_fuzz::fragments::semantic_opens(&genuine));
    kb_fuzz::fragments::run(&genuine);
    for i in (0..genuine.len()).step_by(97) {
        let mut bad = genuine.clone();
        bad[i] ^= 0x55;
        kb_fuzz::fragments::run(&bad);
        kb_fuzz::fragments::run(&genuine[..i]);
    }
}
