#!/usr/bin/env python3
"""Snippets of searches read in other languages, two binaries side by side.

    bench/snippets/languages.py OLD_SITE_BUILDER NEW_SITE_BUILDER INDEX_DIR EVAL_DIR LANG...

INDEX_DIR is the whole k8s corpus built in one (`site-builder build --content
../shared/corpora/k8s-concepts`), EVAL_DIR `../shared/eval`. For each question of
EVAL_DIR/k8s-dev-LANG.csv (its page is LANG/pages/SOURCE_FILE in that build),
searched as the reader's page searches it (`--lang LANG`, top 5): how many words
the snippets mark, how many of those are the language's common stop words (a
short list below), whether the source page is among the results, and the share
of the ground truth's words (four letters or more) its snippet shows.
docs/benchmarks/snippets.md, "Snippets in the reader's language".
"""
import csv, json, re, subprocess, sys

STOP = {
    'de': 'der die das des dem den und ist ein eine einen einem zu mit von im in auf für sie es wie was wo ich mein meine',
    'fr': 'le la les des du de et est un une pour dans sur que qui je mon ma mes comment',
    'es': 'el la los las de del y es un una para en por que se mi mis cómo qué',
}


def marks(s):
    return re.findall(r'<mark>(.*?)</mark>', s)


def words(s):
    return set(w for w in re.findall(r'\w+', re.sub('<[^>]+>', '', s).lower()) if len(w) >= 4)


def measure(binary, index, rows, lang):
    marked = stop_marked = 0
    shares = []
    stop = set(STOP.get(lang, '').split())
    for r in rows:
        out = subprocess.run([binary, 'search', '--index', f'{index}/index.bin', '--json', '--k', '5', '--lang', lang,
                              r['question']], capture_output=True, text=True, check=True).stdout
        results = json.loads(out)['results']
        for x in results:
            m = marks(x['snippet'])
            marked += len(m)
            stop_marked += sum(w.lower() in stop for w in m)
        page = f"{lang}/pages/" + r['source_file'].rsplit('.', 1)[0] + '.html'
        source = [x for x in results if x['url'].split('#')[0] == page]
        if source:
            truth = words(r['ground_truth'])
            shares.append(len(truth & words(source[0]['snippet'])) / max(1, len(truth)))
    return marked, stop_marked, len(shares), sum(shares) / max(1, len(shares))


def main():
    old, new, index, evals = sys.argv[1:5]
    for lang in sys.argv[5:]:
        rows = list(csv.DictReader(open(f'{evals}/k8s-dev-{lang}.csv', newline='')))
        for name, binary in (('before', old), ('after', new)):
            marked, stop, shown, share = measure(binary, index, rows, lang)
            print(f'{lang} {name}: {marked} marks, {stop} of them stop words ({stop / max(marked, 1):.3f}); '
                  f'source page in the top 5 for {shown}; its snippet shows {share:.3f} of the ground truth\'s words')


if __name__ == '__main__':
    main()
