// Browser search in Chromium, for docs/benchmarks/browser.md: the built
// site served as plain files (no /api, nothing compressed by the server), each
// question of the QA files typed into the search box's engine as a reader's
// browser would ask it, with the bytes every response carried and the time from
// asking to the answer.
//
//   node bench.mjs SITE_DIR K QA.csv [QA.csv …]
//   ENGINE=pagefind node bench.mjs SITE_DIR K QA.csv …   (the same site indexed by
//       Pagefind into SITE_DIR/pagefind: `npx pagefind --site SITE_DIR --root-selector main`)
//   ENGINE=semantic node bench.mjs SITE_DIR K QA.csv …   (a site built with
//       --browser-semantic: the model's download and load, three fresh pages;
//       then every question fused in one page, and again with a new text so the
//       encoder runs with every fragment already fetched)
//
// Prints one JSON object: bytes of the first query (nothing cached) and of later
// ones (one page, the questions asked one after another), the engine's time per
// query (the first, loading the engine and fragments over loopback; later ones;
// and again with everything fetched), and page recall@5 and MRR@10 against the
// QA files' source pages. Each engine loads the records of its first K results
// (Pagefind's `data()`), which is what a results list shows.

import { createServer } from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import { join, extname } from 'node:path';
import { chromium } from 'playwright-core';

const [site, kArg, ...qa] = process.argv.slice(2);
const ENGINE = process.env.ENGINE || 'kb';
const k = Number(kArg);
const types = { '.html': 'text/html', '.js': 'text/javascript', '.json': 'application/json', '.css': 'text/css' };
let bytes = 0;
const server = createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  const file = join(site, path.endsWith('/') ? path + 'index.html' : path);
  try {
    if (!statSync(file).isFile()) throw new Error('not a file');
    const body = readFileSync(file);
    bytes += body.length;
    res.writeHead(200, { 'content-type': types[extname(file)] || 'application/octet-stream' });
    res.end(body);
  } catch {
    res.writeHead(404);
    res.end();
  }
}).listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const origin = `http://127.0.0.1:${server.address().port}`;

function questions(file) {
  // The question is the first CSV field (quoted when it holds commas or quotes).
  const text = readFileSync(file, 'utf8');
  const rows = [];
  let field = '', row = [], quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; }
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; }
    else if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; }
    else if (c !== '\r') field += c;
  }
  if (field || row.length) { row.push(field); rows.push(row); }
  const head = rows[0].map((h) => h.trim().toLowerCase());
  const col = head.indexOf('question'), src = head.indexOf('source_file');
  return rows.slice(1).filter((r) => r[col]).map((r) => ({
    q: r[col],
    page: '/' + r[src].trim().replace(/\\/g, '/').replace(/\.md$/, '.html'),
  }));
}
const qs = qa.flatMap(questions);

const browser = await chromium.launch({ executablePath: process.env.KB_CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox', '--headless'] });
const median = (v) => { const s = [...v].sort((a, b) => a - b); return s[Math.floor((s.length - 1) / 2)]; };
const pct = (v, p) => { const s = [...v].sort((a, b) => a - b); return s[Math.round((s.length - 1) * p)]; };
const kb = (n) => Math.round(n / 102.4) / 10;

// One query in the page: the result pages' paths, best first.
async function ask(page, q) {
  return page.evaluate(async ([q, k, engine]) => {
    const t0 = performance.now();
    let urls;
    if (engine === 'pagefind') {
      const pf = await import('/pagefind/pagefind.js');
      const r = await pf.search(q);
      const data = await Promise.all(r.results.slice(0, k).map((x) => x.data()));
      urls = data.map((d) => d.url);
    } else {
      const m = await import('/assets/browser-search.js');
      const r = await m.search(new URL('/_search/', location.href).href, q, k, 1, false);
      urls = r.results.map((x) => '/' + x.url);
    }
    const pages = [];
    for (const u of urls) {
      const p = new URL(u, location.href).pathname;
      if (!pages.includes(p)) pages.push(p);
    }
    return { ms: performance.now() - t0, pages };
  }, [q, k, ENGINE]);
}

if (ENGINE === 'semantic') {
  const base = `${origin}/_search/`;
  const opts = { semantic: true, mode: 'convex' };
  const loads = [];
  for (let i = 0; i < 3; i++) {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await page.goto(`${origin}/index.html`);
    bytes = 0;
    const ms = await page.evaluate(async (base) => {
      const m = await import('/assets/browser-search.js');
      const t0 = performance.now();
      return (await m.semanticReady(base, 600000)) ? performance.now() - t0 : -1;
    }, base);
    if (ms < 0) throw new Error('the semantic side did not load');
    loads.push([bytes, ms]);
    await ctx.close();
  }
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(`${origin}/index.html`);
  await page.evaluate(async (base) => (await import('/assets/browser-search.js')).semanticReady(base, 600000), base);
  const fused = (q) => page.evaluate(async ([q, k, base, opts]) => {
    const m = await import('/assets/browser-search.js');
    const t0 = performance.now();
    const r = await m.search(base, q, k, 1, false, null, opts);
    const pages = [];
    for (const x of r.results) {
      const p = new URL('/' + x.url, location.href).pathname;
      if (!pages.includes(p)) pages.push(p);
    }
    return { ms: performance.now() - t0, pages, mode: r.mode };
  }, [q, k, base, opts]);
  let recall = 0, mrr = 0;
  const perQuery = [], perKb = [], warm = [];
  for (const { q, page: target } of qs) {
    bytes = 0;
    const r = await fused(q);
    if (r.mode !== 'convex') throw new Error(`not fused: ${r.mode}`);
    perQuery.push(r.ms);
    perKb.push(bytes);
    const rank = r.pages.indexOf(target);
    if (rank >= 0 && rank < 5) recall++;
    if (rank >= 0 && rank < 10) mrr += 1 / (rank + 1);
  }
  for (const { q } of qs) warm.push((await fused(q + ' ?')).ms);
  await browser.close();
  server.close();
  console.log(JSON.stringify({
    engine: ENGINE, questions: qs.length, k,
    recall_at_5: Math.round(recall / qs.length * 1000) / 1000, mrr_at_10: Math.round(mrr / qs.length * 1000) / 1000,
    model_kb: loads.map(([b]) => kb(b)),
    model_ready_ms: loads.map(([, ms]) => Math.round(ms)),
    query_kb: { median: kb(median(perKb)), max: kb(pct(perKb, 1)) },
    query_ms_median: Math.round(median(perQuery) * 10) / 10,
    warm_query_ms: { median: Math.round(median(warm) * 10) / 10, p90: Math.round(pct(warm, 0.9) * 10) / 10 },
  }));
  process.exit(0);
}

// The first query of a fresh page, for every question.
const first = [], firstMs = [];
let recall = 0, mrr = 0;
for (const { q, page: target } of qs) {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(`${origin}/index.html`);
  bytes = 0;
  const r = await ask(page, q);
  first.push(bytes);
  firstMs.push(r.ms);
  const rank = r.pages.indexOf(target);
  if (rank >= 0 && rank < 5) recall++;
  if (rank >= 0 && rank < 10) mrr += 1 / (rank + 1);
  await ctx.close();
}
// Later queries: one page, the questions one after another; then each again
// (everything fetched: the engine's own time).
const ctx = await browser.newContext();
const page = await ctx.newPage();
await page.goto(`${origin}/index.html`);
const later = [], laterMs = [], warmMs = [];
for (const [i, { q }] of qs.entries()) {
  bytes = 0;
  const r = await ask(page, q);
  if (i > 0) { later.push(bytes); laterMs.push(r.ms); }
}
for (const { q } of qs) {
  let ms = 0;
  for (let i = 0; i < 5; i++) ms += (await ask(page, q)).ms;
  warmMs.push(ms / 5);
}
await browser.close();
server.close();
console.log(JSON.stringify({
  engine: ENGINE, questions: qs.length, k,
  recall_at_5: Math.round(recall / qs.length * 1000) / 1000, mrr_at_10: Math.round(mrr / qs.length * 1000) / 1000,
  first_query_kb: { median: kb(median(first)), p90: kb(pct(first, 0.9)), max: kb(pct(first, 1)) },
  later_query_kb: { median: kb(median(later)), p90: kb(pct(later, 0.9)), max: kb(pct(later, 1)) },
  first_query_ms_median: Math.round(median(firstMs) * 10) / 10,
  later_query_ms_median: Math.round(median(laterMs) * 10) / 10,
  warm_query_ms: { median: Math.round(median(warmMs) * 100) / 100, p90: Math.round(pct(warmMs, 0.9) * 100) / 100 },
}));
