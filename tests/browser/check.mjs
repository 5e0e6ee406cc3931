// Browser checks of the site search and the chat widget, in Debian's Chromium
// driven by Playwright (playwright-core). Started by tests/edge/browser.rs, which
// runs the host (the real component), a scripted LLM, and a foreign page that
// embeds the widget from another origin:
//
//   node check.mjs SCENARIO        SCENARIO: search | widget | keyboard | hostile | extractive | hostile-site | hostile-files | static | semantic | navigation | a11y | page-feedback | languages | languages-static | rare-language-static
//
// Environment: KB_SITE (the host, http://127.0.0.1:PORT), KB_FOREIGN (the foreign
// page), KB_ARTIFACTS (folder for screenshots), KB_CHROMIUM (default
// /usr/bin/chromium), KB_PAGES (hostile-site: the site's pages, one per line),
// KB_FILES (hostile-files: the files pages link to, one per line), KB_TOKEN
// (page-feedback: the host's insights_token). Exits non-zero with a message when
// a check fails.

import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const SITE = process.env.KB_SITE;
const FOREIGN = process.env.KB_FOREIGN;
const ARTIFACTS = process.env.KB_ARTIFACTS || join(tmpdir(), 'kb-browser-artifacts');
const scenario = process.argv[2];
mkdirSync(ARTIFACTS, { recursive: true });

async function browser(options = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'kb-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.KB_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run', '--disable-sync'],
    viewport: { width: 1280, height: 860 },
    ...options,
  });
  const errors = [];
  context.on('weberror', (e) => errors.push(String(e.error())));
  return {
    context,
    errors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const shot = (page, name) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });

// ---------------------------------------------------------------- site search
async function search() {
  for (const scheme of ['light', 'dark']) {
    const b = await browser({ colorScheme: scheme });
    const page = b.context.pages()[0] || (await b.context.newPage());
    await page.goto(`${SITE}/campus/parking/buying-a-parking-permit.html`);
    if (scheme === 'light') await shot(page, 'site-page-light');
    // `/` focuses the header box; typing searches as you type.
    await page.locator('body').click({ position: { x: 5, y: 300 } });
    await page.keyboard.press('/');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'search-input', '/ focuses the search box');
    const asked = [];
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (u.pathname.endsWith('/api/search')) asked.push(u.searchParams);
    });
    const fusedAnswer = page.waitForResponse((r) => {
      const u = new URL(r.url());
      return u.pathname.endsWith('/api/search') && u.searchParams.get('mode') === 'convex' &&
        u.searchParams.get('q') === 'eduroam certificate';
    }, { timeout: 10000 });
    await page.keyboard.type('eduroam certificate', { delay: 20 });
    // While typing the box asks for BM25 with the unfinished word completed; once
    // the reader pauses, for the fused ranking of the whole query, once.
    assert.equal((await fusedAnswer).status(), 200);
    await page.waitForFunction((q) => {
      const panel = document.getElementById('search-suggest');
      const all = panel && panel.querySelector('a.search-option--all');
      return all && !panel.hasAttribute('aria-busy') && all.textContent.includes(q);
    }, 'eduroam certificate', { timeout: 10000 });
    const typing = asked.filter((p) => p.get('mode') === 'bm25');
    assert.ok(typing.some((p) => p.get('partial') === 'true' && p.get('q') === 'eduroam certificate'),
      `while typing: bm25 with partial=true (${asked.map(String).join(' ; ')})`);
    const fused = asked.filter((p) => p.get('mode') === 'convex');
    assert.equal(fused.length, 1, 'one fused request, after the pause');
    assert.equal(fused[0].get('partial'), 'true', 'the box did not end in a space');
    assert.ok(await page.locator('#search-suggest .search-group').count() >= 1, 'results grouped by page');
    const marks = await page.locator('#search-suggest mark').count();
    assert.ok(marks >= 1, 'query terms highlighted');
    await shot(page, `search-dropdown-${scheme}`);
    if (scheme === 'dark') {
      await b.close();
      continue;
    }
    // Arrows move, Enter opens the result at its anchor.
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.locator('#search-suggest [aria-selected="true"]').count(), 1, 'ArrowDown selects an option');
    const href = await page.locator('#search-suggest [aria-selected="true"]').getAttribute('href');
    await Promise.all([page.waitForURL((u) => u.hash.length > 1), page.keyboard.press('Enter')]);
    const url = new URL(page.url());
    assert.ok(url.hash.length > 1, `opened at an anchor: ${page.url()}`);
    assert.ok(new URL(href, url).pathname === url.pathname, 'opened the selected result');
    const target = await page.evaluate((id) => !!document.getElementById(id), decodeURIComponent(url.hash.slice(1)));
    assert.ok(target, `the anchor ${url.hash} exists on the page`);
    // Esc clears.
    await page.keyboard.press('/');
    await page.keyboard.type('vpn');
    await page.locator('#search-suggest a.search-option').first().waitFor();
    await page.keyboard.press('Escape');
    assert.equal(await page.inputValue('#search-input'), '', 'Esc clears the box');
    // The results page.
    await page.goto(`${SITE}/search.html?q=parking+permit`);
    await page.locator('#search-results .search-result').first().waitFor({ timeout: 10000 });
    // Only what matches: the parking pages and a few neighbours, not twenty
    // articles ending in the nearest of what was left.
    const titles = await page.locator('#search-results .search-result__title').allInnerTexts();
    assert.ok(titles.length >= 3 && titles.length <= 8, `articles listed for "parking permit": ${titles.join(' | ')}`);
    assert.ok(titles.some((t) => /parking permit/i.test(t)), titles.join(' | '));
    assert.ok(!titles.some((t) => /graduation|waitlist/i.test(t)), `junk listed: ${titles.join(' | ')}`);
    await shot(page, 'search-results-light');
    // Snippets: the window is the one the query's rarer words fill, and it
    // starts where a sentence or a line does (never "… 8 are treated as").
    await page.goto(`${SITE}/search.html?q=withdrawal+refund+schedule`);
    await page.locator('#search-results .search-result').first().waitFor({ timeout: 10000 });
    const snippets = await page.locator('#search-results .search-result__snippet').allInnerTexts();
    assert.ok(snippets.length >= 3, `results with snippets: ${snippets.length}`);
    for (const s of snippets) {
      assert.match(s, /^(… )?[A-Z0-9`"(]/, `a snippet starts at a sentence or line: ${s}`);
    }
    assert.match(await page.locator('#search-results .search-result__snippet mark').first().innerText(), /refund|withdraw/i);
    // Nothing matches: no results at all (not the nearest junk), a few sections
    // to browse, and the assistant, which declines.
    await page.goto(`${SITE}/search.html?q=xqzv+blorf`);
    const empty = page.locator('#search-status.search-status--empty');
    await empty.waitFor({ timeout: 10000 });
    assert.match(await empty.innerText(), /No results for .xqzv blorf./);
    assert.equal(await page.locator('#search-results .search-result').count(), 0, 'no results for nonsense');
    assert.ok(await empty.locator('a.search-empty__section').count() >= 1, 'sections offered');
    await shot(page, 'search-results-empty');
    await empty.locator('button.search-empty__ask').click();
    const declined = page.locator('#kb-widget-host .kb-msg.kb-assistant[data-state="done"]');
    await declined.waitFor({ timeout: 15000 });
    assert.match(await declined.innerText(), /not in the knowledge base/i);
    await page.goto(`${SITE}/it-services/vpn.html`);
    await page.locator('#search-input').fill('qqqqqqqqq');
    const none = page.locator('#search-suggest .search-status--empty');
    await none.waitFor({ timeout: 10000 });
    assert.match(await none.innerText(), /No results for/);
    assert.equal(await page.locator('#search-suggest .search-group').count(), 0, 'no suggestions for nonsense');
    // A typo is read as the word meant, and the dropdown says what it searched.
    await page.locator('#search-input').fill('parkign permit ');
    const fixed = page.locator('#search-suggest .search-status__corrected');
    await fixed.waitFor({ timeout: 10000 });
    assert.match(await fixed.innerText(), /parking permit/);
    assert.ok(await page.locator('#search-suggest a.search-option[href*="parking"]').count() >= 1, 'the typo finds parking');
    // The endpoint unreachable: the browser engine answers, and says so.
    await page.route('**/api/search**', (r) => r.abort());
    await page.goto(`${SITE}/it-services/vpn.html`);
    await page.locator('#search-input').fill('printing');
    const engineLine = page.locator('#search-suggest .search-status__engine');
    await engineLine.waitFor({ timeout: 10000 });
    assert.match(await engineLine.innerText(), /in your browser/i);
    // Without the browser engine either, the box says so and points somewhere useful.
    await page.route('**/_search/**', (r) => r.abort());
    await page.goto(`${SITE}/it-services/vpn.html`);
    await page.locator('#search-input').fill('printing');
    const status = page.locator('.search-status');
    await status.waitFor({ timeout: 10000 });
    await page.waitForFunction(() => /unavailable/i.test(document.querySelector('.search-status').textContent), null, { timeout: 10000 });
    assert.ok(b.errors.length === 0, `page errors: ${b.errors.join('; ')}`);
    await b.close();
  }
  // Without JavaScript the results page still lists every section.
  const b = await browser({ javaScriptEnabled: false });
  const page = b.context.pages()[0] || (await b.context.newPage());
  await page.goto(`${SITE}/search.html?q=parking`);
  assert.ok(await page.locator('.site-tree a').count() > 10, 'the section index without JavaScript');
  await b.close();
}

// ---------------------------------------------------------------------- widget
async function openWidget(page, suffix = '') {
  await page.goto(FOREIGN + suffix);
  const launcher = page.locator('#kb-widget-host button.kb-launcher');
  await launcher.waitFor({ timeout: 10000 });
  await launcher.click();
  await page.locator('#kb-widget-host .kb-panel').waitFor({ state: 'visible' });
}

async function ask(page, question) {
  const before = await page.locator('#kb-widget-host .kb-msg.kb-assistant[data-state="done"]').count();
  await page.locator('#kb-widget-host textarea.kb-input').fill(question);
  await page.keyboard.press('Enter');
  const done = page.locator('#kb-widget-host .kb-msg.kb-assistant[data-state="done"]');
  await done.nth(before).waitFor({ timeout: 20000 });
  return done.nth(before);
}

async function widget() {
  for (const scheme of ['light', 'dark']) {
    const b = await browser({ colorScheme: scheme });
    const page = b.context.pages()[0] || (await b.context.newPage());
    // The light run's page carries a secret in its query and fragment, as a
    // sign-in redirect leaves it: it must not leave the page with the feedback.
    await openWidget(page, scheme === 'light' ? '?token=s3cret#access_token=t0ken' : '');
    // Record the lengths the streaming answer goes through.
    await page.evaluate(() => {
      window.__lengths = new Set();
      const root = document.getElementById('kb-widget-host').shadowRoot;
      new MutationObserver(() => {
        const a = root.querySelector('.kb-msg.kb-assistant[data-state="streaming"] .kb-answer');
        if (a) window.__lengths.add(a.textContent.length);
      }).observe(root, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    const msg = await ask(page, 'How do I get a parking permit?');
    assert.match(await msg.locator('.kb-answer').innerText(), /parking portal/);
    const partial = await page.evaluate(() => [...window.__lengths].filter((n) => n > 0).length);
    assert.ok(partial >= 3, `the answer was shown while it streamed (${partial} partial states)`);
    assert.match(await msg.locator('.kb-step').first().innerText(), /Searched: parking permit/);
    const cite = msg.locator('ol.kb-citations li a').first();
    const href = await cite.getAttribute('href');
    assert.ok(href.startsWith(SITE) && href.includes('parking') && href.includes('#'), `citation links to the page: ${href}`);
    assert.equal(await msg.locator('.kb-label-extractive').count(), 0, 'an LLM answer is not labelled extractive');
    await shot(page, `widget-open-${scheme}`);
    if (scheme === 'light') {
      const chatReq = page.waitForRequest((r) => r.url().endsWith('/api/chat'));
      const no = await ask(page, 'What is the best pizza place in town?');
      assert.ok(await no.locator('.kb-label-abstained').isVisible(), 'abstention is shown as such');
      // The widget's random per-browser id goes with the question (the insights
      // count visitors by it), and nothing else that identifies the reader.
      const visitor = (await chatReq).postDataJSON().visitor;
      assert.match(visitor, /^v-[0-9a-f]{24}$/, `a random visitor id: ${visitor}`);
      // Thumbs down with a comment reaches /api/feedback, naming the answer by the
      // id the function gave it (so the report joins the two) and the same visitor.
      const thumbReq = page.waitForRequest((r) => r.url().endsWith('/api/feedback'));
      const fb = page.waitForResponse((r) => r.url().endsWith('/api/feedback'));
      await no.locator('button.kb-down').click();
      const thumb = (await thumbReq).postDataJSON();
      assert.match(thumb.id, /^[0-9a-f]{32}$/, `the server's answer id, 128 random bits: ${thumb.id}`);
      assert.equal(thumb.visitor, visitor);
      // The question and answer are the server's record, not the widget's to say.
      assert.deepEqual(Object.keys(thumb).sort(), ['id', 'page', 'rating', 'visitor'], JSON.stringify(thumb));
      const foreign = new URL(FOREIGN);
      assert.equal(thumb.page, foreign.origin + foreign.pathname, 'the page is sent as origin and path only');
      assert.ok(!/s3cret|t0ken/.test(JSON.stringify(thumb)), `no secret from the page's URL: ${JSON.stringify(thumb)}`);
      assert.equal((await fb).status(), 202, 'the thumb is kept beside the answer the server recorded');
      await no.locator('textarea.kb-comment').fill('I expected a list of restaurants');
      const commented = page.waitForResponse((r) => r.url().endsWith('/api/feedback'));
      await no.locator('button.kb-comment-send').click();
      assert.equal((await commented).status(), 202);
      // The conversation survives a reload (sessionStorage).
      await page.reload();
      await page.locator('#kb-widget-host button.kb-launcher').click();
      assert.ok(await page.locator('#kb-widget-host .kb-msg.kb-assistant[data-state="done"]').count() >= 2, 'conversation kept for the tab');
    }
    assert.ok(b.errors.length === 0, `page errors: ${b.errors.join('; ')}`);
    await b.close();
  }
  // A phone-sized viewport.
  const b = await browser({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true });
  const page = b.context.pages()[0] || (await b.context.newPage());
  await openWidget(page);
  const box = await page.locator('#kb-widget-host .kb-panel').boundingBox();
  assert.ok(box.width <= 375 && box.width >= 320, `the panel fits the phone: ${JSON.stringify(box)}`);
  await shot(page, 'widget-phone');
  await b.close();
  await widgetLanguages();
}

// The widget speaks the embedding page's language (<html lang>), or its
// script's data-lang; English where it has no table.
async function widgetLanguages() {
  const b = await browser();
  const words = async (lang, scriptLang) => {
    const page = await b.context.newPage();
    // The foreign page as a site in that language writes it, set once the
    // document is parsed (readyState 'interactive') and before deferred
    // scripts run. Not a rewritten response: Chromium would then refuse the
    // widget's script from a loopback address to a page from nowhere.
    await page.addInitScript(([lang, scriptLang]) => {
      document.addEventListener('readystatechange', () => {
        if (document.readyState !== 'interactive') return;
        document.documentElement.setAttribute('lang', lang);
        const script = document.querySelector('script[src*="widget.js"]');
        if (scriptLang) {
          script.setAttribute('data-lang', scriptLang);
          script.removeAttribute('data-title');
        }
      });
    }, [lang, scriptLang]);
    // What a question sends: the chat is answered 503 here (no LLM step used).
    const sent = [];
    await page.route('**/api/chat', (route) => {
      sent.push(JSON.parse(route.request().postData() || '{}'));
      return route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"code":"unavailable","message":"x"}}' });
    });
    await openWidget(page);
    const root = page.locator('#kb-widget-host');
    const said = {
      lang: await root.getAttribute('lang'),
      placeholder: await root.locator('textarea.kb-input').getAttribute('placeholder'),
      reset: await root.locator('button.kb-new').getAttribute('aria-label'),
      title: await root.locator('.kb-title').innerText(),
    };
    await root.locator('textarea.kb-input').fill('parking permit');
    await page.keyboard.press('Enter');
    for (let i = 0; i < 100 && !sent.length; i++) await page.waitForTimeout(50);
    // The reader's language goes with the question only when the embedding
    // page names it on the script (a foreign page's <html lang> is its own).
    assert.ok(sent.length >= 1, 'the question was sent');
    assert.equal(sent[0].lang, scriptLang || undefined, JSON.stringify(sent));
    if (scriptLang) await shot(page, `widget-${scriptLang}`);
    await page.close();
    return said;
  };
  assert.deepEqual(await words('de-DE'), {
    lang: 'de', placeholder: 'Stellen Sie eine Frage…', reset: 'Neue Unterhaltung',
    title: 'Ask Northbridge', // the embedding site's own words win
  });
  assert.deepEqual(await words('de', 'ja'), { lang: 'ja', placeholder: '質問を入力…', reset: '新しい会話', title: 'ヘルプセンターに質問' });
  for (const tag of ['ru', 'zh-TW']) {
    assert.equal((await words(tag)).placeholder, 'Ask a question…', `${tag}: no table, English`);
  }
  assert.ok(b.errors.length === 0, `page errors: ${b.errors.join('; ')}`);
  await b.close();
}

async function keyboard() {
  const b = await browser();
  const page = b.context.pages()[0] || (await b.context.newPage());
  await page.goto(FOREIGN);
  await page.locator('#kb-widget-host button.kb-launcher').waitFor();
  const activeInWidget = () => page.evaluate(() => {
    const host = document.getElementById('kb-widget-host');
    const a = host.shadowRoot.activeElement;
    // The class (or the tag, for elements without one) of the focused element.
    return document.activeElement === host && a ? a.className || a.tagName : null;
  });
  let onLauncher = false;
  for (let i = 0; i < 30 && !onLauncher; i++) {
    await page.keyboard.press('Tab');
    onLauncher = /kb-launcher/.test((await activeInWidget()) || '');
  }
  assert.ok(onLauncher, 'the launcher is reachable with Tab');
  await page.keyboard.press('Enter');
  await page.locator('#kb-widget-host .kb-panel').waitFor({ state: 'visible' });
  assert.match((await activeInWidget()) || '', /kb-input/, 'opening focuses the question box');
  await page.keyboard.type('How do I get a parking permit?');
  await page.keyboard.press('Enter');
  await page.locator('#kb-widget-host .kb-msg.kb-assistant[data-state="done"]').first().waitFor({ timeout: 20000 });
  for (let i = 0; i < 25; i++) {
    const key = i % 3 ? 'Tab' : 'Shift+Tab';
    await page.keyboard.press(key);
    const where = await page.evaluate(() => {
      const a = document.activeElement;
      const s = a && a.shadowRoot ? a.shadowRoot.activeElement : null;
      return `${a && a.tagName}#${a && a.id} / ${s ? `${s.tagName}.${s.className}` : 'none'}`;
    });
    assert.ok(await activeInWidget(), `focus stays in the open panel (press ${i + 1}, ${key}: ${where})`);
  }
  await page.keyboard.press('Escape');
  await page.locator('#kb-widget-host .kb-panel').waitFor({ state: 'hidden' });
  assert.match((await activeInWidget()) || '', /kb-launcher/, 'Esc closes and returns focus to the launcher');
  await b.close();
}

async function hostile() {
  const b = await browser();
  const page = b.context.pages()[0] || (await b.context.newPage());
  await openWidget(page);
  const msg = await ask(page, 'Tell me about the VPN');
  const answer = msg.locator('.kb-answer');
  assert.match(await answer.innerText(), /<img src=x onerror=/, 'markup is shown as text');
  assert.equal(await answer.locator('img, script, iframe').count(), 0, 'no element was injected');
  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'no script ran');
  await b.close();
}

// -------------------------------------------------------- hostile content, live
// Every page of the hostile knowledge base is opened, hovered, tabbed through and
// clicked; it is searched as you type and on the results page; the widget asks
// the scripted model, whose answer repeats the attacks. Chromium listens all the
// while: no dialog may open, no injected script may run (window.__pwned stays
// unset, no element carries an on* handler), nothing may be fetched from
// another origin, and the page's own policy must never have had to block
// anything (a CSP report would mean markup got past the sanitiser).
async function hostileSite() {
  const b = await browser();
  const page = b.context.pages()[0] || (await b.context.newPage());
  const origin = new URL(SITE).origin;
  const dialogs = [];
  const foreign = [];
  const blocked = [];
  b.context.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss().catch(() => {}); });
  b.context.on('request', (r) => {
    const u = new URL(r.url());
    if (!(u.protocol === 'http:' || u.protocol === 'https:') || u.origin === origin) return;
    // Pages may show images from the institution's own hosts over https (the
    // CSC corpus has 169 such); the fixture's one legitimate image is there.
    // Anything else from elsewhere (the model's tracking pixel, a script, a
    // frame, a fetch) is a failure.
    if (r.resourceType() === 'image' && u.protocol === 'https:' && u.hostname.endsWith('example.edu')) return;
    foreign.push(`${r.resourceType()} ${r.url()}`);
  });
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) blocked.push(m.text()); });
  const inert = async (where) => {
    const found = await page.evaluate(() => {
      const bad = [];
      for (const el of document.querySelectorAll('*')) {
        for (const a of el.attributes) {
          if (/^on/i.test(a.name)) bad.push(`${el.tagName} ${a.name}`);
          if (['href', 'src', 'action', 'formaction', 'xlink:href', 'srcset', 'poster', 'data'].includes(a.name.toLowerCase())
            && /^\s*(javascript|vbscript|data:text)/i.test(a.value)) bad.push(`${el.tagName} ${a.name}=${a.value}`);
        }
      }
      if (window.__pwned !== undefined) bad.push('window.__pwned');
      return bad;
    });
    assert.deepEqual(found, [], `${where}: live handlers or script URLs`);
  };
  const pages = (process.env.KB_PAGES || '').split('\n').filter(Boolean);
  assert.ok(pages.length > 0, 'KB_PAGES lists the pages');
  for (const p of pages) {
    await page.goto(`${SITE}/${p}`);
    await inert(p);
    // Hover and focus everything a reader might touch; click every link that
    // stays on the page (anchors) or is inert text.
    for (let i = 0; i < 25; i++) await page.keyboard.press('Tab');
    const box = await page.evaluate(() => [document.body.scrollWidth, document.body.scrollHeight]);
    for (let y = 0; y < Math.min(box[1], 4000); y += 60) await page.mouse.move(200 + (y % 400), y);
    const links = await page.locator('main a[href^="#"]').all();
    for (const l of links.slice(0, 20)) await l.click({ timeout: 2000 }).catch(() => {});
    await inert(`${p} after interaction`);
  }
  // Search as you type, and the results page, over the same pages.
  // (The home page has its own box; a content page has the header's.)
  const content = pages.find((p) => p.includes('/') && !p.startsWith('sections/')) || pages[0];
  await page.goto(`${SITE}/${content}`);
  await page.locator('#search-input').fill('');
  await page.locator('#search-input').type('ignore previous instructions script', { delay: 15 });
  await page.locator('#search-suggest a.search-option').first().waitFor({ timeout: 10000 });
  await inert('search suggestions');
  await page.goto(`${SITE}/search.html?q=${encodeURIComponent('onerror alert javascript')}`);
  await page.waitForTimeout(1500);
  await inert('search results');
  await shot(page, 'hostile-search-results');
  // The widget on the site itself: the model's answer repeats the attacks.
  await page.goto(`${SITE}/${content}`);
  await page.locator('#kb-widget-host button.kb-launcher').click();
  await page.locator('#kb-widget-host .kb-panel').waitFor({ state: 'visible' });
  const msg = await ask(page, 'What do the pages say?');
  const answer = msg.locator('.kb-answer');
  assert.match(await answer.innerText(), /onerror/, 'the markup is shown as text');
  assert.equal(await answer.locator('img, script, svg, iframe').count(), 0, 'no element was injected');
  for (const a of await msg.locator('a').all()) {
    const href = (await a.getAttribute('href')) || '';
    assert.ok(!/^\s*(javascript|vbscript|data)/i.test(href), `widget link ${href}`);
  }
  await shot(page, 'hostile-widget');
  await page.waitForTimeout(300);
  assert.deepEqual(dialogs, [], 'a dialog opened');
  assert.deepEqual(foreign, [], 'something was fetched from another origin');
  assert.deepEqual(blocked, [], 'the Content-Security-Policy had to block something');
  console.log(`hostile-site: ${pages.length} pages browsed, searched and answered; 0 dialogs, 0 foreign requests`);
  await b.close();
}

async function extractive() {
  const b = await browser();
  const page = b.context.pages()[0] || (await b.context.newPage());
  await openWidget(page);
  const msg = await ask(page, 'How do I buy a parking permit?');
  assert.ok(await msg.locator('.kb-label-extractive').isVisible(), 'extractive answers are labelled');
  assert.ok(await msg.locator('ol.kb-citations li a').count() >= 1);
  await b.close();
}

// ------------------------------------------------ a static host, and /api away
// KB_SITE is tests/edge/static_host.rs: the built site as plain files, /api as a
// static host has it (404), as during an outage (503) or forwarded to the real
// host, switched with /__mode; /__log lists every response's bytes.
async function staticSite() {
  const mode = (m) => fetch(`${SITE}/__mode?set=${m}`).then((r) => assert.equal(r.status, 200));
  const log = async () => (await fetch(`${SITE}/__log?clear=1`)).json();
  const kb = (entries) => entries.reduce((a, [, n]) => a + n, 0) / 1024;
  const b = await browser();
  const page = b.context.pages()[0] || (await b.context.newPage());
  const suggestions = (re) => page.waitForFunction((src) => {
    const p = document.getElementById('search-suggest');
    return p && !p.hidden && !p.hasAttribute('aria-busy') &&
      [...p.querySelectorAll('.search-group')].some((g) => new RegExp(src, 'i').test(g.textContent));
  }, re, { timeout: 15000 });
  const retype = async (text) => {
    await page.locator('#search-input').fill('');
    await page.locator('#search-input').click();
    await page.keyboard.type(text, { delay: 30 });
  };

  // 1. No /api at all. Nothing of the engine, and no file over 100 KB, before the first keystroke.
  await mode('static');
  await log();
  await page.goto(`${SITE}/campus/parking/buying-a-parking-permit.html`);
  await page.waitForLoadState('networkidle');
  // "Was this helpful?" is in the page, and stays hidden: the widget's probe
  // found no API, and there is nowhere to send an answer.
  assert.equal(await page.evaluate(() => window.kbWidget.probe()), 'search', 'the widget sees a static host');
  assert.equal(await page.locator('[data-page-feedback]').count(), 1, 'the article has the block');
  assert.equal(await page.locator('[data-page-feedback]').isVisible(), false, 'no rating on a static host');
  const before = await log();
  assert.ok(before.length > 0 && before.every(([, n]) => n <= 100 * 1024), `before typing: ${JSON.stringify(before)}`);
  assert.ok(!before.some(([p]) => p.includes('/_search/') || p.endsWith('browser-search.js')), `engine loaded early: ${JSON.stringify(before)}`);
  // The first query: engine, glue, manifest, fragments.
  await retype('parki');
  await suggestions('parking');
  // On a static host the browser engine is the search: nothing to apologise for.
  assert.equal(await page.locator('#search-suggest .search-status__engine').count(), 0, 'static: no engine line');
  await page.waitForTimeout(1000); // the settled request, answered in the browser too
  const first = await log();
  assert.ok(first.some(([p]) => p.endsWith('.wasm.gz')), `the engine was fetched: ${JSON.stringify(first)}`);
  assert.ok(kb(first) <= 250, `first query ${kb(first).toFixed(1)} KB > 250: ${JSON.stringify(first)}`);
  assert.ok(await page.locator('#search-suggest a.search-option[href*="buying-a-parking-permit"]').count() >= 1,
    'typing finds the parking-permit steps');
  // A further query fetches only the fragments it lacks.
  await retype('eduroam certificate');
  await suggestions('eduroam');
  await page.waitForTimeout(1000);
  const later = await log();
  assert.ok(kb(later) <= 60, `later query ${kb(later).toFixed(1)} KB > 60: ${JSON.stringify(later)}`);
  assert.ok(!later.some(([p]) => p.endsWith('.wasm.gz') || p.endsWith('manifest.json.gz')), 'the engine is loaded once');
  console.log(`static: before typing ${kb(before).toFixed(1)} KB, first query ${kb(first).toFixed(1)} KB, later ${kb(later).toFixed(1)} KB`);
  // Enter opens the selected result at its anchor.
  await retype('parking permit');
  await suggestions('parking');
  await page.keyboard.press('ArrowDown');
  await Promise.all([page.waitForURL((u) => u.hash.length > 1), page.keyboard.press('Enter')]);
  const url = new URL(page.url());
  assert.ok(await page.evaluate((id) => !!document.getElementById(id), decodeURIComponent(url.hash.slice(1))),
    `the anchor ${url.hash} exists`);
  // The results page.
  await page.goto(`${SITE}/search.html?q=parking+permit`);
  await page.locator('#search-results .search-result').first().waitFor({ timeout: 15000 });
  assert.equal(await page.locator('#search-status .search-status__engine').count(), 0, 'static: no engine line');
  assert.ok(await page.locator('#search-results .search-result a[href*="parking"]').count() >= 1, 'results page finds parking');
  await shot(page, 'search-results-static-host');
  // Nothing matches, on a static host too: sections, and no assistant to offer.
  await page.goto(`${SITE}/search.html?q=xqzv+blorf`);
  const emptyStatic = page.locator('#search-status.search-status--empty');
  await emptyStatic.waitFor({ timeout: 15000 });
  assert.ok(await emptyStatic.locator('a.search-empty__section').count() >= 1, 'sections offered');
  assert.equal(await emptyStatic.locator('.search-empty__ask').count(), 0, 'no assistant on a static host');
  // A typo, read in the browser as the edge reads it (the initial's spelling list).
  await page.goto(`${SITE}/it-services/vpn.html`);
  await retype('eduraom certificate');
  await suggestions('eduroam');
  // The panel may still show the answer to a word typed before the last one
  // ("eduroam certi"): wait for the whole query's answer, then read it.
  const corrected = page.locator('#search-suggest .search-status__corrected');
  await page.waitForFunction(() => /certificate/.test(
    (document.querySelector('#search-suggest .search-status__corrected') || {}).textContent || ''), null, { timeout: 15000 });
  assert.match(await corrected.innerText(), /eduroam certificate/);
  // The widget on a static host is a search helper: it says so and answers with pages.
  await page.goto(`${SITE}/campus/parking/buying-a-parking-permit.html`);
  await page.locator('#kb-widget-host button.kb-launcher').click();
  await page.waitForFunction(() => {
    const r = document.getElementById('kb-widget-host').shadowRoot;
    return /help pages for your question/i.test(r.querySelector('.kb-sub').textContent);
  }, null, { timeout: 10000 });
  await page.locator('#kb-widget-host textarea.kb-input').fill('How do I buy a parking permit?');
  await page.keyboard.press('Enter');
  const pages = page.locator('#kb-widget-host .kb-msg.kb-assistant[data-state="search"]');
  await pages.waitFor({ timeout: 15000 });
  assert.doesNotMatch(await pages.innerText(), /not reachable|later/i);
  const found = await pages.locator('ol.kb-citations li a').first().getAttribute('href');
  assert.ok(found && found.includes('parking'), `the widget finds the parking page: ${found}`);
  await shot(page, 'widget-static-host');

  // 2. The wasm engine gives the API's bm25 answer (results, scores, snippets).
  await mode('up');
  for (const [q, partial] of [['parking permit', false], ['how do I reset my password', false], ['eduroam cert', true]]) {
    const pair = await page.evaluate(async ([q, partial]) => {
      const api = await (await fetch(`/api/search?q=${encodeURIComponent(q)}&mode=bm25&k=10${partial ? '&partial=true' : ''}`)).json();
      const m = await import('/assets/browser-search.js');
      const mine = await m.search(new URL('/_search/', location.href).href, q, 10, 1, partial);
      return [api.results, mine.results];
    }, [q, partial]);
    assert.ok(pair[0].length > 0, `the API found something for ${q}`);
    assert.deepEqual(pair[1], pair[0], `browser and edge agree on ${q}`);
  }

  // The same page with the API behind it asks "Was this helpful?".
  await page.goto(`${SITE}/campus/parking/buying-a-parking-permit.html`);
  await page.locator('[data-page-feedback]').waitFor({ state: 'visible', timeout: 10000 });

  // 3. /api answering 503, then recovering: the fallback engages, then lets go.
  await mode('down');
  await page.goto(`${SITE}/it-services/vpn.html`);
  await retype('vpn');
  await suggestions('vpn');
  assert.match(await page.locator('#search-suggest .search-status__engine').innerText(), /not reachable right now/i,
    'the fallback engaged on 503, and says so');
  await mode('up');
  await page.waitForTimeout(5500); // search.js probes /api/health every 5 s while in the browser
  await retype('print');
  await suggestions('print');
  await page.waitForTimeout(500);
  const back = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/search' && r.status() === 200, { timeout: 15000 });
  await page.keyboard.type('ing', { delay: 30 });
  await back;
  await suggestions('print');
  await page.waitForFunction(() => !document.querySelector('#search-suggest .search-status__engine'), null, { timeout: 10000 });

  // 4. The chat away: the widget offers the sections that match instead of an error.
  await mode('down');
  await page.goto(`${SITE}/campus/parking/buying-a-parking-permit.html`);
  await page.locator('#kb-widget-host button.kb-launcher').click();
  await page.locator('#kb-widget-host textarea.kb-input').fill('How do I buy a parking permit?');
  await page.keyboard.press('Enter');
  const offline = page.locator('#kb-widget-host .kb-msg.kb-assistant[data-state="offline"]');
  await offline.waitFor({ timeout: 15000 });
  assert.match(await offline.innerText(), /not reachable/i);
  const cite = await offline.locator('ol.kb-citations li a').first().getAttribute('href');
  assert.ok(cite && cite.includes('parking'), `the widget offers the parking page: ${cite}`);
  await shot(page, 'widget-offline-sections');

  // 5. Rate limited (429, Retry-After: 7): not an outage. The search says for how
  // long it searches in the browser; the widget says when to ask again.
  await mode('busy');
  await page.goto(`${SITE}/it-services/vpn.html`);
  await retype('vpn');
  await suggestions('vpn');
  assert.match(await page.locator('#search-suggest .search-status__engine').innerText(), /busy for about \d+ seconds/i);
  await page.locator('#kb-widget-host button.kb-launcher').click();
  await page.locator('#kb-widget-host textarea.kb-input').fill('How do I connect to the VPN?');
  await page.keyboard.press('Enter');
  const limited = page.locator('#kb-widget-host .kb-msg.kb-assistant[data-state="limited"]');
  await limited.waitFor({ timeout: 15000 });
  assert.match(await limited.innerText(), /ask again in \d+ seconds/i);
  assert.doesNotMatch(await limited.innerText(), /not reachable/i);
  assert.ok(await limited.locator('button.kb-retry').isDisabled(), 'retry waits for Retry-After');
  await shot(page, 'widget-rate-limited');
  assert.ok(b.errors.length === 0, `page errors: ${b.errors.join('; ')}`);
  await b.close();
}

// ------------------------------------ semantic search in the browser (opt-in)
// KB_SITE is tests/edge/static_host.rs over the demo built with
// --browser-semantic: the search script has data-semantic, and _search/ holds the
// query encoder and the vectors. KB_MEANING: a question the pages answer in
// other words (BM25 misses its page), KB_MEANING_PAGE: that page's path.
async function semanticSite() {
  const mode = (m) => fetch(`${SITE}/__mode?set=${m}`).then((r) => assert.equal(r.status, 200));
  const log = async () => (await fetch(`${SITE}/__log?clear=1`)).json();
  const kb = (entries) => entries.reduce((a, [, n]) => a + n, 0) / 1024;
  const question = process.env.KB_MEANING;
  const want = process.env.KB_MEANING_PAGE;
  const b = await browser();
  const page = b.context.pages()[0] || (await b.context.newPage());
  const base = () => new URL('/_search/', page.url()).href;

  // 1. Static host: the first query answers by words at once, the model loads
  //    in the background, and settled queries then rank by meaning too.
  await mode('static');
  await log();
  await page.goto(`${SITE}/campus/index.html`);
  await page.waitForLoadState('networkidle');
  assert.ok(await page.locator('script[src$="assets/search.js"][data-semantic]').count() === 1, 'the script asks for semantic search');
  const before = await log();
  assert.ok(!before.some(([p]) => p.includes('/_search/')), `nothing of the engine before the first keystroke: ${JSON.stringify(before)}`);
  const t0 = Date.now();
  await page.locator('#search-input').click();
  await page.keyboard.type(question, { delay: 10 });
  await page.locator('#search-suggest a.search-option').first().waitFor({ timeout: 15000 });
  // A static host's search is the browser's: nothing says otherwise.
  assert.equal(await page.locator('#search-suggest .search-status__engine').count(), 0, 'static: no engine line');
  const ready = await page.evaluate(async () => (await import('/assets/browser-search.js')).semanticReady(new URL('/_search/', location.href).href, 120000));
  assert.ok(ready, 'the semantic side loaded (Chromium runs relaxed SIMD)');
  const loadMs = Date.now() - t0;
  const fetched = await log();
  const semanticFiles = fetched.filter(([p]) => /encoder\.bin|vectors\.bin|search_web_semantic/.test(p));
  assert.equal(semanticFiles.length, 4, `glue, module, encoder, vectors: ${JSON.stringify(fetched)}`);
  assert.ok(!fetched.some(([p]) => /search_web_bg/.test(p)), 'one engine per page: the lexical module is not fetched as well');
  // The settled query was answered by words while the model loaded, and asked
  // again once it was in.
  // The list on screen may still be the last keystroke's answer (by words, as
  // typing is) when the status turns: on a loaded machine the settled query's
  // answer by meaning lands a moment later. Wait for it, then read.
  await page
    .waitForFunction((w) => ((document.querySelector('#search-suggest a.search-option') || {}).getAttribute?.('href') || '').includes(w), want, { timeout: 30000 })
    .catch(() => {});
  const suggested = await page.locator('#search-suggest a.search-option').first().getAttribute('href');
  assert.ok(suggested && suggested.includes(want), `the suggestions, by meaning, lead with ${want}: ${suggested}`);
  // The results page: words first while the model loads again (a new page;
  // this test's server forbids caching), then meaning.
  await log();
  await page.goto(`${SITE}/search.html?q=${encodeURIComponent(question)}`);
  await page.locator('#search-results .search-result').first().waitFor({ timeout: 30000 });
  await page
    .waitForFunction((w) => ((document.querySelector('#search-results .search-result a') || {}).getAttribute?.('href') || '').includes(w), want, { timeout: 60000 })
    .catch(() => {});
  const top = await page.locator('#search-results .search-result a').first().getAttribute('href');
  assert.ok(top && top.includes(want), `by meaning the browser finds ${want} first: ${top}`);
  await shot(page, 'search-results-static-semantic');

  // 2. The browser's fused ranking is the API's (the same code compiled twice,
  //    the encoder's kernels in relaxed SIMD here, AVX2 on the host).
  await mode('up');
  const timings = [];
  for (const q of [question, 'parking permit', 'how do I reset my password', 'library study room booking', 'pay tuition in installments']) {
    const pair = await page.evaluate(async (q) => {
      const api = await (await fetch(`/api/search?q=${encodeURIComponent(q)}&mode=convex&k=10`)).json();
      const m = await import('/assets/browser-search.js');
      const t = performance.now();
      const mine = await m.search(new URL('/_search/', location.href).href, q, 10, 1, false, null, { semantic: true, mode: 'convex' });
      const first = performance.now() - t;
      const t2 = performance.now();
      await m.search(new URL('/_search/', location.href).href, q + ' ?', 10, 1, false, null, { semantic: true, mode: 'convex' });
      return [api, mine, first, performance.now() - t2];
    }, q);
    const [api, mine, first, later] = pair;
    timings.push([first, later]);
    assert.equal(mine.mode, 'convex', `fused in the browser for ${q}`);
    assert.ok(api.results.length > 0, `the API found something for ${q}`);
    assert.deepEqual(mine.results.map((r) => r.chunk_id), api.results.map((r) => r.chunk_id), `browser and edge rank ${q} alike`);
    for (const [x, y] of mine.results.map((r, i) => [r.score, api.results[i].score])) {
      assert.ok(Math.abs(x - y) < 1e-3, `scores of ${q}: ${x} vs ${y}`);
    }
  }
  const med = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`semantic: ${kb(semanticFiles).toFixed(0)} KB for the model, vectors and engine, ready ${loadMs} ms after the first keystroke; ` +
    `fused query median ${med(timings.map((t) => t[0])).toFixed(1)} ms (records fetched), ${med(timings.map((t) => t[1])).toFixed(1)} ms (a new text, records mostly in)`);
  assert.ok(b.errors.length === 0, `page errors: ${b.errors.join('; ')}`);
  await b.close();

  // 3. A browser without relaxed SIMD keeps searching by words (quietly: on a
  //    static host the browser's search is the search).
  const old = await browser();
  await old.context.addInitScript(() => {
    const validate = WebAssembly.validate;
    WebAssembly.validate = (bytes) => (bytes.byteLength < 100 ? false : validate(bytes));
  });
  const p2 = old.context.pages()[0] || (await old.context.newPage());
  await mode('static');
  await log();
  await p2.goto(`${SITE}/search.html?q=${encodeURIComponent('parking permit')}`);
  await p2.locator('#search-results .search-result').first().waitFor({ timeout: 15000 });
  assert.equal(await p2.locator('#search-status .search-status__engine').count(), 0, 'static: no engine line');
  const plain = await log();
  assert.ok(!plain.some(([p]) => /semantic|encoder\.bin|vectors\.bin/.test(p)), `nothing semantic fetched: ${JSON.stringify(plain)}`);
  assert.ok(old.errors.length === 0, `page errors: ${old.errors.join('; ')}`);
  await old.close();
}

// ------------------------------------------------- files pages link to, opened
// Each file the hostile pages link to (an SVG with <script> and onload, .html,
// .htm and XML documents with script, a PDF with JavaScript) is opened on its
// own, as a reader following the link would, and shown as an image on its page.
// Their scripts fetch /__pwned/… and /api/health, alert, and retitle the
// document: none of it may happen as the site. (The PDF's JavaScript runs in
// Chromium's PDF viewer, outside the site's origin: its alert may show, but its
// request to the site must not be sent.) Then another site frames the search
// page with a query, as a site planting searches would: the frame must not load.
async function hostileFiles() {
  const b = await browser({ acceptDownloads: true });
  const page = b.context.pages()[0] || (await b.context.newPage());
  const origin = new URL(SITE).origin;
  const ran = [];
  const downloads = [];
  let opening = '';
  // The PDF viewer's alert ('pdf script', a message only the PDF carries) may
  // come late, once the next file is opening on a loaded machine: it is the
  // viewer's wherever it lands, as long as the PDF was opened before it.
  let pdfOpened = false;
  page.on('dialog', async (d) => {
    if (!(pdfOpened && d.message() === 'pdf script')) ran.push(`${opening}: dialog ${d.message()}`);
    await d.dismiss().catch(() => {});
  });
  b.context.on('request', (r) => {
    const u = new URL(r.url());
    // The site's own article asks /api/health once, as JSON (the widget's probe,
    // which decides whether "Was this helpful?" shows): the site, not a file.
    // The files' script asks it with no such header, and only a file could.
    const siteProbe = opening === 'the page showing them' && u.pathname === '/api/health' &&
      r.headers().accept === 'application/json';
    if (u.origin === origin && !siteProbe && (u.pathname.startsWith('/__pwned') || u.pathname.startsWith('/api/'))) {
      ran.push(`${opening}: request ${u.pathname}`);
    }
  });
  page.on('download', (d) => downloads.push(new URL(d.url()).pathname));
  const files = (process.env.KB_FILES || '').split('\n').filter(Boolean);
  assert.ok(files.length >= 5, 'KB_FILES lists the linked files');
  const seen = [];
  for (const f of files) {
    opening = f;
    pdfOpened = pdfOpened || f.endsWith('.pdf');
    let how;
    try {
      const r = await page.goto(`${SITE}/${f}`, { waitUntil: 'load', timeout: 10000 });
      how = `shown (${r && r.status()})`;
    } catch (e) {
      if (!/Download is starting/.test(String(e))) throw e;
      how = 'downloaded';
    }
    await page.waitForTimeout(700);
    const title = await page.title().catch(() => '');
    if (title === 'pwned') ran.push(`${f}: retitled the document`);
    seen.push(`${f} ${how}`);
  }
  // As images on their page, SVG never runs script (the browser's rule, not ours).
  opening = 'the page showing them';
  await page.goto(`${SITE}/hostile/linked-files.html`);
  await page.waitForTimeout(500);
  const shown = await page.evaluate(() => [...document.querySelectorAll('main img')].map((i) => [i.getAttribute('src'), i.naturalWidth]));
  assert.ok(shown.length >= 2 && shown.every(([, w]) => w > 0), `the drawings show as images: ${JSON.stringify(shown)}`);
  assert.deepEqual(ran, [], 'script ran as the site');
  // HTML and XML files are downloads; the drawings open, inert.
  for (const f of files.filter((f) => /\.(html?|xml)$/.test(f))) {
    assert.ok(downloads.includes(`/${f}`), `${f} was not served as a download: ${seen.join('; ')}`);
  }
  // Another site frames the results page with a query of its choosing.
  opening = 'a framed search page';
  const framed = [];
  b.context.on('request', (r) => { if (/\/api\/search\?/.test(r.url())) framed.push(r.url()); });
  await page.goto(FOREIGN);
  await page.evaluate((src) => {
    const f = document.createElement('iframe');
    f.src = src;
    f.width = 600;
    f.height = 300;
    document.body.append(f);
  }, `${SITE}/search.html?q=${encodeURIComponent('password reset')}`);
  await page.waitForTimeout(2500);
  const frame = page.frames().find((fr) => fr !== page.mainFrame());
  const loaded = frame ? await frame.evaluate(() => document.querySelector('#search-input') !== null).catch(() => false) : false;
  assert.equal(loaded, false, 'another site framed the search page');
  assert.deepEqual(framed, [], 'a framed search page searched');
  assert.deepEqual(ran, [], 'script ran in the framed page');
  console.log(`hostile-files: ${seen.join('; ')}; the framed search page refused; nothing ran as the site`);
  await b.close();
}

// ------------------------------------ navigation and page tools (page.js)
// KB_SITE is tests/edge/static_host.rs over the demo built site-only: a small
// site, whose sidebar lists the whole tree. KB_WIDE is another such server over
// a site of 18 top-level sections built with --site-url http://kb.example/docs/,
// whose files are in KB_WIDE_DIR (for a static host serving it under /docs/,
// emulated here, with its 404 page at any depth).
async function navigation() {
  const b = await browser();
  await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: SITE });
  const page = b.context.pages()[0] || (await b.context.newPage());
  await page.goto(`${SITE}/it-services/vpn.html`);

  // 1. The sidebar: a labelled nav, the page marked, shown open on a wide screen.
  const sidebar = page.locator('nav.sidebar');
  assert.match(await sidebar.getAttribute('aria-label'), /pages/i);
  const here = sidebar.locator('a[aria-current="page"]');
  assert.equal(await here.innerText(), 'Using the VPN');
  assert.ok(await here.isVisible(), 'the current page is in view in the sidebar');
  assert.equal(await sidebar.locator('.sidebar__summary').isVisible(), false, 'no disclosure on a wide screen');
  // Keyboard: a closed section's toggle follows its link; Enter opens it; Tab enters it.
  const campus = sidebar.locator('li.sidebar__section > a', { hasText: 'Campus services' });
  await campus.focus();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.tagName), 'SUMMARY', 'the toggle takes the focus');
  assert.match(await page.evaluate(() => document.activeElement.textContent), /Campus services/);
  assert.equal(await page.evaluate(() => document.activeElement.parentElement.open), false);
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.parentElement.open), true, 'Enter opens the section');
  await page.keyboard.press('Tab');
  const first = await page.evaluate(() => [document.activeElement.tagName, document.activeElement.closest('li.sidebar__section > details') !== null]);
  assert.deepEqual(first, ['A', true], 'Tab goes into the opened section');

  // 2. The article: no source file name, the original page kept.
  const footer = await page.locator('article').innerText();
  assert.ok(!/Source:/.test(footer) && !footer.includes('vpn.md'), 'no "Source: …md" line');
  assert.ok(await page.locator('article a', { hasText: 'View the original page' }).count() === 1);

  // 3. Code: a language label and a Copy button that copies.
  const bar = page.locator('.code-block__bar').first();
  assert.match(await bar.locator('.code-block__lang').textContent(), /^Bash$/);
  const copy = bar.locator('.code-block__copy');
  await copy.click();
  await page.waitForFunction(() => document.querySelector('.code-block__copy').textContent === 'Copied');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  const code = await page.evaluate(() => document.querySelector('.code-block pre code').textContent.replace(/\n$/, ''));
  assert.equal(copied, code, 'the clipboard holds the code');
  assert.ok(copied.includes('curl'), copied);

  // 4. "On this page" marks the section being read.
  await page.evaluate(() => {
    const h = document.getElementById('connecting');
    window.scrollTo(0, h.getBoundingClientRect().top + window.scrollY - 40);
  });
  await page.waitForFunction(() => {
    const a = document.querySelector('.toc--sidebar a[aria-current="true"]');
    return a && a.getAttribute('href') === '#connecting';
  }, null, { timeout: 5000 });
  assert.equal(await page.locator('.toc--sidebar a[aria-current="true"]').count(), 1, 'one entry marked');
  await shot(page, 'navigation-article');

  // 5. Previous / next, in the section's order (the VPN page is its section's last).
  assert.equal(await page.locator('nav.pager a[rel="next"]').count(), 0, 'nothing after the last page');
  await page.goto(`${SITE}/it-services/printing.html`);
  const next = page.locator('nav.pager a[rel="next"]');
  const prev = page.locator('nav.pager a[rel="prev"]');
  assert.ok((await prev.count()) === 1 && (await next.count()) === 1, 'both neighbours');
  const nextTitle = await next.locator('.pager__title').innerText();
  await Promise.all([page.waitForURL((u) => !u.pathname.endsWith('/printing.html')), next.click()]);
  assert.equal(await page.locator('h1').innerText(), nextTitle);
  assert.match(await page.locator('nav.pager a[rel="prev"]').getAttribute('href'), /printing\.html$/, 'and back');

  // 6. The favicon resolves.
  const icon = await page.evaluate(async () => {
    const r = await fetch(document.querySelector('link[rel="icon"]').href);
    return [r.status, r.headers.get('content-type'), (await r.text()).startsWith('<svg')];
  });
  assert.deepEqual(icon, [200, 'image/svg+xml', true]);

  // 7. The theme: system → light → dark, kept across a reload, applied before the styles.
  const toggle = page.locator('button.theme-toggle');
  assert.ok(await toggle.isVisible(), 'the theme button shows when scripts run');
  const state = () => page.evaluate(() => [document.documentElement.getAttribute('data-theme'),
    localStorage.getItem('kb-theme'), getComputedStyle(document.body).backgroundColor]);
  assert.deepEqual((await state()).slice(0, 2), [null, null], 'the system decides at first');
  await toggle.click();
  assert.deepEqual(await state(), ['light', 'light', 'rgb(255, 255, 255)']);
  await toggle.click();
  assert.deepEqual(await state(), ['dark', 'dark', 'rgb(15, 20, 27)']);
  assert.match(await toggle.getAttribute('title'), /dark/);
  await page.reload();
  assert.deepEqual(await state(), ['dark', 'dark', 'rgb(15, 20, 27)'], 'remembered');
  assert.ok(await page.evaluate(() => {
    const s = document.querySelector('head script[src$="assets/theme.js"]');
    const css = document.querySelector('head link[rel="stylesheet"]');
    return s && !s.defer && !s.async && (s.compareDocumentPosition(css) & Node.DOCUMENT_POSITION_FOLLOWING);
  }), 'theme.js runs before the styles: no flash of the other theme');
  await shot(page, 'navigation-dark');
  await page.locator('button.theme-toggle').click();
  assert.deepEqual((await state()).slice(0, 2), [null, null], 'back to the system');

  // 8. A section page lists each child once: the text's own links, then the rest.
  await page.goto(`${SITE}/it-services/index.html`);
  const links = await page.evaluate(() => [...document.querySelectorAll('article a')]
    .filter((a) => !a.closest('.pager') && a.pathname.startsWith('/it-services/') && !a.pathname.endsWith('/index.html'))
    .map((a) => a.pathname));
  assert.ok(links.length >= 10, links.join(' '));
  assert.equal(new Set(links).size, links.length, `a child listed twice: ${links.join(' ')}`);
  assert.equal(await page.locator('#kb--in-this-section').innerText(), 'More in this section');
  assert.equal(await page.locator('[id="in-this-section"]').count(), 1, 'the page\'s own heading keeps its id');

  // 9. A phone: the header row fits, the menu is one disclosure, the chat button
  //    keeps clear of the title and of the page's last line.
  await page.setViewportSize({ width: 360, height: 740 });
  await page.goto(`${SITE}/it-services/vpn.html`);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 360), 'nothing wider than the phone');
  assert.equal(await page.locator('.site-nav__list').isVisible(), false);
  const sections = page.locator('.site-nav__more > summary');
  assert.match(await sections.innerText(), /Sections \(6\)/);
  const sbox = await sections.boundingBox();
  assert.ok(sbox.x >= 0 && sbox.x + sbox.width <= 360, `the menu button is whole: ${JSON.stringify(sbox)}`);
  const launcher = page.locator('#kb-widget-host button.kb-launcher');
  await launcher.waitFor({ timeout: 10000 });
  const [h1, ask] = [await page.locator('h1').boundingBox(), await launcher.boundingBox()];
  assert.ok(h1.y + h1.height <= ask.y, `the chat button covers the title: ${JSON.stringify([h1, ask])}`);
  assert.ok(ask.width <= 56, `on a phone the chat button is a round icon: ${JSON.stringify(ask)}`);
  assert.equal(await launcher.getAttribute('aria-label'), 'Ask the Help Center', 'its label stays its name');
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  const last = await page.evaluate(() => {
    const items = [...document.querySelectorAll('.site-footer a, .site-footer p')];
    return Math.max(...items.map((e) => e.getBoundingClientRect().bottom));
  });
  const askEnd = await launcher.boundingBox();
  assert.ok(last <= askEnd.y, `the footer's last line (${last}) ends above the chat button (${askEnd.y})`);
  await sections.click();
  assert.equal(await page.locator('.site-nav__menu a:visible').count(), 6, 'every section in the phone menu');
  await shot(page, 'navigation-phone');
  assert.ok(b.errors.length === 0, `page errors: ${b.errors.join('; ')}`);
  await b.close();

  // 10. Eighteen sections: the row shows what fits, "More" the rest; a reader sees there are 18.
  const WIDE = process.env.KB_WIDE;
  const w = await browser();
  const wp = w.context.pages()[0] || (await w.context.newPage());
  await wp.goto(`${WIDE}/s07/page-1.html`);
  const row = await wp.evaluate(() => {
    const list = document.querySelector('.site-nav__list');
    const box = list.getBoundingClientRect();
    const items = [...list.querySelectorAll('a')].map((a) => a.getBoundingClientRect());
    return { n: items.length, whole: items.every((r) => r.left >= box.left - 12 && r.right <= box.right + 1) };
  });
  assert.ok(row.n >= 5 && row.whole, `the row shows whole entries: ${JSON.stringify(row)}`);
  const more = wp.locator('.site-nav__more > summary');
  assert.ok(await more.isVisible());
  const hidden = Number((await more.innerText()).match(/More \((\d+)\)/)[1]);
  assert.equal(row.n + hidden, 18, `${row.n} on the row and ${hidden} under More`);
  await more.click();
  const rest = await wp.locator('.site-nav__menu a:visible').allInnerTexts();
  assert.equal(rest.length, hidden, 'More lists the sections the row does not');
  assert.ok(rest.includes('Section 18'), rest.join(', '));
  await shot(wp, 'navigation-more');
  await wp.keyboard.press('Escape');
  assert.equal(await wp.evaluate(() => document.querySelector('.site-nav__more').open), false, 'Escape closes it');
  assert.equal(await wp.evaluate(() => document.activeElement.tagName), 'SUMMARY');
  // A big site's sidebar lists the page's own section only.
  assert.equal(await wp.locator('nav.sidebar .sidebar__title').innerText(), 'Section 07');
  assert.equal(await wp.locator('nav.sidebar a[aria-current="page"]').innerText(), 'Page 1 of section 07');

  // 11. The 404 page under a sub-path: a host serving the site at /docs/ answers a
  //     missing page deep down with 404.html, whose styles and links still work.
  const dir = process.env.KB_WIDE_DIR;
  const { existsSync, statSync } = await import('node:fs');
  await wp.route(`${WIDE}/docs/**`, (route) => {
    const rel = decodeURIComponent(new URL(route.request().url()).pathname.replace(/^\/docs\//, ''));
    const file = join(dir, rel);
    const found = rel && !rel.includes('..') && existsSync(file) && !statSync(file).isDirectory();
    const type = { css: 'text/css', js: 'text/javascript', svg: 'image/svg+xml' }[rel.split('.').pop()] || 'text/html';
    route.fulfill(found ? { status: 200, path: file, contentType: type } : { status: 404, path: join(dir, '404.html'), contentType: 'text/html' });
  });
  const res = await wp.goto(`${WIDE}/docs/some/missing/page`);
  assert.equal(res.status(), 404);
  assert.equal(await wp.locator('h1').innerText(), 'We couldn’t find that page');
  const styled = await wp.evaluate(() => getComputedStyle(document.querySelector('.site-header')).backgroundColor);
  assert.notEqual(styled, 'rgba(0, 0, 0, 0)', 'the styles loaded');
  assert.equal(await wp.locator('a.button').getAttribute('href'), '/docs/index.html');
  await shot(wp, 'navigation-404-subpath');
  assert.ok(w.errors.length === 0, `page errors: ${w.errors.join('; ')}`);
  await w.close();

  // 12. A page in German: page.js's words from the JSON the build writes in its
  //     data-strings (here written into an English page as the build would).
  const g = await browser();
  await g.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: SITE });
  const gp = g.context.pages()[0] || (await g.context.newPage());
  const german = { copy: 'Kopieren', copied: 'Kopiert', theme: 'Farbschema: {mode}', themeSwitch: '{theme} (wechseln zu: {next})', themeSystem: 'wie im System', themeLight: 'hell' };
  const attr = JSON.stringify(german).replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  await gp.route(`${SITE}/it-services/vpn.html`, async (route) => {
    const res = await route.fetch();
    const html = (await res.text()).replace('<html lang="en">', '<html lang="de">')
      .replace('assets/page.js" defer>', `assets/page.js" data-strings="${attr}" defer>`);
    await route.fulfill({ response: res, body: html });
  });
  await gp.goto(`${SITE}/it-services/vpn.html`);
  const gcopy = gp.locator('.code-block__copy').first();
  assert.equal(await gcopy.textContent(), 'Kopieren');
  await gcopy.click();
  await gp.waitForFunction(() => document.querySelector('.code-block__copy').textContent === 'Kopiert');
  assert.equal(await gp.locator('[data-theme-label]').textContent(), 'Farbschema: wie im System');
  assert.equal(await gp.locator('button.theme-toggle').getAttribute('title'), 'Farbschema: wie im System (wechseln zu: hell)');
  // What the JSON leaves out stays English; the widget follows <html lang>.
  assert.equal(await gcopy.getAttribute('aria-label'), 'Copy the Bash code');
  assert.equal(await gp.locator('#kb-widget-host textarea.kb-input').getAttribute('placeholder'), 'Stellen Sie eine Frage…');
  assert.ok(g.errors.length === 0, `page errors: ${g.errors.join('; ')}`);
  await g.close();
  console.log(`navigation: sidebar, keyboard, pager, copy, contents, theme, favicon, listings, phone, ${row.n} + ${hidden} sections, 404 under /docs/, German page words`);
}

// --------------------------------------------------------- accessibility
// axe-core (tests/browser's pinned npm package) on the pages a reader meets, in
// light and dark: an article, the home page, results, no results, the dropdown
// open, and the widget with an answer. WCAG 2.1 A and AA rules; every violation
// is listed by rule and element. The site's CSP forbids injected scripts, so
// this context bypasses it (axe only reads the page).
// axe-core's WCAG 2.1 A and AA violations on `page` as it is now, each as
// "LABEL: rule (impact) at elements", added to `found`. The page's context
// must bypass the site's CSP.
async function axeCheck(page, label, found) {
  const axeSource = readFileSync(new URL('./node_modules/axe-core/axe.min.js', import.meta.url), 'utf8');
  await page.addScriptTag({ content: axeSource });
  const r = await page.evaluate(() =>
    window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }));
  for (const v of r.violations) {
    found.push(`${label}: ${v.id} (${v.impact}) at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
  }
}

async function a11y() {
  const found = [];
  for (const scheme of ['light', 'dark']) {
    const b = await browser({ colorScheme: scheme, bypassCSP: true });
    const page = b.context.pages()[0] || (await b.context.newPage());
    const check = (what) => axeCheck(page, `${scheme} ${what}`, found);
    for (const [what, path] of [
      ['home', '/index.html'],
      ['article', '/campus/parking/buying-a-parking-permit.html'],
      ['results', '/search.html?q=parking+permit'],
      ['no results', '/search.html?q=xqzv+blorf'],
    ]) {
      await page.goto(`${SITE}${path}`);
      if (what === 'results') await page.locator('#search-results .search-result').first().waitFor({ timeout: 10000 });
      if (what === 'no results') await page.locator('#search-status.search-status--empty').waitFor({ timeout: 10000 });
      if (what === 'article') await page.locator('[data-page-feedback]').waitFor({ state: 'visible', timeout: 10000 });
      await check(what);
      if (what !== 'article') continue;
      // "Was this helpful?": the comment open, then the thanks.
      const rating = page.locator('[data-page-feedback]');
      await rating.getByRole('button', { name: 'No', exact: true }).click();
      await rating.locator('textarea').fill('The price for one semester is missing.');
      await check('article, rating comment open');
      await rating.getByRole('button', { name: 'Send feedback' }).click();
      await rating.locator('[data-page-feedback-status][data-state="sent"]').waitFor({ timeout: 10000 });
      await check('article, rating thanked');
    }
    await page.goto(`${SITE}/it-services/vpn.html`);
    await page.locator('#search-input').fill('eduroam');
    await page.locator('#search-suggest a.search-option').first().waitFor({ timeout: 10000 });
    await check('dropdown');
    await page.keyboard.press('Escape');
    await page.locator('#kb-widget-host button.kb-launcher').click();
    await page.locator('#kb-widget-host textarea.kb-input').fill('How do I buy a parking permit?');
    await page.keyboard.press('Enter');
    await page.locator('#kb-widget-host .kb-msg.kb-assistant[data-state="done"]').waitFor({ timeout: 15000 });
    await check('widget');
    await b.close();
  }
  console.log(`axe: ${found.length} violations`);
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
}

// --------------------------------------------------- "Was this page helpful?"
// KB_SITE is the host (the real component, recording on, insights_token
// KB_TOKEN). In light and dark: the block appears under an article once the
// widget's probe finds the API; "No" opens the comment box and moves the focus
// there, typing and "Send feedback" post it, and the thanks replace the question
// in a live region that takes the focus. "Yes" by keyboard alone sends at once.
// Then /api/insights lists both pages with what was said.
async function pageFeedbackScenario() {
  const token = process.env.KB_TOKEN;
  assert.ok(token, 'KB_TOKEN is the host\'s insights_token');
  const articles = {
    light: 'campus/parking/buying-a-parking-permit.html',
    dark: 'it-services/vpn.html',
  };
  const comments = {};
  for (const scheme of ['light', 'dark']) {
    const b = await browser({ colorScheme: scheme });
    const page = b.context.pages()[0] || (await b.context.newPage());
    await page.goto(`${SITE}/${articles[scheme]}`);
    const box = page.locator('[data-page-feedback]');
    await box.waitFor({ state: 'visible', timeout: 10000 });
    assert.equal(await page.evaluate(() => window.kbWidget.mode), 'chat', 'shown because the API answered');
    const heading = box.getByRole('heading', { name: 'Was this page helpful?' });
    assert.equal(await heading.count(), 1, 'a heading names the block');
    const no = box.getByRole('button', { name: 'No', exact: true });
    const yes = box.getByRole('button', { name: 'Yes', exact: true });
    assert.equal(await box.locator('[data-page-feedback-form]').isVisible(), false, 'no comment box before an answer');
    await box.scrollIntoViewIfNeeded();
    await shot(page, `page-feedback-${scheme}`);
    // "No": the comment box, focused, with its limit; nothing is sent yet.
    const posted = [];
    page.on('request', (r) => { if (new URL(r.url()).pathname.endsWith('/api/feedback')) posted.push(r.postDataJSON()); });
    await no.click();
    assert.equal(await no.getAttribute('aria-pressed'), 'true');
    const textarea = box.locator('textarea');
    await textarea.waitFor({ state: 'visible' });
    assert.equal(await page.evaluate(() => document.activeElement && document.activeElement.tagName), 'TEXTAREA',
      'the focus moves to the comment');
    assert.equal(await textarea.getAttribute('maxlength'), '500');
    assert.equal(posted.length, 0, 'no is not sent before the comment (or its absence) is');
    assert.equal((await box.locator('[data-page-feedback-status]').innerText()).trim(), '', 'no thanks yet');
    comments[scheme] = `The ${scheme} page lacks the fee for one semester <b>really</b>`;
    await page.keyboard.type(comments[scheme], { delay: 5 });
    await shot(page, `page-feedback-comment-${scheme}`);
    const sent = page.waitForResponse((r) => new URL(r.url()).pathname.endsWith('/api/feedback'));
    await box.getByRole('button', { name: 'Send feedback' }).click();
    assert.equal((await sent).status(), 202);
    const status = box.locator('[data-page-feedback-status][data-state="sent"]');
    await status.waitFor({ timeout: 10000 });
    assert.match(await status.innerText(), /thank you/i);
    assert.equal(await status.getAttribute('role'), 'status', 'the thanks are a live region');
    assert.equal(await page.evaluate(() => document.activeElement && document.activeElement.hasAttribute('data-page-feedback-status')),
      true, 'the focus follows to the thanks');
    assert.equal(await yes.isVisible(), false, 'the question is answered');
    assert.deepEqual(posted.map((p) => [p.page, p.rating, p.comment]), [[articles[scheme], 'down', comments[scheme]]]);
    assert.match(posted[0].visitor || '', /^v-[0-9a-f]{24}$/, 'the widget\'s kind of visitor id');
    await shot(page, `page-feedback-thanks-${scheme}`);
    assert.ok(b.errors.length === 0, `page errors: ${b.errors.join('; ')}`);
    await b.close();
  }
  // "Yes" by keyboard alone: Tab reaches it, Enter sends it.
  const b = await browser();
  const page = b.context.pages()[0] || (await b.context.newPage());
  await page.goto(`${SITE}/it-services/mfa.html`);
  const box = page.locator('[data-page-feedback]');
  await box.waitFor({ state: 'visible', timeout: 10000 });
  await page.locator('.article h1').click();
  let reached = false;
  for (let i = 0; i < 200 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement && document.activeElement.getAttribute('data-rating') === 'up');
  }
  assert.ok(reached, 'Tab reaches "Yes"');
  const sent = page.waitForResponse((r) => new URL(r.url()).pathname.endsWith('/api/feedback'));
  await page.keyboard.press('Enter');
  assert.equal((await sent).status(), 202);
  await box.locator('[data-page-feedback-status][data-state="sent"]').waitFor({ timeout: 10000 });
  assert.ok(b.errors.length === 0, `page errors: ${b.errors.join('; ')}`);
  await b.close();
  // The team sees it.
  const r = await fetch(`${SITE}/api/insights?since=1d`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.status, 200);
  const rated = (await r.json()).pages_rated;
  const of = (url) => rated.find((p) => p.url === url);
  for (const scheme of ['light', 'dark']) {
    const p = of(articles[scheme]);
    assert.ok(p && p.no === 1 && p.yes === 0, `${articles[scheme]} rated no: ${JSON.stringify(rated)}`);
    assert.equal(p.comments[0].comment, comments[scheme]);
  }
  assert.ok(of('it-services/mfa.html') && of('it-services/mfa.html').yes === 1, `mfa rated yes: ${JSON.stringify(rated)}`);
  console.log(`page-feedback: ${rated.length} pages rated in insights`);
}

// ------------------------------------------------------------------ languages
// A page of a site in several languages (its <html lang> and data-languages:
// the demo's pages rewritten in flight, as a German page of such a site reads)
// searches its own language; the demo has no German page, so the real API falls
// back to every language and says so; the reader can ask for every language.
async function languages() {
  const b = await browser();
  const page = b.context.pages()[0] || (await b.context.newPage());
  await page.route(/\.html(\?|$)/, async (route) => {
    const res = await route.fetch();
    const body = (await res.text()).replace('<html lang="en"', '<html lang="de" data-languages="de en"');
    await route.fulfill({ response: res, body });
  });
  const asked = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.pathname.endsWith('/api/search')) asked.push(u.searchParams.get('lang'));
  });
  // The header's form carries the page's language to the results page.
  await page.goto(`${SITE}/campus/parking/buying-a-parking-permit.html`);
  await page.waitForFunction(() => document.querySelector('form[role="search"] input[name="lang"]'), null, { timeout: 10000 });
  assert.equal(await page.locator('form[role="search"] input[name="lang"]').first().getAttribute('value'), 'de');
  await page.locator('#search-input').fill('parking permit');
  await page.keyboard.press('Enter');
  await page.waitForURL(/search\.html\?q=parking\+permit&lang=de/);
  const line = page.locator('#search-status .search-status__lang');
  await line.waitFor({ timeout: 10000 });
  assert.match(await line.innerText(), /No pages in Deutsch match; showing pages in other languages/);
  assert.ok(asked.includes('de'), `the API was asked for German: ${asked}`);
  // Each result says its language, and its title is marked as English.
  const badge = page.locator('.search-result__lang').first();
  assert.match(await badge.innerText(), /English/);
  assert.equal(await page.locator('.search-result__link').first().getAttribute('lang'), 'en');
  // Every language, on request.
  await line.locator('a').click();
  await page.waitForURL(/lang=all/);
  await page.locator('#search-status .search-status__lang').waitFor({ timeout: 10000 });
  await page.waitForFunction(() => /All languages/.test(document.querySelector('#search-status').textContent), null, { timeout: 10000 });
  assert.ok(asked.includes('all'), `the API was asked for every language: ${asked}`);
  await shot(page, 'results-languages');
  // The widget on the German page sends the reader's language with a question.
  const chats = [];
  await page.route('**/api/chat', (route) => {
    chats.push(JSON.parse(route.request().postData() || '{}'));
    return route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"code":"unavailable","message":"x"}}' });
  });
  await page.goto(`${SITE}/campus/parking/buying-a-parking-permit.html`);
  await page.locator('#kb-widget-host button.kb-launcher').click();
  await page.locator('#kb-widget-host textarea.kb-input').fill('Parkausweis kaufen');
  await page.keyboard.press('Enter');
  for (let i = 0; i < 100 && !chats.length; i++) await page.waitForTimeout(50);
  assert.equal(chats.length >= 1 && chats[0].lang, 'de', JSON.stringify(chats));
  // An answer citing a German page and an English one (a page German has no
  // translation of): the English source says its language, in its own name.
  await page.unroute('**/api/chat');
  await page.route('**/api/chat', (route) => route.fulfill({
    status: 200,
    contentType: 'application/json',
    body: JSON.stringify({
      answer: 'Parkausweise gibt es im Campusbüro [1]; das Formular heißt PK-7 [2].',
      citations: [
        { n: 1, chunk_id: 'a_0', page_id: 'a', title: 'Parkausweise', path: ['KB', 'Parkausweise'], url: 'campus/parking/buying-a-parking-permit.html', snippet: '', lang: 'de' },
        { n: 2, chunk_id: 'b_0', page_id: 'b', title: 'Parking permits', path: ['KB', 'Parking permits'], url: 'campus/parking/index.html', snippet: '', lang: 'en' },
      ],
      abstained: false, extractive: true, degraded: false,
    }),
  }));
  await page.locator('#kb-widget-host textarea.kb-input').fill('Wo bekomme ich einen Parkausweis?');
  await page.keyboard.press('Enter');
  const marked = page.locator('#kb-widget-host .kb-citations .kb-src-lang');
  await marked.first().waitFor({ timeout: 10000 });
  assert.equal(await marked.count(), 1, 'only the English source is marked');
  assert.equal((await marked.innerText()).trim(), '(English)');
  assert.equal(await page.locator('#kb-widget-host .kb-citations li').nth(1).locator('span[lang="en"]').innerText(), 'Parking permits');
  await shot(page, 'widget-source-in-another-language');
  assert.ok(b.errors.length === 0, `page errors: ${b.errors.join('; ')}`);
  await b.close();
  // A site in one language sends no `lang`.
  const one = await browser();
  const p1 = one.context.pages()[0] || (await one.context.newPage());
  const plain = [];
  p1.on('request', (r) => {
    const u = new URL(r.url());
    if (u.pathname.endsWith('/api/search')) plain.push(u.searchParams.has('lang'));
  });
  await p1.goto(`${SITE}/search.html?q=parking`);
  await p1.locator('.search-result').first().waitFor({ timeout: 10000 });
  assert.ok(plain.length > 0 && plain.every((has) => !has), `no lang on a one-language site: ${plain}`);
  assert.equal(await p1.locator('.search-status__lang').count(), 0);
  await one.close();
  console.log(`languages: asked ${asked.join(',')}`);
}

// A German and English site on a plain static server (no /api): the browser
// engine that reads German answers in the reader's language.
async function languagesStatic() {
  const log = async () => (await fetch(`${SITE}/__log?clear=1`)).json();
  const b = await browser();
  const page = b.context.pages()[0] || (await b.context.newPage());
  await log();
  await page.goto(`${SITE}/de/wlan.html`);
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'de');
  assert.equal(await page.evaluate(() => document.documentElement.dataset.languages), 'de en');
  // The site is split by language: a German page's header lists the German
  // pages, its sidebar German only; the home lists the languages.
  const row = () => page.locator('.site-nav__list a').allInnerTexts();
  assert.deepEqual(await row(), ['Drucken', 'WLAN verbinden']);
  assert.deepEqual(await page.locator('.sidebar__title').allInnerTexts(), ['Deutsch']);
  await page.goto(`${SITE}/index.html`);
  assert.deepEqual(await row(), ['Deutsch', 'English']);
  assert.equal(await page.locator('#browse-heading').innerText(), 'Browse by language');
  await page.goto(`${SITE}/de/wlan.html`);
  // Typing: the dropdown answers from German pages, German stems ("Druckern" → druck).
  await page.locator('#search-input').click();
  await page.keyboard.type('Druckern', { delay: 30 });
  await page.waitForFunction(() => {
    const p = document.getElementById('search-suggest');
    return p && !p.hidden && !p.hasAttribute('aria-busy') && /Drucken/.test(p.textContent);
  }, null, { timeout: 15000 });
  const fetched = (await log()).map(([p]) => p);
  assert.ok(fetched.some((p) => p.endsWith('search_web_languages_bg.wasm.gz')), `the languages engine: ${fetched}`);
  assert.ok(!fetched.some((p) => p.endsWith('/search_web_bg.wasm.gz')), `not the English one: ${fetched}`);
  // The results page, in German (the site's German results page, its words
  // German too): only German pages.
  await page.keyboard.press('Enter');
  await page.waitForURL(/search\.de\.html\?q=Druckern&lang=de/);
  const line = page.locator('#search-status .search-status__lang');
  await line.waitFor({ timeout: 15000 });
  assert.match(await line.innerText(), /Auf Deutsch/);
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'de');
  assert.equal(await page.locator('h1').innerText(), 'Suche');
  assert.match(await page.locator('#search-query').innerText(), /Ergebnisse für „Druckern“/);
  assert.match(await page.locator('#search-status').innerText(), /1 Artikel · 1 passender Abschnitt/);
  const hrefs = () => page.locator('#search-results .search-result__link').evaluateAll((a) => a.map((x) => x.getAttribute('href')));
  const german = await hrefs();
  assert.ok(german.length >= 1 && german.every((h) => /(^|\/)de\//.test(h)), `German results only: ${german}`);
  assert.ok(german[0].includes('drucken'), `the printing page first: ${german}`);
  await shot(page, 'results-languages-static');
  // A compound no page has ("Druckerkosten") is read as its parts, Drucker
  // and Kosten: the engine fetches their shards once its own lacks the word.
  await page.goto(`${SITE}/search.de.html?q=Druckerkosten&lang=de`);
  await page.locator('#search-status .search-status__lang').waitFor({ timeout: 15000 });
  const compound = await hrefs();
  assert.ok(compound[0] && compound[0].includes('de/drucken'), `the printing page for Druckerkosten: ${compound}`);
  // Words no German page has: the English page, and the line says why.
  await page.goto(`${SITE}/search.de.html?q=parking+permit+semester&lang=de`);
  await page.locator('#search-status .search-status__lang').waitFor({ timeout: 15000 });
  assert.match(await page.locator('#search-status').innerText(), /Keine passenden Seiten auf Deutsch; es werden Seiten in anderen Sprachen angezeigt/);
  assert.match(await page.locator('.search-result__lang').first().innerText(), /English/);
  assert.ok((await hrefs())[0].includes('en/parking'), `the English page: ${await hrefs()}`);
  // The parking page has no German translation, so it stands in for one: a
  // German search for its form finds it without leaving German, marked English.
  await page.goto(`${SITE}/search.de.html?q=PK-7&lang=de`);
  await page.locator('#search-status .search-status__lang').waitFor({ timeout: 15000 });
  const standIn = await page.locator('#search-status').innerText();
  assert.doesNotMatch(standIn, /Keine passenden Seiten/, standIn);
  assert.ok((await hrefs())[0].includes('en/parking'), `the untranslated page: ${await hrefs()}`);
  assert.match(await page.locator('.search-result__lang').first().innerText(), /English/);
  // The dropdown on a German page marks it too.
  await page.goto(`${SITE}/de/wlan.html`);
  await page.locator('#search-input').click();
  await page.keyboard.type('PK-7', { delay: 30 });
  await page.waitForFunction(() => {
    const p = document.getElementById('search-suggest');
    return p && !p.hidden && !p.hasAttribute('aria-busy') && /Parking/.test(p.textContent);
  }, null, { timeout: 15000 });
  const option = page.locator('#search-suggest .search-option--page').first();
  assert.match(await option.getAttribute('href'), /en\/parking/);
  assert.equal((await option.locator('.search-option__lang').innerText()).trim(), 'English');
  assert.equal(await option.locator('.search-option__title').getAttribute('lang'), 'en');
  await shot(page, 'suggest-untranslated-page');
  // Every language, on request: eduroam is on pages in both.
  await page.goto(`${SITE}/search.de.html?q=eduroam&lang=de`);
  await page.locator('#search-status .search-status__lang a').waitFor({ timeout: 15000 });
  const onlyGerman = await hrefs();
  assert.ok(onlyGerman.every((h) => /(^|\/)de\//.test(h)), `German: ${onlyGerman}`);
  assert.equal(await page.locator('#search-status .search-status__lang a').innerText(), 'In allen Sprachen suchen');
  await page.locator('#search-status .search-status__lang a').click();
  await page.waitForURL(/search\.de\.html\?.*lang=all/);
  await page.waitForFunction(() => /Alle Sprachen/.test(document.querySelector('#search-status').textContent), null, { timeout: 15000 });
  const all = await hrefs();
  assert.ok(all.some((h) => /(^|\/)en\//.test(h)) && all.some((h) => /(^|\/)de\//.test(h)), `every language: ${all}`);
  // An English page's forms go to the English results page, in English.
  await page.goto(`${SITE}/en/wifi.html`);
  assert.equal(await page.locator('form[role="search"]').first().getAttribute('action'), '../search.html');
  await page.goto(`${SITE}/search.html?q=eduroam&lang=en`);
  await page.locator('#search-status .search-status__lang').waitFor({ timeout: 15000 });
  assert.equal(await page.locator('h1').innerText(), 'Search');
  assert.match(await page.locator('#search-status .search-status__lang').innerText(), /In English/);
  assert.ok(b.errors.length === 0, `page errors: ${b.errors.join('; ')}`);
  await b.close();
  await languageSuggestion();
  console.log(`languages-static: ${german.length} German results, ${all.length} in every language`);
}

// A translated page offers its version in the reader's language (the
// browser's), in that language; closing it is remembered; a page in the
// reader's own language, or without a version in it, offers nothing.
async function languageSuggestion() {
  const found = [];
  for (const scheme of ['light', 'dark']) {
    const b = await browser({ locale: 'en-US', colorScheme: scheme, bypassCSP: true });
    const page = b.context.pages()[0] || (await b.context.newPage());
    await page.goto(`${SITE}/de/wlan.html`);
    const note = page.locator('.lang-suggest');
    await note.waitFor({ timeout: 5000 });
    assert.equal(await note.getAttribute('lang'), 'en');
    assert.equal(await note.locator('a').innerText(), 'Read this page in English');
    assert.match(await note.locator('a').getAttribute('href'), /\/en\/wifi\.html$/);
    await axeCheck(page, `${scheme} German page, English reader`, found);
    if (scheme === 'light') await shot(page, 'language-suggestion');
    await note.locator('.lang-suggest__close').click();
    assert.equal(await note.count(), 0);
    await page.reload();
    await page.locator('.lang-switch').waitFor();
    assert.equal(await page.locator('.lang-suggest').count(), 0, 'closed once, closed for English');
    await page.goto(`${SITE}/en/wifi.html`);
    await page.locator('.lang-switch').waitFor();
    assert.equal(await page.locator('.lang-suggest').count(), 0, 'the reader\'s own language');
    await b.close();
  }
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
  const b = await browser({ locale: 'de-DE' });
  const page = b.context.pages()[0] || (await b.context.newPage());
  await page.goto(`${SITE}/en/wifi.html`);
  const note = page.locator('.lang-suggest a');
  await note.waitFor({ timeout: 5000 });
  assert.equal(await note.innerText(), 'Diese Seite auf Deutsch lesen');
  assert.equal(await page.locator('.lang-suggest__close').getAttribute('aria-label'), 'Schließen');
  await note.click();
  await page.waitForURL(/\/de\/wlan\.html$/);
  assert.equal(await page.locator('.lang-suggest').count(), 0, 'the German page, for a German reader');
  await page.goto(`${SITE}/en/parking.html`);
  assert.equal(await page.locator('.lang-suggest').count(), 0, 'no German version: nothing to offer');
  assert.ok(b.errors.length === 0, `page errors: ${b.errors.join('; ')}`);
  await b.close();
}

// An English help desk with one Finnish page, on a static host: an English
// page's reader loads the English engine, the Finnish page's the one that
// reads Finnish, and "salasanasi" finds the Finnish page by its Finnish stem
// on the Finnish results page (the English engine reads it as an English word
// no page has, "no results"; as a word being typed, in the dropdown, either
// engine completes it).
async function rareLanguageStatic() {
  const log = async () => (await fetch(`${SITE}/__log?clear=1`)).json();
  const b = await browser();
  const page = b.context.pages()[0] || (await b.context.newPage());
  const suggests = (text) => page.waitForFunction((t) => {
    const p = document.getElementById('search-suggest');
    return p && !p.hidden && !p.hasAttribute('aria-busy') && p.textContent.includes(t);
  }, text, { timeout: 15000 });
  await log();
  await page.goto(`${SITE}/en/printing.html`);
  await page.locator('#search-input').click();
  await page.keyboard.type('printing office', { delay: 20 });
  await suggests('Printing');
  let fetched = (await log()).map(([p]) => p);
  assert.ok(fetched.some((p) => p.endsWith('/search_web_bg.wasm.gz')), `the English engine: ${fetched}`);
  assert.ok(!fetched.some((p) => p.endsWith('search_web_languages_bg.wasm.gz')), `not the bigger one: ${fetched}`);
  await page.goto(`${SITE}/fi/salasana.html`);
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'fi');
  await page.locator('#search-input').click();
  await page.keyboard.type('salasanasi', { delay: 30 });
  await suggests('Salasanan vaihtaminen');
  fetched = (await log()).map(([p]) => p);
  assert.ok(fetched.some((p) => p.endsWith('search_web_languages_bg.wasm.gz')), `the engine that reads Finnish: ${fetched}`);
  await page.keyboard.press('Enter');
  await page.waitForURL(/search\.fi\.html\?q=salasanasi&lang=fi/);
  await page.locator('#search-results .search-result__link').first().waitFor({ timeout: 15000 });
  const hrefs = await page.locator('#search-results .search-result__link').evaluateAll((a) => a.map((x) => x.getAttribute('href')));
  assert.ok(hrefs[0].includes('fi/salasana'), `the Finnish page first: ${hrefs}`);
  assert.ok(b.errors.length === 0, `page errors: ${b.errors.join('; ')}`);
  await b.close();
  console.log(`rare-language-static: ${hrefs.length} results for a Finnish word on the Finnish page`);
}

const scenarios = {
  search, widget, keyboard, hostile, extractive, 'hostile-site': hostileSite, 'hostile-files': hostileFiles,
  static: staticSite, semantic: semanticSite, navigation, a11y, 'page-feedback': pageFeedbackScenario, languages,
  'languages-static': languagesStatic, 'rare-language-static': rareLanguageStatic,
};
if (!scenarios[scenario]) {
  console.error(`unknown scenario ${scenario}; one of ${Object.keys(scenarios).join(', ')}`);
  process.exit(2);
}
try {
  await scenarios[scenario]();
  console.log(`${scenario}: ok`);
} catch (e) {
  console.error(`${scenario}: ${e.stack || e}`);
  process.exit(1);
}
