// bench.mjs — search latency of Orama (@orama/orama) on our exported corpus.
//
// What it measures: the wall time of `await search(db, params)` per query, measured
// with performance.now(), on an in-memory Orama database holding the same chunks and
// the same 384-dim embeddings our engine uses. Query encoding is NOT measured: query
// vectors are read from the export (and turned into Float32Array before timing).
// Insert time (one insertMultiple call over all documents) is reported separately.
//
// Modes:
//   hybrid   — mode 'hybrid' (MODE_HYBRID_SEARCH): BM25 over title+text plus a brute-force
//              cosine scan of every vector, each list scaled by its max score and summed
//              with Orama's default weights 0.5/0.5 (or --weights TEXT,VECTOR)
//   fulltext — mode 'fulltext': BM25 over title+text only
//   vector   — mode 'vector': brute-force cosine scan only
//
// Input (JSON lines, from our exporter) in DIR:
//   DIR/docs.jsonl    {"id": "...", "title": "...", "text": "...", "vector": [384 floats]}
//   DIR/queries.jsonl {"q": "...", "vector": [384 floats]}
//
// Run (Node 20, after `npm ci` in this folder):
//   node bench.mjs DIR [--rounds 5] [--k 5] [--mode hybrid|fulltext|vector] [--json]
//                      [--similarity -1] [--weights 0.5,0.5] [--show]
//   e.g.  node bench.mjs /tmp/orama-in --mode hybrid --json
//   A synthetic input for trying it out: node gen-fake.mjs /tmp/orama-fake
//
// Orama settings that matter for comparisons (defaults of 3.1.x, left as they are):
// full-text threshold 1 (a doc matching ANY query term is a candidate), tolerance 0 (no
// typo tolerance), no stemming, no stop words, BM25 k=1.2 b=0.75 d=0.5; vector search is an
// exhaustive scan (no ANN index). --similarity is the vector cut-off (default -1: no cut).
//
// Procedure: load files -> create db -> insertMultiple (timed) -> correctness check
// (vector mode: a document's own vector must return that document first) -> warm-up
// (every query once, untimed) -> R rounds, each running every query once, timed.
// Per round: p50 / p99 / mean in ms (percentiles by linear interpolation between
// closest ranks, like numpy's default; with 50 queries p99 is close to the max).
// Summary: the median over rounds of the per-round p50s.
//
// With --json, stdout carries only JSON lines (one per round, then one summary);
// everything else goes to stderr.
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import {
  create,
  insertMultiple,
  search,
  count,
  MODE_FULLTEXT_SEARCH,
  MODE_HYBRID_SEARCH,
  MODE_VECTOR_SEARCH,
} from '@orama/orama';

const DIM = 384;
const VECTOR_PROPERTY = 'embedding';
const TEXT_PROPERTIES = ['title', 'text'];
const MODES = { hybrid: MODE_HYBRID_SEARCH, fulltext: MODE_FULLTEXT_SEARCH, vector: MODE_VECTOR_SEARCH };

// ---------------------------------------------------------------- arguments
function usage(msg) {
  if (msg) console.error(`error: ${msg}`);
  console.error(
    'usage: node bench.mjs DIR [--rounds 5] [--k 5] [--mode hybrid|fulltext|vector] [--json]\n' +
      '                         [--similarity -1] [--weights TEXT,VECTOR] [--show]',
  );
  process.exit(2);
}

function parseArgs(argv) {
  const o = { dir: null, rounds: 5, k: 5, mode: 'hybrid', json: false, show: false, similarity: -1, weights: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    const num = (v) => {
      const n = Number(v);
      if (!Number.isFinite(n)) usage(`${a}: not a number: ${v}`);
      return n;
    };
    if (a === '--rounds') o.rounds = num(next());
    else if (a === '--k') o.k = num(next());
    else if (a === '--mode') o.mode = next();
    else if (a === '--json') o.json = true;
    else if (a === '--show') o.show = true;
    else if (a === '--similarity') o.similarity = num(next());
    else if (a === '--weights') {
      const [text, vector] = next().split(',').map(num);
      // Orama ignores hybridWeights unless both are non-zero (truthy).
      if (!(text > 0 && vector > 0)) usage('--weights needs two positive numbers, e.g. 0.7,0.3');
      o.weights = { text, vector };
    } else if (a === '-h' || a === '--help') usage();
    else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else if (o.dir === null) o.dir = a;
    else usage(`unexpected argument ${a}`);
  }
  if (!o.dir) usage('DIR is required');
  if (!(o.mode in MODES)) usage(`--mode must be one of ${Object.keys(MODES).join(', ')}`);
  if (!(Number.isInteger(o.rounds) && o.rounds >= 1)) usage('--rounds must be a positive integer');
  if (!(Number.isInteger(o.k) && o.k >= 1)) usage('--k must be a positive integer');
  return o;
}

// ---------------------------------------------------------------- helpers
function readJsonl(path) {
  const rows = [];
  const lines = readFileSync(path, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    try {
      rows.push(JSON.parse(line));
    } catch (e) {
      throw new Error(`${path}:${i + 1}: bad JSON: ${e.message}`);
    }
  }
  return rows;
}

function checkVector(v, where) {
  if (!Array.isArray(v) || v.length !== DIM) {
    throw new Error(`${where}: vector must be an array of ${DIM} numbers (got ${Array.isArray(v) ? v.length : typeof v})`);
  }
}

function oramaVersion() {
  // The package's "exports" map does not expose package.json, so locate it from the entry point.
  const require = createRequire(import.meta.url);
  let dir = dirname(require.resolve('@orama/orama'));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      if (pkg.name === '@orama/orama') return pkg.version;
    } catch {}
    const up = dirname(dir);
    if (up === dir) return 'unknown';
    dir = up;
  }
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * p;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

const median = (xs) => percentile([...xs].sort((a, b) => a - b), 0.5);
const round3 = (x) => Math.round(x * 1000) / 1000;

// ---------------------------------------------------------------- main
const opts = parseArgs(process.argv.slice(2));
const log = opts.json ? (...a) => console.error(...a) : (...a) => console.log(...a);
const version = oramaVersion();

const docs = readJsonl(join(opts.dir, 'docs.jsonl'));
const queries = readJsonl(join(opts.dir, 'queries.jsonl'));
if (docs.length === 0 || queries.length === 0) throw new Error(`no docs or no queries in ${opts.dir}`);
const rows = docs.map((d, i) => {
  checkVector(d.vector, `docs.jsonl line ${i + 1}`);
  return { id: String(d.id), title: d.title ?? '', text: d.text ?? '', embedding: d.vector };
});
for (const [i, q] of queries.entries()) {
  checkVector(q.vector, `queries.jsonl line ${i + 1}`);
  if (typeof q.q !== 'string') throw new Error(`queries.jsonl line ${i + 1}: "q" must be a string`);
  q.vec = Float32Array.from(q.vector); // Orama converts arrays to Float32Array per search; do it up front
}

log(`orama ${version}, node ${process.version}, mode ${opts.mode}, k ${opts.k}, rounds ${opts.rounds}, ` +
  `similarity ${opts.similarity}, weights ${opts.weights ? `${opts.weights.text},${opts.weights.vector}` : 'default (0.5,0.5)'}`);
log(`input ${opts.dir}: ${docs.length} docs, ${queries.length} queries`);

const db = create({
  schema: { id: 'string', title: 'string', text: 'string', embedding: `vector[${DIM}]` },
});

const t0 = performance.now();
await insertMultiple(db, rows, rows.length); // one batch: the whole corpus
const insertMs = performance.now() - t0;
const docCount = count(db);
if (docCount !== docs.length) throw new Error(`inserted ${docCount} docs, expected ${docs.length}`);
log(`insert: ${docCount} docs in ${insertMs.toFixed(1)} ms`);

// Search parameters, built once per query, outside the timed region.
function paramsFor(q, mode = opts.mode, k = opts.k) {
  const p = { mode: MODES[mode], limit: k };
  if (mode !== 'vector') {
    p.term = q.q;
    p.properties = TEXT_PROPERTIES;
  }
  if (mode !== 'fulltext') {
    p.vector = { value: q.vec, property: VECTOR_PROPERTY };
    // Orama keeps only docs with cosine >= similarity (default 0.8, which drops most
    // candidates). -1 (our default) keeps every document; 0 would drop ~17% of our corpus.
    p.similarity = opts.similarity;
  }
  if (mode === 'hybrid' && opts.weights) p.hybridWeights = opts.weights;
  return p;
}

// ---- correctness check (vector mode): a document's own vector must rank it first.
{
  const picks = [0, Math.floor(docs.length / 3), Math.floor((2 * docs.length) / 3), docs.length - 1];
  const probes = [...new Set(picks)].map((i) => ({ expect: String(docs[i].id), vec: Float32Array.from(docs[i].vector) }));
  for (const q of queries) if (q.expect !== undefined) probes.push({ expect: String(q.expect), vec: q.vec });
  let failed = 0;
  for (const probe of probes) {
    const r = await search(db, { mode: MODE_VECTOR_SEARCH, vector: { value: probe.vec, property: VECTOR_PROPERTY }, similarity: opts.similarity, limit: 2 });
    const [first, second] = r.hits;
    const ok = first && (first.id === probe.expect || (second && second.id === probe.expect && second.score === first.score));
    if (!ok) {
      failed++;
      console.error(`check FAILED: expected ${probe.expect} first, got ${first ? `${first.id} (${first.score})` : 'no hits'}`);
    }
  }
  log(`check: ${probes.length - failed}/${probes.length} self-vector probes return their own document first`);
  if (failed) process.exit(1);
}

const prepared = queries.map((q) => paramsFor(q));

// ---- optional: show top hits for the first 3 queries in the selected mode.
if (opts.show) {
  for (const [i, q] of queries.slice(0, 3).entries()) {
    const r = await search(db, prepared[i]);
    log(`show [${opts.mode}] q${i + 1} "${q.q}" (${r.count} candidates): ` +
      r.hits.map((h) => `${h.id}:${h.score.toFixed(4)}`).join(' '));
  }
}

// ---- warm-up: every query once, untimed; also note how many candidates each query scores.
let candidates = 0;
for (const p of prepared) candidates += (await search(db, p)).count;
const meanCandidates = candidates / prepared.length;
log(`warm-up done; mean candidates per query (result.count): ${meanCandidates.toFixed(1)}`);

// ---- timed rounds.
const p50s = [];
let sink = 0; // keep results observably used
for (let round = 1; round <= opts.rounds; round++) {
  const lat = new Array(prepared.length);
  for (let i = 0; i < prepared.length; i++) {
    const p = prepared[i];
    const start = performance.now();
    const r = await search(db, p);
    lat[i] = performance.now() - start;
    sink += r.hits.length;
  }
  const sorted = [...lat].sort((a, b) => a - b);
  const p50 = percentile(sorted, 0.5);
  const p99 = percentile(sorted, 0.99);
  const mean = lat.reduce((a, b) => a + b, 0) / lat.length;
  p50s.push(p50);
  if (opts.json) {
    console.log(JSON.stringify({
      engine: 'orama', version, mode: opts.mode, round, queries: lat.length, k: opts.k,
      p50_ms: round3(p50), p99_ms: round3(p99), mean_ms: round3(mean),
    }));
  } else {
    console.log(`round ${round}: ${lat.length} queries  p50 ${p50.toFixed(3)} ms  p99 ${p99.toFixed(3)} ms  mean ${mean.toFixed(3)} ms`);
  }
}
if (sink < 0) console.error(sink);

const summary = median(p50s);
if (opts.json) {
  console.log(JSON.stringify({
    engine: 'orama', version, mode: opts.mode, summary: true, rounds: opts.rounds, queries: queries.length, k: opts.k,
    similarity: opts.mode === 'fulltext' ? undefined : opts.similarity, hybrid_weights: opts.mode === 'hybrid' ? (opts.weights ?? { text: 0.5, vector: 0.5 }) : undefined,
    median_of_p50_ms: round3(summary), insert_ms: round3(insertMs), docs: docCount,
    mean_candidates: round3(meanCandidates), node: process.version,
  }));
} else {
  console.log(`summary: orama ${version} ${opts.mode}  median of per-round p50 ${summary.toFixed(3)} ms  ` +
    `(insert ${insertMs.toFixed(1)} ms for ${docCount} docs)`);
}
