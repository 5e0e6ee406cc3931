// gen-fake.mjs — writes a tiny synthetic input set in the exporter's format,
// for developing/checking bench.mjs without the real export.
//
//   node gen-fake.mjs [OUT_DIR=/tmp/orama-fake] [--docs 300] [--queries 20] [--dim 384]
//
// OUT_DIR/docs.jsonl:    {"id","title","text","vector":[dim unit floats]}
// OUT_DIR/queries.jsonl: {"q","vector":[dim floats]}
// Every even-numbered query reuses a document's exact vector (and words from its
// title), so in vector mode that document must come back first.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const out = args.find((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--'))) ?? '/tmp/orama-fake';
const nDocs = opt('--docs', 300);
const nQueries = opt('--queries', 20);
const dim = opt('--dim', 384);

// Small deterministic PRNG (mulberry32) so runs are reproducible.
let seed = 42;
const rand = () => {
  seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const gauss = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
const unitVector = () => {
  const v = Array.from({ length: dim }, gauss);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

const words = ('password reset login account billing invoice refund export import api key token ' +
  'webhook team member permission role workspace project search index backup restore sso saml ' +
  'email notification mobile app sync offline plan upgrade downgrade trial limit quota error').split(' ');
const pick = (n) => Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]);

mkdirSync(out, { recursive: true });
const docs = [];
for (let i = 0; i < nDocs; i++) {
  const article = 40100000 + Math.floor(i / 3);
  docs.push({
    id: `${article}_chunk_${i % 3}`,
    title: `How to ${pick(3).join(' ')}`,
    text: `${pick(40).join(' ')}.`,
    vector: unitVector(),
  });
}
const queries = [];
for (let i = 0; i < nQueries; i++) {
  if (i % 2 === 0) {
    const d = docs[Math.floor(rand() * docs.length)];
    queries.push({ q: d.title.replace(/^How to /, ''), vector: d.vector, expect: d.id });
  } else {
    queries.push({ q: pick(4).join(' '), vector: unitVector() });
  }
}
const jsonl = (rows) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
writeFileSync(join(out, 'docs.jsonl'), jsonl(docs));
writeFileSync(join(out, 'queries.jsonl'), jsonl(queries));
console.log(`wrote ${docs.length} docs and ${queries.length} queries (dim ${dim}) to ${out}`);
