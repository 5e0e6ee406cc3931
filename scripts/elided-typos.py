#!/usr/bin/env python3
"""Typo'd French questions whose slip is in a word behind an elided article
(l'agent -> l'aggent): what ../shared/tools/make_typos.py never makes, since it
slips only alphabetic pieces. Each question with such a word (of four letters
or more) gets one slip there, by make_typos.py's own `slip` and seed; the
others are left out. docs/benchmarks/languages.md ("Behind an elided article")
reads them.

    scripts/elided-typos.py OUT.csv IN.csv [IN.csv ...]

MAKE_TYPOS names make_typos.py (default: ../shared/tools/make_typos.py beside
the repository).
"""
import csv
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.environ.get("MAKE_TYPOS", os.path.join(HERE, "..", "..", "shared", "tools", "make_typos.py"))
# French elided articles and prepositions (what search-core's analyzer drops).
ARTICLES = {"c", "d", "j", "l", "m", "n", "qu", "s", "t", "jusqu", "lorsqu", "puisqu", "quoiqu"}
ELIDED = re.compile(r"^([A-Za-z]+)(['\u2019])(.*)$")


def load_slip():
    """make_typos.py's `slip`, without running its main()."""
    with open(TOOL) as f:
        source = f.read().replace("\nmain()\n", "\n")
    scope = {}
    exec(compile(source, TOOL, "exec"), scope)
    return scope["slip"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    slip = load_slip()
    out, ins = sys.argv[1], sys.argv[2:]
    rng = random.Random(20261204)
    rows = []
    for path in ins:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                words = r["question"].split(" ")
                cand = []
                for i, w in enumerate(words):
                    m = ELIDED.match(w)
                    core = m.group(3).strip("?,.'\"()") if m else ""
                    if m and m.group(1).lower() in ARTICLES and len(core) >= 4 and core.isalpha():
                        cand.append((i, m, core))
                if not cand:
                    continue
                i, m, core = rng.choice(cand)
                words[i] = m.group(1) + m.group(2) + m.group(3).replace(core, slip(core, rng), 1)
                r["question"] = " ".join(words)
                rows.append(r)
    if not rows:
        sys.exit("no question has a word behind an elided article")
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(len(rows), "rows ->", out)


main()
