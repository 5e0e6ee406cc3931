/*
 * search.js — the site search UI (copied to assets/search.js). No dependencies.
 *
 * Included from base.html with `<script src="{root}assets/search.js"
 * data-root="{root}" defer>`; `data-root` is the relative path to the site root.
 *
 *  - Search as you type in the header box (#search-input) and the home box
 *    (#home-search-input): a dropdown (#search-suggest) of results grouped by
 *    page, an ARIA 1.2 combobox with a listbox of link options.
 *  - On search.html (the page with #search-results): the full grouped results
 *    for ?q=..., updated as you type (the URL follows via history.replaceState).
 *  - "/" focuses the search box; ArrowUp/ArrowDown/Enter/Escape in the dropdown.
 *  - When the API is unreachable (a network error, a timeout, 404, 429 or 5xx: a
 *    plain static host, a deploy in progress), the browser engine in _search/
 *    answers instead (BM25 over fragments fetched on demand, the ranking the
 *    API's `bm25` mode gives). On a static host (404, 405, a page for JSON) that
 *    is the site's search and nothing is said; while the API is busy (429) one
 *    quiet line says for how long (Retry-After), and /api/health is asked again
 *    only then; during an outage the line says so and /api/health is probed
 *    every RETRY_MS, the API taking over again when it answers. Without the
 *    engine either, a message points to the section tree.
 *  - No results (the API's `matched` false, or nothing found): "No results for
 *    …" with a few sections to browse and, when the chat widget is on the page
 *    with its service, a button that asks it (window.kbWidget.ask). With `data-semantic`
 *    on this script (a site built with --browser-semantic) the browser engine
 *    also loads the query encoder and the vectors, once, and then ranks settled
 *    queries as the API's fused mode does.
 *
 * Server text is never parsed as HTML: snippets are split on <mark>/</mark>,
 * entities decoded here, and the pieces added as text nodes and <mark> elements.
 *
 * Hooks for tests: #search-suggest.search-suggest, .search-group[data-page-id],
 * a.search-option[role=option] (active: aria-selected="true"), .search-status,
 * #search-results .search-result.
 */
(function () {
  'use strict';

  if (!window.fetch || !window.URL || !window.URLSearchParams || !document.querySelector) {
    return; // Very old browser: the plain form (search.html + the tree) still works.
  }

  // --- Configuration --------------------------------------------------------

  var DEBOUNCE_MS = 150;
  // Suggestions while typing come from BM25 alone, reading the word being typed
  // as the word it most likely becomes (`partial`): about 1 ms on the server and
  // no encoder pass. After a pause this long (or when the reader stops), the
  // fused ranking replaces them. site-builder's typing_trace example measured 64
  // requests per typed question at 150 ms; 5 of them reach the encoder this way
  // (docs/benchmarks/edge-load.md, "search as you type").
  var SETTLE_MS = 600;
  var MIN_CHARS = 2; // while typing (a submitted one-character query still runs)
  var MAX_QUERY = 1000; // the API's limit
  var TIMEOUT_MS = 8000;
  var SUGGEST_K = 10;
  var SUGGEST_PAGES = 6;
  var SUGGEST_SECTIONS = 3; // sub-results per page in the dropdown
  var PAGE_K = 20;
  var PAGE_SECTIONS = 3; // sub-results per page shown at first on search.html
  var MAX_PAGE = 20; // the API's last page
  var MODE = 'convex';
  var RETRY_MS = 5000; // while the browser engine answers, how often to probe the API

  var scriptEl =
    document.currentScript || document.querySelector('script[data-root][src*="search.js"]');
  var ROOT = readRoot();
  var SEMANTIC = !!(scriptEl && scriptEl.hasAttribute && scriptEl.hasAttribute('data-semantic'));

  // --- Words ----------------------------------------------------------------
  // What this script says, in English; a page in another language gives its
  // own as JSON on the script tag (data-strings, from site-builder's i18n
  // tables, which hold this same English table: a test keeps them equal).
  // `{q}` is the query as `quote` quotes it, `{n}` a number; `_one` / `_other`
  // are the singular and the plural.
  var S = readStrings({
    quote: '\u201c{q}\u201d',
    unavailable: 'Search is unavailable right now.',
    browseInstead: 'Browse the sections instead.',
    inBrowser: 'Searched in your browser: the search service is not reachable right now, so words match but not meaning.',
    inBrowserSemantic: 'Searched in your browser: the search service is not reachable right now.',
    inBrowserLoading: 'Searched in your browser: the search service is not reachable right now, so words match; meaning too once the model has loaded.',
    busy: 'Searched in your browser: the search service is busy.',
    busyFor: 'Searched in your browser: the search service is busy for about {n}.',
    secondsOne: '{n} second',
    secondsOther: '{n} seconds',
    langFallback: 'No pages in {lang} match; showing pages in other languages.',
    allLanguages: 'All languages.',
    inLanguage: 'In {lang}.',
    searchAllLanguages: 'Search all languages',
    onlyLanguage: 'Only {lang}',
    showingResultsFor: 'Showing results for {q}',
    browseLabel: 'Browse: ',
    allSections: 'all sections',
    browseAllSections: 'Browse all sections',
    askAssistant: 'Ask the assistant',
    orAsk: 'Or put it as a question: ',
    suggestionsLabel: 'Search suggestions',
    noResults: 'No results for {q}',
    checkSpelling: 'Check the spelling or try other words.',
    overview: 'Overview',
    seeAll: 'See all results for {q}',
    articlesOne: '{n} article',
    articlesOther: '{n} articles',
    sectionsOne: '{n} section',
    sectionsOther: '{n} sections',
    foundFor: '{articles} found for {q}. Use the up and down arrow keys to choose, Enter to open.',
    resultsFor: 'Results for {q}',
    typeHint: 'Type a question or a few words, for example {example}.',
    example: 'reset password',
    searching: 'Searching\u2026',
    moreFailed: 'More results could not be loaded.',
    tryAgain: 'Try again in a moment.',
    moreSectionsIn: 'More matching sections in {title}',
    showMore: 'Show more results',
    matchingOne: '{n} matching section',
    matchingOther: '{n} matching sections',
    bestFirst: 'best matches first',
    showSectionsOne: 'Show {n} more section',
    showSectionsOther: 'Show {n} more sections',
    showFewer: 'Show fewer sections',
  });

  /** The English table with the page's own words over it. */
  function readStrings(english) {
    var raw = scriptEl && scriptEl.getAttribute && scriptEl.getAttribute('data-strings');
    if (!raw) return english;
    try {
      var own = JSON.parse(raw);
      Object.keys(english).forEach(function (k) {
        if (typeof own[k] === 'string') english[k] = own[k];
      });
    } catch (e) {
      /* malformed: English */
    }
    return english;
  }

  /** `pattern` with each `{name}` replaced by `values[name]` (text). */
  function fill(pattern, values) {
    return pattern.replace(/\{(\w+)\}/g, function (m, k) {
      return Object.prototype.hasOwnProperty.call(values, k) ? String(values[k]) : m;
    });
  }

  /** `pattern` as children: its text, and for `{name}` the node `values[name]`. */
  function fillNodes(pattern, values) {
    return pattern.split(/(\{\w+\})/).map(function (part) {
      var m = /^\{(\w+)\}$/.exec(part);
      return m && Object.prototype.hasOwnProperty.call(values, m[1]) ? values[m[1]] : part;
    }).filter(function (p) {
      return p !== '';
    });
  }
  var API_URL = new URL(ROOT + 'api/search', location.href);

  // --- Languages ------------------------------------------------------------
  // A site in several languages names them on <html data-languages="de en …">;
  // each page has its own <html lang>. Search then asks the API for the
  // reader's language (the page's, or ?lang= on the results page, `all` for
  // every language), and the forms carry it to search.html. A site in one
  // language sends no `lang` at all.
  var SITE_LANGS = (document.documentElement.getAttribute('data-languages') || '').split(/\s+/).filter(Boolean);
  var MULTILINGUAL = SITE_LANGS.length > 1;
  var PAGE_LANG = (document.documentElement.getAttribute('lang') || '').toLowerCase();
  var LANG = readLang();

  /** The language searched: ?lang= (on any page), else the page's; '' when the site has one. */
  function readLang() {
    if (!MULTILINGUAL) return '';
    var asked = '';
    try {
      asked = new URLSearchParams(location.search).get('lang') || '';
    } catch (e) {
      /* no URL parsing: the page's language */
    }
    return /^[A-Za-z0-9_-]{1,15}$/.test(asked) ? asked.toLowerCase() : PAGE_LANG;
  }

  /** A language's name in that language, or its tag. */
  function langName(tag) {
    try {
      var n = new Intl.DisplayNames([tag], { type: 'language' }).of(tag);
      if (n) return n.charAt(0).toUpperCase() + n.slice(1);
    } catch (e) {
      /* an old browser: the tag */
    }
    return tag;
  }

  /** Every search form on the page carries the language to search.html. */
  function carryLang() {
    if (!MULTILINGUAL || !LANG) return;
    var forms = document.querySelectorAll('form[role="search"]');
    for (var i = 0; i < forms.length; i++) {
      if (forms[i].querySelector('input[name="lang"]')) continue;
      var input = document.createElement('input');
      input.type = 'hidden';
      input.name = 'lang';
      input.value = LANG;
      forms[i].appendChild(input);
    }
  }
  var HEALTH_URL = new URL(ROOT + 'api/health', location.href);
  // The results page in the page's language (a site in several has one each).
  var SEARCH_PAGE = ROOT + ((scriptEl && scriptEl.getAttribute && scriptEl.getAttribute('data-search-page')) || 'search.html');
  var ENGINE_BASE = new URL(ROOT + '_search/', location.href).href;
  var ASSETS = new URL(ROOT + 'assets/', location.href).href;
  var BROWSE_URL = SEARCH_PAGE + '#site-tree';

  // While the search service is away (an outage, a deploy) the browser engine
  // answers and one quiet line says so (S.inBrowser…). On a static host (no
  // /api at all) the browser engine simply is the search: nothing is said.
  var EMPTY_SECTIONS = 4; // section links offered when nothing matches

  function readRoot() {
    var candidates = [scriptEl, document.documentElement, document.body];
    for (var i = 0; i < candidates.length; i++) {
      var el = candidates[i];
      if (el && el.hasAttribute && el.hasAttribute('data-root')) {
        return el.getAttribute('data-root') || '';
      }
    }
    return '';
  }

  // --- Small helpers --------------------------------------------------------

  /** Creates an element: h('a', {href: 'x', class: 'y'}, [child, 'text']). */
  function h(tag, attrs, children) {
    var el = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (name) {
        var v = attrs[name];
        if (v === null || v === undefined || v === false) return;
        if (name === 'class') el.className = v;
        else if (name === 'text') el.textContent = v;
        else el.setAttribute(name, v === true ? '' : String(v));
      });
    }
    append(el, children);
    return el;
  }

  function append(el, children) {
    if (children === null || children === undefined) return el;
    if (!Array.isArray(children)) children = [children];
    children.forEach(function (c) {
      if (c === null || c === undefined || c === false) return;
      el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    });
    return el;
  }

  function clear(el) {
    while (el.firstChild) el.removeChild(el.firstChild);
  }

  function debounce(fn, ms) {
    var t = null;
    function run() {
      var args = arguments;
      clearTimeout(t);
      t = setTimeout(function () {
        t = null;
        fn.apply(null, args);
      }, ms);
    }
    run.cancel = function () {
      clearTimeout(t);
      t = null;
    };
    return run;
  }

  function normalizeQuery(value) {
    return String(value || '').replace(/\s+/g, ' ').trim().slice(0, MAX_QUERY);
  }

  function quoted(q) {
    return fill(S.quote, { q: q });
  }

  /** `n` in the singular or the plural pattern (`{n}`). */
  function plural(n, one, many) {
    return fill(n === 1 ? one : many, { n: n });
  }

  function searchPageUrl(q) {
    return q ? SEARCH_PAGE + '?' + new URLSearchParams({ q: q }).toString() : SEARCH_PAGE;
  }

  /** A result url (relative to the site root) as an href from this page. */
  function resultHref(url) {
    url = String(url || '');
    // Only site-relative paths: never a scheme (javascript:, data:, ...) or //host.
    if (!url || /^[a-z][a-z0-9+.-]*:/i.test(url) || /^[\\/]{2}/.test(url)) return null;
    return ROOT + url.replace(/^\/+/, '');
  }

  var ENTITIES = { lt: '<', gt: '>', quot: '"', amp: '&', apos: "'", '#39': "'", '#x27': "'" };

  function decodeEntities(text) {
    return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, function (m, name) {
      var key = name.toLowerCase();
      if (Object.prototype.hasOwnProperty.call(ENTITIES, key)) return ENTITIES[key];
      var code = NaN;
      if (key.charAt(0) === '#') {
        code = key.charAt(1) === 'x' ? parseInt(key.slice(2), 16) : parseInt(key.slice(1), 10);
      }
      if (code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)) {
        return String.fromCodePoint(code);
      }
      return m;
    });
  }

  /** "… <mark>parking</mark> &amp; x" → [{text, mark}], entities decoded. */
  function snippetSegments(snippet) {
    var parts = String(snippet || '').split(/(<\/?mark>)/i);
    var segs = [];
    var inMark = false;
    parts.forEach(function (part) {
      if (/^<mark>$/i.test(part)) inMark = true;
      else if (/^<\/mark>$/i.test(part)) inMark = false;
      else if (part) segs.push({ text: decodeEntities(part), mark: inMark });
    });
    return segs;
  }

  function segmentsText(segs) {
    return segs.map(function (s) { return s.text; }).join('');
  }

  /** Drops the first n characters (and the spaces after them) of the segments. */
  function dropChars(segs, n) {
    var out = [];
    segs.forEach(function (s) {
      if (n >= s.text.length) {
        n -= s.text.length;
        return;
      }
      out.push({ text: s.text.slice(n), mark: s.mark });
      n = 0;
    });
    while (out.length && !out[0].text.replace(/^[\s:—–-]+/, '')) out.shift();
    if (out.length) out[0] = { text: out[0].text.replace(/^[\s:—–-]+/, ''), mark: out[0].mark };
    return out;
  }

  /** Text nodes and <mark> elements for the segments. */
  function renderSegments(segs) {
    var frag = document.createDocumentFragment();
    segs.forEach(function (s) {
      frag.appendChild(s.mark ? h('mark', null, s.text) : document.createTextNode(s.text));
    });
    return frag;
  }

  /** The heading ids of the builder (Python-Markdown's slugify). */
  function slugify(text) {
    var s = String(text || '');
    if (s.normalize) s = s.normalize('NFKD');
    return s
      .replace(/[^\x00-\x7f]/g, '')
      .replace(/[^A-Za-z0-9_\-\s]/g, '')
      .trim()
      .toLowerCase()
      .replace(/[-\s]+/g, '-')
      .replace(/^-+/, '');
  }

  function deslug(id) {
    var s = id.replace(/[-_]+/g, ' ').trim();
    return s ? s.charAt(0).toUpperCase() + s.slice(1) : '';
  }

  function firstWords(text, n) {
    var words = text.replace(/^[\s…]+|\.\.\./g, '').split(/\s+/).filter(Boolean);
    var out = words.slice(0, n).join(' ');
    return words.length > n ? out + '\u2026' : out;
  }

  /**
   * One API result, ready to show: its href, the section's name (from the url's
   * #anchor, in the words of the snippet when they match it) and the snippet
   * without that leading heading.
   */
  function prepareHit(r) {
    var url = String(r.url || '');
    var hashAt = url.indexOf('#');
    var anchor = '';
    if (hashAt >= 0) {
      try {
        anchor = decodeURIComponent(url.slice(hashAt + 1));
      } catch (e) {
        anchor = url.slice(hashAt + 1);
      }
    }
    var segs = snippetSegments(r.snippet);
    var plain = segmentsText(segs);
    var title = String(r.title || '');
    var label = '';
    var intro = !anchor;
    if (anchor) {
      var base = anchor.replace(/_\d+$/, '');
      intro = base === slugify(title);
      // The chunk text opens with its heading: find the words whose slug is the id.
      if (!/^\s*(…|\.\.\.)/.test(plain)) {
        var re = /\S+/g;
        var m;
        var words = 0;
        while ((m = re.exec(plain)) && words++ < 16) {
          var end = m.index + m[0].length;
          var slug = slugify(plain.slice(0, end));
          if (slug === base) {
            label = plain.slice(0, end).trim();
            segs = dropChars(segs, end);
            break;
          }
          if (slug && base.indexOf(slug) !== 0) break;
        }
      }
      if (!label) label = deslug(base);
    } else {
      label = firstWords(plain, 6);
    }
    return {
      href: resultHref(url),
      url: url,
      label: label || title,
      intro: intro,
      segs: segs,
    };
  }

  /** Results grouped by page (in the order of each page's best result). */
  function groupResults(results) {
    var groups = [];
    var byId = Object.create(null);
    results.forEach(function (r) {
      if (!r || typeof r !== 'object') return;
      var hit = prepareHit(r);
      if (!hit.href) return;
      var id = String(r.page_id || hit.url.split('#')[0]);
      var g = byId[id];
      if (!g) {
        var path = Array.isArray(r.path) ? r.path.map(String) : [];
        g = byId[id] = {
          id: id,
          lang: typeof r.lang === 'string' ? r.lang.toLowerCase() : '',
          title: String(r.title || path[path.length - 1] || hit.url),
          crumbs: path.slice(0, -1).join(' \u203a '),
          hits: [],
          seen: Object.create(null),
        };
        groups.push(g);
      }
      if (g.seen[hit.url]) return; // two chunks of one section: keep the better
      g.seen[hit.url] = true;
      g.hits.push(hit);
    });
    return groups;
  }

  // --- The API --------------------------------------------------------------

  var cache = new Map();

  function cacheKey(q, k, page, how) {
    return (how ? (how.typing ? 't' : '') + (how.partial ? 'p' : '') + '|' : '') + LANG + '|' + k + '|' + page + '|' + q;
  }

  /**
   * GET api/search. Resolves with the response body; rejects with an Error whose
   * `kind` is 'aborted' (superseded: ignore) or 'unavailable' (`status`: the HTTP
   * status, 0 without a response). `how` (suggestions): `typing` asks for BM25
   * only, `partial` says the last word is unfinished.
   */
  function apiSearch(q, k, page, signal, how) {
    var key = cacheKey(q, k, page, how);
    if (cache.has(key)) return Promise.resolve(cache.get(key));
    var url = new URL(API_URL.href);
    url.searchParams.set('q', q);
    url.searchParams.set('k', String(k));
    url.searchParams.set('mode', how && how.typing ? 'bm25' : MODE);
    if (how && how.partial) url.searchParams.set('partial', 'true');
    if (page > 1) url.searchParams.set('page', String(page));
    if (LANG) url.searchParams.set('lang', LANG);

    var ctrl = new AbortController();
    var timedOut = false;
    var timer = setTimeout(function () {
      timedOut = true;
      ctrl.abort();
    }, TIMEOUT_MS);
    function onAbort() {
      ctrl.abort();
    }
    if (signal) {
      if (signal.aborted) ctrl.abort();
      else signal.addEventListener('abort', onAbort);
    }
    function done() {
      clearTimeout(timer);
      if (signal) signal.removeEventListener('abort', onAbort);
    }
    function fail(kind, detail, status, res) {
      var err = new Error(detail || kind);
      err.kind = kind;
      err.status = status || 0;
      err.retryAfter = res ? retryAfterSeconds(res.headers.get('Retry-After')) : 0;
      return err;
    }

    return fetch(url.href, {
      signal: ctrl.signal,
      headers: { Accept: 'application/json' },
      credentials: 'same-origin',
    })
      .then(function (res) {
        return res.json().then(
          function (body) { return { res: res, body: body }; },
          function () { return { res: res, body: null }; }
        );
      })
      .then(
        function (r) {
          done();
          var body = r.body;
          if (!r.res.ok) {
            var e = body && body.error;
            throw fail('unavailable', 'HTTP ' + r.res.status + (e && e.message ? ': ' + e.message : ''), r.res.status, r.res);
          }
          if (!body || typeof body !== 'object' || !Array.isArray(body.results)) {
            // A static host's page (its index.html for any path), not the API.
            var st = fail('unavailable', 'unexpected response');
            st.noApi = true;
            throw st;
          }
          if (cache.size > 50) cache.delete(cache.keys().next().value);
          cache.set(key, body);
          return body;
        },
        function (err) {
          done();
          if (err && err.name === 'AbortError' && !timedOut) throw fail('aborted');
          throw fail('unavailable', timedOut ? 'timed out' : String((err && err.message) || err));
        }
      );
  }

  // --- The browser engine (site/_search/, wasm) ------------------------------

  var browserSince = 0; // when the browser engine took over (0: the API answers)
  var lastProbe = 0;
  // Why the browser engine answers: 'static' (no /api on this host: 404, 405,
  // or a page instead of JSON), 'busy' (429: the API asked to slow down, for
  // `busyUntil`) or 'away' (no answer, a timeout, 408, 5xx: an outage).
  var browserWhy = '';
  var busyUntil = 0;

  /** Seconds from a Retry-After header (seconds or an HTTP date); 0 if none. */
  function retryAfterSeconds(v) {
    if (!v) return 0;
    var n = Number(v);
    if (isFinite(n) && n >= 0) return Math.ceil(n);
    var t = Date.parse(v);
    return isFinite(t) ? Math.max(0, Math.ceil((t - Date.now()) / 1000)) : 0;
  }

  function whyAway(err) {
    if (err.noApi || err.status === 404 || err.status === 405) return 'static';
    if (err.status === 429) return 'busy';
    return 'away';
  }

  /** Whether to ask /api/health again: never on a static host, after Retry-After when busy. */
  function probeDue() {
    if (browserWhy === 'static') return false;
    if (browserWhy === 'busy') return Date.now() >= busyUntil;
    return Date.now() - lastProbe >= RETRY_MS;
  }

  /** The browser engine's body, marked with why it answered. */
  function marked(body) {
    if (body && typeof body === 'object') {
      body.why = browserWhy;
      body.busyUntil = busyUntil;
    }
    return body;
  }

  /** assets/browser-search.js, loaded when first needed. */
  function engine() {
    return import(ASSETS + 'browser-search.js');
  }

  /** The browser engine's answer. */
  function browserSearch(q, k, page, signal, how) {
    return engine().then(function (m) {
      return m.search(ENGINE_BASE, q, k, page, !!(how && how.partial), signal, { semantic: SEMANTIC, mode: browserMode(how), lang: LANG });
    });
  }

  /**
   * Calls `fn` once the browser engine's semantic side is in, when `data` (an
   * answer by words) came while it was still loading: the settled query is then
   * asked again, and ranks by meaning too.
   */
  function whenSemantic(data, fn) {
    if (!data || data.semantic !== 'loading') return;
    engine()
      .then(function (m) {
        return m.semanticReady(ENGINE_BASE);
      })
      .then(
        function (ready) {
          if (ready) fn();
        },
        function () {}
      );
  }

  /** The ranking asked of the browser engine: fused on a settled query when the site offers it. */
  function browserMode(how) {
    return SEMANTIC && !(how && how.typing) ? MODE : null;
  }

  /**
   * A search, from the API or, while it is away, from the browser engine (the
   * body then has `engine: 'browser'`). Rejects as apiSearch does when neither
   * can answer.
   */
  function searchApi(q, k, page, signal, how) {
    if (browserSince) {
      if (probeDue()) {
        lastProbe = Date.now();
        busyUntil = Date.now() + RETRY_MS; // one probe at a time
        checkHealth().then(function (up) {
          if (up) browserSince = 0;
        });
      }
      return browserSearch(q, k, page, signal, how).then(marked, function (err) {
        if (err.kind === 'aborted') throw err;
        browserSince = 0; // no engine after all: the API again next time
        throw unavailable(err);
      });
    }
    return apiSearch(q, k, page, signal, how).catch(function (err) {
      if (err.kind !== 'unavailable') throw err;
      return engine().then(
        function (m) {
          if (!m.away(err.status)) throw err; // the query's fault, not the service being away
          return m.search(ENGINE_BASE, q, k, page, !!(how && how.partial), signal, { semantic: SEMANTIC, mode: browserMode(how), lang: LANG }).then(
            function (body) {
              if (!browserSince) browserSince = lastProbe = Date.now();
              browserWhy = whyAway(err);
              busyUntil = Date.now() + 1000 * (err.retryAfter || RETRY_MS / 1000);
              if (window.console && browserWhy !== 'static') {
                console.info('search: the API is away (' + err.message + '); searching in the browser');
              }
              return marked(body);
            },
            function (e2) {
              if (e2.kind === 'aborted') throw e2;
              if (window.console) console.warn('search: browser engine: ' + e2.message);
              throw err;
            }
          );
        },
        function () {
          throw err; // the engine's module is unreachable too
        }
      );
    });
  }

  function unavailable(err) {
    var e = new Error(String((err && err.message) || err));
    e.kind = 'unavailable';
    return e;
  }

  /**
   * The quiet line under results the browser engine gave while the service is
   * away or busy; none on a static host, where the browser engine is the search.
   */
  function engineLine(data) {
    if (!data || data.engine !== 'browser' || data.why === 'static') return null;
    var msg = S.inBrowser;
    if (data.why === 'busy') {
      var secs = Math.max(1, Math.round(((data.busyUntil || 0) - Date.now()) / 1000));
      msg = data.busyUntil > Date.now() ? fill(S.busyFor, { n: plural(secs, S.secondsOne, S.secondsOther) }) : S.busy;
    } else if (data.semantic === 'ready') msg = S.inBrowserSemantic;
    else if (data.semantic === 'loading') msg = S.inBrowserLoading;
    return h('span', { class: 'search-status__engine' }, msg);
  }

  /**
   * On a site in several languages: the language searched, a link to the other
   * choice (every language, or the page's), and the API's word when the
   * reader's language had no match and pages in others are shown.
   */
  function langLine(data, q) {
    if (!MULTILINGUAL) return null;
    var other = LANG === 'all' ? PAGE_LANG : 'all';
    var href = location.pathname + '?' + new URLSearchParams({ q: q, lang: other }).toString();
    var fallback = data && typeof data.lang_fallback === 'string' && data.lang_fallback;
    return h('span', { class: 'search-status__lang' }, [
      (fallback
        ? fill(S.langFallback, { lang: langName(fallback) })
        : LANG === 'all'
          ? S.allLanguages
          : fill(S.inLanguage, { lang: langName(LANG) })) + ' ',
      h('a', { href: href, class: 'search-status__link' }, other === 'all' ? S.searchAllLanguages : fill(S.onlyLanguage, { lang: langName(other) })),
    ]);
  }

  /** "Showing results for …" when the search read a typo as the word meant. */
  function correctedLine(data) {
    if (!data || typeof data.corrected !== 'string' || !data.corrected) return null;
    return h('span', { class: 'search-status__corrected' }, fillNodes(S.showingResultsFor, { q: h('strong', null, quoted(data.corrected)) }));
  }

  /**
   * What to offer when nothing matches `q`: a few of the site's sections (from
   * its section menu) and, when the chat assistant is on the page and has its
   * service, asking it.
   */
  function suggestions(q, browseHref) {
    var seen = {};
    var links = [];
    var navLinks = document.querySelectorAll('.site-nav a[href]');
    for (var i = 0; i < navLinks.length && links.length < EMPTY_SECTIONS; i++) {
      var a = navLinks[i];
      var label = (a.textContent || '').trim();
      if (!label || seen[a.href]) continue;
      seen[a.href] = true;
      links.push(h('a', { href: a.getAttribute('href'), class: 'search-empty__section' }, label));
    }
    var parts = [];
    if (links.length) {
      var row = [h('span', { class: 'search-empty__label' }, S.browseLabel)];
      links.forEach(function (l, j) {
        if (j) row.push(', ');
        row.push(l);
      });
      row.push(' \u00b7 ', h('a', { href: browseHref, class: 'search-status__link' }, S.allSections));
      parts.push(h('span', { class: 'search-empty__browse' }, row));
    } else {
      parts.push(h('a', { href: browseHref, class: 'search-status__link' }, S.browseAllSections));
    }
    var chat = window.kbWidget;
    // On a static host there is no assistant to ask, only this search.
    if (chat && typeof chat.ask === 'function' && chat.mode !== 'search' && browserWhy !== 'static') {
      var ask = h('button', { type: 'button', class: 'search-empty__ask' }, S.askAssistant);
      ask.addEventListener('click', function () {
        chat.ask(q);
      });
      parts.push(h('span', { class: 'search-empty__chat' }, [S.orAsk, ask]));
    }
    return h('span', { class: 'search-empty' }, parts);
  }

  function checkHealth() {
    return fetch(HEALTH_URL.href, { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (res) {
        return res.ok ? res.json() : null;
      })
      .then(function (body) {
        return !!(body && body.status === 'ok');
      })
      .catch(function () {
        return false;
      });
  }

  // --- Screen-reader announcements (for the dropdown) ----------------------

  var announcer = null;
  var announceTimer = null;

  function announce(text) {
    if (!announcer) {
      announcer = h('div', {
        class: 'visually-hidden',
        role: 'status',
        'aria-live': 'polite',
        'aria-atomic': 'true',
        id: 'search-announcer',
      });
      document.body.appendChild(announcer);
    }
    clearTimeout(announceTimer);
    // Set after a pause: the final count of a burst of keystrokes, read once.
    announceTimer = setTimeout(function () {
      announcer.textContent = text;
    }, 400);
  }

  // --- The dropdown (header and home boxes) ---------------------------------

  var suggestCount = 0;

  function Suggest(input) {
    var form = input.form || input.closest('form');
    if (!form) return null;
    var n = suggestCount++;
    var panelId = n ? 'search-suggest-' + (n + 1) : 'search-suggest';
    var listId = panelId + '-list';

    var status = h('p', { class: 'search-status', id: panelId + '-status' });
    var list = h('div', {
      class: 'search-suggest__list',
      id: listId,
      role: 'listbox',
      'aria-label': S.suggestionsLabel,
    });
    var panel = h('div', { class: 'search-suggest', id: panelId, hidden: true }, [status, list]);
    form.classList.add('search-form--suggest');
    form.appendChild(panel);

    input.setAttribute('role', 'combobox');
    input.setAttribute('aria-autocomplete', 'list');
    input.setAttribute('aria-expanded', 'false');
    input.setAttribute('aria-controls', listId);
    input.setAttribute('aria-haspopup', 'listbox');

    var options = [];
    var active = -1;
    var current = { q: '', data: null, error: null }; // what the panel shows
    var pending = null; // AbortController of the request in flight
    var seq = 0;

    function isOpen() {
      return !panel.hidden;
    }

    function open() {
      if (isOpen()) return;
      panel.hidden = false;
      input.setAttribute('aria-expanded', 'true');
    }

    function close() {
      setActive(-1);
      if (!isOpen()) return;
      panel.hidden = true;
      input.setAttribute('aria-expanded', 'false');
    }

    function setActive(i) {
      if (active >= 0 && options[active]) {
        options[active].setAttribute('aria-selected', 'false');
        options[active].classList.remove('is-active');
      }
      active = i;
      var opt = options[i];
      if (opt) {
        opt.setAttribute('aria-selected', 'true');
        opt.classList.add('is-active');
        input.setAttribute('aria-activedescendant', opt.id);
        if (opt.scrollIntoView) opt.scrollIntoView({ block: 'nearest' });
      } else {
        active = -1;
        input.removeAttribute('aria-activedescendant');
      }
    }

    function move(delta) {
      if (!options.length) return;
      var i;
      if (active < 0) i = delta > 0 ? 0 : options.length - 1;
      else i = (active + delta + options.length) % options.length;
      setActive(i);
    }

    function option(cls, href, content) {
      var id = panelId + '-opt-' + options.length;
      var a = h(
        'a',
        { class: 'search-option ' + cls, id: id, role: 'option', href: href, tabindex: '-1', 'aria-selected': 'false' },
        content
      );
      options.push(a);
      return a;
    }

    function setStatus(kind, children) {
      clear(status);
      status.className = 'search-status' + (kind ? ' search-status--' + kind : '');
      append(status, children);
    }

    function browseLink() {
      return h('a', { href: BROWSE_URL, class: 'search-status__link' }, S.browseInstead);
    }

    function render() {
      options = [];
      active = -1;
      input.removeAttribute('aria-activedescendant');
      clear(list);
      var q = current.q;

      if (current.error) {
        setStatus('error', [h('strong', null, S.unavailable), ' ', browseLink()]);
        list.hidden = true;
        announce(S.unavailable + ' ' + S.browseInstead);
        return;
      }

      var groups = groupResults(current.data.results).slice(0, SUGGEST_PAGES);
      if (!groups.length) {
        setStatus('empty', [
          h('strong', null, fill(S.noResults, { q: quoted(q) })),
          h('span', { class: 'search-status__hint' }, S.checkSpelling),
          suggestions(q, BROWSE_URL),
          engineLine(current.data),
        ]);
        list.hidden = true;
        announce(fill(S.noResults, { q: quoted(q) }) + '.');
        return;
      }

      var sections = 0;
      groups.forEach(function (g) {
        var best = g.hits[0];
        var titleId = panelId + '-g' + list.children.length;
        var group = h('div', {
          class: 'search-group',
          role: 'group',
          'data-page-id': g.id,
          'aria-labelledby': titleId,
        });
        // A page in another language than the one searched (one the reader's
        // language has no translation of) says which, as the results page does.
        var inOther = MULTILINGUAL && g.lang && g.lang !== LANG;
        group.appendChild(
          option('search-option--page', best.href, [
            h('span', { class: 'search-option__title', id: titleId, lang: inOther ? g.lang : null }, [
              g.title,
              inOther ? h('span', { class: 'search-option__lang' }, ' ' + langName(g.lang)) : null,
            ]),
            g.crumbs ? h('span', { class: 'search-option__path' }, g.crumbs) : null,
            snippetLine(best, !best.intro),
          ])
        );
        sections++;
        g.hits.slice(1, 1 + SUGGEST_SECTIONS).forEach(function (hit) {
          sections++;
          group.appendChild(
            option('search-option--section', hit.href, [
              h('span', { class: 'search-option__section' }, hit.intro ? S.overview : hit.label),
              snippetLine(hit, false),
            ])
          );
        });
        list.appendChild(group);
      });

      list.appendChild(
        option('search-option--all', searchPageUrl(q), [
          h('span', { class: 'search-option__all-text' }, fill(S.seeAll, { q: quoted(q) })),
          h('span', { class: 'search-option__arrow', 'aria-hidden': 'true' }, '\u2192'),
        ])
      );
      list.hidden = false;

      var articles = plural(groups.length, S.articlesOne, S.articlesOther);
      var summary = articles + ' \u00b7 ' + plural(sections, S.sectionsOne, S.sectionsOther);
      setStatus('', [correctedLine(current.data), h('span', null, summary), engineLine(current.data)]);
      announce(fill(S.foundFor, { articles: articles, q: quoted(q) }));
    }

    function snippetLine(hit, withLabel) {
      var line = h('span', { class: 'search-option__snippet' });
      if (withLabel && hit.label) {
        line.appendChild(h('span', { class: 'search-option__in' }, hit.label));
        line.appendChild(document.createTextNode(' \u2014 '));
      }
      line.appendChild(renderSegments(hit.segs));
      return line;
    }

    /** Asks for suggestions: fused, or (`typing`) BM25 while the reader types. */
    function search(q, typing) {
      if (pending) pending.abort();
      var my = ++seq;
      var ctrl = new AbortController();
      pending = ctrl;
      panel.classList.add('is-loading');
      panel.setAttribute('aria-busy', 'true');
      // A box that does not end in a space is mid-word: both rankings read the
      // unfinished word as the word it most likely becomes.
      var how = { typing: typing, partial: /\S$/.test(input.value) };
      searchApi(q, SUGGEST_K, 1, ctrl.signal, how).then(
        function (data) {
          if (my !== seq) return;
          finish();
          current = { q: q, data: data, error: null, settled: !typing };
          render();
          if (document.activeElement === input) open();
          if (!typing) {
            whenSemantic(data, function () {
              if (current.q === q && current.data === data) search(q, false);
            });
          }
        },
        function (err) {
          if (my !== seq || err.kind === 'aborted') return;
          finish();
          if (window.console) console.warn('search: ' + err.message);
          current = { q: q, data: null, error: err };
          render();
          if (document.activeElement === input) open();
        }
      );
      function finish() {
        pending = null;
        panel.classList.remove('is-loading');
        panel.removeAttribute('aria-busy');
      }
    }

    var searchSoon = debounce(function () {
      var q = normalizeQuery(input.value);
      if (q.length >= MIN_CHARS) search(q, true);
    }, DEBOUNCE_MS);

    // The reader has stopped: the fused ranking, unless it is already shown.
    var settleSoon = debounce(function () {
      var q = normalizeQuery(input.value);
      if (q.length >= MIN_CHARS && !(q === current.q && current.settled)) search(q, false);
    }, SETTLE_MS);

    function cancel() {
      searchSoon.cancel();
      settleSoon.cancel();
      seq++;
      if (pending) pending.abort();
      pending = null;
      panel.classList.remove('is-loading');
      panel.removeAttribute('aria-busy');
    }

    input.addEventListener('input', function () {
      var q = normalizeQuery(input.value);
      if (q.length < MIN_CHARS) {
        cancel();
        close();
        return;
      }
      setActive(-1);
      if (q === current.q && current.data) {
        cancel();
        render();
        open();
        if (!current.settled) settleSoon();
        return;
      }
      searchSoon();
      settleSoon();
    });

    input.addEventListener('focus', function () {
      var q = normalizeQuery(input.value);
      if (q.length < MIN_CHARS || q !== current.q) return;
      if (current.data) open();
      else if (current.error) search(q, false); // the service may be back
    });

    input.addEventListener('keydown', function (e) {
      if (e.isComposing || e.keyCode === 229) return;
      var q = normalizeQuery(input.value);
      switch (e.key) {
        case 'ArrowDown':
        case 'Down':
        case 'ArrowUp':
        case 'Up': {
          if (e.altKey || e.ctrlKey || e.metaKey) return;
          e.preventDefault();
          var delta = e.key === 'ArrowDown' || e.key === 'Down' ? 1 : -1;
          // The reader is choosing among these suggestions: do not swap them.
          if (current.data && q === current.q) cancel();
          if (!isOpen()) {
            if (q.length >= MIN_CHARS && q === current.q && (current.data || current.error)) {
              render();
              open();
              move(delta);
            } else if (q.length >= MIN_CHARS) {
              searchSoon.cancel();
              settleSoon.cancel();
              search(q, false);
            }
            return;
          }
          move(delta);
          return;
        }
        case 'Enter': {
          if (isOpen() && active >= 0 && options[active]) {
            e.preventDefault();
            var href = options[active].href;
            close();
            window.location.assign(href);
          }
          // Otherwise the form submits to search.html?q=...
          return;
        }
        case 'Escape':
        case 'Esc': {
          // First Esc: clear the box and close the panel; the next one: blur.
          e.preventDefault();
          if (input.value || isOpen()) {
            cancel();
            input.value = '';
            current = { q: '', data: null, error: null };
            close();
          } else {
            input.blur();
          }
          return;
        }
        case 'Tab':
          // Results: the options are not tab stops, so Tab leaves the box.
          // A message (error, no results) keeps its link reachable by Tab.
          if (options.length) close();
          return;
        default:
          return;
      }
    });

    // Keep the focus in the box while the mouse is used on the panel (the
    // click still follows the link).
    panel.addEventListener('mousedown', function (e) {
      if (e.button === 0) e.preventDefault();
    });
    panel.addEventListener('mousemove', function (e) {
      var opt = e.target.closest && e.target.closest('.search-option');
      if (opt) {
        var i = options.indexOf(opt);
        if (i >= 0 && i !== active) setActive(i);
      }
    });
    panel.addEventListener('click', function (e) {
      var link = e.target.closest && e.target.closest('a[href]');
      if (link && !e.defaultPrevented && !(e.ctrlKey || e.metaKey || e.shiftKey || e.button)) close();
    });

    form.addEventListener('focusout', function (e) {
      if (!e.relatedTarget || !form.contains(e.relatedTarget)) {
        // Wait: a tap on the panel can blur the box before the click lands.
        setTimeout(function () {
          if (!form.contains(document.activeElement)) close();
        }, 150);
      }
    });
    document.addEventListener('pointerdown', function (e) {
      if (isOpen() && !form.contains(e.target)) close();
    });
    window.addEventListener('pageshow', function (e) {
      if (e.persisted) close();
    });

    return { input: input, close: close };
  }

  // --- The results page (search.html) ---------------------------------------

  function ResultsPage(resultsEl) {
    var input = document.getElementById('search-input');
    var form = input && (input.form || input.closest('form'));
    var queryEl = document.getElementById('search-query');
    var notice = document.getElementById('search-notice');
    var tree = document.getElementById('site-tree');
    var status = document.getElementById('search-status');
    if (!status) {
      status = h('p', { class: 'search-status', id: 'search-status', role: 'status', 'aria-live': 'polite' });
      resultsEl.parentNode.insertBefore(status, resultsEl);
    }
    var baseTitle = document.title;
    var details = null;
    var state = { q: '', page: 0, results: [], hasMore: false };
    var pending = null;
    var seq = 0;

    // The site tree goes under a <details>, collapsed once search answers.
    function treeDetails() {
      if (details || !tree) return details;
      var heading = tree.querySelector('h2');
      var body = tree.querySelector('.tree');
      if (!heading || !body) return null;
      details = h('details', { class: 'site-tree__details', open: true });
      var summary = h('summary', { class: 'site-tree__summary' });
      summary.appendChild(heading);
      details.appendChild(summary);
      details.appendChild(body);
      tree.appendChild(details);
      tree.classList.add('site-tree--collapsible');
      return details;
    }

    function serviceUp(up, collapseTree) {
      if (notice) notice.hidden = up;
      var d = treeDetails();
      if (d) d.open = !(up && collapseTree);
    }

    function setQueryLine(q) {
      if (!queryEl) return;
      clear(queryEl);
      if (q) {
        append(queryEl, fillNodes(S.resultsFor, { q: h('strong', { class: 'search-header__terms' }, quoted(q)) }));
      } else {
        append(queryEl, fillNodes(S.typeHint, { example: h('em', null, quoted(S.example)) }));
      }
    }

    function updateUrl(q) {
      var params = MULTILINGUAL && LANG !== PAGE_LANG ? { q: q, lang: LANG } : { q: q };
      var url = location.pathname + (q ? '?' + new URLSearchParams(params).toString() : '');
      try {
        history.replaceState(history.state, '', url);
      } catch (e) {
        /* file:// or sandboxed: the URL just doesn't follow */
      }
      document.title = q ? quoted(q) + ' \u00b7 ' + baseTitle : baseTitle;
    }

    function setStatus(kind, children) {
      clear(status);
      status.className = 'search-status' + (kind ? ' search-status--' + kind : '');
      append(status, children);
    }

    function run(q, page) {
      if (pending) pending.abort();
      var my = ++seq;
      var ctrl = new AbortController();
      pending = ctrl;
      resultsEl.setAttribute('aria-busy', 'true');
      resultsEl.classList.add('is-loading');
      if (page === 1 && !resultsEl.firstChild) setStatus('loading', S.searching);
      var more = resultsEl.querySelector('.search-more');
      if (more) more.disabled = true;
      searchApi(q, PAGE_K, page, ctrl.signal).then(
        function (data) {
          if (my !== seq) return;
          finish();
          var before = page === 1 ? 0 : groupResults(state.results).length;
          state = {
            q: q,
            page: page,
            results: page === 1 ? data.results.slice() : state.results.concat(data.results),
            hasMore: !!data.has_more && page < MAX_PAGE,
            data: data,
          };
          render(page > 1 ? before : -1);
          if (page === 1) {
            whenSemantic(data, function () {
              if (state.data === data) run(q, 1);
            });
          }
        },
        function (err) {
          if (my !== seq || err.kind === 'aborted') return;
          finish();
          if (window.console) console.warn('search: ' + err.message);
          if (page > 1) {
            setStatus('error', [h('strong', null, S.moreFailed), ' ' + S.tryAgain]);
            var btn = resultsEl.querySelector('.search-more');
            if (btn) btn.disabled = false;
            return;
          }
          state = { q: q, page: 0, results: [], hasMore: false };
          clear(resultsEl);
          serviceUp(false);
          // This message says it all: the generic no-JavaScript notice would repeat it.
          if (notice) notice.hidden = true;
          setStatus('error', [
            h('strong', null, S.unavailable),
            ' ',
            h('a', { href: '#site-tree', class: 'search-status__link' }, S.browseInstead),
          ]);
        }
      );
      function finish() {
        pending = null;
        resultsEl.removeAttribute('aria-busy');
        resultsEl.classList.remove('is-loading');
      }
    }

    function render(focusGroup) {
      var q = state.q;
      var groups = groupResults(state.results);
      clear(resultsEl);
      if (!groups.length) {
        setStatus('empty', [
          h('strong', null, fill(S.noResults, { q: quoted(q) }) + '.'),
          ' ',
          h('span', { class: 'search-status__hint' }, S.checkSpelling),
          langLine(state.data, q),
          suggestions(q, '#site-tree'),
          engineLine(state.data),
        ]);
        serviceUp(true, false);
        return;
      }
      serviceUp(true, true);

      var sections = 0;
      var ol = h('ol', { class: 'search-result-list' });
      groups.forEach(function (g, gi) {
        var best = g.hits[0];
        sections += g.hits.length;
        var item = h('li', { class: 'search-result', 'data-page-id': g.id });
        // On a site in several languages, a page in another language than the
        // one searched says which (its title is in it: lang for screen readers).
        var inOther = MULTILINGUAL && g.lang && g.lang !== LANG;
        item.appendChild(
          h('h2', { class: 'search-result__title' }, [
            h('a', { href: best.href, class: 'search-result__link', lang: inOther ? g.lang : null }, g.title),
            inOther ? h('span', { class: 'search-result__lang' }, ' ' + langName(g.lang)) : null,
          ])
        );
        if (g.crumbs) item.appendChild(h('p', { class: 'search-result__path' }, g.crumbs));
        var first = h('p', { class: 'search-result__snippet' });
        if (!best.intro && best.label) {
          first.appendChild(h('a', { href: best.href, class: 'search-result__in' }, best.label));
          first.appendChild(document.createTextNode(' \u2014 '));
        }
        first.appendChild(renderSegments(best.segs));
        item.appendChild(first);
        var rest = g.hits.slice(1);
        if (rest.length) {
          var ulId = 'search-result-sections-' + gi;
          var ul = h('ul', {
            class: 'search-result__sections',
            id: ulId,
            'aria-label': fill(S.moreSectionsIn, { title: g.title }),
          });
          rest.forEach(function (hit, i) {
            ul.appendChild(
              h('li', { class: 'search-result__section', hidden: i >= PAGE_SECTIONS }, [
                h('a', { href: hit.href, class: 'search-result__section-link' }, hit.intro ? S.overview : hit.label),
                hit.segs.length ? h('p', { class: 'search-result__snippet' }, renderSegments(hit.segs)) : null,
              ])
            );
          });
          item.appendChild(ul);
          if (rest.length > PAGE_SECTIONS) item.appendChild(moreSectionsButton(ul, rest.length - PAGE_SECTIONS));
        }
        ol.appendChild(item);
        if (gi === focusGroup) item.setAttribute('data-focus', '');
      });
      resultsEl.appendChild(ol);

      if (state.hasMore) {
        var btn = h('button', { type: 'button', class: 'search-more' }, S.showMore);
        btn.addEventListener('click', function () {
          run(state.q, state.page + 1);
        });
        resultsEl.appendChild(btn);
      }

      setStatus('count', [
        correctedLine(state.data),
        langLine(state.data, q),
        h('strong', null, plural(groups.length, S.articlesOne, S.articlesOther)),
        ' \u00b7 ' + plural(sections, S.matchingOne, S.matchingOther) + (state.hasMore ? ' \u00b7 ' + S.bestFirst : ''),
        engineLine(state.data),
      ]);

      if (focusGroup >= 0) {
        var links = resultsEl.querySelectorAll('.search-result__link');
        var target =
          resultsEl.querySelector('[data-focus] .search-result__link') ||
          resultsEl.querySelector('.search-more') ||
          links[links.length - 1];
        if (target) target.focus();
      }
    }

    /** "Show 4 more sections" under a result with many matching sections. */
    function moreSectionsButton(ul, hidden) {
      var label = plural(hidden, S.showSectionsOne, S.showSectionsOther);
      var btn = h('button', {
        type: 'button',
        class: 'search-result__more',
        'aria-expanded': 'false',
        'aria-controls': ul.id,
      }, label);
      btn.addEventListener('click', function () {
        var expand = btn.getAttribute('aria-expanded') !== 'true';
        var items = ul.children;
        for (var i = PAGE_SECTIONS; i < items.length; i++) items[i].hidden = !expand;
        btn.setAttribute('aria-expanded', String(expand));
        btn.textContent = expand ? S.showFewer : label;
      });
      return btn;
    }

    function show(q, immediate) {
      q = normalizeQuery(q);
      if (!q) {
        setQueryLine('');
        updateUrl('');
        if (pending) pending.abort();
        seq++;
        state = { q: '', page: 0, results: [], hasMore: false };
        clear(resultsEl);
        setStatus('', '');
        var d = treeDetails();
        if (d) d.open = true;
        return;
      }
      if (!immediate && q.length < MIN_CHARS) return;
      setQueryLine(q);
      updateUrl(q);
      if (q === state.q && state.page > 0 && !pending) return;
      run(q, 1);
    }

    var showSoon = debounce(function () {
      show(input.value, false);
    }, DEBOUNCE_MS);

    if (input) {
      input.addEventListener('input', function () {
        showSoon();
      });
      input.addEventListener('keydown', function (e) {
        if ((e.key === 'Escape' || e.key === 'Esc') && !e.isComposing) {
          if (input.value) {
            e.preventDefault();
            input.value = '';
            showSoon.cancel();
            show('', true);
          } else {
            input.blur();
          }
        }
      });
    }
    if (form) {
      form.addEventListener('submit', function (e) {
        e.preventDefault();
        showSoon.cancel();
        show(input ? input.value : '', true);
      });
    }

    var initial = normalizeQuery(new URLSearchParams(location.search).get('q'));
    if (input) input.value = initial;
    if (initial) {
      show(initial, true);
    } else {
      setQueryLine('');
      checkHealth().then(function (up) {
        if (!state.q) serviceUp(up, false);
      });
    }
    return { input: input };
  }

  // --- Start ------------------------------------------------------------------

  function start() {
    carryLang();
    var resultsEl = document.getElementById('search-results');
    var primary = null;
    if (resultsEl) {
      var page = ResultsPage(resultsEl);
      primary = page.input;
    } else {
      ['search-input', 'home-search-input'].forEach(function (id) {
        var el = document.getElementById(id);
        if (el && Suggest(el) && !primary) primary = el;
      });
      // The home page: its hero box is the one "/" focuses.
      var home = document.getElementById('home-search-input');
      if (home) primary = home;
    }

    if (primary) primary.setAttribute('aria-keyshortcuts', '/');

    document.addEventListener('keydown', function (e) {
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented || !primary) return;
      var t = e.target;
      var tag = t && t.tagName ? t.tagName.toLowerCase() : '';
      if (tag === 'input' || tag === 'textarea' || tag === 'select' || (t && t.isContentEditable)) return;
      e.preventDefault();
      primary.focus();
      if (primary.select) primary.select();
    });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
