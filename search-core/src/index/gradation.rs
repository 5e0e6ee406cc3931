//! Finnish stems levelled across consonant gradation, after Snowball: what
//! makes *vaihdan* ("I change") find a page that says *vaihtaa* ("to change")
//! or *Salasanan vaihto* ("password change").
//!
//! Finnish changes the last consonants of a stem with the syllable after them:
//! *vaihtaa* / *vaihdan* (ht:hd), *katu* / *kadun* (t:d), *verkko* / *verkon*
//! (kk:k), *tentti* / *tentin* (tt:t), *kenkä* / *kengän* (nk:ng). Snowball's
//! Finnish algorithm strips the endings but not the grade, and leaves a final
//! vowel on some forms and not on others (*käytän* → `käytä`, *käyttää* →
//! `käyt`), so a question in the first person rarely meets a page written in
//! the infinitive or as a noun. Over 49 lemmas of help-desk vocabulary in 5 to
//! 8 forms each (`bench/languages/finnish-forms.txt`, which the rules were
//! made on), Snowball alone leaves 0.60 of the pairs of forms of one lemma
//! apart; levelled, 0.35. Over 45 others written apart after the rules were
//! set (`finnish-forms-heldout.txt`), 0.57 and 0.48. The only lemmas it joins
//! are a verb and its noun (*maksaa* / *maksu*, *hakea* / *haku*), which a
//! reader searching either means alike.
//!
//! The rules, applied to the stem (lowercase, `ä` and `ö` kept), never to its
//! first letter (gradation never changes it, and the browser engine finds a
//! word's shard by it, [`super::analyzer::folded_initial`]):
//! 1. `d` after a vowel or `h` is read as `t` (the weak grade of *t* is the only
//!    native *d*); `g` after `n` as `k` (*ng* is the weak grade of *nk*);
//! 2. a doubled `k`, `p` or `t` as one (the strong grade of a geminate);
//! 3. a stem of six letters or more that ends in a vowel and `nu` or `ny`
//!    loses the `nu` or `ny` (the past participle Snowball leaves: *unohtanut* →
//!    `unohtanu`, where *unohdin*, "I forgot", is `unohd`);
//! 4. a final vowel goes from a stem of four letters or more (the stem vowel
//!    Snowball keeps on some forms: *vaihto* → `vaiht`); shorter stems keep it
//!    (*apu*, "help", and *avata*, "to open", would meet as `av`);
//! 5. a final vowel + `ks` is read as vowel + `s` (*tunnuksen* → `tunnus`, the
//!    stem of the *-us* nouns before an ending).
//!
//! What it leaves: gradation that drops a consonant (*hakea* / *haen*, *tuki* /
//! *tuen*) or turns it into another one with no trace (*lupa* / *luvan*, p:v;
//! *aika* / *ajan*, k:j), which no rule can undo without a dictionary, and the
//! pairs *nt:nn*, *lt:ll*, *rt:rr*, which Snowball has already merged or split
//! before this reads the stem. Loanwords are levelled alike on pages and in
//! questions, so they still meet (*android* → `androit` on both sides).

/// Whether `c` is a Finnish vowel.
fn is_vowel(c: char) -> bool {
    matches!(c, 'a' | 'e' | 'i' | 'o' | 'u' | 'y' | 'ä' | 'ö')
}

/// `stem` (a Snowball Finnish stem, lowercase) levelled across consonant
/// gradation (the module's rules).
pub(crate) fn level(stem: &str) -> String {
    let mut out: Vec<char> = Vec::with_capacity(stem.len());
    for c in stem.chars() {
        let Some(&prev) = out.last() else {
            out.push(c);
            continue;
        };
        let c = match c {
            'd' if is_vowel(prev) || prev == 'h' => 't',
            'g' if prev == 'n' => 'k',
            c => c,
        };
        // Rule 2 compares with the letter already levelled (`dt` is `tt`, then `t`).
        if matches!(c, 'k' | 'p' | 't') && prev == c {
            continue;
        }
        out.push(c);
    }
    let n = out.len();
    if n >= 6 && matches!(out[n - 2..], ['n', 'u'] | ['n', 'y']) && is_vowel(out[n - 3]) {
        out.truncate(n - 2);
    }
    if out.len() >= 4 && out.last().is_some_and(|&c| is_vowel(c)) {
        out.pop();
    }
    let n = out.len();
    if n >= 5 && out[n - 2..] == ['k', 's'] && is_vowel(out[n - 3]) {
        out.remove(n - 2);
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grades_of_a_stem_meet() {
        for (weak, strong) in [
            ("vaihd", "vaiht"),       // ht:hd (vaihdan / vaihtaa)
            ("kadu", "katu"),         // t:d (kadun / katu)
            ("verko", "verkko"),      // kk:k
            ("käytä", "käyt"),        // tt:t, a final vowel
            ("keng", "kenk"),         // nk:ng
            ("kirjaudu", "kirjautu"), // t:d after a vowel
            ("tunnuks", "tunnus"),    // the -us nouns' -ks- stem
            ("vaihto", "vaiht"),      // the noun's stem vowel
            ("unohtanu", "unohd"),    // the past participle (unohtanut / unohdin)
        ] {
            assert_eq!(level(weak), level(strong), "{weak} / {strong}");
        }
    }

    #[test]
    fn the_first_letter_and_other_words_stay() {
        // The first letter is never levelled (a word's shard in the browser).
        assert_eq!(level("data"), "dat");
        assert_eq!(level("ddos"), "ddos");
        // A `d` after a consonant other than `h` is no grade of `t`.
        assert_eq!(level("windows"), "windows");
        // Short stems keep their vowel: *apu* and *avata* stay apart.
        assert_ne!(level("apu"), level("ava"));
        assert_eq!(level("apu"), "apu");
        // `ks` after a consonant is not the -us nouns' stem.
        assert_eq!(level("links"), "links");
        assert_eq!(level(""), "");
        assert_eq!(level("ö"), "ö");
    }

    /// The lemmas of a list such as `bench/languages/finnish-forms.txt`, each
    /// with its forms.
    #[cfg(feature = "languages")]
    fn lemmas(text: &'static str) -> Vec<Vec<&'static str>> {
        let lines = text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty());
        lines.map(|l| l.split_whitespace().collect()).collect()
    }

    /// The share of pairs of forms of one lemma that `stem` gives two terms.
    #[cfg(feature = "languages")]
    fn apart(lemmas: &[Vec<&str>], stem: &dyn Fn(&str) -> String) -> f64 {
        let (mut pairs, mut apart) = (0, 0);
        for forms in lemmas {
            let stems: Vec<String> = forms.iter().map(|f| stem(f)).collect();
            for (i, a) in stems.iter().enumerate() {
                for b in &stems[i + 1..] {
                    pairs += 1;
                    apart += usize::from(a != b);
                }
            }
        }
        apart as f64 / pairs as f64
    }

    #[test]
    #[cfg(feature = "languages")]
    fn forms_of_one_lemma_meet_and_lemmas_stay_apart() {
        use super::super::lang::Lang;
        let finnish = Lang::from_tag("fi").and_then(Lang::stemmer).unwrap();
        let snowball = pagefind_stem::Stemmer::create(pagefind_stem::Algorithm::Finnish);
        // (list, fewer pairs apart than Snowball leaves at least by)
        for (text, gain) in [
            (include_str!("../../../bench/languages/finnish-forms.txt"), 0.2),
            (include_str!("../../../bench/languages/finnish-forms-heldout.txt"), 0.08),
        ] {
            let lemmas = lemmas(text);
            assert!(lemmas.len() >= 45 && lemmas.iter().all(|l| l.len() >= 5), "{}", lemmas.len());
            let before = apart(&lemmas, &|w| snowball.stem(w).into_owned());
            let after = apart(&lemmas, &|w| finnish.stem(w).into_owned());
            assert!(before > 0.55 && after < before - gain, "apart: Snowball {before:.3}, levelled {after:.3}");
            no_lemmas_meet(&lemmas, &|w| finnish.stem(w).into_owned());
        }
    }

    /// Asserts that no two lemmas' forms get one term, but a verb's and the
    /// noun's of the same root.
    #[cfg(feature = "languages")]
    fn no_lemmas_meet(lemmas: &[Vec<&str>], stem: &dyn Fn(&str) -> String) {
        let kin = [("vaihtaa", "vaihto"), ("tulostaa", "tulostin"), ("maksaa", "maksu"), ("hakea", "haku")];
        for (i, a) in lemmas.iter().enumerate() {
            for b in &lemmas[i + 1..] {
                let met = a.iter().any(|x| b.iter().any(|y| stem(x) == stem(y)));
                let related = kin.iter().any(|&(v, n)| [v, n] == [a[0], b[0]] || [n, v] == [a[0], b[0]]);
                assert!(!met || related, "{} and {} meet", a[0], b[0]);
            }
        }
    }
}
