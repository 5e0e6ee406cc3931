//! The browser engine (`search_core::index::fragments`, what `search-web` runs)
//! ranks every mode, page and partial query as the edge's service does, to the
//! result: both read one index, the browser through its fragments.

use search_core::index::{Mode, SearchParams, VectorStorage};
use search_core::testing::{browse, fragment_corpus, fragment_corpus_in, open_fragments};
use search_service::service::Service;

#[test]
fn the_browser_ranks_every_mode_as_the_edge_does() {
    let mut shown: std::collections::BTreeMap<&str, usize> = Default::default();
    let mut corrected = 0;
    for storage in [VectorStorage::I16, VectorStorage::F16] {
        let (index, enc) = fragment_corpus(storage);
        let (files, mut e, sem) = open_fragments(&index, &enc);
        let svc = Service::open(index.as_slice(), enc.as_slice()).unwrap();
        for q in [
            "parking permit",
            "reset the password",
            "gpu job quota",
            "zebra",
            "stor",
            "the",
            "pasword rseet",
            "storgae quota",
        ] {
            for mode in [Mode::Convex, Mode::Dense, Mode::Rrf, Mode::Dot, Mode::Bm25] {
                for (page, partial) in [(1, false), (2, false), (1, true)] {
                    let got = browse(&mut e, &sem, &files, q, mode, page, partial);
                    let p = SearchParams { mode, partial, ..svc.default_params(5) };
                    let want = svc.search(q, &p, page, &|| 0.0).unwrap();
                    assert_eq!(got.mode, mode);
                    assert_eq!(got.results, want.results, "{q:?} {storage:?} {mode:?} page {page} partial {partial}");
                    assert_eq!(got.has_more, want.has_more, "{q:?} {mode:?}");
                    assert_eq!(got.matched, want.matched, "{q:?} {mode:?}");
                    assert_eq!(got.corrected, want.corrected, "{q:?} {mode:?}");
                    corrected += usize::from(want.corrected.is_some());
                    *shown.entry(mode.name()).or_default() += usize::from(!want.results.is_empty());
                }
            }
        }
    }
    // Not vacuous: the fused modes show every one of these queries (the
    // synthetic encoder's cosines are high), `bm25` all but those no chunk's
    // words answer ("zebra", "the", and "stor" unless it is being typed, and
    // "rseet" while it is).
    assert_eq!(shown, [("bm25", 30), ("convex", 48), ("dense", 48), ("dot", 48), ("rrf", 48)].into(), "{shown:?}");
    // Both typo'd queries are read as corrected, in every mode and page.
    assert_eq!(corrected, 60);
}

/// A German site: the browser reads a query's slips in German as the edge
/// does (the same words corrected, the same results), and leaves another
/// form of a word as typed.
#[test]
fn the_browser_reads_slips_in_the_sites_language_as_the_edge_does() {
    let words = [
        "Parkausweis",
        "Genehmigung",
        "die",
        "Passwort",
        "zurücksetzen",
        "ein",
        "der",
        "Speicher",
        "Kontingent",
        "Auftrag",
        "Überwachung",
        // A word of the synthetic encoder's dictionary (its only ones are
        // English): a letter put back must make a dictionary word.
        "password",
    ];
    let (index, enc) = fragment_corpus_in("de", &words, VectorStorage::F16);
    let (files, mut e, sem) = open_fragments(&index, &enc);
    let svc = Service::open(index.as_slice(), enc.as_slice()).unwrap();
    let mut read = Vec::new();
    for q in [
        "Passwoort zurücksetzen",
        "Speicehr Kontingent",
        "Kontingent",
        "Parkausweise",
        "Spiecher",
        "pasword",
        "Autrag",
        "Überwahcung",
    ] {
        for mode in [Mode::Convex, Mode::Bm25] {
            let got = browse(&mut e, &sem, &files, q, mode, 1, false);
            let want = svc.search(q, &SearchParams { mode, ..svc.default_params(5) }, 1, &|| 0.0).unwrap();
            assert_eq!(got.results, want.results, "{q:?} {mode:?}");
            assert_eq!(got.corrected, want.corrected, "{q:?} {mode:?}");
            read.push(want.corrected);
        }
    }
    let read: Vec<Option<&str>> = read.iter().step_by(2).map(Option::as_deref).collect();
    assert_eq!(
        read,
        [
            Some("Passwort zurücksetzen"),
            Some("Speicher Kontingent"),
            None,
            None,
            Some("Speicher"),
            Some("password"),
            None,
            Some("Überwachung"),
        ],
        "doubled and swapped letters read, also in a word whose first letter is accented; a known \
         word and an inflected ending left as typed; a dropped letter read only into a dictionary word"
    );
}
