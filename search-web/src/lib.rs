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

use search_core::index::fragments::{Engine as Fragments, Step};
use wasm_bindgen::prelude::*;

/// A search engine over the fragments given so far.
#[wasm_bindgen]
pub struct Engine {
    inner: Fragments,
}

#[wasm_bindgen]
impl Engine {
    /// Opens the engine on `_search/manifest.json`'s bytes.
    #[wasm_bindgen(constructor)]
    pub fn new(manifest: &[u8]) -> Result<Engine, JsError> {
        Ok(Engine { inner: Fragments::open(manifest).map_err(|e| JsError::new(&e.to_string()))? })
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

/// [`Engine::search`] without the bindings (what the native tests call).
pub fn answer(engine: &Fragments, query: &str, k: usize, page: usize, partial: bool) -> String {
    let k = k.clamp(1, 100);
    match engine.search(query, k, page, partial) {
        Step::Need(files) => serde_json::json!({ "need": files }).to_string(),
        Step::Done(r) => {
            serde_json::to_string(&r).unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string())
        }
    }
}
