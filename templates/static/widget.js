/*! Help-center chat widget. Plain JS, no dependencies. Embed:
 * <script src="https://kb.example.edu/widget.js" data-endpoint="https://kb.example.edu/api/chat" defer></script>
 * Options: data-title, data-greeting, data-accent, data-position (right|left), data-lang.
 * Its words follow the page: data-lang on this script if given, else <html lang>
 * (en, de, fr, es, fi, sv, ja, zh (Simplified), pt, it, nl, ko; English for any other);
 * data-title and data-greeting are the embedding site's own words and win.
 * On a phone the launcher is a round button (its label stays its accessible name),
 * so it covers as little of the page as it can.
 * API: window.kbWidget.open() / .close() / .ask(text) / .mode ('chat', 'search' or '' until known)
 * / .probe() (a promise of the mode, asking /api/health once if not known yet: the
 * site's page.js shows "Was this helpful?" only for 'chat').
 * On a site with no /api (a static host: /api/health answers 404 or a page) it is
 * a search helper: it says so, and answers with the help pages the site's
 * browser engine finds. A 429 says when to ask again (Retry-After); an outage
 * says the assistant is away and offers the matching pages.
 * Server text becomes text nodes only. */
(function () {
  'use strict';
  // `=== true`: a page element with id="__kbWidget" would make the global truthy (DOM clobbering).
  if (window.__kbWidget === true) return;
  window.__kbWidget = true;

  const script = document.currentScript || document.querySelector('script[data-endpoint][src*="widget"]');
  const attr = (n, d) => (script && script.getAttribute('data-' + n)) || d;
  let endpoint;
  try { endpoint = new URL(attr('endpoint', '/api/chat'), (script && script.src) || location.href); } catch (e) { return; }
  const feedbackUrl = new URL(endpoint.href);
  feedbackUrl.pathname = feedbackUrl.pathname.replace(/\/chat\/?$/, '') + '/feedback';
  const healthUrl = new URL(endpoint.href);
  healthUrl.pathname = healthUrl.pathname.replace(/\/chat\/?$/, '') + '/health';
  const base = endpoint.origin + '/';

  // ---- Words, in the reader's language. The same languages as the site's own
  // string table (site-builder's i18n module, whose test keeps the two lists
  // equal); here because sites embed this one file without the site's pages.
  const LABELS = {
    en: {
      title: "Ask the help center",
      greeting: "Hi! Ask me anything about our help pages. I answer from the knowledge base and cite my sources.",
      searchGreeting: "Hi! Ask a question and I will find the help pages that answer it.",
      subChat: "Cited answers from our help pages",
      subSearch: "Finds the help pages for your question",
      footChat: "Answers come from the help center and may be incomplete. Check the linked pages.",
      footSearch: "Pages found by the help center’s search. Open them for the full answer.",
      conversation: "Conversation",
      placeholder: "Ask a question…",
      send: "Send",
      stop: "Stop answering",
      newChat: "New conversation",
      close: "Close chat",
      question: "Your question",
      you: "You: ",
      assistant: "Assistant: ",
      looking: "Looking through the help pages",
      searched: "Searched: {q}",
      sources: "Sources",
      source: "Source",
      sourceN: "Source {n}: {title}",
      copy: "Copy",
      copied: "Copied",
      copyFailed: "Copy failed",
      helpful: "Helpful",
      notHelpful: "Not helpful",
      missing: "What was missing or wrong? (optional)",
      thanks: "Thanks for the feedback",
      noted: "Noted. What was missing? Tell us below, or leave it at that.",
      sending: "Sending…",
      cannotRate: "This answer can no longer be rated.",
      feedbackOff: "Feedback is not available right now.",
      feedbackFailed: "Could not send feedback ({status}).",
      feedbackNetwork: "Could not send feedback.",
      extractive: "Extractive answer",
      quotedNoModel: "Quoted from the sources; no language model is configured",
      quotedModelDown: "Quoted from the sources; the language model was unavailable",
      degraded: "Model unavailable",
      degradedTip: "The language model failed; this answer is quoted from the search results.",
      notInKb: "Not in the knowledge base",
      noAnswer: "No answer was returned.",
      problem: "The assistant had a problem: {message}; answering from the search results instead.",
      retry: "Retry",
      stopped: "Stopped.",
      httpError: "The help center could not answer ({status}).",
      httpErrorMsg: "The help center could not answer ({status}): {message}",
      cut: "The answer was cut off. Please try again.",
      unreachable: "Could not reach the help center. Check your connection and try again.",
      away: "The assistant is not reachable right now. These help pages match your question:",
      askLater: "Ask again when the assistant is back.",
      busy: "Many questions are being asked from your network just now, so the assistant is pausing.",
      gap: " ",
      waitOne: "You can ask again in {n} second.",
      waitMany: "You can ask again in {n} seconds.",
      askNow: "You can ask again now.",
      matching: "These help pages match your question:",
      noMatch: "No help page matches your question. Try other words, or ",
      browseKb: "browse the help center",
      noMatchEnd: "."
    },
    de: {
      title: "Hilfe-Center fragen",
      greeting: "Hallo! Fragen Sie mich alles zu unseren Hilfeseiten. Ich antworte aus der Wissensdatenbank und nenne meine Quellen.",
      searchGreeting: "Hallo! Stellen Sie eine Frage, und ich finde die Hilfeseiten, die sie beantworten.",
      subChat: "Antworten aus unseren Hilfeseiten, mit Quellen",
      subSearch: "Findet die Hilfeseiten zu Ihrer Frage",
      footChat: "Die Antworten stammen aus dem Hilfe-Center und können unvollständig sein. Prüfen Sie die verlinkten Seiten.",
      footSearch: "Seiten, die die Suche des Hilfe-Centers gefunden hat. Öffnen Sie sie für die vollständige Antwort.",
      conversation: "Unterhaltung",
      placeholder: "Stellen Sie eine Frage…",
      send: "Senden",
      stop: "Antwort abbrechen",
      newChat: "Neue Unterhaltung",
      close: "Chat schließen",
      question: "Ihre Frage",
      you: "Sie: ",
      assistant: "Assistent: ",
      looking: "Durchsucht die Hilfeseiten",
      searched: "Gesucht: {q}",
      sources: "Quellen",
      source: "Quelle",
      sourceN: "Quelle {n}: {title}",
      copy: "Kopieren",
      copied: "Kopiert",
      copyFailed: "Kopieren fehlgeschlagen",
      helpful: "Hilfreich",
      notHelpful: "Nicht hilfreich",
      missing: "Was hat gefehlt oder war falsch? (optional)",
      thanks: "Danke für Ihr Feedback",
      noted: "Notiert. Was hat gefehlt? Schreiben Sie es unten, oder belassen Sie es dabei.",
      sending: "Wird gesendet…",
      cannotRate: "Diese Antwort kann nicht mehr bewertet werden.",
      feedbackOff: "Feedback ist gerade nicht möglich.",
      feedbackFailed: "Feedback konnte nicht gesendet werden ({status}).",
      feedbackNetwork: "Feedback konnte nicht gesendet werden.",
      extractive: "Zitierte Antwort",
      quotedNoModel: "Aus den Quellen zitiert; kein Sprachmodell eingerichtet",
      quotedModelDown: "Aus den Quellen zitiert; das Sprachmodell war nicht verfügbar",
      degraded: "Modell nicht verfügbar",
      degradedTip: "Das Sprachmodell ist ausgefallen; diese Antwort ist aus den Suchergebnissen zitiert.",
      notInKb: "Nicht in der Wissensdatenbank",
      noAnswer: "Es kam keine Antwort.",
      problem: "Der Assistent hatte ein Problem: {message}; die Antwort kommt stattdessen aus den Suchergebnissen.",
      retry: "Erneut versuchen",
      stopped: "Abgebrochen.",
      httpError: "Das Hilfe-Center konnte nicht antworten ({status}).",
      httpErrorMsg: "Das Hilfe-Center konnte nicht antworten ({status}): {message}",
      cut: "Die Antwort brach ab. Bitte versuchen Sie es erneut.",
      unreachable: "Das Hilfe-Center ist nicht erreichbar. Prüfen Sie Ihre Verbindung und versuchen Sie es erneut.",
      away: "Der Assistent ist gerade nicht erreichbar. Diese Hilfeseiten passen zu Ihrer Frage:",
      askLater: "Fragen Sie erneut, wenn der Assistent wieder da ist.",
      busy: "Aus Ihrem Netzwerk kommen gerade viele Fragen, daher pausiert der Assistent.",
      gap: " ",
      waitOne: "Sie können in {n} Sekunde erneut fragen.",
      waitMany: "Sie können in {n} Sekunden erneut fragen.",
      askNow: "Sie können jetzt erneut fragen.",
      matching: "Diese Hilfeseiten passen zu Ihrer Frage:",
      noMatch: "Keine Hilfeseite passt zu Ihrer Frage. Versuchen Sie andere Wörter, oder ",
      browseKb: "stöbern Sie im Hilfe-Center",
      noMatchEnd: "."
    },
    fr: {
      title: "Demander au centre d’aide",
      greeting: "Bonjour\u00a0! Posez-moi vos questions sur nos pages d’aide. Je réponds à partir de la base de connaissances et je cite mes sources.",
      searchGreeting: "Bonjour\u00a0! Posez une question et je trouverai les pages d’aide qui y répondent.",
      subChat: "Des réponses sourcées tirées de nos pages d’aide",
      subSearch: "Trouve les pages d’aide qui répondent à votre question",
      footChat: "Les réponses proviennent du centre d’aide et peuvent être incomplètes. Consultez les pages citées.",
      footSearch: "Pages trouvées par la recherche du centre d’aide. Ouvrez-les pour la réponse complète.",
      conversation: "Conversation",
      placeholder: "Posez une question…",
      send: "Envoyer",
      stop: "Arrêter la réponse",
      newChat: "Nouvelle conversation",
      close: "Fermer le chat",
      question: "Votre question",
      you: "Vous\u00a0: ",
      assistant: "Assistant\u00a0: ",
      looking: "Recherche dans les pages d’aide",
      searched: "Recherché\u00a0: {q}",
      sources: "Sources",
      source: "Source",
      sourceN: "Source {n}\u00a0: {title}",
      copy: "Copier",
      copied: "Copié",
      copyFailed: "Échec de la copie",
      helpful: "Utile",
      notHelpful: "Pas utile",
      missing: "Qu’est-ce qui manquait ou était inexact\u00a0? (facultatif)",
      thanks: "Merci pour votre avis",
      noted: "C’est noté. Que manquait-il\u00a0? Dites-le ci-dessous, ou restez-en là.",
      sending: "Envoi…",
      cannotRate: "Cette réponse ne peut plus être évaluée.",
      feedbackOff: "Les avis ne sont pas disponibles pour le moment.",
      feedbackFailed: "Impossible d’envoyer votre avis ({status}).",
      feedbackNetwork: "Impossible d’envoyer votre avis.",
      extractive: "Réponse extraite",
      quotedNoModel: "Citée des sources\u00a0; aucun modèle de langage n’est configuré",
      quotedModelDown: "Citée des sources\u00a0; le modèle de langage était indisponible",
      degraded: "Modèle indisponible",
      degradedTip: "Le modèle de langage a échoué\u00a0; cette réponse est citée des résultats de recherche.",
      notInKb: "Absent de la base de connaissances",
      noAnswer: "Aucune réponse n’a été renvoyée.",
      problem: "L’assistant a rencontré un problème\u00a0: {message}\u00a0; réponse tirée des résultats de recherche à la place.",
      retry: "Réessayer",
      stopped: "Arrêté.",
      httpError: "Le centre d’aide n’a pas pu répondre ({status}).",
      httpErrorMsg: "Le centre d’aide n’a pas pu répondre ({status})\u00a0: {message}",
      cut: "La réponse a été interrompue. Veuillez réessayer.",
      unreachable: "Impossible de joindre le centre d’aide. Vérifiez votre connexion et réessayez.",
      away: "L’assistant est injoignable pour le moment. Ces pages d’aide correspondent à votre question\u00a0:",
      askLater: "Reposez votre question quand l’assistant sera de retour.",
      busy: "Beaucoup de questions arrivent de votre réseau en ce moment\u00a0; l’assistant fait donc une pause.",
      gap: " ",
      waitOne: "Vous pourrez reposer une question dans {n} seconde.",
      waitMany: "Vous pourrez reposer une question dans {n} secondes.",
      askNow: "Vous pouvez reposer une question maintenant.",
      matching: "Ces pages d’aide correspondent à votre question\u00a0:",
      noMatch: "Aucune page d’aide ne correspond à votre question. Essayez d’autres mots, ou ",
      browseKb: "parcourez le centre d’aide",
      noMatchEnd: "."
    },
    es: {
      title: "Preguntar al centro de ayuda",
      greeting: "¡Hola! Pregúnteme lo que quiera sobre nuestras páginas de ayuda. Respondo a partir de la base de conocimientos y cito mis fuentes.",
      searchGreeting: "¡Hola! Haga una pregunta y encontraré las páginas de ayuda que la responden.",
      subChat: "Respuestas con fuentes de nuestras páginas de ayuda",
      subSearch: "Encuentra las páginas de ayuda para su pregunta",
      footChat: "Las respuestas proceden del centro de ayuda y pueden estar incompletas. Consulte las páginas enlazadas.",
      footSearch: "Páginas encontradas por la búsqueda del centro de ayuda. Ábralas para ver la respuesta completa.",
      conversation: "Conversación",
      placeholder: "Haga una pregunta…",
      send: "Enviar",
      stop: "Detener la respuesta",
      newChat: "Nueva conversación",
      close: "Cerrar el chat",
      question: "Su pregunta",
      you: "Usted: ",
      assistant: "Asistente: ",
      looking: "Buscando en las páginas de ayuda",
      searched: "Búsqueda: {q}",
      sources: "Fuentes",
      source: "Fuente",
      sourceN: "Fuente {n}: {title}",
      copy: "Copiar",
      copied: "Copiado",
      copyFailed: "No se pudo copiar",
      helpful: "Útil",
      notHelpful: "No es útil",
      missing: "¿Qué faltaba o qué estaba mal? (opcional)",
      thanks: "Gracias por sus comentarios",
      noted: "Anotado. ¿Qué faltaba? Cuéntenoslo abajo, o déjelo así.",
      sending: "Enviando…",
      cannotRate: "Esta respuesta ya no se puede valorar.",
      feedbackOff: "Los comentarios no están disponibles en este momento.",
      feedbackFailed: "No se pudieron enviar los comentarios ({status}).",
      feedbackNetwork: "No se pudieron enviar los comentarios.",
      extractive: "Respuesta extraída",
      quotedNoModel: "Citada de las fuentes; no hay ningún modelo de lenguaje configurado",
      quotedModelDown: "Citada de las fuentes; el modelo de lenguaje no estaba disponible",
      degraded: "Modelo no disponible",
      degradedTip: "El modelo de lenguaje falló; esta respuesta se cita de los resultados de búsqueda.",
      notInKb: "No está en la base de conocimientos",
      noAnswer: "No se recibió ninguna respuesta.",
      problem: "El asistente tuvo un problema: {message}; se responde con los resultados de búsqueda.",
      retry: "Reintentar",
      stopped: "Detenido.",
      httpError: "El centro de ayuda no pudo responder ({status}).",
      httpErrorMsg: "El centro de ayuda no pudo responder ({status}): {message}",
      cut: "La respuesta se cortó. Inténtelo de nuevo.",
      unreachable: "No se pudo contactar con el centro de ayuda. Compruebe su conexión e inténtelo de nuevo.",
      away: "El asistente no está disponible en este momento. Estas páginas de ayuda responden a su pregunta:",
      askLater: "Vuelva a preguntar cuando el asistente esté disponible.",
      busy: "Se están haciendo muchas preguntas desde su red en este momento, así que el asistente hace una pausa.",
      gap: " ",
      waitOne: "Podrá volver a preguntar en {n} segundo.",
      waitMany: "Podrá volver a preguntar en {n} segundos.",
      askNow: "Ya puede volver a preguntar.",
      matching: "Estas páginas de ayuda responden a su pregunta:",
      noMatch: "Ninguna página de ayuda responde a su pregunta. Pruebe con otras palabras o ",
      browseKb: "explore el centro de ayuda",
      noMatchEnd: "."
    },
    fi: {
      title: "Kysy ohjekeskukselta",
      greeting: "Hei! Kysy mitä tahansa ohjesivuistamme. Vastaan tietokannan pohjalta ja kerron lähteeni.",
      searchGreeting: "Hei! Kysy jotain, niin etsin ohjesivut, joilla on vastaus.",
      subChat: "Vastauksia ohjesivuiltamme lähteineen",
      subSearch: "Etsii kysymykseesi sopivat ohjesivut",
      footChat: "Vastaukset tulevat ohjekeskuksesta ja voivat olla puutteellisia. Tarkista linkitetyt sivut.",
      footSearch: "Ohjekeskuksen haun löytämät sivut. Avaa ne nähdäksesi koko vastauksen.",
      conversation: "Keskustelu",
      placeholder: "Kysy jotain…",
      send: "Lähetä",
      stop: "Lopeta vastaus",
      newChat: "Uusi keskustelu",
      close: "Sulje keskustelu",
      question: "Kysymyksesi",
      you: "Sinä: ",
      assistant: "Avustaja: ",
      looking: "Käydään läpi ohjesivuja",
      searched: "Haettu: {q}",
      sources: "Lähteet",
      source: "Lähde",
      sourceN: "Lähde {n}: {title}",
      copy: "Kopioi",
      copied: "Kopioitu",
      copyFailed: "Kopiointi epäonnistui",
      helpful: "Hyödyllinen",
      notHelpful: "Ei hyödyllinen",
      missing: "Mitä puuttui tai mikä oli väärin? (valinnainen)",
      thanks: "Kiitos palautteesta",
      noted: "Kirjattu. Mitä puuttui? Kerro alla, tai jätä tähän.",
      sending: "Lähetetään…",
      cannotRate: "Tätä vastausta ei voi enää arvioida.",
      feedbackOff: "Palautetta ei voi antaa juuri nyt.",
      feedbackFailed: "Palautetta ei voitu lähettää ({status}).",
      feedbackNetwork: "Palautetta ei voitu lähettää.",
      extractive: "Lainattu vastaus",
      quotedNoModel: "Lainattu lähteistä; kielimallia ei ole määritetty",
      quotedModelDown: "Lainattu lähteistä; kielimalli ei ollut käytettävissä",
      degraded: "Malli ei käytettävissä",
      degradedTip: "Kielimalli epäonnistui; tämä vastaus on lainattu hakutuloksista.",
      notInKb: "Ei tietokannassa",
      noAnswer: "Vastausta ei tullut.",
      problem: "Avustajalla oli ongelma: {message}; vastataan sen sijaan hakutulosten pohjalta.",
      retry: "Yritä uudelleen",
      stopped: "Keskeytetty.",
      httpError: "Ohjekeskus ei voinut vastata ({status}).",
      httpErrorMsg: "Ohjekeskus ei voinut vastata ({status}): {message}",
      cut: "Vastaus katkesi. Yritä uudelleen.",
      unreachable: "Ohjekeskukseen ei saatu yhteyttä. Tarkista yhteytesi ja yritä uudelleen.",
      away: "Avustaja ei ole juuri nyt tavoitettavissa. Nämä ohjesivut vastaavat kysymykseesi:",
      askLater: "Kysy uudelleen, kun avustaja on taas käytettävissä.",
      busy: "Verkostasi kysytään juuri nyt paljon, joten avustaja pitää tauon.",
      gap: " ",
      waitOne: "Voit kysyä uudelleen {n} sekunnin kuluttua.",
      waitMany: "Voit kysyä uudelleen {n} sekunnin kuluttua.",
      askNow: "Voit kysyä uudelleen nyt.",
      matching: "Nämä ohjesivut vastaavat kysymykseesi:",
      noMatch: "Mikään ohjesivu ei vastaa kysymykseesi. Kokeile muita sanoja tai ",
      browseKb: "selaa ohjekeskusta",
      noMatchEnd: "."
    },
    sv: {
      title: "Fråga hjälpcentret",
      greeting: "Hej! Fråga mig vad du vill om våra hjälpsidor. Jag svarar utifrån kunskapsbasen och anger mina källor.",
      searchGreeting: "Hej! Ställ en fråga så hittar jag hjälpsidorna som besvarar den.",
      subChat: "Svar med källor från våra hjälpsidor",
      subSearch: "Hittar hjälpsidorna för din fråga",
      footChat: "Svaren kommer från hjälpcentret och kan vara ofullständiga. Kontrollera de länkade sidorna.",
      footSearch: "Sidor som hjälpcentrets sökning hittade. Öppna dem för hela svaret.",
      conversation: "Konversation",
      placeholder: "Ställ en fråga…",
      send: "Skicka",
      stop: "Sluta svara",
      newChat: "Ny konversation",
      close: "Stäng chatten",
      question: "Din fråga",
      you: "Du: ",
      assistant: "Assistent: ",
      looking: "Går igenom hjälpsidorna",
      searched: "Sökte: {q}",
      sources: "Källor",
      source: "Källa",
      sourceN: "Källa {n}: {title}",
      copy: "Kopiera",
      copied: "Kopierat",
      copyFailed: "Kopieringen misslyckades",
      helpful: "Till hjälp",
      notHelpful: "Inte till hjälp",
      missing: "Vad saknades eller var fel? (valfritt)",
      thanks: "Tack för din feedback",
      noted: "Noterat. Vad saknades? Berätta nedan, eller låt det vara.",
      sending: "Skickar…",
      cannotRate: "Det här svaret kan inte längre betygsättas.",
      feedbackOff: "Feedback är inte tillgänglig just nu.",
      feedbackFailed: "Det gick inte att skicka feedback ({status}).",
      feedbackNetwork: "Det gick inte att skicka feedback.",
      extractive: "Citerat svar",
      quotedNoModel: "Citerat ur källorna; ingen språkmodell är konfigurerad",
      quotedModelDown: "Citerat ur källorna; språkmodellen var inte tillgänglig",
      degraded: "Modellen är inte tillgänglig",
      degradedTip: "Språkmodellen misslyckades; svaret är citerat ur sökresultaten.",
      notInKb: "Finns inte i kunskapsbasen",
      noAnswer: "Inget svar kom.",
      problem: "Assistenten fick ett problem: {message}; svarar utifrån sökresultaten i stället.",
      retry: "Försök igen",
      stopped: "Avbrutet.",
      httpError: "Hjälpcentret kunde inte svara ({status}).",
      httpErrorMsg: "Hjälpcentret kunde inte svara ({status}): {message}",
      cut: "Svaret avbröts. Försök igen.",
      unreachable: "Det gick inte att nå hjälpcentret. Kontrollera din anslutning och försök igen.",
      away: "Assistenten går inte att nå just nu. De här hjälpsidorna passar din fråga:",
      askLater: "Fråga igen när assistenten är tillbaka.",
      busy: "Många frågor ställs från ditt nätverk just nu, så assistenten pausar.",
      gap: " ",
      waitOne: "Du kan fråga igen om {n} sekund.",
      waitMany: "Du kan fråga igen om {n} sekunder.",
      askNow: "Du kan fråga igen nu.",
      matching: "De här hjälpsidorna passar din fråga:",
      noMatch: "Ingen hjälpsida passar din fråga. Prova andra ord, eller ",
      browseKb: "bläddra i hjälpcentret",
      noMatchEnd: "."
    },
    ja: {
      title: "ヘルプセンターに質問",
      greeting: "こんにちは。ヘルプページについて何でも質問してください。ナレッジベースをもとに、出典を示して回答します。",
      searchGreeting: "こんにちは。質問を入力すると、答えが載っているヘルプページを探します。",
      subChat: "ヘルプページをもとにした出典付きの回答",
      subSearch: "質問に合うヘルプページを探します",
      footChat: "回答はヘルプセンターの内容にもとづくもので、不完全な場合があります。リンク先のページをご確認ください。",
      footSearch: "ヘルプセンターの検索で見つかったページです。詳しくは各ページを開いてください。",
      conversation: "会話",
      placeholder: "質問を入力…",
      send: "送信",
      stop: "回答を停止",
      newChat: "新しい会話",
      close: "チャットを閉じる",
      question: "質問",
      you: "あなた: ",
      assistant: "アシスタント: ",
      looking: "ヘルプページを確認しています",
      searched: "検索: {q}",
      sources: "出典",
      source: "出典",
      sourceN: "出典 {n}: {title}",
      copy: "コピー",
      copied: "コピーしました",
      copyFailed: "コピーできませんでした",
      helpful: "役に立った",
      notHelpful: "役に立たなかった",
      missing: "足りなかった点や誤りは何ですか？（任意）",
      thanks: "フィードバックをありがとうございます",
      noted: "承知しました。何が足りませんでしたか？ 下に書いていただくか、このままでも構いません。",
      sending: "送信中…",
      cannotRate: "この回答はもう評価できません。",
      feedbackOff: "現在フィードバックは利用できません。",
      feedbackFailed: "フィードバックを送信できませんでした（{status}）。",
      feedbackNetwork: "フィードバックを送信できませんでした。",
      extractive: "引用による回答",
      quotedNoModel: "出典からの引用です。言語モデルが設定されていません",
      quotedModelDown: "出典からの引用です。言語モデルを利用できませんでした",
      degraded: "モデル利用不可",
      degradedTip: "言語モデルでエラーが発生したため、この回答は検索結果からの引用です。",
      notInKb: "ナレッジベースにありません",
      noAnswer: "回答がありませんでした。",
      problem: "アシスタントで問題が発生しました: {message}。代わりに検索結果から回答します。",
      retry: "再試行",
      stopped: "停止しました。",
      httpError: "ヘルプセンターが回答できませんでした（{status}）。",
      httpErrorMsg: "ヘルプセンターが回答できませんでした（{status}）: {message}",
      cut: "回答が途中で切れました。もう一度お試しください。",
      unreachable: "ヘルプセンターに接続できませんでした。接続を確認して、もう一度お試しください。",
      away: "現在アシスタントに接続できません。質問に合うヘルプページはこちらです:",
      askLater: "アシスタントが復旧したら、もう一度質問してください。",
      busy: "お使いのネットワークから多くの質問が寄せられているため、アシスタントは一時停止しています。",
      gap: "",
      waitOne: "{n} 秒後にもう一度質問できます。",
      waitMany: "{n} 秒後にもう一度質問できます。",
      askNow: "もう一度質問できます。",
      matching: "質問に合うヘルプページはこちらです:",
      noMatch: "質問に合うヘルプページが見つかりません。別の言葉で試すか、",
      browseKb: "ヘルプセンターの一覧",
      noMatchEnd: "をご覧ください。"
    },
    zh: {
      title: "向帮助中心提问",
      greeting: "您好！关于我们的帮助页面，有什么问题都可以问我。我根据知识库回答，并注明出处。",
      searchGreeting: "您好！请提出问题，我会找到能解答它的帮助页面。",
      subChat: "基于帮助页面、注明出处的解答",
      subSearch: "为您的问题查找帮助页面",
      footChat: "回答来自帮助中心，可能不完整。请查看所链接的页面。",
      footSearch: "帮助中心搜索找到的页面。打开页面查看完整解答。",
      conversation: "对话",
      placeholder: "请输入问题…",
      send: "发送",
      stop: "停止回答",
      newChat: "新对话",
      close: "关闭聊天",
      question: "您的问题",
      you: "您：",
      assistant: "助手：",
      looking: "正在查阅帮助页面",
      searched: "已搜索：{q}",
      sources: "来源",
      source: "来源",
      sourceN: "来源 {n}：{title}",
      copy: "复制",
      copied: "已复制",
      copyFailed: "复制失败",
      helpful: "有帮助",
      notHelpful: "没有帮助",
      missing: "缺少了什么，或者哪里有错？（可选）",
      thanks: "感谢您的反馈",
      noted: "已记录。缺少了什么？请在下方告诉我们，也可以就此结束。",
      sending: "正在发送…",
      cannotRate: "此回答已无法评价。",
      feedbackOff: "目前无法提交反馈。",
      feedbackFailed: "无法发送反馈（{status}）。",
      feedbackNetwork: "无法发送反馈。",
      extractive: "摘录式回答",
      quotedNoModel: "摘录自来源；未配置语言模型",
      quotedModelDown: "摘录自来源；语言模型不可用",
      degraded: "模型不可用",
      degradedTip: "语言模型出错；此回答摘录自搜索结果。",
      notInKb: "知识库中没有相关内容",
      noAnswer: "没有返回回答。",
      problem: "助手遇到问题：{message}；改为根据搜索结果回答。",
      retry: "重试",
      stopped: "已停止。",
      httpError: "帮助中心无法回答（{status}）。",
      httpErrorMsg: "帮助中心无法回答（{status}）：{message}",
      cut: "回答中断了。请重试。",
      unreachable: "无法连接帮助中心。请检查网络连接后重试。",
      away: "助手暂时无法访问。以下帮助页面与您的问题相关：",
      askLater: "助手恢复后请再次提问。",
      busy: "您所在的网络目前提问较多，助手暂停回答。",
      gap: "",
      waitOne: "{n} 秒后可以再次提问。",
      waitMany: "{n} 秒后可以再次提问。",
      askNow: "现在可以再次提问了。",
      matching: "以下帮助页面与您的问题相关：",
      noMatch: "没有与您的问题相关的帮助页面。请换个说法，或",
      browseKb: "浏览帮助中心",
      noMatchEnd: "。"
    },
    pt: {
      title: "Pergunte à central de ajuda",
      greeting: "Olá! Pergunte o que quiser sobre nossas páginas de ajuda. Respondo com base na base de conhecimento e cito minhas fontes.",
      searchGreeting: "Olá! Faça uma pergunta e eu encontro as páginas de ajuda que a respondem.",
      subChat: "Respostas com fontes das nossas páginas de ajuda",
      subSearch: "Encontra as páginas de ajuda para sua pergunta",
      footChat: "As respostas vêm da central de ajuda e podem estar incompletas. Confira as páginas indicadas.",
      footSearch: "Páginas encontradas pela pesquisa da central de ajuda. Abra-as para a resposta completa.",
      conversation: "Conversa",
      placeholder: "Faça uma pergunta…",
      send: "Enviar",
      stop: "Parar a resposta",
      newChat: "Nova conversa",
      close: "Fechar o chat",
      question: "Sua pergunta",
      you: "Você: ",
      assistant: "Assistente: ",
      looking: "Consultando as páginas de ajuda",
      searched: "Pesquisado: {q}",
      sources: "Fontes",
      source: "Fonte",
      sourceN: "Fonte {n}: {title}",
      copy: "Copiar",
      copied: "Copiado",
      copyFailed: "Falha ao copiar",
      helpful: "Útil",
      notHelpful: "Não foi útil",
      missing: "O que faltou ou estava errado? (opcional)",
      thanks: "Obrigado pelo comentário",
      noted: "Anotado. O que faltou? Conte abaixo, ou deixe assim.",
      sending: "Enviando…",
      cannotRate: "Esta resposta não pode mais ser avaliada.",
      feedbackOff: "Comentários não estão disponíveis no momento.",
      feedbackFailed: "Não foi possível enviar o comentário ({status}).",
      feedbackNetwork: "Não foi possível enviar o comentário.",
      extractive: "Resposta extraída",
      quotedNoModel: "Citada das fontes; nenhum modelo de linguagem está configurado",
      quotedModelDown: "Citada das fontes; o modelo de linguagem estava indisponível",
      degraded: "Modelo indisponível",
      degradedTip: "O modelo de linguagem falhou; esta resposta é citada dos resultados da pesquisa.",
      notInKb: "Não está na base de conhecimento",
      noAnswer: "Nenhuma resposta foi recebida.",
      problem: "O assistente teve um problema: {message}; respondendo com os resultados da pesquisa.",
      retry: "Tentar de novo",
      stopped: "Interrompido.",
      httpError: "A central de ajuda não conseguiu responder ({status}).",
      httpErrorMsg: "A central de ajuda não conseguiu responder ({status}): {message}",
      cut: "A resposta foi interrompida. Tente novamente.",
      unreachable: "Não foi possível acessar a central de ajuda. Verifique sua conexão e tente novamente.",
      away: "O assistente não está disponível agora. Estas páginas de ajuda correspondem à sua pergunta:",
      askLater: "Pergunte de novo quando o assistente voltar.",
      busy: "Muitas perguntas estão vindo da sua rede agora, então o assistente está em pausa.",
      gap: " ",
      waitOne: "Você pode perguntar de novo em {n} segundo.",
      waitMany: "Você pode perguntar de novo em {n} segundos.",
      askNow: "Você já pode perguntar de novo.",
      matching: "Estas páginas de ajuda correspondem à sua pergunta:",
      noMatch: "Nenhuma página de ajuda corresponde à sua pergunta. Tente outras palavras ou ",
      browseKb: "navegue pela central de ajuda",
      noMatchEnd: "."
    },
    it: {
      title: "Chiedi al centro assistenza",
      greeting: "Ciao! Chiedimi quello che vuoi sulle nostre pagine di aiuto. Rispondo in base alla knowledge base e cito le fonti.",
      searchGreeting: "Ciao! Fai una domanda e troverò le pagine di aiuto che rispondono.",
      subChat: "Risposte con fonti dalle nostre pagine di aiuto",
      subSearch: "Trova le pagine di aiuto per la tua domanda",
      footChat: "Le risposte provengono dal centro assistenza e potrebbero essere incomplete. Controlla le pagine collegate.",
      footSearch: "Pagine trovate dalla ricerca del centro assistenza. Aprile per la risposta completa.",
      conversation: "Conversazione",
      placeholder: "Fai una domanda…",
      send: "Invia",
      stop: "Interrompi la risposta",
      newChat: "Nuova conversazione",
      close: "Chiudi la chat",
      question: "La tua domanda",
      you: "Tu: ",
      assistant: "Assistente: ",
      looking: "Consultazione delle pagine di aiuto",
      searched: "Cercato: {q}",
      sources: "Fonti",
      source: "Fonte",
      sourceN: "Fonte {n}: {title}",
      copy: "Copia",
      copied: "Copiato",
      copyFailed: "Copia non riuscita",
      helpful: "Utile",
      notHelpful: "Non utile",
      missing: "Cosa mancava o era sbagliato? (facoltativo)",
      thanks: "Grazie per il feedback",
      noted: "Preso nota. Cosa mancava? Scrivilo qui sotto, oppure lascia così.",
      sending: "Invio…",
      cannotRate: "Questa risposta non può più essere valutata.",
      feedbackOff: "Il feedback non è disponibile al momento.",
      feedbackFailed: "Impossibile inviare il feedback ({status}).",
      feedbackNetwork: "Impossibile inviare il feedback.",
      extractive: "Risposta estratta",
      quotedNoModel: "Citata dalle fonti; nessun modello linguistico configurato",
      quotedModelDown: "Citata dalle fonti; il modello linguistico non era disponibile",
      degraded: "Modello non disponibile",
      degradedTip: "Il modello linguistico non ha funzionato; questa risposta è citata dai risultati di ricerca.",
      notInKb: "Non presente nella knowledge base",
      noAnswer: "Non è arrivata alcuna risposta.",
      problem: "L’assistente ha avuto un problema: {message}; rispondo invece con i risultati di ricerca.",
      retry: "Riprova",
      stopped: "Interrotto.",
      httpError: "Il centro assistenza non ha potuto rispondere ({status}).",
      httpErrorMsg: "Il centro assistenza non ha potuto rispondere ({status}): {message}",
      cut: "La risposta si è interrotta. Riprova.",
      unreachable: "Impossibile raggiungere il centro assistenza. Controlla la connessione e riprova.",
      away: "L’assistente non è raggiungibile in questo momento. Queste pagine di aiuto corrispondono alla tua domanda:",
      askLater: "Chiedi di nuovo quando l’assistente sarà tornato.",
      busy: "Dalla tua rete arrivano molte domande in questo momento, quindi l’assistente fa una pausa.",
      gap: " ",
      waitOne: "Potrai chiedere di nuovo tra {n} secondo.",
      waitMany: "Potrai chiedere di nuovo tra {n} secondi.",
      askNow: "Ora puoi chiedere di nuovo.",
      matching: "Queste pagine di aiuto corrispondono alla tua domanda:",
      noMatch: "Nessuna pagina di aiuto corrisponde alla tua domanda. Prova con altre parole, oppure ",
      browseKb: "sfoglia il centro assistenza",
      noMatchEnd: "."
    },
    nl: {
      title: "Vraag het helpcentrum",
      greeting: "Hallo! Vraag me alles over onze helppagina’s. Ik antwoord op basis van de kennisbank en noem mijn bronnen.",
      searchGreeting: "Hallo! Stel een vraag en ik zoek de helppagina’s die hem beantwoorden.",
      subChat: "Antwoorden met bronnen uit onze helppagina’s",
      subSearch: "Vindt de helppagina’s bij je vraag",
      footChat: "Antwoorden komen uit het helpcentrum en kunnen onvolledig zijn. Controleer de gelinkte pagina’s.",
      footSearch: "Pagina’s gevonden door de zoekfunctie van het helpcentrum. Open ze voor het volledige antwoord.",
      conversation: "Gesprek",
      placeholder: "Stel een vraag…",
      send: "Versturen",
      stop: "Stoppen met antwoorden",
      newChat: "Nieuw gesprek",
      close: "Chat sluiten",
      question: "Je vraag",
      you: "Jij: ",
      assistant: "Assistent: ",
      looking: "Helppagina’s doorzoeken",
      searched: "Gezocht: {q}",
      sources: "Bronnen",
      source: "Bron",
      sourceN: "Bron {n}: {title}",
      copy: "Kopiëren",
      copied: "Gekopieerd",
      copyFailed: "Kopiëren mislukt",
      helpful: "Nuttig",
      notHelpful: "Niet nuttig",
      missing: "Wat ontbrak er of wat klopte niet? (optioneel)",
      thanks: "Bedankt voor je feedback",
      noted: "Genoteerd. Wat ontbrak er? Vertel het hieronder, of laat het hierbij.",
      sending: "Versturen…",
      cannotRate: "Dit antwoord kan niet meer worden beoordeeld.",
      feedbackOff: "Feedback is op dit moment niet beschikbaar.",
      feedbackFailed: "Feedback kon niet worden verstuurd ({status}).",
      feedbackNetwork: "Feedback kon niet worden verstuurd.",
      extractive: "Geciteerd antwoord",
      quotedNoModel: "Geciteerd uit de bronnen; er is geen taalmodel ingesteld",
      quotedModelDown: "Geciteerd uit de bronnen; het taalmodel was niet beschikbaar",
      degraded: "Model niet beschikbaar",
      degradedTip: "Het taalmodel faalde; dit antwoord is geciteerd uit de zoekresultaten.",
      notInKb: "Niet in de kennisbank",
      noAnswer: "Er kwam geen antwoord.",
      problem: "De assistent had een probleem: {message}; het antwoord komt nu uit de zoekresultaten.",
      retry: "Opnieuw proberen",
      stopped: "Gestopt.",
      httpError: "Het helpcentrum kon niet antwoorden ({status}).",
      httpErrorMsg: "Het helpcentrum kon niet antwoorden ({status}): {message}",
      cut: "Het antwoord werd afgebroken. Probeer het opnieuw.",
      unreachable: "Het helpcentrum is niet bereikbaar. Controleer je verbinding en probeer het opnieuw.",
      away: "De assistent is nu niet bereikbaar. Deze helppagina’s passen bij je vraag:",
      askLater: "Vraag het opnieuw als de assistent terug is.",
      busy: "Er komen nu veel vragen vanaf je netwerk, dus de assistent pauzeert.",
      gap: " ",
      waitOne: "Je kunt over {n} seconde opnieuw vragen.",
      waitMany: "Je kunt over {n} seconden opnieuw vragen.",
      askNow: "Je kunt nu opnieuw vragen.",
      matching: "Deze helppagina’s passen bij je vraag:",
      noMatch: "Geen helppagina past bij je vraag. Probeer andere woorden, of ",
      browseKb: "blader door het helpcentrum",
      noMatchEnd: "."
    },
    ko: {
      title: "도움말 센터에 질문하기",
      greeting: "안녕하세요! 도움말 페이지에 관해 무엇이든 물어보세요. 지식 베이스를 바탕으로 출처와 함께 답변해 드립니다.",
      searchGreeting: "안녕하세요! 질문을 입력하시면 답이 담긴 도움말 페이지를 찾아 드립니다.",
      subChat: "도움말 페이지를 바탕으로 한 출처 포함 답변",
      subSearch: "질문에 맞는 도움말 페이지를 찾아 드립니다",
      footChat: "답변은 도움말 센터의 내용을 바탕으로 하며 불완전할 수 있습니다. 링크된 페이지를 확인하세요.",
      footSearch: "도움말 센터 검색으로 찾은 페이지입니다. 전체 답변은 각 페이지를 열어 확인하세요.",
      conversation: "대화",
      placeholder: "질문을 입력하세요…",
      send: "보내기",
      stop: "답변 중지",
      newChat: "새 대화",
      close: "채팅 닫기",
      question: "질문",
      you: "나: ",
      assistant: "어시스턴트: ",
      looking: "도움말 페이지를 살펴보는 중",
      searched: "검색: {q}",
      sources: "출처",
      source: "출처",
      sourceN: "출처 {n}: {title}",
      copy: "복사",
      copied: "복사됨",
      copyFailed: "복사 실패",
      helpful: "도움이 됨",
      notHelpful: "도움이 안 됨",
      missing: "부족하거나 잘못된 점은 무엇인가요? (선택 사항)",
      thanks: "피드백을 보내 주셔서 감사합니다",
      noted: "알겠습니다. 무엇이 부족했나요? 아래에 알려 주시거나 그대로 두셔도 됩니다.",
      sending: "보내는 중…",
      cannotRate: "이 답변은 더 이상 평가할 수 없습니다.",
      feedbackOff: "지금은 피드백을 보낼 수 없습니다.",
      feedbackFailed: "피드백을 보내지 못했습니다({status}).",
      feedbackNetwork: "피드백을 보내지 못했습니다.",
      extractive: "발췌 답변",
      quotedNoModel: "출처에서 인용한 답변입니다. 설정된 언어 모델이 없습니다",
      quotedModelDown: "출처에서 인용한 답변입니다. 언어 모델을 사용할 수 없었습니다",
      degraded: "모델 사용 불가",
      degradedTip: "언어 모델에 오류가 발생하여 이 답변은 검색 결과에서 인용했습니다.",
      notInKb: "지식 베이스에 없음",
      noAnswer: "답변을 받지 못했습니다.",
      problem: "어시스턴트에 문제가 발생했습니다: {message}. 대신 검색 결과를 바탕으로 답변합니다.",
      retry: "다시 시도",
      stopped: "중지되었습니다.",
      httpError: "도움말 센터가 답변하지 못했습니다({status}).",
      httpErrorMsg: "도움말 센터가 답변하지 못했습니다({status}): {message}",
      cut: "답변이 중간에 끊겼습니다. 다시 시도하세요.",
      unreachable: "도움말 센터에 연결할 수 없습니다. 네트워크 연결을 확인하고 다시 시도하세요.",
      away: "지금은 어시스턴트에 연결할 수 없습니다. 질문에 맞는 도움말 페이지는 다음과 같습니다:",
      askLater: "어시스턴트가 복구되면 다시 질문하세요.",
      busy: "지금 사용 중인 네트워크에서 질문이 많이 들어오고 있어 어시스턴트가 잠시 멈췄습니다.",
      gap: " ",
      waitOne: "{n}초 후에 다시 질문할 수 있습니다.",
      waitMany: "{n}초 후에 다시 질문할 수 있습니다.",
      askNow: "이제 다시 질문할 수 있습니다.",
      matching: "질문에 맞는 도움말 페이지는 다음과 같습니다:",
      noMatch: "질문에 맞는 도움말 페이지가 없습니다. 다른 단어로 시도하거나 ",
      browseKb: "도움말 센터를 둘러보세요",
      noMatchEnd: "."
    }
  };
  // A tag's table (`de-AT` → de), over English so a missing word is English;
  // Traditional Chinese reads English rather than Simplified.
  function labelsFor(tag) {
    const sub = String(tag || '').toLowerCase().replace(/_/g, '-').split('-');
    const traditional = sub[0] === 'zh' && sub.slice(1).some(s => ['hant', 'tw', 'hk', 'mo'].includes(s));
    const lang = !traditional && Object.prototype.hasOwnProperty.call(LABELS, sub[0]) ? sub[0] : 'en';
    return Object.assign({ lang }, LABELS.en, LABELS[lang]);
  }
  const L = labelsFor(attr('lang', '') || document.documentElement.getAttribute('lang'));
  // The reader's language, sent with each question (`lang`: the answer quotes
  // pages in it first) and used for the pages offered when the assistant is
  // away: on the site's own pages of a site in several languages (<html
  // data-languages>, as search.js reads it) the page's, and anywhere the
  // script's data-lang when the embedding page sets it; else none (the
  // question's words decide).
  const SITE_LANGS = (document.documentElement.getAttribute('data-languages') || '').split(/\s+/).filter(Boolean);
  const READER_LANG = (() => {
    const tag = String(attr('lang', '') || document.documentElement.getAttribute('lang') || '').toLowerCase();
    return (SITE_LANGS.length > 1 || attr('lang', '')) && /^[a-z0-9]([a-z0-9_-]{0,13}[a-z0-9])?$/.test(tag) ? tag : '';
  })();
  // A pattern's {name} filled from `values`.
  const fill = (pattern, values) => pattern.replace(/\{(\w+)\}/g, (m, k) => (Object.prototype.hasOwnProperty.call(values, k) ? String(values[k]) : m));

  const TITLE = attr('title', L.title);
  const GREETING = attr('greeting', L.greeting);
  const SEARCH_GREETING = attr('greeting', L.searchGreeting);
  const SUB_CHAT = L.subChat, SUB_SEARCH = L.subSearch;
  const FOOT_CHAT = L.footChat;
  const FOOT_SEARCH = L.footSearch;
  const KEY = 'kb-widget:' + endpoint.href;
  const MAX_TURNS = 20;

  const STYLES = `
:host{all:initial;--kb-accent:#1d4ed8;--kb-f:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",Arial,sans-serif;--kb-bg:#fff;--kb-s1:#f3f5f8;--kb-s2:#e6eaf0;--kb-bd:#dce2ea;--kb-tx:#172030;--kb-mu:#556071;--kb-ln:var(--kb-accent);--kb-ti:rgba(29,78,216,.1);--kb-wb:#fff7e3;--kb-wf:#784700;--kb-wd:#ebc36b;--kb-eb:#fdeeee;--kb-ef:#a3231b}
@supports (color:color-mix(in srgb,red,red)){:host{--kb-ti:color-mix(in srgb,var(--kb-accent) 11%,transparent)}}
@media (prefers-color-scheme:dark){:host{--kb-bg:#151a21;--kb-s1:#1f262f;--kb-s2:#2b333e;--kb-bd:#333c48;--kb-tx:#e8ecf1;--kb-mu:#a8b2bf;--kb-ln:#9fb9ff;--kb-ti:rgba(159,185,255,.14);--kb-wb:#2c2414;--kb-wf:#f5d08a;--kb-wd:#735a25;--kb-eb:#331b1d;--kb-ef:#ffaca5}
@supports (color:color-mix(in srgb,red,red)){:host{--kb-ln:color-mix(in srgb,var(--kb-accent) 38%,#fff);--kb-ti:color-mix(in srgb,var(--kb-ln) 15%,transparent)}}}
*{box-sizing:border-box}
[hidden]{display:none!important}
.kb-sr{position:absolute!important;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
svg{width:18px;height:18px;flex:none;fill:none;stroke:currentColor;stroke-width:2;stroke-linecap:round;stroke-linejoin:round}
button{font:inherit;color:inherit;margin:0;cursor:pointer;display:inline-flex;align-items:center;justify-content:center;gap:5px;border:0;background:none}
a{color:var(--kb-ln);text-underline-offset:2px}
:focus-visible{outline:2px solid var(--kb-ln);outline-offset:2px}
.kb-launcher{position:fixed;z-index:2147483000;right:20px;bottom:20px;gap:8px;max-width:calc(100vw - 40px);height:48px;padding:0 20px 0 16px;border-radius:24px;background:var(--kb-accent);color:#fff;font:600 15px var(--kb-f);box-shadow:0 8px 24px -6px rgba(16,24,40,.4)}
.kb-launcher:hover{filter:brightness(1.1)}
.kb-launcher svg{width:20px;height:20px}
.kb-launcher span{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.kb-launcher svg+svg,:host([data-open]) .kb-launcher>:not(svg+svg){display:none}
:host([data-open]) .kb-launcher{width:48px;padding:0}
:host([data-open]) .kb-launcher svg+svg{display:block}
:host([data-position=left]) .kb-launcher,:host([data-position=left]) .kb-panel{right:auto;left:20px}
.kb-panel{position:fixed;z-index:2147483001;right:20px;bottom:80px;display:flex;flex-direction:column;width:400px;max-width:calc(100vw - 40px);height:640px;max-height:calc(100vh - 100px);overflow:hidden;background:var(--kb-bg);color:var(--kb-tx);border:1px solid var(--kb-bd);border-radius:16px;box-shadow:0 24px 48px -12px rgba(16,24,40,.3);font:15px/1.5 var(--kb-f);color-scheme:light dark;animation:kb-in .18s ease-out}
@keyframes kb-in{from{opacity:0;transform:translateY(8px)}}
.kb-header{display:flex;align-items:center;gap:10px;padding:12px 10px 12px 16px;border-bottom:1px solid var(--kb-bd)}
.kb-avatar{display:grid;place-items:center;width:34px;height:34px;flex:none;border-radius:50%;background:var(--kb-accent);color:#fff}
.kb-heading{flex:1;min-width:0}
.kb-title{margin:0;font-size:15.5px;font-weight:650;line-height:1.3}
.kb-sub{margin:1px 0 0;font-size:12.5px;line-height:1.3;color:var(--kb-mu)}
.kb-title,.kb-sub{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.kb-ib,.kb-send,.kb-stop{width:36px;height:36px;flex:none;border-radius:10px;color:var(--kb-mu)}
.kb-ib:hover,.kb-act:hover{background:var(--kb-s1);color:var(--kb-tx)}
.kb-log{position:relative;flex:1;display:flex;flex-direction:column;gap:12px;padding:16px;overflow-y:auto;overscroll-behavior:contain}
.kb-msg{font-size:14.5px;line-height:1.55;overflow-wrap:anywhere}
.kb-user{align-self:flex-end;max-width:85%;padding:8px 13px;border-radius:16px 16px 4px;background:var(--kb-accent);color:#fff;white-space:pre-wrap}
.kb-assistant,.kb-greeting{align-self:flex-start;padding:12px 14px;border-radius:4px 16px 16px;background:var(--kb-s1)}
.kb-assistant{width:100%}
.kb-abstained{background:var(--kb-wb);box-shadow:inset 3px 0 0 var(--kb-wd)}
.kb-msg p{margin:0 0 8px}
.kb-msg ul,.kb-msg ol{margin:0 0 8px;padding-left:20px}
.kb-answer>:last-child,.kb-greeting>:last-child{margin-bottom:0}
.kb-answer li{margin:3px 0}
code{padding:1px 5px;border-radius:5px;background:var(--kb-s2);font:13px ui-monospace,Menlo,Consolas,monospace}
.kb-cite,.kb-n{display:inline-block;min-width:18px;height:18px;margin-left:3px;padding:0 5px;border-radius:9px;background:var(--kb-ti);font:600 11px/18px var(--kb-f);text-align:center;text-decoration:none;vertical-align:1px}
.kb-cite:hover{background:var(--kb-accent);color:#fff}
.kb-step,.kb-path,.kb-notice,.kb-sources-h,.kb-feedback-status,.kb-foot{font-size:12.5px;line-height:1.4;color:var(--kb-mu)}
.kb-step{display:flex;align-items:center;gap:6px;margin:0 0 8px!important}
.kb-step svg,.kb-label svg,.kb-notice svg{width:14px;height:14px}
.kb-step span{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.kb-label{display:inline-flex;align-items:center;gap:5px;padding:1px 9px;border:1px solid var(--kb-bd);border-radius:99px;background:var(--kb-bg);color:var(--kb-mu);font-size:12px;font-weight:600;line-height:20px;cursor:help}
.kb-label-abstained,.kb-label-degraded{border-color:var(--kb-wd);color:var(--kb-wf);cursor:default}
.kb-notice{display:flex;gap:6px;padding:6px 10px;border:1px dashed var(--kb-bd);border-radius:8px;background:var(--kb-bg)}
.kb-typing{display:flex;gap:4px;padding:7px 0}
.kb-typing span{width:7px;height:7px;border-radius:50%;background:var(--kb-mu);opacity:.35;animation:kb-dot 1.2s infinite}
.kb-typing span+span{animation-delay:.15s}
.kb-typing span+span+span{animation-delay:.3s}
@keyframes kb-dot{30%{opacity:1;transform:translateY(-3px)}}
.kb-sources{margin-top:12px;padding-top:10px;border-top:1px solid var(--kb-bd)}
.kb-sources-h{margin:0 0 6px!important;font-size:11.5px;font-weight:650;letter-spacing:.06em;text-transform:uppercase}
.kb-citations{display:grid;gap:8px;margin:0!important;padding:0!important;list-style:none}
.kb-citations a{display:flex;align-items:baseline;gap:6px;font-size:14px;font-weight:600;line-height:1.35;text-decoration:none}
.kb-citations a:hover span+span{text-decoration:underline}
.kb-n{margin:0;border-radius:6px}
.kb-path{margin:2px 0 0 24px;font-size:12px}
.kb-src-lang{color:var(--kb-mu);font-size:12px}
.kb-actions{display:flex;flex-wrap:wrap;align-items:center;gap:4px;margin-top:12px}
.kb-spacer{flex:1}
.kb-act{min-width:30px;height:30px;padding:0 7px;border:1px solid transparent;border-radius:8px;color:var(--kb-mu);font-size:12.5px}
.kb-act svg{width:16px;height:16px}
.kb-act[aria-pressed=true]{border-color:currentColor;background:var(--kb-ti);color:var(--kb-ln)}
.kb-feedback-status{display:block;margin-top:4px;text-align:right}
.kb-feedback-status:empty{display:none}
.kb-bad{color:var(--kb-ef)}
.kb-comment-box{display:flex;align-items:flex-end;gap:6px;margin-top:8px}
.kb-comment{flex:1;min-height:56px;padding:7px 9px;border:1px solid var(--kb-bd);border-radius:8px;background:var(--kb-bg);color:var(--kb-tx);font:13.5px/1.4 var(--kb-f);resize:vertical}
.kb-btn{flex:none;white-space:nowrap;height:32px;padding:0 12px;border-radius:8px;background:var(--kb-accent);color:#fff;font-size:13px;font-weight:600}
.kb-error{display:flex;align-items:center;justify-content:space-between;gap:10px;margin-top:8px;padding:9px 12px;border-radius:8px;background:var(--kb-eb);color:var(--kb-ef);font-size:13.5px}
.kb-error p{margin:0}
.kb-form{padding:10px 12px 6px;border-top:1px solid var(--kb-bd)}
.kb-field{display:flex;align-items:flex-end;gap:6px;padding:5px 5px 5px 12px;border:1px solid var(--kb-bd);border-radius:14px;background:var(--kb-bg)}
.kb-field:focus-within{border-color:var(--kb-ln);box-shadow:0 0 0 3px var(--kb-ti)}
.kb-input{flex:1;min-width:0;max-height:140px;padding:7px 0;border:0;outline:0!important;background:none;color:var(--kb-tx);font:15px/22px var(--kb-f);resize:none}
.kb-input::placeholder{color:var(--kb-mu)}
.kb-send{background:var(--kb-accent);color:#fff}
.kb-stop{background:var(--kb-s2);color:var(--kb-tx)}
.kb-stop svg{fill:currentColor}
.kb-send:disabled{opacity:.4}
.kb-foot{margin:0;padding:0 14px 10px;font-size:11.5px;text-align:center}
@media (max-width:480px){.kb-panel{inset:0!important;width:100%;max-width:none;height:100%;max-height:none;border:0;border-radius:0;animation:none}:host([data-open]) .kb-launcher{display:none}.kb-input{font-size:16px}.kb-launcher{width:52px;height:52px;padding:0;right:14px;bottom:14px;border-radius:26px}.kb-launcher span{display:none}}
@media (prefers-reduced-motion:reduce){*{animation:none!important}}
`;

  // ---- DOM helpers: all nodes are built here; text goes in as text
  function h(tag, props, kids) {
    const [name, cls] = tag.split('.'), el = document.createElement(name);
    if (cls) el.className = cls;
    if (name === 'button') el.type = 'button';
    for (const k in props) {
      const v = props[k];
      if (v == null || v === false) continue;
      if (k === 'text') el.textContent = v;
      else if (k.slice(0, 2) === 'on') el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : v);
    }
    for (const c of [].concat(kids == null ? [] : kids)) if (c != null) el.append(c);
    return el;
  }
  const ICONS = {
    chat: 'M7.9 20A9 9 0 1 0 4 16.1L2 22Z',
    x: 'M18 6 6 18M6 6l12 12',
    send: 'M12 19V5M5 12l7-7 7 7',
    stop: 'M7 7h10v10H7z',
    pen: 'M12 20h9M16.5 3.5a2.1 2.1 0 0 1 3 3L7 19l-4 1 1-4Z',
    search: 'M11 18a7 7 0 1 0 0-14 7 7 0 0 0 0 14zM20 20l-3.5-3.5',
    info: 'M12 22a10 10 0 1 0 0-20 10 10 0 0 0 0 20zM12 16v-4M12 8h0',
    copy: 'M9 9h11v11H9zM5 15H4V4h11v1',
    up: 'M7 10v10H3V10zM7 10l4-8c1.7 0 2.8 1.2 2.5 2.9L13 8h5.6a2 2 0 0 1 2 2.4l-1.5 7.9A2 2 0 0 1 17.1 20H7',
    down: 'M17 14V4h4v10zM17 14l-4 8c-1.7 0-2.8-1.2-2.5-2.9L11 16H5.4a2 2 0 0 1-2-2.4l1.5-7.9A2 2 0 0 1 6.9 4H17'
  };
  function icon(name) {
    const ns = 'http://www.w3.org/2000/svg', s = document.createElementNS(ns, 'svg'), p = document.createElementNS(ns, 'path');
    s.setAttribute('viewBox', '0 0 24 24');
    s.setAttribute('aria-hidden', 'true');
    p.setAttribute('d', ICONS[name]);
    s.append(p);
    return s;
  }
  const btn = (cls, label, ic, onclick) => h('button.' + cls, { 'aria-label': label, title: label, onclick }, icon(ic));
  // Links only for http(s) URLs, resolved against the knowledge base's origin: answer
  // text and citations come from an LLM and from pages many people edit, so a
  // javascript:, data: or vbscript: URL in them must never become a link. The URL
  // parser strips tabs, newlines and leading controls first, as navigation would.
  function safeUrl(u) {
    if (!u) return null;
    try {
      const x = new URL(String(u), base);
      return /^https?:$/.test(x.protocol) ? x.href : null;
    } catch (e) { return null; }
  }
  // Every link the widget makes goes through here, so none can skip safeUrl; an unsafe
  // URL leaves the words as plain text.
  function link(u, props, kids) {
    const href = safeUrl(u);
    if (!href) return h('span', Object.assign({}, props, { href: null, target: null, rel: null }), kids);
    return h('a', Object.assign({ href }, new URL(href).origin === location.origin ? {} : { target: '_blank', rel: 'noopener' }, props), kids);
  }

  // ---- A tiny Markdown subset: paragraphs, lists, **bold**, `code`, [n]
  function inline(parent, text, cites, inBold) {
    const re = /\*\*(.+?)\*\*|`([^`]+)`|\[(\d{1,3})\]|(https?:\/\/[^\s<>"'()[\]]*[^\s<>"'()[\].,;:!?])/g;
    let last = 0, m;
    while ((m = re.exec(text))) {
      const s = m[3] && cites.get(+m[3]), u = m[4] && safeUrl(m[4]), pre = text.slice(last, m.index);
      parent.append(s ? pre.replace(/ $/, '\u00a0') : pre); // keep a citation with the word before it
      if (m[1] && !inBold) inline(parent.appendChild(h('strong')), m[1], cites, true);
      else if (m[2]) parent.append(h('code', { text: m[2] }));
      else if (s && safeUrl(s.url)) {
        parent.append(link(safeUrl(s.url), { class: 'kb-cite', title: s.title, 'aria-label': fill(L.sourceN, { n: s.n, title: s.title }), text: s.n }));
      } else if (u) parent.append(link(u, { text: m[4] }));
      else parent.append(m[0]);
      last = re.lastIndex;
    }
    parent.append(text.slice(last));
  }
  function md(text, cites) {
    const frag = document.createDocumentFragment();
    let list = null, para = null, m;
    cites = cites || new Map();
    for (const raw of String(text).split('\n')) {
      const line = raw.trim();
      if (!line) list = para = null;
      else if ((m = /^[-*•]\s+(.*)/.exec(line) || /^(\d{1,3})[.)]\s+(.*)/.exec(line))) {
        const tag = m[2] == null ? 'UL' : 'OL';
        if (!list || list.tagName !== tag) list = frag.appendChild(h(tag, { start: tag === 'OL' && m[1] !== '1' && m[1] }));
        para = null;
        inline(list.appendChild(h('li')), m[2] == null ? m[1] : m[2], cites);
      } else if (list && /^\s\s/.test(raw)) inline(list.lastChild, ' ' + line, cites);
      else {
        if (para) para.append(h('br'));
        else { list = null; para = frag.appendChild(h('p')); }
        inline(para, line, cites);
      }
    }
    return frag;
  }
  const citeMap = list => new Map(list.filter(s => s && s.n != null).map(s => [+s.n, s]));

  // ---- A random id for this browser, the only thing the insights can count
  // visitors by (no cookie, no address): data-visitor="off" on the script sends none.
  function visitor() {
    if (script && script.dataset && script.dataset.visitor === 'off') return '';
    try {
      let v = localStorage.getItem('kb-visitor');
      if (!v || !/^[A-Za-z0-9-]{8,64}$/.test(v)) {
        const b = new Uint8Array(12);
        crypto.getRandomValues(b);
        v = 'v-' + Array.from(b, x => x.toString(16).padStart(2, '0')).join('');
        localStorage.setItem('kb-visitor', v);
      }
      return v;
    } catch (e) { return ''; }
  }

  // ---- Conversation, kept for the tab (last 20 turns)
  function load() {
    try {
      return JSON.parse(sessionStorage.getItem(KEY)).filter(x => typeof x.q === 'string' && typeof x.a.content === 'string' &&
        Array.isArray(x.a.citations) && Array.isArray(x.a.steps)).slice(-MAX_TURNS);
    } catch (e) { return []; }
  }
  function save() {
    try {
      sessionStorage.setItem(KEY, JSON.stringify(turns.filter(t => t.a).slice(-MAX_TURNS).map(t => ({ q: t.q, a: t.a }))));
    } catch (e) { /* blocked or full */ }
  }
  let turns = load(), busy = null, isOpen = false;

  // ---- Shell
  // The words' language, for screen readers: it may differ from the page's (data-lang).
  const host = h('div', { id: 'kb-widget-host', lang: L.lang, 'data-position': attr('position') === 'left' ? 'left' : 'right' });
  host.style.setProperty('all', 'initial'); // inline: beats page rules such as div{...}
  const accent = attr('accent');
  if (accent && window.CSS && CSS.supports('color', accent)) host.style.setProperty('--kb-accent', accent);
  const root = host.attachShadow({ mode: 'open' });
  try { // a constructed sheet is not blocked by the host page's style-src CSP
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(STYLES);
    root.adoptedStyleSheets = [sheet];
  } catch (e) { root.append(h('style', { text: STYLES })); }

  const launcher = h('button.kb-launcher', {
    'aria-label': TITLE, 'aria-expanded': 'false', 'aria-controls': 'kb-panel',
    onclick: () => (isOpen ? close() : open())
  }, [icon('chat'), icon('x'), h('span', { text: TITLE })]);
  const log = h('div.kb-log', { role: 'log', 'aria-live': 'polite', 'aria-label': L.conversation });
  const input = h('textarea.kb-input', { id: 'kb-input', rows: 1, maxlength: 4000, placeholder: L.placeholder });
  const send = h('button.kb-send', { 'aria-label': L.send, title: L.send, type: 'submit' }, icon('send'));
  const stop = btn('kb-stop', L.stop, 'stop', () => busy && busy.ctrl.abort());
  stop.hidden = true;
  const panel = h('div.kb-panel', { id: 'kb-panel', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'kb-title', hidden: true }, [
    h('div.kb-header', null, [
      h('span.kb-avatar', null, icon('chat')),
      h('div.kb-heading', null, [
        h('h2.kb-title', { id: 'kb-title', text: TITLE }),
        h('p.kb-sub', { text: SUB_CHAT })
      ]),
      btn('kb-ib kb-new', L.newChat, 'pen', reset),
      btn('kb-ib kb-close', L.close, 'x', () => close())
    ]),
    log,
    h('form.kb-form', { onsubmit: e => { e.preventDefault(); submit(); } }, [
      h('label.kb-sr', { for: 'kb-input', text: L.question }),
      h('div.kb-field', null, [input, stop, send])
    ]),
    h('p.kb-foot', { text: FOOT_CHAT })
  ]);
  root.append(launcher, panel);

  function toggle(on) {
    isOpen = on;
    panel.hidden = !on;
    host.toggleAttribute('data-open', on);
    launcher.setAttribute('aria-expanded', on);
  }
  function open() {
    if (isOpen) return;
    toggle(true);
    probe();
    log.scrollTop = log.scrollHeight;
    input.focus();
  }
  function close() {
    if (!isOpen) return;
    const hadFocus = document.activeElement === host;
    toggle(false);
    if (hadFocus) launcher.focus();
  }
  // Esc closes; Tab and Shift+Tab cycle inside the open dialog.
  root.addEventListener('keydown', e => {
    if (!isOpen) return;
    if (e.key === 'Escape') { e.preventDefault(); close(); }
    if (e.key !== 'Tab') return;
    const f = [...panel.querySelectorAll('button,textarea,a[href]')].filter(el => !el.disabled && el.getClientRects().length);
    const i = f.indexOf(root.activeElement);
    if (e.shiftKey ? i <= 0 : i < 0 || i === f.length - 1) {
      e.preventDefault();
      f[e.shiftKey ? f.length - 1 : 0].focus();
    }
  });
  function autosize() {
    input.style.height = 'auto';
    input.style.height = Math.min(input.scrollHeight + 2, 140) + 'px';
  }
  input.addEventListener('input', autosize);
  input.addEventListener('keydown', e => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); submit(); }
  });

  // ---- Messages
  const sr = t => h('span.kb-sr', { text: t });
  const step = q => h('p.kb-step', { title: q }, [icon('search'), h('span', { text: fill(L.searched, { q }) })]);
  const notice = t => h('p.kb-notice', null, [icon('info'), h('span', { text: t })]);
  const nearBottom = () => log.scrollHeight - log.scrollTop - log.clientHeight < 80;
  // Follow the answer until its question reaches the top.
  const follow = turn => { log.scrollTop = Math.min(log.scrollHeight, turn.uel.offsetTop - 12); };
  const greet = () => log.append(h('div.kb-msg kb-greeting', null, md(mode === 'search' ? SEARCH_GREETING : GREETING)));

  // ---- Chat or search: what the site behind the endpoint offers
  // '' until /api/health has answered: 'chat' (the service), 'search' (no /api:
  // a static host). Asked once, when the panel first opens; a chat request that
  // meets a 404 or 405 also settles it.
  let mode = '', probing = null;
  function probe() {
    if (mode || probing) return probing;
    probing = fetch(healthUrl.href, { headers: { Accept: 'application/json' } })
      .then(res => res.ok ? res.json().then(b => b && typeof b === 'object' ? 'chat' : 'search', () => 'search')
        // A refusal's body is read too (and dropped): a response left unread
        // keeps its connection, and the page's network, busy.
        : res.text().catch(() => '').then(() => res.status === 404 || res.status === 405 ? 'search' : ''))
      .catch(() => '')
      .then(m => { probing = null; if (m) setMode(m); });
    return probing;
  }
  function setMode(m) {
    if (mode === m) return;
    mode = m;
    root.querySelector('.kb-sub').textContent = m === 'search' ? SUB_SEARCH : SUB_CHAT;
    root.querySelector('.kb-foot').textContent = m === 'search' ? FOOT_SEARCH : FOOT_CHAT;
    const g = log.querySelector('.kb-greeting');
    if (g) g.replaceChildren(md(m === 'search' ? SEARCH_GREETING : GREETING));
  }

  // A source in another language than the reader's (a page the reader's
  // language has no translation of) says which, by the language's own name, as
  // the results page does; '' for one in the reader's language.
  function otherLanguage(tag) {
    const t = typeof tag === 'string' && /^[a-z0-9]([a-z0-9_-]{0,13}[a-z0-9])?$/i.test(tag) ? tag.toLowerCase() : '';
    const primary = (x) => String(x).split(/[-_]/)[0];
    if (!t || primary(t) === primary(READER_LANG || L.lang)) return '';
    try {
      return new Intl.DisplayNames([t], { type: 'language' }).of(t) || t;
    } catch (e) {
      return t;
    }
  }

  function sources(list) {
    return h('div.kb-sources', null, [
      h('p.kb-sources-h', { text: L.sources }),
      h('ol.kb-citations', null, list.map(s => {
        const u = safeUrl(s.url), title = String(s.title || s.url || L.source);
        const path = [].concat(s.path || []).map(String).slice(1);
        if (path[path.length - 1] === title) path.pop();
        const other = otherLanguage(s.lang);
        const kids = [h('span.kb-n', { text: s.n }), h('span', { text: title, lang: other ? s.lang : null }),
          other ? h('span.kb-src-lang', { text: ' (' + other + ')' }) : null];
        return h('li', null, [
          u ? link(u, null, kids) : h('span', null, kids),
          path.length ? h('div.kb-path', { text: path.join(' › ') }) : null
        ]);
      }))
    ]);
  }
  function actions(turn) {
    const a = turn.a, status = h('span.kb-feedback-status', { role: 'status' });
    const tip = a.degraded ? L.quotedModelDown : L.quotedNoModel;
    const copyText = h('span', { text: L.copy });
    const copyBtn = h('button.kb-act kb-copy', { onclick: () => copy(a.content, copyBtn, copyText) }, [icon('copy'), copyText]);
    const rateBtn = (r, label) => {
      const b = btn('kb-act kb-' + r, label, r, () => rate(r));
      b.setAttribute('aria-pressed', a.rating === r);
      return b;
    };
    const up = rateBtn('up', L.helpful), down = rateBtn('down', L.notHelpful);
    const ask = L.missing;
    const comment = h('textarea.kb-comment', { rows: 2, maxlength: 2000, 'aria-label': ask, placeholder: ask });
    const box = h('div.kb-comment-box', { hidden: true }, [comment, h('button.kb-btn kb-comment-send', {
      text: L.send,
      onclick: () => feedback(turn, 'down', comment.value.trim(), status, L.thanks).then(ok => { if (ok) { box.hidden = true; down.focus(); } })
    })]);
    function rate(r) {
      if (a.rating === r) return;
      a.rating = r;
      save();
      up.setAttribute('aria-pressed', r === 'up');
      down.setAttribute('aria-pressed', r === 'down');
      box.hidden = r !== 'down';
      // A thumbs-down is recorded at once; the thanks wait for the comment (or its absence).
      feedback(turn, r, '', status, r === 'down' ? L.noted : L.thanks);
      (box.hidden ? status : box).scrollIntoView({ block: 'nearest' });
    }
    return h('div', null, [
      h('div.kb-actions', null, [
        a.extractive ? h('span.kb-label kb-label-extractive', { title: tip }, [L.extractive, sr('. ' + tip + '.')]) : null,
        a.degraded ? h('span.kb-label kb-label-degraded', { title: L.degradedTip, text: L.degraded }) : null,
        // Only an answer the server gave (it has an id) can be rated: feedback
        // is kept beside that answer as it was given.
        h('span.kb-spacer', null), copyBtn, a.id ? up : null, a.id ? down : null
      ]),
      status, box
    ]);
  }
  async function copy(text, b, label) {
    let ok = false;
    try { await navigator.clipboard.writeText(text); ok = true; } catch (e) {
      const ta = h('textarea.kb-sr', { 'aria-hidden': 'true' });
      ta.value = text;
      root.append(ta);
      ta.select();
      try { ok = document.execCommand('copy'); } catch (e2) { /* no clipboard */ }
      ta.remove();
      b.focus();
    }
    label.textContent = ok ? L.copied : L.copyFailed;
    clearTimeout(b.kbTimer);
    b.kbTimer = setTimeout(() => { label.textContent = L.copy; }, 2000);
  }
  async function feedback(turn, rating, comment, status, thanks) {
    status.className = 'kb-feedback-status';
    status.textContent = L.sending;
    // The server's id for the answer: the server keeps the feedback beside the
    // question and answer it recorded under that id.
    const body = { id: turn.a.id, rating, page: location.origin + location.pathname }; // never the query or fragment: they may hold a token
    const v = visitor();
    if (v) body.visitor = v;
    if (comment) body.comment = comment;
    try {
      const res = await fetch(feedbackUrl.href, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) {
        const code = await res.json().then(j => j && j.error && j.error.code, () => '');
        throw new Error(code === 'unknown_answer' ? L.cannotRate
          : res.status === 404 ? L.feedbackOff : fill(L.feedbackFailed, { status: res.status }));
      }
      status.textContent = thanks;
      return true;
    } catch (e) {
      status.textContent = e instanceof TypeError ? L.feedbackNetwork : e.message;
      status.classList.add('kb-bad');
    }
  }
  function render(el, turn) {
    const a = turn.a;
    el.className = 'kb-msg kb-assistant' + (a.abstained ? ' kb-abstained' : '');
    el.setAttribute('data-state', 'done');
    el.removeAttribute('aria-busy');
    el.replaceChildren(sr(L.assistant), ...a.steps.map(step),
      a.abstained ? h('p.kb-label kb-label-abstained', null, [icon('info'), L.notInKb]) : '',
      a.notice ? notice(a.notice) : '',
      h('div.kb-answer', null, md(a.content || L.noAnswer, citeMap(a.citations))),
      a.citations.length ? sources(a.citations) : '',
      actions(turn));
  }
  // An answer that did not come: its state, and a way to ask again.
  const retryBtn = (el, turn) =>
    h('button.kb-btn kb-retry', { text: L.retry, onclick: () => { if (!busy) { el.remove(); run(turn); input.focus(); } } });
  function settle(el, state) {
    el.setAttribute('data-state', state);
    el.removeAttribute('aria-busy');
    const t = el.querySelector('.kb-typing');
    if (t) t.remove();
  }
  function failed(el, turn, err, aborted) {
    settle(el, 'error');
    const msg = aborted ? L.stopped
      : err.status ? (err.message ? fill(L.httpErrorMsg, { status: err.status, message: err.message.replace(/`/g, '') }) : fill(L.httpError, { status: err.status }))
      : err.cut ? L.cut
      : L.unreachable;
    el.append(h('div.kb-error', null, [h('p', { text: msg }), retryBtn(el, turn)]));
  }

  // ---- When the chat service is away: the best matching sections instead
  // The site's own browser engine (assets/browser-search.js over _search/): when
  // the error says the service is away (its `away`), the sections its BM25 ranks
  // best for the question. Embedded on another origin, this needs the site to
  // allow that origin (CORS); without it, the error stays.
  const siteRoot = new URL('../', endpoint).href; // the site the endpoint belongs to: …/api/chat → …/
  async function sectionsFor(q, err) {
    const m = await import(siteRoot + 'assets/browser-search.js');
    if (err && !m.away(err.status)) return null;
    const r = await m.search(siteRoot + '_search/', q, 5, 1, false, null, { lang: READER_LANG });
    const seen = new Set();
    return [].concat(r.results || []).filter(x => x && !seen.has(x.page_id) && seen.add(x.page_id))
      .map((x, i) => ({ n: i + 1, url: x.url, title: x.title, path: x.path }));
  }
  // The assistant is away (no answer, 5xx): the pages instead, and a retry.
  function offered(el, turn, found) {
    settle(el, 'offline');
    el.append(
      notice(L.away),
      sources(found),
      h('div.kb-error', null, [h('p', { text: L.askLater }), retryBtn(el, turn)]));
  }
  // A 429: not an outage. Says when to ask again, counting down to Retry-After.
  function limited(el, turn, err, found) {
    settle(el, 'limited');
    let left = Math.max(1, err.retryAfter || 30);
    const when = h('p.kb-wait', { role: 'status' });
    const again = retryBtn(el, turn);
    const tick = () => {
      when.textContent = left > 0 ? fill(left === 1 ? L.waitOne : L.waitMany, { n: left }) : L.askNow;
      again.disabled = left > 0;
      if (left-- > 0 && el.isConnected) setTimeout(tick, 1000);
    };
    el.append(
      notice(L.busy + (found && found.length ? L.gap + L.matching : '')),
      found && found.length ? sources(found) : '',
      h('div.kb-error', null, [when, again]));
    tick();
  }
  // A site without /api: the help pages the site's search finds, as the answer.
  function pagesOnly(el, turn, found) {
    settle(el, 'search');
    el.append(found && found.length
      ? h('div', null, [h('p', { text: L.matching }), sources(found)])
      : h('div', null, [
        h('p', { text: L.noMatch }, [link(siteRoot, null, L.browseKb), L.noMatchEnd])
      ]));
  }

  // ---- Server-Sent Events from the response body
  async function readSSE(res, onEvent) {
    let buf = '', cr = false;
    const frame = block => {
      let ev = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (!line || line[0] === ':') continue;
        const i = line.indexOf(':'), field = i < 0 ? line : line.slice(0, i);
        let v = i < 0 ? '' : line.slice(i + 1);
        if (v[0] === ' ') v = v.slice(1);
        if (field === 'event') ev = v;
        else if (field === 'data') data.push(v);
      }
      if (data.length) onEvent(ev, data.join('\n'));
    };
    const feed = (s, end) => {
      if (cr) s = '\r' + s;
      cr = !end && s.slice(-1) === '\r'; // a CRLF may be split across reads
      if (cr) s = s.slice(0, -1);
      const frames = (buf + s.replace(/\r\n?/g, '\n')).split('\n\n');
      buf = end ? '' : frames.pop();
      frames.forEach(frame);
    };
    if (!res.body || !res.body.getReader) return feed(await res.text(), true);
    const reader = res.body.getReader(), dec = new TextDecoder();
    for (let r; !(r = await reader.read()).done;) feed(dec.decode(r.value, { stream: true }));
    feed(dec.decode(), true);
  }
  function history(turn) {
    const out = [], clip = s => s.slice(0, 4000);
    for (const t of turns) {
      if (t === turn) break;
      if (t.a && t.a.content) out.push({ role: 'user', content: clip(t.q) }, { role: 'assistant', content: clip(t.a.content) });
    }
    out.push({ role: 'user', content: clip(turn.q) });
    return out.slice(-40);
  }
  function setBusy(b) {
    if (root.activeElement === (b ? send : stop)) input.focus();
    send.disabled = b;
    stop.hidden = !b;
    log.setAttribute('aria-busy', b);
  }
  async function run(turn) {
    const answer = h('div.kb-answer', null);
    const typing = h('div.kb-typing', { role: 'img', 'aria-label': L.looking }, [h('span'), h('span'), h('span')]);
    const el = turn.el = h('div.kb-msg kb-assistant', { 'data-state': 'streaming', 'aria-busy': 'true' }, [sr(L.assistant), answer, typing]);
    log.append(el);
    log.scrollTop = log.scrollHeight;
    const ctrl = new AbortController();
    busy = { ctrl };
    setBusy(true);
    await probe();
    if (mode === 'search') {
      const found = await sectionsFor(turn.q, null).catch(() => null);
      if (busy && busy.ctrl === ctrl) { busy = null; setBusy(false); }
      if (turns.includes(turn)) pagesOnly(el, turn, found);
      return;
    }
    const st = { text: '', sources: [], steps: [], notice: '' };
    let raf = 0, error = null, done = null;
    const paint = () => {
      raf = 0;
      const stick = nearBottom();
      answer.replaceChildren(md(st.text, citeMap(st.sources)));
      typing.hidden = !!st.text;
      if (stick) follow(turn);
    };
    const onEvent = (name, data) => {
      let d;
      try { d = JSON.parse(data); } catch (e) { return; }
      if (!d || typeof d !== 'object') return;
      if (name === 'search' && d.query != null) {
        st.steps.push(String(d.query));
        el.insertBefore(step(d.query), answer);
      } else if (name === 'sources' && Array.isArray(d.sources)) st.sources = d.sources;
      else if (name === 'token' && typeof d.text === 'string') {
        st.text += d.text;
        raf = raf || requestAnimationFrame(paint);
      } else if (name === 'error') {
        st.notice = fill(L.problem, { message: String(d.message || 'unknown error').replace(/[.\s]+$/, '') });
        el.insertBefore(notice(st.notice), answer);
        if (st.text) { st.text = ''; paint(); } // a fallback answer follows
      } else if (name === 'done') done = d;
    };
    try {
      const res = await fetch(endpoint.href, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify(Object.assign({ messages: history(turn), stream: true }, visitor() ? { visitor: visitor() } : {}, READER_LANG ? { lang: READER_LANG } : {})), signal: ctrl.signal
      });
      if (!res.ok) {
        let msg = '';
        try { msg = (await res.json()).error.message; } catch (e) { /* not a JSON error */ }
        const ra = Number(res.headers.get('Retry-After'));
        throw Object.assign(new Error(msg || ''), { status: res.status, retryAfter: isFinite(ra) ? Math.ceil(ra) : 0 });
      }
      if (/event-stream/i.test(res.headers.get('content-type'))) await readSSE(res, onEvent);
      else done = await res.json();
    } catch (e) { error = e; }
    cancelAnimationFrame(raf);
    if (busy && busy.ctrl === ctrl) { busy = null; setBusy(false); }
    if (!turns.includes(turn)) return; // the conversation was reset meanwhile
    const stick = nearBottom();
    if (done && typeof done === 'object') {
      turn.a = {
        content: String(done.answer == null ? st.text : done.answer),
        citations: [].concat(done.citations || []).filter(c => c && typeof c === 'object'),
        abstained: !!done.abstained, extractive: !!done.extractive, degraded: !!done.degraded,
        steps: st.steps, notice: st.notice, id: typeof done.id === 'string' ? done.id.slice(0, 100) : ''
      };
      save();
      render(el, turn);
    } else {
      paint();
      const found = error && !ctrl.signal.aborted ? await sectionsFor(turn.q, error).catch(() => null) : null;
      if (!turns.includes(turn)) return;
      if (error && (error.status === 404 || error.status === 405)) { setMode('search'); pagesOnly(el, turn, found); }
      else if (error && error.status === 429) limited(el, turn, error, found);
      else if (found && found.length) offered(el, turn, found);
      else failed(el, turn, error || { cut: true }, ctrl.signal.aborted);
    }
    if (stick) follow(turn);
  }
  function submit() {
    const q = input.value.trim();
    if (!q || busy) return;
    input.value = '';
    autosize();
    const turn = { q: q.slice(0, 4000), a: null };
    turns.push(turn);
    while (turns.length > MAX_TURNS) {
      const t = turns.shift();
      t.uel.remove();
      if (t.el) t.el.remove();
    }
    log.append(turn.uel = h('div.kb-msg kb-user', null, [sr(L.you), turn.q]));
    run(turn);
  }
  function reset() {
    if (busy) { busy.ctrl.abort(); busy = null; setBusy(false); }
    turns = [];
    save();
    log.replaceChildren();
    greet();
    input.focus();
  }

  greet();
  for (const t of turns) {
    log.append(t.uel = h('div.kb-msg kb-user', null, [sr(L.you), t.q]), t.el = h('div'));
    render(t.el, t);
  }
  window.kbWidget = {
    get mode() { return mode; },
    // '' when /api/health could not be asked (the network) or answered oddly (5xx).
    probe: () => Promise.resolve(probe()).then(() => mode),
    open,
    close,
    ask(text) {
      open();
      input.value = text == null ? '' : String(text);
      autosize();
      submit();
    }
  };
  const mount = () => host.isConnected || document.body.append(host);
  if (document.body) mount(); else document.addEventListener('DOMContentLoaded', mount);
})();
