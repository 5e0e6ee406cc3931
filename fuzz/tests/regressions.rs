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
