/*
 * browser-search.js — an ES module (copied to assets/browser-search.js): the
 * browser engine of site/_search/, loaded once per page and asked like the API.
 * search.js imports it when the search service is away, and widget.js when the
 * chat service is. No dependencies.
 *
 *   import { search } from './browser-search.js';
 *   const body = await search(baseUrlOf_search, query, k, page, partial, signal);
 *
 * `body` is what `GET /api/search?mode=bm25` returns (the same ranking, scores and
 * snippets: search-core's code compiled to wasm), with `engine: 'browser'`. The
 * engine says which fragments a query needs (vocabulary shards, chunk records);
 * they are fetched once, each at most once at a time, and kept for the page's
 * life. Fragments and the wasm module are stored gzip-compressed (`NAME.gz`),
 * so the bytes per query hold on hosts that compress nothing; a host that
 * decoded them already hands over plain bytes, which are taken as they are.
 *
 * The site's CSP allows 'wasm-unsafe-eval' for this (compiling WebAssembly, not
 * evaluating strings).
 */

const engines = new Map(); // base URL of _search/ → Promise<{ engine, dir, loads }>

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

/** Loads search.json, the wasm engine and the manifest of the site at `base`. */
function open(base) {
  let p = engines.get(base);
  if (p) return p;
  p = (async () => {
    if (typeof DecompressionStream !== 'function' || typeof WebAssembly !== 'object') {
      throw new Error('this browser cannot run the search engine');
    }
    const res = await fetch(base + 'search.json', { cache: 'no-cache', credentials: 'same-origin' });
    if (!res.ok) throw new Error('no browser search on this site (HTTP ' + res.status + ')');
    const ptr = await res.json();
    const mod = await import(new URL(ptr.engine, base).href);
    await mod.default({ module_or_path: await fetchBytes(new URL(ptr.wasm, base).href) });
    const dir = new URL(ptr.build + '/', base).href;
    const engine = new mod.Engine(await fetchBytes(dir + 'manifest.json.gz'));
    return { engine, dir, loads: new Map() };
  })();
  engines.set(base, p);
  p.catch(() => engines.delete(base)); // try again next time
  return p;
}

/** Page `page` of `k` results for `q` (`partial`: its last word is being typed). */
export async function search(base, q, k, page, partial, signal) {
  const b = await open(base);
  for (let round = 0; round < 4; round++) {
    if (signal && signal.aborted) throw aborted();
    const out = JSON.parse(b.engine.search(q, k, page, !!partial));
    if (!out.need) return Object.assign(out, { engine: 'browser' });
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
