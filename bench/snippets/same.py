#!/usr/bin/env python3
"""Whether two binaries cut the same snippets: every question of each QA set,
searched in the default mode and in `bm25`, top 5.

    bench/snippets/same.py OLD_SITE_BUILDER NEW_SITE_BUILDER INDEX_DIR:QA.csv...

Prints, per set, how many snippets differ (and the first two that do).
docs/benchmarks/snippets.md, "Snippets in the reader's language".
"""
import csv, json, subprocess, sys


def snippets(binary, index, mode, question):
    out = subprocess.run([binary, 'search', '--index', f'{index}/index.bin', '--json', '--k', '5', '--mode', mode,
                          question], capture_output=True, text=True, check=True).stdout
    return [r['snippet'] for r in json.loads(out)['results']]


def main():
    old, new = sys.argv[1:3]
    for pair in sys.argv[3:]:
        index, qa = pair.split(':', 1)
        questions = [r['question'].replace('\n', ' ') for r in csv.DictReader(open(qa, newline=''))]
        total = differ = 0
        for mode in ('convex', 'bm25'):
            for q in questions:
                a, b = snippets(old, index, mode, q), snippets(new, index, mode, q)
                total += len(a)
                for x, y in zip(a, b):
                    if x != y:
                        differ += 1
                        if differ <= 2:
                            print(f'  {q!r}\n    before {x[:160]}\n    after  {y[:160]}')
        print(f'{qa.rsplit("/", 1)[-1]}: {total} snippets, {differ} differ')


if __name__ == '__main__':
    main()
