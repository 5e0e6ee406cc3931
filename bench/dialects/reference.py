#!/usr/bin/env python3
"""Python reference of the product's hybrid retrieval, run on the RAW pages.

What it is: the baseline a plain Python pipeline gets with the same method as
the Rust knowledge base (MiniLM dense vectors + BM25, convex fusion), reading
the Markdown pages itself, with no dialect handling (Obsidian, MDX, Hugo and
MkDocs syntax stay in the text). Its figures go beside the product's
`site-builder eval` figures for the same pages and question set.

Method:
  pages    every .md/.mdx under --pages (hidden files and folders skipped);
           YAML frontmatter (between the first two `---` lines) removed; title
           = frontmatter `title`, else the first `# ` heading, else the file
           name; pages with `draft: true` skipped.
  chunks   LangChain-style: sections at `#`/`##` headers outside fenced code
           (header line kept in the section), then a recursive character
           splitter (2000 characters, 400 overlap; paragraph, line, sentence,
           space, character). Indexed text = "title > header trail\\n" + chunk
           (a leading H1 equal to the title is not repeated).
  dense    all-MiniLM-L6-v2, scripts/reference_embeddings.py's NumpyMiniLM in
           float32, 256-token truncation, mean pooling, cosine.
  bm25     Okapi (k1 1.2, b 0.75), lower-cased \\w+ tokens, Lucene's English
           stop words, Snowball English stemming (snowballstemmer package),
           idf = ln(1 + (N - df + 0.5) / (df + 0.5)).
  convex   as the product: each list read 100 deep; the top 10 of each list
           min-max scaled over its own top 10 (clamped to [0, 1], a chunk not
           in a list scores 0 on that side); fused = a*dense + (1-a)*bm25; the
           chunks in neither top 10 follow in reciprocal-rank (k 60) order.
           Reported for --alpha (default 0.5) and 0.7, plus bm25 and dense.
           (The product's lower alpha for identifier queries is NOT applied.)
  metrics  as site-builder/src/eval.rs, k 5, chunks ranked by their own
           score: recall@5 = a top-5 chunk is of the source page; context
           precision = sum_i<=5 precision@i * v_i / relevant in top 5; MRR@10
           and NDCG@10 on the pages in order of their best chunk. Overall and
           per category. `--order pages` ranks pages first like the product's
           default (page score = best + second best chunk).

Run:
  python3 bench/dialects/reference.py --pages DIR --qa CSV [--alpha 0.5] \\
      [--json OUT] [--model-dir DIR] [--order chunks|pages] [--workers 2]
  bench/dialects/run-reference [--no-csc] [--order pages]   # every corpus, Markdown table

Needs numpy, safetensors, tokenizers, snowballstemmer (scipy makes GELU
faster); run-reference installs them into ~/.cache/kb-ci/refvenv. The
model folder is the last line of scripts/fetch-model (cache
$KB_MODEL_CACHE, default ~/.cache/kb-ci/models). Corpus embeddings are
cached in ~/.cache/kb-ci/reference/ keyed by a hash of the chunk texts.
"""

from __future__ import annotations

import os

# One BLAS thread per process: on a loaded 2-core machine a 2-thread OpenBLAS
# was up to 100x slower on the batched attention matmuls; the two cores are
# used by two embedding processes instead (--workers).
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
os.environ.setdefault("RAYON_NUM_THREADS", "2")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # the embedding pool forks

import argparse
import csv
import hashlib
import json
import math
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("KB_REFERENCE_CACHE", os.path.expanduser("~/.cache/kb-ci/reference")))
MODEL_CACHE = os.environ.get("KB_MODEL_CACHE", os.path.expanduser("~/.cache/kb-ci/models"))

HEADER_LEVELS = 2
CHUNK_SIZE = 2000
OVERLAP = 400
SEPARATORS = ["\n\n", "\n", ". ", " ", ""]
K = 5
DEPTH = 100  # each list read this deep, and the ranking kept this long (eval's --depth)
NORM_DEPTH = 10
RRF_K = 60.0
K1, B = 1.2, 0.75
BATCH = 32
# Lucene's EnglishAnalyzer default stop set.
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the "
    "their then there these they this to was will with".split()
)


@dataclass
class Chunk:
    page: str  # path relative to the pages folder, with /
    title: str
    trail: list
    text: str
    index_text: str


# ---------------------------------------------------------------- pages


def split_frontmatter(text: str) -> tuple[str, str]:
    """(frontmatter, body); frontmatter is '' when the page has none."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return "", text
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :])
    return "", text


def fm_value(fm: str, key: str) -> str | None:
    m = re.search(rf"^{key}\s*:\s*(.*?)\s*$", fm, re.M)
    if not m:
        return None
    v = m.group(1)
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        v = v[1:-1]
    return v


def fence_marker(line: str) -> str | None:
    m = re.match(r" {0,3}(`{3,}|~{3,})", line)
    return m.group(1) if m else None


def outside_fences(lines: list[str]):
    """Yields (line, in_code) with fenced code blocks tracked."""
    open_fence = None
    for line in lines:
        mark = fence_marker(line)
        if open_fence is None and mark:
            open_fence = mark
            yield line, True
        elif open_fence and mark and mark[0] == open_fence[0] and len(mark) >= len(open_fence):
            open_fence = None
            yield line, True
        else:
            yield line, open_fence is not None


def header_of(line: str, max_level: int = HEADER_LEVELS) -> tuple[int, str] | None:
    m = re.match(r"(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$", line)
    if not m or len(m.group(1)) > max_level:
        return None
    return len(m.group(1)), m.group(2).strip()


def page_title(fm: str, body: str, path: Path) -> str:
    t = fm_value(fm, "title")
    if t:
        return t
    for line, code in outside_fences(body.split("\n")):
        h = header_of(line, 1)
        if not code and h:
            return h[1]
    return path.stem


def read_pages(root: Path) -> list[tuple[str, str, str]]:
    """(relative path, title, body) of every non-draft page, sorted by path."""
    pages = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.suffix not in (".md", ".mdx") or any(p.startswith(".") for p in rel.parts):
            continue
        fm, body = split_frontmatter(path.read_text(encoding="utf-8-sig", errors="replace"))
        if (fm_value(fm, "draft") or "").lower() == "true":
            continue
        pages.append((rel.as_posix(), page_title(fm, body, path), body))
    return pages


# ---------------------------------------------------------------- chunks


def header_sections(body: str) -> list[tuple[list, str]]:
    """(header trail, section text incl. its header line) at # / ## outside code."""
    sections, trail, cur = [], [], []  # trail: (level, text), outermost first
    for line, code in outside_fences(body.split("\n")):
        h = None if code else header_of(line)
        if h:
            sections.append(([t for _, t in trail], "\n".join(cur)))
            trail = [x for x in trail if x[0] < h[0]] + [h]
            cur = []
        cur.append(line)
    sections.append(([t for _, t in trail], "\n".join(cur)))
    return [(t, s) for t, s in sections if s.strip()]


def split_keep_end(text: str, sep: str) -> list[str]:
    """Splits on sep, the separator kept at the end of each part (LangChain keep_separator='end')."""
    if sep == "":
        return list(text)
    parts = text.split(sep)
    out = [p + sep for p in parts[:-1]] + [parts[-1]]
    return [p for p in out if p]


def merge_splits(splits: list[str], size: int, overlap: int) -> list[str]:
    """LangChain's _merge_splits with an empty joiner (separators kept in the parts)."""
    docs, cur, total = [], [], 0
    for s in splits:
        if total + len(s) > size and cur:
            docs.append("".join(cur).strip())
            while total > overlap or (total + len(s) > size and total > 0):
                total -= len(cur.pop(0))
        cur.append(s)
        total += len(s)
    docs.append("".join(cur).strip())
    return [d for d in docs if d]


def recursive_split(text: str, size: int = CHUNK_SIZE, overlap: int = OVERLAP, seps=SEPARATORS) -> list[str]:
    """LangChain's RecursiveCharacterTextSplitter._split_text."""
    i = next((i for i, s in enumerate(seps) if s == "" or s in text), len(seps) - 1)
    sep, rest = seps[i], seps[i + 1 :]
    out, good = [], []
    for s in split_keep_end(text, sep):
        if len(s) < size:
            good.append(s)
            continue
        if good:
            out += merge_splits(good, size, overlap)
            good = []
        out += recursive_split(s, size, overlap, rest) if rest else [s]
    if good:
        out += merge_splits(good, size, overlap)
    return out


def index_text(title: str, trail: list, text: str) -> str:
    if trail and trail[0] == title:
        trail = trail[1:]
    head = " > ".join([title] + trail)
    return f"{head}\n{text}"


def chunk_pages(pages) -> list[Chunk]:
    chunks = []
    for rel, title, body in pages:
        for trail, section in header_sections(body):
            for part in recursive_split(section):
                chunks.append(Chunk(rel, title, trail, part, index_text(title, trail, part)))
    return chunks


# ---------------------------------------------------------------- dense


def model_dir() -> str:
    env = dict(os.environ, KB_MODEL_CACHE=MODEL_CACHE)
    out = subprocess.run(["bash", str(REPO / "scripts/fetch-model")], env=env, check=True,
                         capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


_MODEL = None  # the NumpyMiniLM of this process (inherited by forked workers)


def _embed_batch(batch: list[list[int]]) -> np.ndarray:
    return _MODEL.embed_ids(batch).astype(np.float32)


class Embedder:
    def __init__(self, mdir: str, workers: int = 2):
        global _MODEL
        sys.dont_write_bytecode = True  # no __pycache__ in scripts/
        sys.path.insert(0, str(REPO / "scripts"))
        from reference_embeddings import NumpyMiniLM  # noqa: E402

        _MODEL = NumpyMiniLM(mdir, dtype=np.float32)
        self.tokenizer, self.workers = _MODEL.tokenizer, workers

    def batches(self, texts: list[str]) -> tuple[list[int], list[list[list[int]]]]:
        """Token ids in batches of similar length (little padding), and their order."""
        ids = [e.ids for e in self.tokenizer.encode_batch([t.strip() for t in texts])]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        return order, [[ids[i] for i in order[b : b + BATCH]] for b in range(0, len(order), BATCH)]

    def embed(self, texts: list[str], progress: bool = False) -> np.ndarray:
        order, batches = self.batches(texts)
        out = np.zeros((len(texts), 384), dtype=np.float32)
        if self.workers > 1 and len(batches) > 1:
            import multiprocessing

            with multiprocessing.get_context("fork").Pool(self.workers) as pool:
                vecs = self._collect(pool.imap(_embed_batch, batches), len(texts), progress)
        else:
            vecs = self._collect(map(_embed_batch, batches), len(texts), progress)
        out[order] = vecs
        return out

    @staticmethod
    def _collect(results, total: int, progress: bool) -> np.ndarray:
        t0, done, parts = time.time(), 0, []
        for i, v in enumerate(results):
            parts.append(v)
            done += len(v)
            if progress and i % 20 == 19:
                print(f"  embedded {done}/{total} ({time.time() - t0:.0f}s)", file=sys.stderr)
        return np.concatenate(parts)


def cached_vectors(emb_factory, chunks: list[Chunk], label: str) -> tuple[np.ndarray, bool]:
    """Chunk vectors, from the cache when the same texts were embedded before."""
    h = hashlib.sha256("minilm-f32-256\0".encode())
    for c in chunks:
        h.update(c.index_text.encode() + b"\0")
    path = CACHE / f"{label}-{len(chunks)}-{h.hexdigest()[:16]}.npy"
    if path.exists():
        return np.load(path), True
    vecs = emb_factory().embed([c.index_text for c in chunks], progress=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vecs)
    os.replace(tmp, path)
    return vecs, False


# ---------------------------------------------------------------- bm25


class Analyzer:
    def __init__(self):
        try:
            import snowballstemmer

            self.stemmer = snowballstemmer.stemmer("english")
        except ImportError:
            print("warning: snowballstemmer missing, BM25 without stemming", file=sys.stderr)
            self.stemmer = None
        self.memo: dict[str, str] = {}

    def stem(self, w: str) -> str:
        if self.stemmer is None:
            return w
        s = self.memo.get(w)
        if s is None:
            s = self.memo[w] = self.stemmer.stemWord(w)
        return s

    def __call__(self, text: str) -> list[str]:
        return [self.stem(w) for w in re.findall(r"\w+", text.lower()) if w not in STOP_WORDS]


class BM25:
    def __init__(self, texts: list[str], analyzer: Analyzer):
        self.analyze = analyzer
        docs = [Counter(analyzer(t)) for t in texts]
        self.n = len(docs)
        lens = np.array([sum(d.values()) for d in docs], dtype=np.float64)
        self.norm = K1 * (1 - B + B * lens / max(lens.mean(), 1e-9))
        self.post: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        tmp = defaultdict(list)
        for i, d in enumerate(docs):
            for term, tf in d.items():
                tmp[term].append((i, tf))
        for term, pairs in tmp.items():
            arr = np.array(pairs, dtype=np.float64)
            self.post[term] = (arr[:, 0].astype(np.int64), arr[:, 1])

    def scores(self, query: str) -> np.ndarray:
        """Score of every chunk; query terms repeat as they are written (rank_bm25)."""
        s = np.zeros(self.n)
        for term in self.analyze(query):
            if term not in self.post:
                continue
            docs, tf = self.post[term]
            idf = math.log(1 + (self.n - len(docs) + 0.5) / (len(docs) + 0.5))
            s[docs] += idf * tf * (K1 + 1) / (tf + self.norm[docs])
        return s


# ---------------------------------------------------------------- ranking


def top(scores: np.ndarray, depth: int, positive: bool = False) -> list[tuple[int, float]]:
    """The best `depth` (chunk, score), best first, ties by chunk number."""
    idx = np.lexsort((np.arange(len(scores)), -scores))[:depth]
    return [(int(i), float(scores[i])) for i in idx if not positive or scores[i] > 0]


def minmax(s: float, lo: float, hi: float) -> float:
    if hi > lo:
        return min(max((s - lo) / (hi - lo), 0.0), 1.0)
    return 1.0 if s >= hi else 0.0


def rrf(dense, sparse) -> dict[int, float]:
    out: dict[int, float] = defaultdict(float)
    for lst in (dense, sparse):
        for rank, (d, _) in enumerate(lst):
            out[d] += 1.0 / (RRF_K + rank + 1)
    return out


def convex(dense, sparse, cos: np.ndarray, bm: np.ndarray, alpha: float) -> list[tuple[int, float]]:
    dh, sh = dense[:NORM_DEPTH], sparse[:NORM_DEPTH]
    db = (min(s for _, s in dh), max(s for _, s in dh)) if dh else (math.inf, -math.inf)
    sb = (min(s for _, s in sh), max(s for _, s in sh)) if sh else (math.inf, -math.inf)
    head = {d for d, _ in dh} | {d for d, _ in sh}
    fused = []
    for d, r in rrf(dense, sparse).items():
        if d in head:
            sp = minmax(bm[d], *sb) if bm[d] > 0 else 0.0
            fused.append((d, alpha * minmax(cos[d], *db) + (1 - alpha) * sp))
        else:
            fused.append((d, r - 1.0))
    return fused


def rank(mode: str, cos: np.ndarray, bm: np.ndarray, alpha: float) -> list[tuple[int, float]]:
    dense, sparse = top(cos, DEPTH), top(bm, DEPTH, positive=True)
    hits = {"dense": dense, "bm25": sparse}.get(mode)
    if hits is None:
        hits = convex(dense, sparse, cos, bm, alpha)
    return sorted(hits, key=lambda h: (-h[1], h[0]))[:DEPTH]


def pages_first(hits, page_of, second: float = 1.0):
    """The product's default order: pages by best + second best chunk, best chunk first."""
    info, firsts, rest = {}, [], []
    for i, (d, s) in enumerate(hits):
        p = page_of[d]
        if p not in info:
            info[p] = [i, s, None]
            firsts.append((d, s))
        else:
            if info[p][2] is None:
                info[p][2] = s
            rest.append((d, s))
    key = lambda h: (-(info[page_of[h[0]]][1] + second * max(info[page_of[h[0]]][2] or 0.0, 0.0)),
                     info[page_of[h[0]]][0])
    return sorted(firsts, key=key) + rest


# ---------------------------------------------------------------- metrics


def context_precision(rel: list[bool], k: int) -> float:
    hits, total = 0, 0.0
    for i, r in enumerate(rel[:k]):
        if r:
            hits += 1
            total += hits / (i + 1)
    return total / hits if hits else 0.0


def reciprocal_rank(rel: list[bool], k: int) -> float:
    return next((1.0 / (i + 1) for i, r in enumerate(rel[:k]) if r), 0.0)


def ndcg(gains: list[float], ideal: list[float], k: int) -> float:
    dcg = lambda g: sum(x / math.log2(i + 2) for i, x in enumerate(g[:k]))
    idcg = dcg(sorted(ideal, reverse=True))
    return dcg(gains) / idcg if idcg else 0.0


def question_metrics(pages: list[str], target: str) -> tuple[float, float, float, float]:
    """(recall@k, context precision, MRR@10, NDCG@10) from the ranked chunks' pages."""
    rel = [p == target for p in pages]
    seen, page_rel = set(), []
    for p in pages:
        if p not in seen:
            seen.add(p)
            page_rel.append(p == target)
    recall = float(any(rel[:K]))
    nd = ndcg([float(r) for r in page_rel], [1.0], 10)
    return recall, context_precision(rel, K), reciprocal_rank(page_rel, 10), nd


def mean_metrics(rows: list[tuple]) -> dict:
    n = max(len(rows), 1)
    cols = ("recall_at_k", "context_precision", "mrr_at_10", "ndcg_at_10")
    return {"questions": len(rows), **{c: sum(r[i] for r in rows) / n for i, c in enumerate(cols)}}


def evaluate(mode, alpha, questions, chunks, vecs, qvecs, bm25, order) -> dict:
    page_of = [c.page for c in chunks]
    by_cat, rows, misses = defaultdict(list), [], []
    for q, qv in zip(questions, qvecs):
        hits = rank(mode, vecs @ qv, bm25.scores(q["question"]), alpha)
        if order == "pages":
            hits = pages_first(hits, page_of)
        m = question_metrics([page_of[d] for d, _ in hits], q["source_file"].replace("\\", "/"))
        rows.append(m)
        by_cat[q.get("category", "")].append(m)
        if m[0] == 0:
            misses.append(q["question"])
    out = {"mode": mode if mode != "convex" else f"convex a{alpha:g}", "k": K, **mean_metrics(rows)}
    out["per_category"] = {c: mean_metrics(r) for c, r in sorted(by_cat.items()) if c}
    out["misses"] = misses
    return out


# ---------------------------------------------------------------- report


def print_table(results: list[dict]) -> None:
    cats = sorted({c for r in results for c in r["per_category"]})
    head = ["mode", "R@5", "CP@5", "MRR@10", "NDCG@10"] + [f"{c} R@5/MRR" for c in cats]
    print(" | ".join(head))
    print(" | ".join("---" for _ in head))
    for r in results:
        cells = [r["mode"]] + [f"{r[m]:.3f}" for m in ("recall_at_k", "context_precision", "mrr_at_10", "ndcg_at_10")]
        for c in cats:
            pc = r["per_category"].get(c)
            cells.append(f"{pc['recall_at_k']:.3f}/{pc['mrr_at_10']:.3f} (n={pc['questions']})" if pc else "-")
        print(" | ".join(cells))


def label_of(pages_dir: Path) -> str:
    parts = [p for p in pages_dir.resolve().parts if p not in ("pages", "/")][-2:]
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(parts))


def load_questions(path: str) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", required=True, help="folder of .md/.mdx pages")
    ap.add_argument("--qa", required=True, help="question,ground_truth,category,source_path,source_file CSV")
    ap.add_argument("--alpha", type=float, default=0.5, help="dense weight of convex (0.7 is reported too)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--model-dir", help="all-MiniLM-L6-v2 folder (default: scripts/fetch-model's)")
    ap.add_argument("--workers", type=int, default=2, help="embedding processes (one BLAS thread each)")
    ap.add_argument("--order", choices=("chunks", "pages"), default="chunks",
                    help="chunks by their own score (default) or pages first like the product")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    t0 = time.time()
    pages = read_pages(Path(args.pages))
    chunks = chunk_pages(pages)
    t_chunk = time.time() - t0
    questions = load_questions(args.qa)
    known = {p for p, _, _ in pages}
    missing = sorted({q["source_file"] for q in questions} - known)
    print(f"{args.pages}: {len(pages)} pages, {len(chunks)} chunks ({t_chunk:.1f}s); "
          f"{len(questions)} questions, {len(missing)} source pages not read", file=sys.stderr)
    mdir = args.model_dir or model_dir()
    emb = None

    def embedder():
        nonlocal emb
        emb = emb or Embedder(mdir, args.workers)
        return emb

    t1 = time.time()
    vecs, cached = cached_vectors(embedder, chunks, label_of(Path(args.pages)))
    t_embed = time.time() - t1
    t2 = time.time()
    qvecs = embedder().embed([q["question"] for q in questions])
    bm25 = BM25([c.index_text for c in chunks], Analyzer())
    alphas = [args.alpha] + ([0.7] if args.alpha != 0.7 else [])
    runs = [("convex", a) for a in alphas] + [("bm25", 0.0), ("dense", 1.0)]
    results = [evaluate(m, a, questions, chunks, vecs, qvecs, bm25, args.order) for m, a in runs]
    t_eval = time.time() - t2
    print(f"\n{args.qa} on {args.pages} (order: {args.order})")
    print_table(results)
    print(f"\ntimes: read+chunk {t_chunk:.1f}s, embed chunks {t_embed:.1f}s"
          f"{' (cached)' if cached else ''}, queries+bm25+eval {t_eval:.1f}s")
    if args.json:
        doc = {"pages_dir": args.pages, "qa": args.qa, "pages": len(pages), "chunks": len(chunks),
               "questions": len(questions), "missing_sources": missing, "order": args.order,
               "seconds": {"chunk": t_chunk, "embed": t_embed, "embed_cached": cached, "eval": t_eval},
               "results": results}
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
