/*
 * browser-search.js — an ES module (copied to assets/browser-search.js): the
 * browser engine of site/_search/, loaded once per page and asked like the API.
 * search.js imports it when the search service is away, and widget.js when the
 * chat service is. No dependencies.
 *
 *   import { search } from './browser-search.js';
 *   const body = await search(baseUrlOf_search, query, k, page, partial, signal, { semantic, mode, lang });
 *
 * `body` is what `GET /api/search?mode=bm25` returns (the same ranking, scores and
 * snippets: search-core's code compiled to wasm), with `engine: 'browser'`.
 *
 * Semantic search in the browser (a site built with --browser-semantic, whose
 * search script has `data-semantic`): with `semantic` the engine built with the
 * semantic side is loaded instead of the lexical one, and the query encoder
 * and the chunks' vectors are fetched once in the background (the browser's
 * cache keeps them); until they are in, and in browsers without WebAssembly's
 * relaxed SIMD, answers are `bm25`'s; after, a fused `mode` ('convex', …) ranks
 * as the API does. `body.mode` says which ranking answered,
 * `body.semantic` whether the semantic side is 'ready', 'loading' or 'off'. The
 * engine says which fragments a query needs (vocabulary shards, chunk records);
 * they are fetched once, each at most once at a time, and kept for the page's
 * life. Fragments and the wasm module are stored gzip-compressed (`NAME.gz`),
 * so the bytes per query hold on hosts that compress nothing; a host that
 * decoded them already hands over plain bytes, which are taken as they are.
 *
 * The site's CSP allows 'wasm-unsafe-eval' for this (compiling WebAssembly, not
 * evaluating strings).
 */

const engines = new Map(); // engine URL + base URL of _search/ → Promise<{ engine, dir, loads }>
const pointers = new Map(); // base URL of _search/ → Promise<search.json>

/**
 * Whether a failed request to the site's function means the function is away
 * (no response, 404/405/408 as from a static host, 429, 5xx: a deploy, an outage,
 * a site served without it), so the browser should answer, rather than a fault
 * of the request itself. `status` 0: no response at all.
 */
export function away(status) {
  return !status || status === 404 || status === 405 || status === 408 || status === 429 || status >= 500;
}

function aborted() {
  return Object.assign(new Error('aborted'), { kind: 'aborted' });
}

/** A fragment's bytes, inflated unless the host already did it. */
async function fetchBytes(url) {
  const res = await fetch(url, { credentials: 'same-origin' });
  if (!res.ok) throw new Error('HTTP ' + res.status + ' for ' + url);
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
  const inflated = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(inflated).arrayBuffer());
}

/**
 * Whether this browser runs WebAssembly's relaxed SIMD (the semantic engine's
 * encoder kernels): a module whose one function is
 * `i32x4.relaxed_dot_i8x16_i7x16_add_s` over three zero vectors.
 */
function relaxedSimd() {
  const zero = new Array(16).fill(0);
  const konst = [0xfd, 0x0c, ...zero];
  const body = [0x00, ...konst, ...konst, ...konst, 0xfd, 0x93, 0x02, 0x0b];
  const bytes = new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
    0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // types: () -> v128
    0x03, 0x02, 0x01, 0x00, // functions: one of type 0
    0x0a, body.length + 2, 0x01, body.length, ...body, // code
  ]);
  try {
    return WebAssembly.validate(bytes);
  } catch (e) {
    return false;
  }
}

/** search.json of the site at `base`, fetched once (fresh: it names the build). */
function pointer(base) {
  let p = pointers.get(base);
  if (p) return p;
  p = (async () => {
    if (typeof DecompressionStream !== 'function' || typeof WebAssembly !== 'object') {
      throw new Error('this browser cannot run the search engine');
    }
    const res = await fetch(base + 'search.json', { cache: 'no-cache', credentials: 'same-origin' });
    if (!res.ok) throw new Error('no browser search on this site (HTTP ' + res.status + ')');
    return res.json();
  })();
  pointers.set(base, p);
  p.catch(() => pointers.delete(base)); // try again next time
  return p;
}

/**
 * The site's engine for a reader of `lang` (the page's language, '' for none):
 * a mostly-English site searched by the English engine names, in
 * `languages.for`, the languages of its other pages that only the engine
 * reading every language reads as the build did; their readers load that one.
 */
function engineFor(ptr, lang) {
  const primary = (lang || '').toLowerCase().split(/[-_]/)[0];
  return ptr.languages && primary && ptr.languages.for.includes(primary) ? ptr.languages : ptr;
}

/**
 * Loads search.json, the wasm engine and the manifest of the site at `base`;
 * with `semantic`, the engine with the semantic side when the site has it and
 * the browser can run it, and starts fetching the encoder and the vectors;
 * else the engine for a reader of `lang` ([`engineFor`]).
 */
async function open(base, semantic, lang) {
  const ptr = await pointer(base);
  const sem = semantic && ptr.semantic && relaxedSimd() ? ptr.semantic : null;
  const use = sem || engineFor(ptr, lang);
  const key = use.engine + ' ' + base;
  // The semantic engine answers BM25 as well, in every language: one engine per page.
  let p = engines.get(key) || (!sem && ptr.semantic && engines.get(ptr.semantic.engine + ' ' + base));
  if (p) return p;
  p = (async () => {
    const mod = await import(new URL(use.engine, base).href);
    await mod.default({ module_or_path: await fetchBytes(new URL(use.wasm, base).href) });
    const dir = new URL(ptr.build + '/', base).href;
    const engine = new mod.Engine(await fetchBytes(dir + 'manifest.json.gz'));
    const b = { engine, dir, loads: new Map(), semantic: sem ? 'loading' : 'off', lang: '' };
    if (sem) {
      Promise.all([fetchBytes(dir + sem.encoder), fetchBytes(dir + sem.vectors)])
        .then(([encoder, vectors]) => {
          engine.loadSemantic(encoder, vectors);
          b.semantic = 'ready';
        })
        .catch((e) => {
          b.semantic = 'off';
          if (window.console) console.warn('search: semantic search in the browser is off: ' + e.message);
        });
    }
    return b;
  })();
  engines.set(key, p);
  p.catch(() => engines.delete(key)); // try again next time
  return p;
}

/**
 * Resolves once the semantic side of the site at `base` is in (true) or cannot
 * be (false): for pages and tests that want to wait for it.
 */
export async function semanticReady(base, timeoutMs) {
  const b = await open(base, true);
  const until = Date.now() + (timeoutMs || 120000);
  while (b.semantic === 'loading' && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  return b.semantic === 'ready';
}

/**
 * Page `page` of `k` results for `q` (`partial`: its last word is being typed),
 * ranked by `opts.mode` when it is a fused one and the semantic side (loaded
 * with `opts.semantic`) is in (see the top of this file), else by BM25.
 */
export async function search(base, q, k, page, partial, signal, opts) {
  const mode = opts && opts.mode;
  const fused = !!mode && mode !== 'bm25';
  const b = await open(base, !!(opts && opts.semantic), opts && opts.lang);
  // At most: lengths and completions, the words' shards, a typo's spelling
  // lists or a compound's possible parts' shards, the corrected words' shards,
  // the results' records; then the answer.
  for (let round = 0; round < 8; round++) {
    if (signal && signal.aborted) throw aborted();
    // The reader's language (`opts.lang`: '' or 'all' for every language),
    // as `?lang=` asks the API; set on the engine when it changes.
    const lang = (opts && opts.lang) || '';
    if (b.lang !== lang) {
      b.engine.setLanguage(lang);
      b.lang = lang;
    }
    const raw =
      fused && b.semantic === 'ready'
        ? b.engine.searchMode(q, mode, k, page, !!partial)
        : b.engine.search(q, k, page, !!partial);
    const out = JSON.parse(raw);
    if (!out.need) return Object.assign(out, { engine: 'browser', semantic: b.semantic });
    await Promise.all(out.need.map((f) => {
      let load = b.loads.get(f);
      if (!load) {
        load = fetchBytes(b.dir + f + '.gz').then((bytes) => b.engine.add(f, bytes));
        b.loads.set(f, load);
        load.catch(() => b.loads.delete(f));
      }
      return load;
    }));
  }
  throw new Error('the browser engine keeps asking for fragments');
}
