/*! Help-center chat widget. Plain JS, no dependencies. Embed:
 * <script src="https://kb.example.edu/widget.js" data-endpoint="https://kb.example.edu/api/chat" defer></script>
 * Options: data-title, data-greeting, data-accent, data-position (right|left).
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
  const TITLE = attr('title', 'Ask the help center');
  const GREETING = attr('greeting', 'Hi! Ask me anything about our help pages. I answer from the knowledge base and cite my sources.');
  const SEARCH_GREETING = attr('greeting', 'Hi! Ask a question and I will find the help pages that answer it.');
  const SUB_CHAT = 'Cited answers from our help pages', SUB_SEARCH = 'Finds the help pages for your question';
  const FOOT_CHAT = 'Answers come from the help center and may be incomplete. Check the linked pages.';
  const FOOT_SEARCH = 'Pages found by the help center\u2019s search. Open them for the full answer.';
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
        parent.append(link(safeUrl(s.url), { class: 'kb-cite', title: s.title, 'aria-label': 'Source ' + s.n + ': ' + s.title, text: s.n }));
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
  const host = h('div', { id: 'kb-widget-host', 'data-position': attr('position') === 'left' ? 'left' : 'right' });
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
  const log = h('div.kb-log', { role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' });
  const input = h('textarea.kb-input', { id: 'kb-input', rows: 1, maxlength: 4000, placeholder: 'Ask a question…' });
  const send = h('button.kb-send', { 'aria-label': 'Send', title: 'Send', type: 'submit' }, icon('send'));
  const stop = btn('kb-stop', 'Stop answering', 'stop', () => busy && busy.ctrl.abort());
  stop.hidden = true;
  const panel = h('div.kb-panel', { id: 'kb-panel', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'kb-title', hidden: true }, [
    h('div.kb-header', null, [
      h('span.kb-avatar', null, icon('chat')),
      h('div.kb-heading', null, [
        h('h2.kb-title', { id: 'kb-title', text: TITLE }),
        h('p.kb-sub', { text: SUB_CHAT })
      ]),
      btn('kb-ib kb-new', 'New conversation', 'pen', reset),
      btn('kb-ib kb-close', 'Close chat', 'x', () => close())
    ]),
    log,
    h('form.kb-form', { onsubmit: e => { e.preventDefault(); submit(); } }, [
      h('label.kb-sr', { for: 'kb-input', text: 'Your question' }),
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
  const step = q => h('p.kb-step', { title: q }, [icon('search'), h('span', { text: 'Searched: ' + q })]);
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

  function sources(list) {
    return h('div.kb-sources', null, [
      h('p.kb-sources-h', { text: 'Sources' }),
      h('ol.kb-citations', null, list.map(s => {
        const u = safeUrl(s.url), title = String(s.title || s.url || 'Source');
        const path = [].concat(s.path || []).map(String).slice(1);
        if (path[path.length - 1] === title) path.pop();
        const kids = [h('span.kb-n', { text: s.n }), h('span', { text: title })];
        return h('li', null, [
          u ? link(u, null, kids) : h('span', null, kids),
          path.length ? h('div.kb-path', { text: path.join(' › ') }) : null
        ]);
      }))
    ]);
  }
  function actions(turn) {
    const a = turn.a, status = h('span.kb-feedback-status', { role: 'status' });
    const tip = 'Quoted from the sources; ' + (a.degraded ? 'the language model was unavailable' : 'no language model is configured');
    const copyText = h('span', { text: 'Copy' });
    const copyBtn = h('button.kb-act kb-copy', { onclick: () => copy(a.content, copyBtn, copyText) }, [icon('copy'), copyText]);
    const rateBtn = (r, label) => {
      const b = btn('kb-act kb-' + r, label, r, () => rate(r));
      b.setAttribute('aria-pressed', a.rating === r);
      return b;
    };
    const up = rateBtn('up', 'Helpful'), down = rateBtn('down', 'Not helpful');
    const ask = 'What was missing or wrong? (optional)';
    const comment = h('textarea.kb-comment', { rows: 2, maxlength: 2000, 'aria-label': ask, placeholder: ask });
    const box = h('div.kb-comment-box', { hidden: true }, [comment, h('button.kb-btn kb-comment-send', {
      text: 'Send',
      onclick: () => feedback(turn, 'down', comment.value.trim(), status, 'Thanks for the feedback').then(ok => { if (ok) { box.hidden = true; down.focus(); } })
    })]);
    function rate(r) {
      if (a.rating === r) return;
      a.rating = r;
      save();
      up.setAttribute('aria-pressed', r === 'up');
      down.setAttribute('aria-pressed', r === 'down');
      box.hidden = r !== 'down';
      // A thumbs-down is recorded at once; the thanks wait for the comment (or its absence).
      feedback(turn, r, '', status, r === 'down' ? 'Noted. What was missing? Tell us below, or leave it at that.' : 'Thanks for the feedback');
      (box.hidden ? status : box).scrollIntoView({ block: 'nearest' });
    }
    return h('div', null, [
      h('div.kb-actions', null, [
        a.extractive ? h('span.kb-label kb-label-extractive', { title: tip }, ['Extractive answer', sr('. ' + tip + '.')]) : null,
        a.degraded ? h('span.kb-label kb-label-degraded', { title: 'The language model failed; this answer is quoted from the search results.', text: 'Model unavailable' }) : null,
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
    label.textContent = ok ? 'Copied' : 'Copy failed';
    clearTimeout(b.kbTimer);
    b.kbTimer = setTimeout(() => { label.textContent = 'Copy'; }, 2000);
  }
  async function feedback(turn, rating, comment, status, thanks) {
    status.className = 'kb-feedback-status';
    status.textContent = 'Sending…';
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
        throw new Error(code === 'unknown_answer' ? 'This answer can no longer be rated.'
          : res.status === 404 ? 'Feedback is not available right now.' : 'Could not send feedback (' + res.status + ').');
      }
      status.textContent = thanks;
      return true;
    } catch (e) {
      status.textContent = e instanceof TypeError ? 'Could not send feedback.' : e.message;
      status.classList.add('kb-bad');
    }
  }
  function render(el, turn) {
    const a = turn.a;
    el.className = 'kb-msg kb-assistant' + (a.abstained ? ' kb-abstained' : '');
    el.setAttribute('data-state', 'done');
    el.removeAttribute('aria-busy');
    el.replaceChildren(sr('Assistant: '), ...a.steps.map(step),
      a.abstained ? h('p.kb-label kb-label-abstained', null, [icon('info'), 'Not in the knowledge base']) : '',
      a.notice ? notice(a.notice) : '',
      h('div.kb-answer', null, md(a.content || 'No answer was returned.', citeMap(a.citations))),
      a.citations.length ? sources(a.citations) : '',
      actions(turn));
  }
  // An answer that did not come: its state, and a way to ask again.
  const retryBtn = (el, turn) =>
    h('button.kb-btn kb-retry', { text: 'Retry', onclick: () => { if (!busy) { el.remove(); run(turn); input.focus(); } } });
  function settle(el, state) {
    el.setAttribute('data-state', state);
    el.removeAttribute('aria-busy');
    const t = el.querySelector('.kb-typing');
    if (t) t.remove();
  }
  function failed(el, turn, err, aborted) {
    settle(el, 'error');
    const msg = aborted ? 'Stopped.'
      : err.status ? 'The help center could not answer (' + err.status + ')' + (err.message ? ': ' + err.message.replace(/`/g, '') : '.')
      : err.cut ? 'The answer was cut off. Please try again.'
      : 'Could not reach the help center. Check your connection and try again.';
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
    const r = await m.search(siteRoot + '_search/', q, 5, 1, false);
    const seen = new Set();
    return [].concat(r.results || []).filter(x => x && !seen.has(x.page_id) && seen.add(x.page_id))
      .map((x, i) => ({ n: i + 1, url: x.url, title: x.title, path: x.path }));
  }
  // The assistant is away (no answer, 5xx): the pages instead, and a retry.
  function offered(el, turn, found) {
    settle(el, 'offline');
    el.append(
      notice('The assistant is not reachable right now. These help pages match your question:'),
      sources(found),
      h('div.kb-error', null, [h('p', { text: 'Ask again when the assistant is back.' }), retryBtn(el, turn)]));
  }
  // A 429: not an outage. Says when to ask again, counting down to Retry-After.
  function limited(el, turn, err, found) {
    settle(el, 'limited');
    let left = Math.max(1, err.retryAfter || 30);
    const when = h('p.kb-wait', { role: 'status' });
    const again = retryBtn(el, turn);
    const tick = () => {
      when.textContent = left > 0 ? 'You can ask again in ' + left + (left === 1 ? ' second.' : ' seconds.') : 'You can ask again now.';
      again.disabled = left > 0;
      if (left-- > 0 && el.isConnected) setTimeout(tick, 1000);
    };
    el.append(
      notice('Many questions are being asked from your network just now, so the assistant is pausing.' +
        (found && found.length ? ' These help pages match your question:' : '')),
      found && found.length ? sources(found) : '',
      h('div.kb-error', null, [when, again]));
    tick();
  }
  // A site without /api: the help pages the site's search finds, as the answer.
  function pagesOnly(el, turn, found) {
    settle(el, 'search');
    el.append(found && found.length
      ? h('div', null, [h('p', { text: 'These help pages match your question:' }), sources(found)])
      : h('div', null, [
        h('p', { text: 'No help page matches your question. Try other words, or ' }, [link(siteRoot, null, 'browse the help center'), '.'])
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
    const typing = h('div.kb-typing', { role: 'img', 'aria-label': 'Looking through the help pages' }, [h('span'), h('span'), h('span')]);
    const el = turn.el = h('div.kb-msg kb-assistant', { 'data-state': 'streaming', 'aria-busy': 'true' }, [sr('Assistant: '), answer, typing]);
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
        st.notice = 'The assistant had a problem: ' + String(d.message || 'unknown error').replace(/[.\s]+$/, '') + '; answering from the search results instead.';
        el.insertBefore(notice(st.notice), answer);
        if (st.text) { st.text = ''; paint(); } // a fallback answer follows
      } else if (name === 'done') done = d;
    };
    try {
      const res = await fetch(endpoint.href, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify(Object.assign({ messages: history(turn), stream: true }, visitor() ? { visitor: visitor() } : {})), signal: ctrl.signal
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
    log.append(turn.uel = h('div.kb-msg kb-user', null, [sr('You: '), turn.q]));
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
    log.append(t.uel = h('div.kb-msg kb-user', null, [sr('You: '), t.q]), t.el = h('div'));
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
