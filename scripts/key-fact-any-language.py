#!/usr/bin/env python3
"""Extractive answers against the ground truth in any language: the key-fact
measure of ../shared/tools/extractive_eval.py (the share of the ground truth's
content words in the answer; "contains" when at least half), read so that it
works beyond English. That tool keeps [a-z0-9] runs, so it sees nothing of a
Japanese answer and only the ASCII pieces of a German one.

Here a word is any run of letters or digits of three or more (lowercased,
accents kept), cut to its first five characters (a crude stem that treats
*Anwendung* and *Anwendungen*, *données* and *donnée* alike), less a short stop
list of English, German, French and Spanish. Chinese and Japanese text is read
in pairs of characters, as the index reads it, pairs of hiragana alone (their
particles and endings) left out; Latin words inside it as above. The answer is
the text before "Sources" less its first line (the search step, which repeats
the question). Also reported: the source page cited, and the questions
declined (the answer says it is not in the knowledge base).

    scripts/key-fact-any-language.py SITE_BUILDER INDEX QA.csv LANG [-v]

LANG is the questions' language tag (ja and zh-cn switch to pairs). -v prints
each question's score. docs/benchmarks/extractive-answers.md ("Answers in
other languages") reads it.
"""
import csv
import re
import subprocess
import sys

STOP = set("""the and for how with what does this that from which when where why your will should must into
only also der die das und mit wie was ist sind ein eine einer einen dem den des für auf von nicht oder kann
ich mein meine wird werden sich auch les des une pour avec que qui est sont dans par sur pas comment quel
quelle mon mes ces cette aux los las una unos para con por del como qué cómo mis sus son esta este""".split())


def words(text, lang):
    out = set()
    if lang in ("ja", "zh-cn", "zh"):
        for run in re.sub(r"[\s\W_]+", " ", text).split():
            for i in range(len(run) - 1):
                pair = run[i:i + 2]
                if all("\u3040" <= c <= "\u309f" for c in pair) or re.fullmatch(r"[A-Za-z0-9]+", pair):
                    continue
                out.add(pair.lower())
        out.update(w.lower()[:5] for w in re.findall(r"[A-Za-z0-9]{3,}", text))
        return out
    for w in re.findall(r"\w+", text.lower()):
        if len(w) >= 3 and w not in STOP:
            out.add(w[:5])
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    if len(args) != 4:
        sys.exit(__doc__)
    sb, index, path, lang = args
    rows = list(csv.DictReader(open(path, newline="")))
    questions = [re.sub(r"\s+", " ", r["question"]) for r in rows]
    turns = []
    for i in range(0, len(questions), 10):  # the terminal chat keeps a bounded history
        stdin = "\n".join(questions[i:i + 10]) + "\nexit\n"
        out = subprocess.run([sb, "chat", "--index", index, "--no-llm"], input=stdin, capture_output=True,
                             text=True, check=True).stdout
        turns += out.split("\n> ")[1:-1]
    total = contains = cited = declined = 0
    for r, turn in zip(rows, turns):
        answer, _, sources = turn.partition("\nSources")
        body = answer.split("\n", 1)[1] if "\n" in answer else answer
        truth = words(r["ground_truth"], lang)
        score = len(truth & words(body, lang)) / len(truth) if truth else 0
        page = r["source_file"].rsplit(".", 1)[0] + ".html"
        total += score
        contains += score >= 0.5
        cited += page in sources
        declined += "(extractive answer; not in" in turn
        if "-v" in sys.argv:
            print(f"{score:.2f} {'cited' if page in sources else '-    '} {r['question'][:70]}")
    n = len(rows)
    print(f"{path.rsplit('/', 1)[-1]}: n={n} answered={len(turns)} key_fact_mean={total / n:.3f} "
          f"contains={contains / n:.2f} source_cited={cited / n:.2f} declined={declined}")


if __name__ == "__main__":
    main()
