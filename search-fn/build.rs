//! Finds the index and encoder files the component bundles (`include_bytes!`).
//!
//! The index path comes from `KB_INDEX` at build time (default `dist/index.bin` at
//! the workspace root); `encoder.bin` is read from beside it, as `site-builder build`
//! writes them together. `KB_ENCODER` without `KB_INDEX` bundles the encoder alone
//! (an empty index): the component for `search_backend = postgres`, which reads
//! the index from the database. Only the wasm32 build bundles them; a native build
//! (the unit tests) needs neither.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=KB_INDEX");
    println!("cargo:rerun-if-env-changed=KB_ENCODER");
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("wasm32") {
        return;
    }
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    // Relative paths are taken from the workspace root, where `spin build` and
    // the scripts run.
    let from_root = |p: std::ffi::OsString| {
        let p = PathBuf::from(p);
        if p.is_absolute() {
            p
        } else {
            manifest.join("..").join(p)
        }
    };
    let (index, encoder) = match (std::env::var_os("KB_INDEX"), std::env::var_os("KB_ENCODER")) {
        (None, Some(e)) => {
            let empty = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("no-index.bin");
            if let Err(e) = std::fs::write(&empty, b"") {
                eprintln!("error: cannot write {}: {e}", empty.display());
                std::process::exit(1);
            }
            (empty, from_root(e))
        }
        (Some(i), e) => {
            let index = from_root(i);
            let encoder = e.map(from_root).unwrap_or_else(|| index.with_file_name("encoder.bin"));
            (index, encoder)
        }
        (None, None) => {
            let index = manifest.join("../dist/index.bin");
            (index.clone(), index.with_file_name("encoder.bin"))
        }
    };
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
