//! The browser engine: `search_core`'s `bm25` search over the fragments a site
//! carries in `_search/` ([`search_core::index::fragments`]), compiled to
//! `wasm32-unknown-unknown` with wasm-bindgen, so that a site on a static host
//! searches with no function behind it, and keeps searching when the function is
//! unreachable.
//!
//! The engine does no I/O. `search.js` asks [`Engine::search`]; the answer is
//! either the results (the JSON `GET /api/search?mode=bm25` returns, scored by
//! the same code) or the fragments it needs, which the page fetches, hands to
//! [`Engine::add`] and asks again. `scripts/build-search-web` builds it and
//! writes the glue with `wasm-bindgen-cli`.
//!
//! With the `semantic` feature (the second module the script builds, compiled
//! with relaxed SIMD for the encoder's kernels) the engine also takes the query
//! encoder and the chunks' vectors ([`search_core::index::fragments::Semantic`])
//! and then ranks the fused modes as the edge does. It is a separate module so
//! that the lexical one stays small and runs in browsers without relaxed SIMD.

use search_core::index::fragments::{Engine as Fragments, Step};
use wasm_bindgen::prelude::*;

/// A search engine over the fragments given so far.
#[wasm_bindgen]
pub struct Engine {
    inner: Fragments,
    #[cfg(feature = "semantic")]
    semantic: Option<search_core::index::fragments::Semantic>,
}

#[wasm_bindgen]
impl Engine {
    /// Opens the engine on `_search/manifest.json`'s bytes.
    #[wasm_bindgen(constructor)]
    pub fn new(manifest: &[u8]) -> Result<Engine, JsError> {
        Ok(Engine {
            inner: Fragments::open(manifest).map_err(|e| JsError::new(&e.to_string()))?,
            #[cfg(feature = "semantic")]
            semantic: None,
        })
    }

    /// Takes in fragment `file` (a name [`Engine::search`] asked for), its bytes
    /// uncompressed.
    pub fn add(&mut self, file: &str, bytes: &[u8]) -> Result<(), JsError> {
        self.inner.add(file, bytes).map_err(|e| JsError::new(&e.to_string()))
    }

    /// Page `page` (1-based) of `k` results for `query`, `partial` when its last
    /// word is still being typed: JSON, either `{"need": [file, …]}` or the
    /// response `GET /api/search` gives.
    pub fn search(&self, query: &str, k: usize, page: usize, partial: bool) -> String {
        answer(&self.inner, query, k, page, partial)
    }
}

#[cfg(feature = "semantic")]
#[wasm_bindgen]
impl Engine {
    /// Takes in the semantic side: `encoder.bin` and `vectors.bin`, uncompressed.
    #[wasm_bindgen(js_name = loadSemantic)]
    pub fn load_semantic(&mut self, encoder: &[u8], vectors: &[u8]) -> Result<(), JsError> {
        let s = search_core::index::fragments::Semantic::open(&self.inner, encoder, vectors)
            .map_err(|e| JsError::new(&e.to_string()))?;
        self.semantic = Some(s);
        Ok(())
    }

    /// Whether the semantic side is in.
    #[wasm_bindgen(js_name = hasSemantic)]
    pub fn has_semantic(&self) -> bool {
        self.semantic.is_some()
    }

    /// As [`Engine::search`] in `mode` (`convex`, `dense`, `rrf`, `dot`, `bm25`;
    /// empty: the index's default). Without the semantic side, or for a mode it
    /// does not know, the answer is `bm25`'s (its `mode` says so).
    #[wasm_bindgen(js_name = searchMode)]
    pub fn search_mode(&self, query: &str, mode: &str, k: usize, page: usize, partial: bool) -> String {
        let k = k.clamp(1, 100);
        let Some(sem) = &self.semantic else { return answer(&self.inner, query, k, page, partial) };
        let mode = if mode.is_empty() { Ok(sem.default_mode()) } else { mode.parse() };
        match mode {
            Ok(m) => render(self.inner.search_semantic(sem, query, m, k, page, partial)),
            Err(_) => answer(&self.inner, query, k, page, partial),
        }
    }
}

/// [`Engine::search`] without the bindings (what the native tests call).
pub fn answer(engine: &Fragments, query: &str, k: usize, page: usize, partial: bool) -> String {
    render(engine.search(query, k.clamp(1, 100), page, partial))
}

/// A step as the JSON the page reads.
fn render(step: Step) -> String {
    match step {
        Step::Need(files) => serde_json::json!({ "need": files }).to_string(),
        Step::Done(r) => {
            serde_json::to_string(&r).unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string())
        }
    }
}
