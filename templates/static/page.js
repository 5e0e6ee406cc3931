/*
 * page.js — what a script adds to a page (copied to assets/page.js). No
 * dependencies. Included from base.html with `<script src="{root}assets/page.js"
 * defer>`; every page works without it.
 *
 *  - Code blocks (.prose pre > code): a bar above each with its language (from
 *    the `language-x` class) and a Copy button; "Copied" for two seconds, and
 *    the same said to screen readers through a polite live region.
 *  - "On this page": the entry of the section being read gets
 *    aria-current="true" (an IntersectionObserver on the headings it lists).
 *  - The theme button (.theme-toggle): system → light → dark, stored in
 *    localStorage under kb-theme (theme.js applies it before the first paint).
 *  - The section sidebar: open on wide screens, scrolled to the current page.
 *  - The header's "More" menu: closed by Escape or a click elsewhere.
 *  - A translated page read by someone whose browser prefers another of its
 *    languages (navigator.languages, in order; `pt` takes `pt-br`): a note
 *    above the switcher, in that language, links its version ("Diese Seite
 *    auf Deutsch lesen"), as MDN does. Closing it is remembered per language
 *    in localStorage (kb-lang-dismissed); a reader whose first language is
 *    the page's sees none.
 *  - "Was this helpful?" ([data-page-feedback], under an article): shown only
 *    when the site has its API, as the chat widget finds out (its one probe of
 *    /api/health, window.kbWidget.probe(): 'chat' is an API, anything else —
 *    a static host, an outage, no widget — keeps the block hidden, since there
 *    is nowhere to send it). Yes sends at once; No opens an optional comment,
 *    sent with "Send feedback". The thanks replace the question, in a polite
 *    live region that takes the focus.
 *
 * Words: English here; a page in another language has its own as JSON in
 * this script's data-strings (written by the build from its one string table,
 * site-builder's i18n module, under the names of T below), so the site's words
 * have one owner and English pages carry nothing extra.
 *
 * Hooks for tests: .lang-suggest (its link and .lang-suggest__close),
 * .code-block__copy, .code-block__lang, .toc a[aria-current],
 * .theme-toggle[data-mode], html[data-theme], [data-page-feedback] (its
 * [data-rating] buttons, [data-page-feedback-form], [data-page-feedback-status]
 * with data-state="sent" once thanked).
 */
(function () {
  'use strict';

  // What the page says, in English; data-strings replaces any of them.
  var T = {
    copy: "Copy",
    copied: "Copied",
    copyFallback: "Select and copy",
    copyCode: "Copy the code",
    copyLangCode: "Copy the {lang} code",
    codeCopied: "Code copied",
    copyFailed: "Copying failed: select the code and copy it",
    theme: "Colour theme: {mode}",
    themeSwitch: "{theme} (switch to {next})",
    themeSystem: "as your system",
    themeLight: "light",
    themeDark: "dark",
    sending: "Sending…",
    thanks: "Thank you for your feedback.",
    tooMany: "Too many answers from your network just now; try again in {n} s.",
    notSent: "Your feedback could not be sent ({status}). Try again later.",
    offline: "Your feedback could not be sent. Try again later."
  };
  (function ownWords(script) {
    var given;
    try { given = JSON.parse((script && script.getAttribute('data-strings')) || '{}'); } catch (e) { return; }
    for (var k in T) {
      if (given && typeof given[k] === 'string') T[k] = given[k];
    }
  })(document.currentScript);
  // A pattern's {name} filled from `values`.
  function fill(pattern, values) {
    return pattern.replace(/\{(\w+)\}/g, function (m, name) {
      return Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : m;
    });
  }

  var THEME_KEY = 'kb-theme';
  var WIDE = '(min-width: 64rem)';
  // A heading is being read once its top passes this share of the window.
  var READING_LINE = 0.25;
  // Languages whose name is not their class; text-only ones get no label.
  var LANGUAGES = {
    sh: 'Shell', shell: 'Shell', bash: 'Bash', zsh: 'Zsh', console: 'Console', ps1: 'PowerShell',
    powershell: 'PowerShell', bat: 'Batch', cmd: 'Batch', py: 'Python', python: 'Python', r: 'R',
    js: 'JavaScript', javascript: 'JavaScript', ts: 'TypeScript', json: 'JSON', yaml: 'YAML',
    yml: 'YAML', toml: 'TOML', ini: 'INI', html: 'HTML', xml: 'XML', css: 'CSS', sql: 'SQL',
    c: 'C', cpp: 'C++', 'c++': 'C++', cs: 'C#', java: 'Java', go: 'Go', rust: 'Rust',
    fortran: 'Fortran', matlab: 'MATLAB', julia: 'Julia', dockerfile: 'Dockerfile',
    md: 'Markdown', markdown: 'Markdown', diff: 'Diff',
    text: '', txt: '', plain: '', plaintext: '', none: '', output: ''
  };

  // --- Code blocks ------------------------------------------------------------

  var liveRegion = null;

  function announce(text) {
    if (!liveRegion) {
      liveRegion = document.createElement('div');
      liveRegion.className = 'visually-hidden';
      liveRegion.setAttribute('role', 'status');
      liveRegion.setAttribute('aria-live', 'polite');
      document.body.appendChild(liveRegion);
    }
    liveRegion.textContent = '';
    // A new text node, a moment later: read again even when it is the same.
    window.setTimeout(function () { liveRegion.textContent = text; }, 50);
  }

  function languageOf(code) {
    var m = /(?:^|\s)language-([\w+#.-]+)/.exec(code.className);
    if (!m) return '';
    var key = m[1].toLowerCase();
    return Object.prototype.hasOwnProperty.call(LANGUAGES, key) ? LANGUAGES[key] : m[1];
  }

  // The clipboard API needs a secure context; elsewhere, the old way.
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).then(function () { return true; }, function () { return legacyCopy(text); });
    }
    return Promise.resolve(legacyCopy(text));
  }

  function legacyCopy(text) {
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'visually-hidden';
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
    area.remove();
    return ok;
  }

  function addCodeBar(code) {
    var pre = code.parentElement;
    if (pre.parentElement && pre.parentElement.classList.contains('code-block')) return;
    var wrap = document.createElement('div');
    wrap.className = 'code-block';
    pre.parentNode.insertBefore(wrap, pre);
    wrap.appendChild(pre);
    var bar = document.createElement('div');
    bar.className = 'code-block__bar';
    var language = languageOf(code);
    if (language) {
      var label = document.createElement('span');
      label.className = 'code-block__lang';
      label.textContent = language;
      bar.appendChild(label);
    }
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'code-block__copy';
    button.textContent = T.copy;
    button.setAttribute('aria-label', language ? fill(T.copyLangCode, { lang: language }) : T.copyCode);
    var reset = 0;
    button.addEventListener('click', function () {
      copyText(code.textContent.replace(/\n$/, '')).then(function (ok) {
        button.textContent = ok ? T.copied : T.copyFallback;
        button.toggleAttribute('data-copied', ok);
        announce(ok ? T.codeCopied : T.copyFailed);
        window.clearTimeout(reset);
        reset = window.setTimeout(function () {
          button.textContent = T.copy;
          button.removeAttribute('data-copied');
        }, 2000);
      });
    });
    bar.appendChild(button);
    wrap.insertBefore(bar, pre);
  }

  function codeBlocks() {
    var codes = document.querySelectorAll('.prose pre > code');
    for (var i = 0; i < codes.length; i++) addCodeBar(codes[i]);
  }

  // --- "On this page" follows the reading ----------------------------------------

  function contentsFollowReading() {
    var links = Array.prototype.slice.call(document.querySelectorAll('.toc a[href^="#"]'));
    if (!links.length || !('IntersectionObserver' in window)) return;
    var idOf = function (a) {
      try { return decodeURIComponent(a.hash.slice(1)); } catch (e) { return a.hash.slice(1); }
    };
    var seen = {};
    var headings = [];
    links.forEach(function (a) {
      var id = idOf(a);
      var h = document.getElementById(id);
      if (h && !seen[id]) { seen[id] = true; headings.push(h); }
    });
    if (!headings.length) return;
    var current = null;
    function mark() {
      var line = window.innerHeight * READING_LINE;
      var active = null;
      for (var i = 0; i < headings.length; i++) {
        if (headings[i].getBoundingClientRect().top <= line) active = headings[i];
        else break;
      }
      // Scrolled to the end: the last section is the one being read, even when
      // its heading cannot rise to the line.
      var end = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 2;
      if (end && window.scrollY > 0) active = headings[headings.length - 1];
      if (active === current) return;
      current = active;
      links.forEach(function (a) {
        if (active && idOf(a) === active.id) {
          a.setAttribute('aria-current', 'true');
          keepVisible(a);
        } else {
          a.removeAttribute('aria-current');
        }
      });
    }
    var observer = new IntersectionObserver(mark, { rootMargin: '0px 0px -' + (100 - READING_LINE * 100) + '% 0px' });
    headings.forEach(function (h) { observer.observe(h); });
    // The observer says when a heading crosses the line; the end of the page has no heading to cross.
    var pending = false;
    window.addEventListener('scroll', function () {
      if (pending) return;
      pending = true;
      window.requestAnimationFrame(function () { pending = false; mark(); });
    }, { passive: true });
    mark();
  }

  // A long contents column scrolls itself to the entry being read.
  function keepVisible(link) {
    var box = link.closest('.toc--sidebar');
    if (!box || box.scrollHeight <= box.clientHeight) return;
    var top = link.getBoundingClientRect().top - box.getBoundingClientRect().top;
    if (top < 0 || top > box.clientHeight - link.offsetHeight) box.scrollTop += top - box.clientHeight / 3;
  }

  // --- The theme button -------------------------------------------------------

  function storedTheme() {
    try {
      var t = window.localStorage.getItem(THEME_KEY);
      return t === 'light' || t === 'dark' ? t : 'system';
    } catch (e) {
      return 'system';
    }
  }

  function themeButton() {
    var button = document.querySelector('[data-theme-toggle]');
    if (!button) return;
    var label = button.querySelector('[data-theme-label]');
    var NAMES = { system: T.themeSystem, light: T.themeLight, dark: T.themeDark };
    var NEXT = { system: 'light', light: 'dark', dark: 'system' };
    var mode = storedTheme();
    function apply() {
      var root = document.documentElement;
      if (mode === 'system') root.removeAttribute('data-theme');
      else root.setAttribute('data-theme', mode);
      var text = fill(T.theme, { mode: NAMES[mode] });
      button.setAttribute('data-mode', mode);
      button.title = fill(T.themeSwitch, { theme: text, next: NAMES[NEXT[mode]] });
      if (label) label.textContent = text;
    }
    button.addEventListener('click', function () {
      mode = NEXT[mode];
      try {
        if (mode === 'system') window.localStorage.removeItem(THEME_KEY);
        else window.localStorage.setItem(THEME_KEY, mode);
      } catch (e) {
        // Not remembered; this page still switches.
      }
      apply();
    });
    // Another tab chose a theme.
    window.addEventListener('storage', function (e) {
      if (e.key === THEME_KEY) { mode = storedTheme(); apply(); }
    });
    apply();
  }

  // --- The sidebar and the "More" menu -------------------------------------------

  function sidebar() {
    var box = document.querySelector('.sidebar__disclosure');
    if (!box || !window.matchMedia) return;
    var wide = window.matchMedia(WIDE);
    var sync = function () { if (wide.matches) box.open = true; };
    sync();
    if (wide.addEventListener) wide.addEventListener('change', sync);
    var nav = box.closest('.sidebar');
    var current = box.querySelector('.sidebar__list [aria-current="page"]');
    if (wide.matches && nav && current && nav.scrollHeight > nav.clientHeight) {
      var top = current.getBoundingClientRect().top - nav.getBoundingClientRect().top;
      nav.scrollTop += top - nav.clientHeight / 3;
    }
  }

  function moreMenu() {
    var menus = document.querySelectorAll('.site-nav__more');
    Array.prototype.forEach.call(menus, function (menu) {
      document.addEventListener('click', function (e) {
        if (menu.open && !menu.contains(e.target)) menu.open = false;
      });
      menu.addEventListener('keydown', function (e) {
        if (e.key === 'Escape' && menu.open) {
          menu.open = false;
          menu.querySelector('summary').focus();
        }
      });
    });
  }

  // --- The reader's language -------------------------------------------------------

  // "Read this page in …" and "Close", in the language they offer: the reader's,
  // not the page's. The site's twelve languages; another is offered by its name.
  var READ_IN = {
    en: ['Read this page in English', 'Close'],
    de: ['Diese Seite auf Deutsch lesen', 'Schließen'],
    fr: ['Lire cette page en français', 'Fermer'],
    es: ['Leer esta página en español', 'Cerrar'],
    fi: ['Lue tämä sivu suomeksi', 'Sulje'],
    sv: ['Läs den här sidan på svenska', 'Stäng'],
    ja: ['このページを日本語で読む', '閉じる'],
    zh: ['阅读本页的中文版', '关闭'],
    pt: ['Ler esta página em português', 'Fechar'],
    it: ['Leggi questa pagina in italiano', 'Chiudi'],
    nl: ['Lees deze pagina in het Nederlands', 'Sluiten'],
    ko: ['이 페이지를 한국어로 읽기', '닫기']
  };
  var DISMISSED = 'kb-lang-dismissed';

  function primary(tag) { return String(tag || '').toLowerCase().split('-')[0]; }

  // The switcher's link in the first language the reader prefers that the
  // page has (exactly, else by its primary subtag); null when that is the
  // page's own.
  function preferredVersion(links) {
    var prefs = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language];
    for (var i = 0; i < prefs.length; i++) {
      var want = String(prefs[i] || '').toLowerCase();
      var hit = null;
      for (var j = 0; j < links.length && !hit; j++) {
        if (links[j].hreflang.toLowerCase() === want) hit = links[j];
      }
      for (var k = 0; k < links.length && !hit; k++) {
        if (primary(links[k].hreflang) === primary(want)) hit = links[k];
      }
      if (hit) return hit.getAttribute('aria-current') === 'page' ? null : hit;
    }
    return null;
  }

  function dismissed() {
    try { return (localStorage.getItem(DISMISSED) || '').split(' '); } catch (e) { return []; }
  }

  function suggestLanguage() {
    var nav = document.querySelector('.lang-switch');
    if (!nav) return;
    var link = preferredVersion(nav.querySelectorAll('a[hreflang]'));
    if (!link) return;
    var lang = link.hreflang;
    if (dismissed().indexOf(lang) >= 0) return;
    var words = READ_IN[primary(lang)] || [link.textContent, '×'];
    var note = document.createElement('div');
    note.className = 'lang-suggest';
    note.setAttribute('role', 'note');
    note.lang = lang;
    var a = document.createElement('a');
    a.href = link.href;
    a.hreflang = lang;
    a.textContent = words[0];
    var close = document.createElement('button');
    close.type = 'button';
    close.className = 'lang-suggest__close';
    close.setAttribute('aria-label', words[1]);
    close.textContent = '×';
    close.addEventListener('click', function () {
      try { localStorage.setItem(DISMISSED, dismissed().concat([lang]).join(' ').trim()); } catch (e) { /* kept for this view */ }
      note.remove();
    });
    note.appendChild(a);
    note.appendChild(close);
    nav.parentNode.insertBefore(note, nav);
  }

  // --- "Was this helpful?" -------------------------------------------------------

  // The widget's random per-browser id (its key and form, so a reader is one
  // visitor to both), made here if the widget has not made it yet; none when
  // the widget's script says data-visitor="off" or storage is closed.
  function visitorId() {
    if (document.querySelector('script[src*="widget"][data-visitor="off"]')) return '';
    try {
      var v = window.localStorage.getItem('kb-visitor');
      if (!v || !/^[A-Za-z0-9-]{8,64}$/.test(v)) {
        var b = new Uint8Array(12);
        window.crypto.getRandomValues(b);
        v = 'v-' + Array.prototype.map.call(b, function (x) { return (x < 16 ? '0' : '') + x.toString(16); }).join('');
        window.localStorage.setItem('kb-visitor', v);
      }
      return v;
    } catch (e) {
      return '';
    }
  }

  function pageFeedback(box) {
    var ask = box.querySelector('[data-page-feedback-ask]');
    var form = box.querySelector('[data-page-feedback-form]');
    var comment = form && form.querySelector('textarea');
    var status = box.querySelector('[data-page-feedback-status]');
    var choices = box.querySelectorAll('[data-rating]');
    if (!ask || !form || !comment || !status || choices.length !== 2) return;
    var busy = false;

    function say(text, state) {
      status.textContent = text;
      if (state) status.setAttribute('data-state', state);
      else status.removeAttribute('data-state');
    }

    function send(rating, text) {
      if (busy) return;
      busy = true;
      var controls = box.querySelectorAll('button, textarea');
      Array.prototype.forEach.call(controls, function (c) { c.disabled = true; });
      say(T.sending);
      var body = { page: box.getAttribute('data-page'), rating: rating };
      if (text) body.comment = text;
      var v = visitorId();
      if (v) body.visitor = v;
      fetch(box.getAttribute('data-endpoint'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body)
      }).then(function (res) {
        if (res.ok) {
          ask.hidden = true;
          form.hidden = true;
          say(T.thanks, 'sent');
          status.focus();
          return;
        }
        var wait = res.status === 429 ? parseInt(res.headers.get('retry-after') || '', 10) : NaN;
        throw new Error(wait > 0 ? fill(T.tooMany, { n: wait }) : fill(T.notSent, { status: res.status }));
      }).catch(function (e) {
        say(e instanceof TypeError ? T.offline : e.message, 'error');
      }).then(function () {
        busy = false;
        Array.prototype.forEach.call(controls, function (c) { c.disabled = false; });
      });
    }

    Array.prototype.forEach.call(choices, function (button) {
      button.addEventListener('click', function () {
        var rating = button.getAttribute('data-rating');
        Array.prototype.forEach.call(choices, function (b) { b.setAttribute('aria-pressed', String(b === button)); });
        if (rating === 'up') {
          form.hidden = true;
          send('up', '');
        } else {
          // The comment first; the thanks only once it (or nothing) is sent.
          say('');
          form.hidden = false;
          comment.focus();
        }
      });
    });
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      send('down', comment.value.trim());
    });

    var widget = window.kbWidget;
    if (!widget || typeof widget.probe !== 'function') return;
    widget.probe().then(function (mode) {
      if (mode === 'chat') box.hidden = false;
    }, function () {});
  }

  var feedbackStarted = false;
  function pageFeedbacks() {
    if (feedbackStarted) return;
    feedbackStarted = true;
    var box = document.querySelector('[data-page-feedback]');
    if (box) pageFeedback(box);
  }

  codeBlocks();
  contentsFollowReading();
  themeButton();
  sidebar();
  moreMenu();
  suggestLanguage();
  // After every deferred script: widget.js (after this file) defines kbWidget.
  // A deferred script runs while readyState is already 'interactive', before
  // DOMContentLoaded; 'load' covers a page.js added after that event.
  if (document.readyState === 'complete') {
    pageFeedbacks();
  } else {
    document.addEventListener('DOMContentLoaded', pageFeedbacks);
    window.addEventListener('load', pageFeedbacks);
  }
})();
