//! The extractive agent's own words, in the answer's language: the line that
//! introduces the quoted passages and the abstention. The rest of an
//! extractive answer is the pages' own text; an LLM writes its answers in the
//! reader's language itself (its prompt says so).
//!
//! The same twelve languages as the site's string tables (site-builder's
//! `i18n`) and the chat widget's labels; English for any other, and for
//! Chinese in the Traditional script, as those do.

use search_core::index::lang::LangTag;

/// What the agent says around the quoted passages, in one language.
#[derive(Debug)]
pub struct Words {
    /// The primary language subtag (`en`, `zh`).
    pub lang: &'static str,
    /// Before the quoted passages.
    pub from_the_knowledge_base: &'static str,
    /// Abstention, no word of the question stands out.
    pub no_page: &'static str,
    /// Abstention naming the question's words no page uses: `{named}`.
    pub no_page_mentions: &'static str,
    /// A word of the question, quoted: `{w}`.
    pub quote: &'static str,
    /// Between named words, and before the last one.
    pub sep: &'static str,
    pub or: &'static str,
    /// Before the list of the closest pages of an abstention.
    pub closest: &'static str,
    /// After the quoted passages, before the best page's title.
    pub read_more: &'static str,
}

impl Words {
    /// `words` quoted and listed: `“a”, “b” or “c”`.
    pub fn named(&self, words: &[&str]) -> String {
        let mut quoted: Vec<String> = words.iter().map(|w| self.quote.replace("{w}", w)).collect();
        let last = quoted.pop().unwrap_or_default();
        if quoted.is_empty() {
            last
        } else {
            format!("{}{}{last}", quoted.join(self.sep), self.or)
        }
    }
}

/// The words for an answer in `lang` (`None`: not known, English).
pub fn words(lang: Option<LangTag>) -> &'static Words {
    let Some(key) = lang.and_then(|t| search_core::index::lang::strings_key(t.as_str())) else { return &EN };
    ALL.iter().copied().find(|w| w.lang == key).unwrap_or(&EN)
}

const ALL: [&Words; 12] = [&EN, &DE, &FR, &ES, &FI, &SV, &JA, &ZH, &PT, &IT, &NL, &KO];

const EN: Words = Words {
    lang: "en",
    from_the_knowledge_base: "From the knowledge base:",
    no_page: "The knowledge base does not seem to answer this question; I found no page about it.",
    no_page_mentions: "The knowledge base does not seem to answer this question: no page mentions {named}.",
    quote: "\u{201c}{w}\u{201d}",
    sep: ", ",
    or: " or ",
    closest: "The closest pages, in case they help:",
    read_more: "Read more:",
};

const DE: Words = Words {
    lang: "de",
    from_the_knowledge_base: "Aus der Wissensdatenbank:",
    no_page: "Die Wissensdatenbank scheint diese Frage nicht zu beantworten; ich habe keine Seite dazu gefunden.",
    no_page_mentions: "Die Wissensdatenbank scheint diese Frage nicht zu beantworten: Keine Seite erwähnt {named}.",
    quote: "\u{201e}{w}\u{201c}",
    sep: ", ",
    or: " oder ",
    closest: "Die nächstliegenden Seiten, falls sie helfen:",
    read_more: "Weiterlesen:",
};

const FR: Words = Words {
    lang: "fr",
    from_the_knowledge_base: "D’après la base de connaissances\u{a0}:",
    no_page:
        "La base de connaissances ne semble pas répondre à cette question\u{a0}; je n’ai trouvé aucune page à ce sujet.",
    no_page_mentions:
        "La base de connaissances ne semble pas répondre à cette question\u{a0}: aucune page ne mentionne {named}.",
    quote: "«\u{a0}{w}\u{a0}»",
    sep: ", ",
    or: " ou ",
    closest: "Les pages les plus proches, au cas où elles vous aideraient\u{a0}:",
    read_more: "En savoir plus\u{a0}:",
};

const ES: Words = Words {
    lang: "es",
    from_the_knowledge_base: "Según la base de conocimientos:",
    no_page: "La base de conocimientos no parece responder a esta pregunta; no encontré ninguna página sobre el tema.",
    no_page_mentions: "La base de conocimientos no parece responder a esta pregunta: ninguna página menciona {named}.",
    quote: "«{w}»",
    sep: ", ",
    or: " o ",
    closest: "Las páginas más cercanas, por si le sirven:",
    read_more: "Más información:",
};

const FI: Words = Words {
    lang: "fi",
    from_the_knowledge_base: "Tietopankista:",
    no_page: "Tietopankki ei näytä vastaavan tähän kysymykseen; en löytänyt aiheesta yhtään sivua.",
    no_page_mentions: "Tietopankki ei näytä vastaavan tähän kysymykseen: mikään sivu ei mainitse sanaa {named}.",
    quote: "\u{201d}{w}\u{201d}",
    sep: ", ",
    or: " tai ",
    closest: "Lähimmät sivut, jos niistä on apua:",
    read_more: "Lue lisää:",
};

const SV: Words = Words {
    lang: "sv",
    from_the_knowledge_base: "Från kunskapsbasen:",
    no_page: "Kunskapsbasen verkar inte besvara den här frågan; jag hittade ingen sida om det.",
    no_page_mentions: "Kunskapsbasen verkar inte besvara den här frågan: ingen sida nämner {named}.",
    quote: "\u{201d}{w}\u{201d}",
    sep: ", ",
    or: " eller ",
    closest: "De närmaste sidorna, om de kan hjälpa:",
    read_more: "Läs mer:",
};

const JA: Words = Words {
    lang: "ja",
    from_the_knowledge_base: "ナレッジベースより：",
    no_page: "ナレッジベースにはこの質問への答えがないようです。関連するページは見つかりませんでした。",
    no_page_mentions: "ナレッジベースにはこの質問への答えがないようです。{named}に触れているページはありません。",
    quote: "「{w}」",
    sep: "、",
    or: "、",
    closest: "参考までに、最も近いページ：",
    read_more: "詳しくは：",
};

const ZH: Words = Words {
    lang: "zh",
    from_the_knowledge_base: "来自知识库：",
    no_page: "知识库似乎没有回答这个问题；我没有找到相关页面。",
    no_page_mentions: "知识库似乎没有回答这个问题：没有页面提到{named}。",
    quote: "\u{201c}{w}\u{201d}",
    sep: "、",
    or: "或",
    closest: "最接近的页面，或许有帮助：",
    read_more: "了解更多：",
};

const PT: Words = Words {
    lang: "pt",
    from_the_knowledge_base: "Da base de conhecimento:",
    no_page: "A base de conhecimento não parece responder a esta pergunta; não encontrei nenhuma página sobre isso.",
    no_page_mentions: "A base de conhecimento não parece responder a esta pergunta: nenhuma página menciona {named}.",
    quote: "\u{201c}{w}\u{201d}",
    sep: ", ",
    or: " ou ",
    closest: "As páginas mais próximas, caso ajudem:",
    read_more: "Saiba mais:",
};

const IT: Words = Words {
    lang: "it",
    from_the_knowledge_base: "Dalla base di conoscenza:",
    no_page: "La base di conoscenza non sembra rispondere a questa domanda; non ho trovato alcuna pagina in merito.",
    no_page_mentions: "La base di conoscenza non sembra rispondere a questa domanda: nessuna pagina menziona {named}.",
    quote: "«{w}»",
    sep: ", ",
    or: " o ",
    closest: "Le pagine più vicine, nel caso possano aiutare:",
    read_more: "Per saperne di più:",
};

const NL: Words = Words {
    lang: "nl",
    from_the_knowledge_base: "Uit de kennisbank:",
    no_page: "De kennisbank lijkt deze vraag niet te beantwoorden; ik heb er geen pagina over gevonden.",
    no_page_mentions: "De kennisbank lijkt deze vraag niet te beantwoorden: geen enkele pagina noemt {named}.",
    quote: "\u{2018}{w}\u{2019}",
    sep: ", ",
    or: " of ",
    closest: "De dichtstbijzijnde pagina’s, voor het geval ze helpen:",
    read_more: "Lees verder:",
};

const KO: Words = Words {
    lang: "ko",
    from_the_knowledge_base: "지식 베이스에서 찾은 내용:",
    no_page: "지식 베이스에는 이 질문에 대한 답이 없는 것 같습니다. 관련 페이지를 찾지 못했습니다.",
    no_page_mentions: "지식 베이스에는 이 질문에 대한 답이 없는 것 같습니다. {named}에 대해 언급한 페이지가 없습니다.",
    quote: "\u{2018}{w}\u{2019}",
    sep: ", ",
    or: " 또는 ",
    closest: "참고로, 가장 관련성이 높은 페이지:",
    read_more: "자세히 알아보기:",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_takes_its_languages_words_or_english() {
        let of = |t: &str| words(LangTag::parse(t)).lang;
        assert_eq!((of("de"), of("de-AT"), of("zh-cn"), of("pt_BR")), ("de", "de", "zh", "pt"));
        assert_eq!((of("ko"), of("ko-KR")), ("ko", "ko"));
        for other in ["ru", "zh-tw", "zh-Hant", "x"] {
            assert_eq!(of(other), "en", "{other}");
        }
        assert_eq!(words(None).lang, "en");
        assert_eq!(words(LangTag::parse("de")).named(&["Apfelstrudel", "backen"]), "„Apfelstrudel“ oder „backen“");
        assert_eq!(words(None).named(&["a", "b", "c"]), "“a”, “b” or “c”");
        assert_eq!(words(LangTag::parse("ja")).named(&["x"]), "「x」");
    }

    /// Every table says every thing, in its own words, with its placeholders.
    #[test]
    fn every_language_is_translated() {
        for w in ALL {
            assert!(w.no_page_mentions.contains("{named}") && w.quote.contains("{w}"), "{}", w.lang);
            if w.lang != "en" {
                for (mine, english) in [
                    (w.from_the_knowledge_base, EN.from_the_knowledge_base),
                    (w.no_page, EN.no_page),
                    (w.no_page_mentions, EN.no_page_mentions),
                    (w.closest, EN.closest),
                    (w.read_more, EN.read_more),
                ] {
                    assert_ne!(mine, english, "{}", w.lang);
                }
            }
        }
    }
}
