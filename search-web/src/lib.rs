//! The browser engine: `search_core`'s `bm25` search over the fragments a site
//! carries in `_search/` ([`search_core::index::fragments`]), compiled to
//! `wasm32-unknown-unknown`, so that a site on a static host searches with no
//! function behind it, and keeps searching when the function is unreachable.
//!
//! The engine does no I/O. `browser-search.js` asks [`Engine::search`]; the
//! answer is either the results (the JSON `GET /api/search?mode=bm25` returns,
//! scored by the same code) or the fragments it needs, which the page fetches,
//! hands to [`Engine::add`] and asks again.
//!
//! With the `semantic` feature (the second module `scripts/build-search-web`
//! builds, compiled with relaxed SIMD for the encoder's kernels) the engine also
//! takes the query encoder and the chunks' vectors
//! ([`search_core::index::fragments::Semantic`]) and then ranks the fused modes
//! as the edge does. It is a separate module so that the lexical one stays small
//! and runs in browsers without relaxed SIMD.
//!
//! # The module's ABI
//!
//! No binding generator: the module exports the C-ABI functions of [`abi`]
//! (`#[no_mangle]` on wasm32 only) and imports nothing, and
//! `search-web/js/search_web.js`, written by hand, wraps them as the ES module
//! `browser-search.js` imports (`default(init)`, `class Engine`). Every
//! argument is an `i32` (pointers, lengths, counts, flags); bytes and strings
//! (UTF-8) go in as a pointer and a length into the module's `memory`, in
//! buffers the host takes with `kb_alloc`, fills, and gives back with `kb_free`
//! after the call (the call only borrows them). A status is `0` for success, `1`
//! for an error; text comes back in the *result buffer*: the JSON of a search, or
//! the message of the last error, which the glue throws as an `Error`. It stays
//! valid until the next call other than `kb_alloc` / `kb_free` / `kb_result_*`.
//!
//! | export | arguments → result | what |
//! | --- | --- | --- |
//! | `memory` | | the module's memory |
//! | `kb_alloc` | `len` → `ptr` | `len` bytes for the host to write into; `0` when memory is exhausted |
//! | `kb_free` | `ptr, len` | gives back what `kb_alloc(len)` returned |
//! | `kb_result_ptr`, `kb_result_len` | → `ptr`, `len` | the result buffer (UTF-8) |
//! | `engine_new` | `manifest_ptr, manifest_len` → `handle` | [`Engine::new`] on `manifest.json`'s bytes; `0` on error (message in the result buffer) |
//! | `engine_free` | `handle` | drops the engine (`0`: nothing) |
//! | `engine_add` | `handle, file_ptr, file_len, bytes_ptr, bytes_len` → status | [`Engine::add`] |
//! | `engine_search` | `handle, query_ptr, query_len, k, page, partial` → status | [`Engine::search`]: the JSON in the result buffer |
//! | `engine_set_language` | `handle, tag_ptr, tag_len` → status | [`Engine::set_language`]: the searches that follow keep to that language (empty or `all`: every language) |
//! | `engine_load_semantic` | `handle, encoder_ptr, encoder_len, vectors_ptr, vectors_len` → status | `semantic` only: `Engine::load_semantic` |
//! | `engine_has_semantic` | `handle` → `0` / `1` | `semantic` only: `Engine::has_semantic` |
//! | `engine_search_mode` | `handle, query_ptr, query_len, mode_ptr, mode_len, k, page, partial` → status | `semantic` only: `Engine::search_mode`, the JSON in the result buffer |
//!
//! A handle is the address of a boxed [`Engine`]; `0` (a freed or never opened
//! engine) is refused with an error, as is text that is not UTF-8. Nothing
//! crosses the boundary as a panic: every bad input (a corrupt manifest, a
//! fragment of garbage, an unknown file name) is an error from search-core's
//! readers, and the build aborts on panic, so a panic would be a trap, never
//! unwinding into the host.

use search_core::index::fragments::{Engine as Fragments, FragmentError, Step};
use search_core::index::lang::LangTag;

/// Pages past this are read as this one (keeps `page × k` far from overflow;
/// the API refuses anything past page 20).
const MAX_PAGE: usize = 1 << 20;

/// A search engine over the fragments given so far.
pub struct Engine {
    inner: Fragments,
    #[cfg(feature = "semantic")]
    semantic: Option<search_core::index::fragments::Semantic>,
}

impl Engine {
    /// Opens the engine on `_search/manifest.json`'s bytes.
    pub fn new(manifest: &[u8]) -> Result<Engine, FragmentError> {
        Ok(Engine {
            inner: Fragments::open(manifest)?,
            #[cfg(feature = "semantic")]
            semantic: None,
        })
    }

    /// Takes in fragment `file` (a name [`Engine::search`] asked for), its bytes
    /// uncompressed.
    pub fn add(&mut self, file: &str, bytes: &[u8]) -> Result<(), FragmentError> {
        self.inner.add(file, bytes)
    }

    /// Restricts the searches that follow to the language `tag` names (`de`,
    /// `zh-cn`), as `GET /api/search?lang=` does; empty or `all`: every
    /// language. A tag that is not one is an error naming it, and changes
    /// nothing.
    pub fn set_language(&mut self, tag: &str) -> Result<(), String> {
        let lang = LangTag::choice(tag).map_err(|_| {
            format!("lang: {tag:?} is not a language tag (letters and digits, `-` or `_` inside, at most 15)")
        })?;
        self.inner.set_language(lang);
        Ok(())
    }

    /// Page `page` (1-based) of `k` results for `query`, `partial` when its last
    /// word is still being typed: JSON, either `{"need": [file, …]}` or the
    /// response `GET /api/search` gives.
    pub fn search(&self, query: &str, k: usize, page: usize, partial: bool) -> String {
        answer(&self.inner, query, k, page, partial)
    }
}

#[cfg(feature = "semantic")]
impl Engine {
    /// Takes in the semantic side: `encoder.bin` and `vectors.bin`, uncompressed.
    pub fn load_semantic(&mut self, encoder: &[u8], vectors: &[u8]) -> Result<(), FragmentError> {
        self.semantic = Some(search_core::index::fragments::Semantic::open(&self.inner, encoder, vectors)?);
        Ok(())
    }

    /// Whether the semantic side is in.
    pub fn has_semantic(&self) -> bool {
        self.semantic.is_some()
    }

    /// As [`Engine::search`] in `mode` (`convex`, `dense`, `rrf`, `dot`, `bm25`;
    /// empty: the index's default). Without the semantic side, or for a mode it
    /// does not know, the answer is `bm25`'s (its `mode` says so).
    pub fn search_mode(&self, query: &str, mode: &str, k: usize, page: usize, partial: bool) -> String {
        let Some(sem) = &self.semantic else { return answer(&self.inner, query, k, page, partial) };
        let mode = if mode.is_empty() { Ok(sem.default_mode()) } else { mode.parse() };
        match mode {
            Ok(m) => {
                render(self.inner.search_semantic(sem, query, m, k.clamp(1, 100), page.clamp(1, MAX_PAGE), partial))
            }
            Err(_) => answer(&self.inner, query, k, page, partial),
        }
    }
}

/// [`Engine::search`] without the engine around it (what the native tests call).
pub fn answer(engine: &Fragments, query: &str, k: usize, page: usize, partial: bool) -> String {
    render(engine.search(query, k.clamp(1, 100), page.clamp(1, MAX_PAGE), partial))
}

/// A step as the JSON the page reads. (Written without `serde_json::Value`,
/// which would add its code to the module for two one-key objects.)
fn render(step: Step) -> String {
    let json = match &step {
        Step::Need(files) => serde_json::to_string(files).map(|files| format!("{{\"need\":{files}}}")),
        Step::Done(r) => serde_json::to_string(r),
    };
    json.unwrap_or_else(|e| format!("{{\"error\":{}}}", serde_json::to_string(&e.to_string()).unwrap_or_default()))
}

/// The exports the JavaScript glue calls (see the table at the top). Exported
/// by name on wasm32 only; natively they are plain functions the tests call.
pub mod abi {
    use std::alloc::Layout;
    use std::cell::Cell;
    use std::ptr::NonNull;

    use super::Engine;

    thread_local! {
        /// The result buffer (one thread in the browser; one per test natively). A
        /// `Cell`, read by taking and putting back: a `RefCell` adds its borrow checks
        /// and their panics to the module every reader downloads.
        static RESULT: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    }

    fn set_result(bytes: Vec<u8>) {
        RESULT.with(|r| r.set(bytes));
    }

    /// Fills the result buffer: the text on success (status 0), the message on
    /// error (status 1).
    fn status(r: Result<String, String>) -> i32 {
        let (text, code) = match r {
            Ok(t) => (t, 0),
            Err(m) => (m, 1),
        };
        set_result(text.into_bytes());
        code
    }

    /// # Safety
    /// `ptr` is null, or `len` readable bytes.
    unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
        if ptr.is_null() || len == 0 {
            &[]
        } else {
            // SAFETY: the caller's promise.
            unsafe { std::slice::from_raw_parts(ptr, len) }
        }
    }

    /// # Safety
    /// As [`bytes`].
    unsafe fn text<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a str, String> {
        // SAFETY: the caller's promise.
        std::str::from_utf8(unsafe { bytes(ptr, len) }).map_err(|_| format!("the {what} is not UTF-8"))
    }

    /// # Safety
    /// `handle` is null or from [`engine_new`], not yet freed, not in use.
    unsafe fn engine<'a>(handle: *mut Engine) -> Result<&'a mut Engine, String> {
        // SAFETY: the caller's promise.
        unsafe { handle.as_mut() }.ok_or_else(|| "the search engine was freed (or never opened)".to_string())
    }

    /// `len` bytes for the host to fill (alignment 1); null when memory is
    /// exhausted, a dangling non-null pointer for 0.
    #[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
    pub extern "C" fn kb_alloc(len: usize) -> *mut u8 {
        match Layout::array::<u8>(len) {
            Ok(_) if len == 0 => NonNull::dangling().as_ptr(),
            // SAFETY: the layout's size is not zero.
            Ok(layout) => unsafe { std::alloc::alloc(layout) },
            Err(_) => std::ptr::null_mut(),
        }
    }

    /// Gives back a buffer of [`kb_alloc`].
    ///
    /// # Safety
    /// `ptr` came from `kb_alloc(len)` and is not used again.
    #[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
    pub unsafe extern "C" fn kb_free(ptr: *mut u8, len: usize) {
        if let (false, false, Ok(layout)) = (ptr.is_null(), len == 0, Layout::array::<u8>(len)) {
            // SAFETY: the caller's promise.
            unsafe { std::alloc::dealloc(ptr, layout) }
        }
    }

    /// Where the result buffer starts.
    #[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
    pub extern "C" fn kb_result_ptr() -> *const u8 {
        RESULT.with(|r| {
            let v = r.take();
            let p = v.as_ptr();
            r.set(v);
            p
        })
    }

    /// The result buffer's length in bytes.
    #[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
    pub extern "C" fn kb_result_len() -> usize {
        RESULT.with(|r| {
            let v = r.take();
            let n = v.len();
            r.set(v);
            n
        })
    }

    /// [`Engine::new`]: the handle, or null with the message in the result buffer.
    ///
    /// # Safety
    /// `ptr` is null or `len` readable bytes.
    #[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
    pub unsafe extern "C" fn engine_new(ptr: *const u8, len: usize) -> *mut Engine {
        // SAFETY: the caller's promise.
        match Engine::new(unsafe { bytes(ptr, len) }) {
            Ok(e) => {
                set_result(Vec::new());
                Box::into_raw(Box::new(e))
            }
            Err(e) => {
                set_result(e.to_string().into_bytes());
                std::ptr::null_mut()
            }
        }
    }

    /// Drops an engine.
    ///
    /// # Safety
    /// `handle` is null or from [`engine_new`], and is not used again.
    #[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
    pub unsafe extern "C" fn engine_free(handle: *mut Engine) {
        if !handle.is_null() {
            // SAFETY: the caller's promise.
            drop(unsafe { Box::from_raw(handle) });
        }
    }

    /// [`Engine::add`].
    ///
    /// # Safety
    /// `handle` is null or from [`engine_new`], not yet freed; each pointer is
    /// null or its length readable.
    #[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
    pub unsafe extern "C" fn engine_add(
        handle: *mut Engine,
        file_ptr: *const u8,
        file_len: usize,
        ptr: *const u8,
        len: usize,
    ) -> i32 {
        // SAFETY: the caller's promise.
        status(unsafe {
            (|| {
                let e = engine(handle)?;
                e.add(text(file_ptr, file_len, "fragment's name")?, bytes(ptr, len)).map_err(|e| e.to_string())?;
                Ok(String::new())
            })()
        })
    }

    /// [`Engine::search`] (`partial`: non-zero), the JSON in the result buffer.
    ///
    /// # Safety
    /// As [`engine_add`].
    #[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
    pub unsafe extern "C" fn engine_search(
        handle: *mut Engine,
        query_ptr: *const u8,
        query_len: usize,
        k: usize,
        page: usize,
        partial: u32,
    ) -> i32 {
        // SAFETY: the caller's promise.
        status(unsafe {
            (|| Ok(engine(handle)?.search(text(query_ptr, query_len, "query")?, k, page, partial != 0)))()
        })
    }

    /// [`Engine::set_language`].
    ///
    /// # Safety
    /// As [`engine_add`].
    #[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
    pub unsafe extern "C" fn engine_set_language(handle: *mut Engine, tag_ptr: *const u8, tag_len: usize) -> i32 {
        // SAFETY: the caller's promise.
        status(unsafe {
            (|| {
                engine(handle)?.set_language(text(tag_ptr, tag_len, "language tag")?)?;
                Ok(String::new())
            })()
        })
    }

    /// [`Engine::load_semantic`].
    ///
    /// # Safety
    /// As [`engine_add`].
    #[cfg(feature = "semantic")]
    #[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
    pub unsafe extern "C" fn engine_load_semantic(
        handle: *mut Engine,
        encoder_ptr: *const u8,
        encoder_len: usize,
        vectors_ptr: *const u8,
        vectors_len: usize,
    ) -> i32 {
        // SAFETY: the caller's promise.
        status(unsafe {
            (|| {
                let e = engine(handle)?;
                e.load_semantic(bytes(encoder_ptr, encoder_len), bytes(vectors_ptr, vectors_len))
                    .map_err(|e| e.to_string())?;
                Ok(String::new())
            })()
        })
    }

    /// [`Engine::has_semantic`]: 1 or 0 (0 for a null handle too).
    ///
    /// # Safety
    /// `handle` is null or from [`engine_new`], not yet freed.
    #[cfg(feature = "semantic")]
    #[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
    pub unsafe extern "C" fn engine_has_semantic(handle: *mut Engine) -> u32 {
        // SAFETY: the caller's promise.
        unsafe { engine(handle) }.map_or(0, |e| e.has_semantic() as u32)
    }

    /// [`Engine::search_mode`], the JSON in the result buffer.
    ///
    /// # Safety
    /// As [`engine_add`].
    #[cfg(feature = "semantic")]
    #[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
    #[allow(clippy::too_many_arguments)]
    pub unsafe extern "C" fn engine_search_mode(
        handle: *mut Engine,
        query_ptr: *const u8,
        query_len: usize,
        mode_ptr: *const u8,
        mode_len: usize,
        k: usize,
        page: usize,
        partial: u32,
    ) -> i32 {
        // SAFETY: the caller's promise.
        status(unsafe {
            (|| {
                let e = engine(handle)?;
                let (q, m) = (text(query_ptr, query_len, "query")?, text(mode_ptr, mode_len, "mode")?);
                Ok(e.search_mode(q, m, k, page, partial != 0))
            })()
        })
    }
}

#[cfg(test)]
mod tests {
    //! The ABI as the glue drives it: bytes in through `kb_alloc`, text out
    //! through the result buffer, every bad input an error.

    use std::collections::HashMap;

    use search_core::index::fragments::{split, MANIFEST};
    use search_core::index::{Index, VectorStorage};
    use search_core::testing::fragment_corpus;

    use super::abi::*;
    use super::Engine;

    /// Bytes copied into a buffer of `kb_alloc`, given back on drop.
    struct Buf(*mut u8, usize);
    impl Buf {
        fn new(b: &[u8]) -> Buf {
            let p = kb_alloc(b.len());
            assert!(!p.is_null());
            // SAFETY: `p` has `b.len()` bytes.
            unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), p, b.len()) };
            Buf(p, b.len())
        }
    }
    impl Drop for Buf {
        fn drop(&mut self) {
            // SAFETY: from `kb_alloc(self.1)`.
            unsafe { kb_free(self.0, self.1) }
        }
    }

    fn result() -> String {
        // SAFETY: the result buffer's own pointer and length.
        let b = unsafe { std::slice::from_raw_parts(kb_result_ptr(), kb_result_len()) };
        String::from_utf8(b.to_vec()).unwrap()
    }

    fn files() -> HashMap<String, Vec<u8>> {
        let (index, _) = fragment_corpus(VectorStorage::F16);
        let idx = Index::open(index.as_slice()).unwrap();
        split(&idx, 256).unwrap().files.into_iter().collect()
    }

    fn open(manifest: &[u8]) -> Result<*mut Engine, String> {
        let m = Buf::new(manifest);
        // SAFETY: a buffer of `kb_alloc`.
        let e = unsafe { engine_new(m.0, m.1) };
        if e.is_null() {
            Err(result())
        } else {
            Ok(e)
        }
    }

    fn add(e: *mut Engine, file: &[u8], bytes: &[u8]) -> Result<(), String> {
        let (f, b) = (Buf::new(file), Buf::new(bytes));
        // SAFETY: buffers of `kb_alloc`, an engine of `engine_new` or null.
        match unsafe { engine_add(e, f.0, f.1, b.0, b.1) } {
            0 => Ok(()),
            _ => Err(result()),
        }
    }

    fn search(e: *mut Engine, q: &[u8], page: usize, partial: bool) -> Result<String, String> {
        let q = Buf::new(q);
        // SAFETY: as in `add`.
        match unsafe { engine_search(e, q.0, q.1, 5, page, partial as u32) } {
            0 => Ok(result()),
            _ => Err(result()),
        }
    }

    /// Asks, adding what the engine needs, until it answers.
    fn answer(e: *mut Engine, files: &HashMap<String, Vec<u8>>, q: &str, page: usize, partial: bool) -> String {
        for _ in 0..4 {
            let out = search(e, q.as_bytes(), page, partial).unwrap();
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            let Some(need) = v["need"].as_array() else { return out };
            for f in need {
                let f = f.as_str().unwrap();
                add(e, f.as_bytes(), &files[f]).unwrap();
            }
        }
        panic!("no answer for {q:?}")
    }

    #[test]
    fn the_abi_answers_as_the_engine_does() {
        let files = files();
        let e = open(&files[MANIFEST]).unwrap();
        let mut direct = Engine::new(&files[MANIFEST]).unwrap();
        for (q, page, partial) in [("parking permit", 1, false), ("reset the password", 2, false), ("stor", 1, true)] {
            let got = answer(e, &files, q, page, partial);
            assert!(got.contains("\"results\""), "{got}");
            for _ in 0..4 {
                let out = direct.search(q, 5, page, partial);
                let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                let Some(need) = v["need"].as_array() else { break };
                need.iter().for_each(|f| direct.add(f.as_str().unwrap(), &files[f.as_str().unwrap()]).unwrap());
            }
            assert_eq!(got, direct.search(q, 5, page, partial), "{q:?}");
        }
        // Absurd counts are clamped, not overflowed.
        assert!(search(e, b"parking", usize::MAX, false).unwrap().contains("\"results\""));
        // SAFETY: from `engine_new`, not used again.
        unsafe { engine_free(e) };
    }

    #[test]
    fn bad_input_is_an_error_not_a_trap() {
        let files = files();
        for garbage in [&b""[..], b"\0\xff garbage", b"{\"format\": 2}", b"[1, 2, 3]"] {
            let err = open(garbage).unwrap_err();
            assert!(err.starts_with("search manifest:"), "{err}");
        }
        let mut m: serde_json::Value = serde_json::from_slice(&files[MANIFEST]).unwrap();
        m["chunks"] = serde_json::json!(u32::MAX as u64 + 7);
        assert!(open(&serde_json::to_vec(&m).unwrap()).unwrap_err().contains("chunks"));

        let e = open(&files[MANIFEST]).unwrap();
        let shard = files.keys().find(|f| f.starts_with("t/")).unwrap();
        for (name, bytes) in [
            (shard.as_bytes(), &b"garbage"[..]),
            (shard.as_bytes(), &files[shard][..files[shard].len() / 2]),
            (b"lens.bin", b"abc"),
            (b"r/0.json", b"{not json"),
            (b"c/0.json", b"\xff"),
            (b"t/99999.bin", b""),
            (b"../../etc/passwd", b""),
        ] {
            assert!(!add(e, name, bytes).unwrap_err().is_empty(), "{}", String::from_utf8_lossy(name));
        }
        assert!(add(e, b"\xff\xfe", b"").unwrap_err().contains("not UTF-8"));
        assert!(search(e, b"\xc3", 1, false).unwrap_err().contains("not UTF-8"));
        // After all that, it still answers.
        assert!(answer(e, &files, "gpu job", 1, false).contains("\"results\""));
        // SAFETY: from `engine_new`, not used again.
        unsafe { engine_free(e) };

        let none = std::ptr::null_mut();
        assert!(add(none, b"lens.bin", b"").unwrap_err().contains("freed"));
        assert!(search(none, b"q", 1, false).unwrap_err().contains("freed"));
        // SAFETY: null is allowed.
        unsafe { engine_free(none) };
        assert!(kb_alloc(usize::MAX).is_null());
        // SAFETY: zero-length buffers are never read.
        unsafe { kb_free(kb_alloc(0), 0) };
    }

    fn set_language(e: *mut Engine, tag: &[u8]) -> Result<(), String> {
        let t = Buf::new(tag);
        // SAFETY: as in `add`.
        match unsafe { engine_set_language(e, t.0, t.1) } {
            0 => Ok(()),
            _ => Err(result()),
        }
    }

    /// The reader's language through the ABI: kept until changed, `all` and
    /// empty for every language, a bad tag refused by name and ignored.
    #[test]
    fn searches_keep_to_the_language_set() {
        let files = files();
        let e = open(&files[MANIFEST]).unwrap();
        let lang = |out: &str| {
            let v: serde_json::Value = serde_json::from_str(out).unwrap();
            (v["lang"].as_str().map(str::to_string), v["lang_fallback"].as_str().map(str::to_string))
        };
        set_language(e, b"en").unwrap();
        assert_eq!(lang(&answer(e, &files, "parking permit", 1, false)), (Some("en".into()), None));
        // The corpus has no German page: every language's answer, said.
        set_language(e, b"de").unwrap();
        let out = answer(e, &files, "parking permit", 1, false);
        assert_eq!(lang(&out), (None, Some("de".into())), "{out}");
        assert!(out.contains("\"chunk_id\""), "{out}");
        for bad in [&b"de DE"[..], b"<script>", b"-de", b"abcdefghijklmnop", b"\xff"] {
            let err = set_language(e, bad).unwrap_err();
            assert!(err.contains("lang") || err.contains("not UTF-8"), "{err}");
        }
        assert_eq!(lang(&answer(e, &files, "parking permit", 1, false)).1.as_deref(), Some("de"), "unchanged");
        for every in [&b"all"[..], b""] {
            set_language(e, every).unwrap();
            assert_eq!(lang(&answer(e, &files, "parking permit", 1, false)), (None, None));
        }
        assert!(set_language(std::ptr::null_mut(), b"de").unwrap_err().contains("freed"));
        // SAFETY: from `engine_new`, not used again.
        unsafe { engine_free(e) };
    }

    #[cfg(feature = "semantic")]
    #[test]
    fn the_semantic_side_through_the_abi() {
        use search_core::index::fragments::semantic::vectors_file;

        let (index, enc) = fragment_corpus(VectorStorage::F16);
        let idx = Index::open(index.as_slice()).unwrap();
        let files: HashMap<String, Vec<u8>> = split(&idx, 256).unwrap().files.into_iter().collect();
        let vectors = vectors_file(&idx).unwrap();
        let e = open(&files[MANIFEST]).unwrap();
        let load = |encoder: &[u8], vectors: &[u8]| {
            let (a, b) = (Buf::new(encoder), Buf::new(vectors));
            // SAFETY: buffers of `kb_alloc`, an engine of `engine_new`.
            match unsafe { engine_load_semantic(e, a.0, a.1, b.0, b.1) } {
                0 => Ok(()),
                _ => Err(result()),
            }
        };
        let mode = |m: &str| {
            for _ in 0..4 {
                let (q, m) = (Buf::new(b"parking permit"), Buf::new(m.as_bytes()));
                // SAFETY: as above.
                assert_eq!(unsafe { engine_search_mode(e, q.0, q.1, m.0, m.1, 5, 1, 0) }, 0);
                let v: serde_json::Value = serde_json::from_str(&result()).unwrap();
                let Some(need) = v["need"].as_array() else { return v["mode"].as_str().unwrap().to_string() };
                need.iter().for_each(|f| add(e, f.as_str().unwrap().as_bytes(), &files[f.as_str().unwrap()]).unwrap());
            }
            panic!("no answer in mode {m}")
        };
        assert!(load(b"garbage", &vectors).unwrap_err().contains("encoder"));
        assert!(load(enc.as_slice(), &vectors[..vectors.len() / 3]).unwrap_err().contains("vectors"));
        // SAFETY: an engine of `engine_new`; null is allowed.
        assert_eq!(unsafe { (engine_has_semantic(e), engine_has_semantic(std::ptr::null_mut())) }, (0, 0));
        assert_eq!(mode("convex"), "bm25", "no semantic side yet");
        load(enc.as_slice(), &vectors).unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { engine_has_semantic(e) }, 1);
        assert_eq!(mode("convex"), "convex");
        assert_eq!(mode(""), "convex", "the index's default");
        assert_eq!(mode("no such mode"), "bm25");
        // SAFETY: from `engine_new`, not used again.
        unsafe { engine_free(e) };
    }
}
