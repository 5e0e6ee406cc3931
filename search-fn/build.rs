//! Finds the index and encoder files the component bundles (`include_bytes!`).
//!
//! The index path comes from `KB_INDEX` at build time (default `dist/index.bin` at
//! the workspace root); `encoder.bin` is read from beside it, as `site-builder build`
//! writes them together. Only the wasm32 build bundles them; a native build (the
//! unit tests) needs neither.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=KB_INDEX");
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("wasm32") {
        return;
    }
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let index = match std::env::var_os("KB_INDEX") {
        Some(p) => {
            let p = PathBuf::from(p);
            // Relative paths are taken from the workspace root, where `spin build`
            // and the scripts run.
            if p.is_absolute() {
                p
            } else {
                manifest.join("..").join(p)
            }
        }
        None => manifest.join("../dist/index.bin"),
    };
    let encoder = index.with_file_name("encoder.bin");
    for (what, path) in [("index", &index), ("encoder", &encoder)] {
        if !path.is_file() {
            eprintln!(
                "error: search-fn bundles the {what} at compile time, and {} does not exist.\n\
                 Build it first with `site-builder build --content content --out dist`, or point \
                 KB_INDEX at an index.bin (its encoder.bin must sit beside it).",
                path.display()
            );
            std::process::exit(1);
        }
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let abs = |p: &PathBuf| p.canonicalize().unwrap_or_else(|_| p.clone());
    println!("cargo:rustc-env=KB_INDEX_FILE={}", abs(&index).display());
    println!("cargo:rustc-env=KB_ENCODER_FILE={}", abs(&encoder).display());
}
