/*
 * search_web.js — the browser engine's JavaScript side, written by hand: an ES
 * module (no bundler, no dependencies) over the wasm module of search-web.
 * scripts/build-search-web copies it beside both modules, as search_web.js and
 * search_web_semantic.js; the semantic methods use the semantic module's exports
 * when it has them.
 *
 *   import init, { Engine } from './search_web.js';
 *   await init({ module_or_path: bytes });  // bytes | URL | string | Request | Response | WebAssembly.Module
 *   const engine = new Engine(manifestBytes);
 *   engine.add(file, bytes);
 *   const json = engine.search(query, k, page, partial);
 *   // the semantic module also: engine.loadSemantic(encoder, vectors),
 *   // engine.hasSemantic(), engine.searchMode(query, mode, k, page, partial)
 *
 * The ABI (search-web/src/lib.rs has the table): the module imports nothing and
 * exports `memory` and functions of i32s. Bytes and strings (UTF-8) go in as
 * (pointer, length) in buffers taken with kb_alloc(len) (0: out of memory),
 * written here and given back with kb_free(ptr, len) after the call. An engine
 * is a handle: engine_new(ptr, len) returns it (0 on error). Other calls return
 * a status, 0 for success, 1 for an error; the search's JSON, or the error's
 * message, is in the result buffer (kb_result_ptr(), kb_result_len()), read
 * before the next call. Errors are thrown as `Error`s with that message.
 */

let wasm; // the instance's exports, once init resolved
let pending; // init's promise while it runs

const utf8 = new TextEncoder();
const text = new TextDecoder();

/** Instantiates the module; `options` as wasm-bindgen's `--target web` glue took it. */
export default function init(options) {
  if (wasm) return Promise.resolve(wasm);
  if (!pending) {
    pending = instantiate(options).then(
      (exports) => (wasm = exports),
      (e) => {
        pending = undefined;
        throw e;
      },
    );
  }
  return pending;
}

async function instantiate(options) {
  let source = options && Object.getPrototypeOf(options) === Object.prototype ? options.module_or_path : options;
  if (source === undefined) {
    // Beside this file: search_web.js → search_web_bg.wasm.
    const url = new URL(import.meta.url);
    url.pathname = url.pathname.replace(/\.js$/, '_bg.wasm');
    source = url;
  }
  source = await source;
  if (typeof source === 'string' || source instanceof URL || (typeof Request === 'function' && source instanceof Request)) {
    source = await fetch(source);
  }
  if (typeof Response === 'function' && source instanceof Response) {
    if (!source.ok) throw new Error('HTTP ' + source.status + ' for the search engine');
    const streaming = typeof WebAssembly.instantiateStreaming === 'function';
    if (streaming && source.headers.get('content-type') === 'application/wasm') {
      return (await WebAssembly.instantiateStreaming(source, {})).instance.exports;
    }
    source = await source.arrayBuffer();
  }
  if (source instanceof WebAssembly.Module) return (await WebAssembly.instantiate(source, {})).exports;
  return (await WebAssembly.instantiate(source, {})).instance.exports;
}

/** The result buffer as a string. */
function result() {
  const ptr = wasm.kb_result_ptr() >>> 0;
  return text.decode(new Uint8Array(wasm.memory.buffer, ptr, wasm.kb_result_len() >>> 0));
}

/** Throws the result buffer's message unless `status` is 0. */
function check(status) {
  if (status !== 0) throw new Error(result());
}

/** A string's UTF-8, or bytes as a Uint8Array. */
function bytesOf(value) {
  if (typeof value === 'string') return utf8.encode(value);
  return value instanceof Uint8Array ? value : new Uint8Array(value);
}

/**
 * Calls `f` with (pointer, length) for each of `values` copied into the
 * module's memory, then gives the copies back.
 */
function withBytes(values, f) {
  const held = [];
  try {
    for (const v of values) {
      const b = bytesOf(v);
      const ptr = wasm.kb_alloc(b.length) >>> 0;
      if (!ptr) throw new Error('the search engine is out of memory');
      held.push(ptr, b.length);
      new Uint8Array(wasm.memory.buffer, ptr, b.length).set(b);
    }
    return f(...held);
  } finally {
    for (let i = 0; i < held.length; i += 2) wasm.kb_free(held[i], held[i + 1]);
  }
}

const engines =
  typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((handle) => wasm.engine_free(handle)) : null;

/** A search engine over the fragments given so far (see search-web/src/lib.rs). */
export class Engine {
  /** Opens the engine on `_search/manifest.json`'s bytes. */
  constructor(manifest) {
    if (!wasm) throw new Error('the search engine is not initialised (await init() first)');
    this.handle = withBytes([manifest], (p, n) => wasm.engine_new(p, n)) >>> 0;
    if (!this.handle) throw new Error(result());
    if (engines) engines.register(this, this.handle, this);
  }

  /** Frees the engine now rather than when it is collected. */
  free() {
    const handle = this.handle;
    this.handle = 0;
    if (!handle) return;
    if (engines) engines.unregister(this);
    wasm.engine_free(handle);
  }

  /** Takes in fragment `file` (a name a search asked for), its bytes uncompressed. */
  add(file, bytes) {
    check(withBytes([file, bytes], (f, fl, b, bl) => wasm.engine_add(this.handle, f, fl, b, bl)));
  }

  /** Page `page` of `k` results for `query`: JSON, `{"need": [file, …]}` or the API's response. */
  search(query, k, page, partial) {
    check(withBytes([query], (q, ql) => wasm.engine_search(this.handle, q, ql, k, page, partial ? 1 : 0)));
    return result();
  }

  /** Keeps the searches that follow to the language `tag` names ('' or 'all': every language). */
  setLanguage(tag) {
    if (!wasm.engine_set_language) throw new Error('this search engine predates search in one language');
    check(withBytes([tag || ''], (t, tl) => wasm.engine_set_language(this.handle, t, tl)));
  }

  /** Takes in the semantic side: `encoder.bin` and `vectors.bin`, uncompressed. */
  loadSemantic(encoder, vectors) {
    if (!wasm.engine_load_semantic) throw new Error('this search engine was built without the semantic side');
    check(withBytes([encoder, vectors], (e, el, v, vl) => wasm.engine_load_semantic(this.handle, e, el, v, vl)));
  }

  /** Whether the semantic side is in. */
  hasSemantic() {
    return !!wasm.engine_has_semantic && wasm.engine_has_semantic(this.handle) !== 0;
  }

  /** As `search` in `mode` ('' for the index's default); `bm25`'s answer without the semantic side. */
  searchMode(query, mode, k, page, partial) {
    if (!wasm.engine_search_mode) return this.search(query, k, page, partial);
    check(
      withBytes([query, mode], (q, ql, m, ml) => wasm.engine_search_mode(this.handle, q, ql, m, ml, k, page, partial ? 1 : 0)),
    );
    return result();
  }
}

if (typeof Symbol.dispose === 'symbol') Engine.prototype[Symbol.dispose] = Engine.prototype.free;
