#!/usr/bin/env python3
"""Embedding throughput benchmark (Python side of the comparison table).

Embeds the "index_text" field of each line of a JSON Lines chunk file with
all-MiniLM-L6-v2 the way sentence-transformers does (truncate to --max-tokens,
texts sorted by length into batches, dynamic padding per batch, mean pooling
over the attention mask, L2 normalisation) and prints one JSON line per engine:

  {"engine": "onnxruntime-int8", "chunks": n, "seconds": s, "chunks_per_s": x, "threads": t, ...}

Engines:
  --onnx PATH             onnxruntime on the int8 export (intra_op_num_threads=--threads)
  --numpy-model-dir DIR   the numpy f32 reference forward pass (slow; BLAS threads=--threads)

"seconds" is wall time for tokenizing + embedding all chunks, excluding model
loading and one warm-up batch.

Example:
  python3 scripts/bench_embed_python.py --chunks chunks.jsonl \
      --onnx .cache/models/minilm-int8-onnx/model.onnx --threads 2 --limit 300
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", required=True, help='JSON Lines file, one {"index_text": ...} per line')
    ap.add_argument("--onnx", help="int8 ONNX model (model.onnx)")
    ap.add_argument("--numpy-model-dir", help="folder with model.safetensors + tokenizer.json (numpy f32 engine)")
    ap.add_argument("--tokenizer", help="tokenizer.json (default: from --numpy-model-dir, "
                    "or ../all-MiniLM-L6-v2/tokenizer.json next to the ONNX folder as laid out by scripts/fetch-model)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--limit", type=int, default=0, help="use only the first N chunks (0 = all)")
    args = ap.parse_args()
    if not args.onnx and not args.numpy_model_dir:
        ap.error("give --onnx and/or --numpy-model-dir")
    return args


args = parse_args()
# BLAS thread counts must be set before numpy is imported.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(args.threads)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_embeddings import NumpyMiniLM, mean_pool_normalize, onnx_hidden, pad_batch  # noqa: E402


def read_chunks(path: str, limit: int) -> list[str]:
    texts = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            obj = json.loads(line)
            if not isinstance(obj.get("index_text"), str):
                sys.exit(f"{path}:{n}: no string field \"index_text\"")
            texts.append(obj["index_text"])
            if limit and len(texts) >= limit:
                break
    if not texts:
        sys.exit(f"{path}: no chunks")
    return texts


def find_tokenizer() -> str:
    candidates = []
    if args.tokenizer:
        candidates.append(args.tokenizer)
    if args.numpy_model_dir:
        candidates.append(os.path.join(args.numpy_model_dir, "tokenizer.json"))
    if args.onnx:
        onnx_dir = os.path.dirname(os.path.abspath(args.onnx))
        candidates.append(os.path.join(onnx_dir, "..", "all-MiniLM-L6-v2", "tokenizer.json"))
    for c in candidates:
        if os.path.isfile(c):
            return c
    sys.exit("tokenizer.json not found; pass --tokenizer (run scripts/fetch-model first)")


def run(engine: str, embed_batch, tokenizer, texts: list[str]) -> dict:
    # Warm-up (not timed): first texts, one batch.
    warm = [e.ids for e in tokenizer.encode_batch([t.strip() for t in texts[: args.batch_size]])]
    embed_batch(warm)

    t0 = time.perf_counter()
    encs = tokenizer.encode_batch([t.strip() for t in texts])
    all_ids = [e.ids for e in encs]
    order = sorted(range(len(all_ids)), key=lambda i: len(all_ids[i]), reverse=True)
    out = np.zeros((len(texts), 384), dtype=np.float32)
    tokens = 0
    for start in range(0, len(order), args.batch_size):
        idx = order[start : start + args.batch_size]
        batch = [all_ids[i] for i in idx]
        tokens += sum(len(b) for b in batch)
        out[idx] = embed_batch(batch)
    seconds = time.perf_counter() - t0

    norms = np.linalg.norm(out, axis=1)
    assert np.all(np.abs(norms - 1.0) < 1e-3), "embeddings not normalised"
    return {
        "engine": engine,
        "chunks": len(texts),
        "seconds": round(seconds, 3),
        "chunks_per_s": round(len(texts) / seconds, 2),
        "threads": args.threads,
        "batch_size": args.batch_size,
        "max_tokens": args.max_tokens,
        "tokens": tokens,
    }


def main() -> int:
    texts = read_chunks(args.chunks, args.limit)
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(find_tokenizer())
    # Override the max_length=128 truncation / Fixed(128) padding baked into tokenizer.json.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=args.max_tokens)

    if args.onnx:
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(args.onnx, so, providers=["CPUExecutionProvider"])
        input_names = {i.name for i in session.get_inputs()}

        def onnx_batch(batch_ids):
            ids, mask = pad_batch(batch_ids)
            return mean_pool_normalize(onnx_hidden(session, ids, mask, input_names), mask)

        print(json.dumps(run("onnxruntime-int8", onnx_batch, tokenizer, texts)), flush=True)

    if args.numpy_model_dir:
        # float32 arithmetic here (speed); the fixture generator uses float64.
        model = NumpyMiniLM(args.numpy_model_dir, args.max_tokens, dtype=np.float32)
        print(json.dumps(run("numpy-f32", model.embed_ids, tokenizer, texts)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
