// The wall as a person triages it (issue 23): a plain load with no 4xx and
// no console error; every tile's name readable at desktop and phone width
// with attention up on half the sessions; states in words; the title
// counting the sessions in attention; keyboard navigation; an ended
// session kept after a reload with its exit status and last screen, opened
// without a screen feed and without the actions that no longer apply;
// the scrollback scrolled into view; a phone's open session at a readable
// size with an answer bar; adopting from the list.

import {
  BASE, SHELL, api, check, createSession, launch, log, rowTexts, tmuxSendKeys, waitFor, waitForRow, waitUntil,
  watchPage, openDashboard,
} from './lib.mjs';

const SCREEN = '#session-screen';
const tile = (id) => `#wall .tile[data-session-id="${id}"]`;
const NAMES = [
  'frontend-release-build', 'db-migration-staging', 'agent-refactor-auth', 'nightly-integration-tests',
  'log-tail-production', 'notebook-analysis',
];

export async function triage() {
  const { context, cleanup } = await launch();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
  const page = await context.newPage();
  const messages = watchPage(page, 'triage');
  const failed = [];
  page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.request().method()} ${r.url()}`); });
  // A WebSocket refused at the handshake is not a `response`: count it too.
  page.on('websocket', (ws) => ws.on('socketerror', (e) => failed.push(`websocket ${ws.url()}: ${e}`)));
  const sockets = [];
  page.on('websocket', (ws) => sockets.push(new URL(ws.url())));
  try {
    const ids = await wall(page, failed, messages, sockets);
    await ended(page, failed, messages);
    await scrollback(page, ids[0]);
    await phone(page);
    await adopt(page);
  } finally {
    if (messages.length) log(messages.join('\n'));
    await cleanup();
  }
}

/** The attention count the daemon reports: what the title must say. */
async function attentionNow() {
  const { body } = await api('GET', '/v1/sessions');
  return body.sessions.filter((s) => s.attention && s.state !== 'exited').length;
}

async function wall(page, failed, messages, sockets) {
  const ids = [];
  for (const name of NAMES) ids.push(await createSession(name));
  await openDashboard(page);
  for (const id of ids) await page.waitForSelector(`${tile(id)} .state`);
  await waitFor('every tile at the prompt', async () => {
    const words = await page.$$eval('#wall .tile .state', (s) => s.map((e) => e.textContent));
    return words.length === ids.length && words.every((w) => w === 'at the prompt');
  });
  await waitUntil('the evidence on hover', () => page.$eval(tile(ids[0]), (t) => t.title),
    (hover) => hover === 'at the prompt · a shell is at its prompt');
  check(!failed.length, `a plain load made no failed request: ${failed.join(', ')}`);
  check(!messages.length, `a plain load logged nothing: ${messages.join('; ')}`);
  log('a plain load: no 4xx, no console error; every tile says "at the prompt"');

  // Attention on half of them, rung through tmux (tmuxd's input would clear it).
  for (const name of NAMES.filter((_, i) => i % 2 === 0)) tmuxSendKeys(name, [String.raw`printf '\a'`, 'Enter']);
  await waitFor('attention on three tiles', async () => (await page.$$('#wall .tile.attention')).length === 3);
  await waitUntil('marked by icon and words',
    () => page.$$eval('#wall .tile.attention .mark', (m) => m.map((e) => e.offsetParent !== null && e.textContent)),
    (marks) => marks.length === 3 && marks.every((m) => m && m.includes('!') && m.includes('needs you: rang the bell')));
  await waitUntil('attention tiles first', () => page.$$eval('#wall .tile', (t) => t.map((e) => e.classList.contains('attention'))),
    (order) => order.join() === 'true,true,true,false,false,false');
  const want = await attentionNow();
  await waitFor(`the title "(${want}) tmuxd"`, async () => (await page.title()) === `(${want}) tmuxd`);
  for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(viewport);
    const names = () => page.$$eval('#wall .tile', (tiles) => tiles.map((t) => {
      const name = t.querySelector('.name');
      const box = name.getBoundingClientRect();
      const tileBox = t.getBoundingClientRect();
      return {
        text: name.textContent,
        whole: name.scrollWidth <= name.clientWidth && box.width > 0,
        inside: box.left >= tileBox.left && box.right <= tileBox.right,
        shown: getComputedStyle(name).visibility === 'visible' && name.offsetParent !== null,
      };
    }));
    await waitUntil(`every name whole at ${viewport.width}x${viewport.height}`, names,
      (all) => all.length === NAMES.length && all.every((n) => n.whole && n.inside && n.shown));
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  log(`names whole at 1280x800 and 390x844 with attention on half; marked "! needs you: rang the bell"; title (${want}) tmuxd`);

  // Answering one lowers its flag: the title follows.
  const { status } = await api('POST', `/v1/sessions/${ids[0]}/input`, { text: 'true', submit: true });
  check(status === 200, 'input');
  await waitFor('the title to count two', async () => (await page.title()) === `(${await attentionNow()}) tmuxd`
    && (await page.title()) === '(2) tmuxd');

  // The keyboard: j/k move, Enter opens, Esc leaves, / filters.
  await page.locator('body').click({ position: { x: 5, y: 300 } });
  const focused = () => page.evaluate(() => document.activeElement.dataset.sessionId);
  const shown = await page.$$eval('#wall .tile', (t) => t.map((e) => e.dataset.sessionId));
  await page.keyboard.press('j');
  await waitUntil('j: the first tile focused', focused, (id) => id === shown[0]);
  await page.keyboard.press('j');
  await waitUntil('j again: the second tile', focused, (id) => id === shown[1]);
  await page.keyboard.press('k');
  await waitUntil('k: back to the first', focused, (id) => id === shown[0]);
  await page.keyboard.press('Enter');
  await page.waitForFunction((id) => location.hash === `#/s/${id}`, shown[0]);
  // A thumbnail is not someone looking: only the open session's feed may
  // acknowledge attention (the attention work acknowledges on /screen).
  const opened = await waitFor('the open session\'s screen feed', () =>
    sockets.find((u) => u.pathname === `/v1/sessions/${shown[0]}/screen` && !u.search));
  const tiles = sockets.filter((u) => u !== opened);
  check(tiles.length >= NAMES.length && tiles.every((u) => u.search === '?acknowledge=false'),
    `the wall's feeds say acknowledge=false: ${tiles.map((u) => u.pathname + u.search)}`);
  await page.locator('#back').focus();
  await page.keyboard.press('Escape');
  // The wall is back only once the page has routed (a hashchange later):
  // a key pressed before that still goes to the session view (issue 32, item 11).
  await page.waitForFunction(() => location.hash === '#/');
  await page.waitForSelector('#wall', { state: 'visible' });
  await page.waitForSelector('#session', { state: 'hidden' });
  await page.keyboard.press('/');
  await waitUntil('/ to focus the filter', () => page.evaluate(() => document.activeElement.id), (id) => id === 'filter');
  await page.keyboard.type('nightly');
  await waitFor('the filter to leave one tile', async () => (await page.$$('#wall .tile:not([hidden])')).length === 1);
  await page.keyboard.press('Escape');
  await waitFor('Esc to clear the filter', async () => (await page.$$('#wall .tile:not([hidden])')).length === NAMES.length);
  log('keyboard: j/k move, Enter opens, Esc goes back, / filters, Esc clears');
  return ids;
}

/** An ended session stays listed after a reload, with its exit status and last screen. */
async function ended(page, failed, messages) {
  const id = await createSession('ended-job', String.raw`bash --norc -c 'printf "last-words\n"; exit 3'`);
  await page.waitForSelector(`${tile(id)}.ended`);
  await page.reload();
  await page.waitForSelector(`${tile(id)}.ended`);
  // The session shows `exited` as soon as its pane is dead, its status a
  // moment later (docs/guide.md, "Ended sessions"): the tile follows.
  let state = '';
  await waitFor('the ended tile to say "exited 3"', async () => {
    state = await page.$eval(`${tile(id)} .state`, (s) => s.textContent);
    return state === 'exited 3';
  }).catch(async (e) => {
    const { body: kept } = await api('GET', `/v1/sessions/${id}`);
    throw new Error(`${e.message}: it says "${state}"; the daemon: ${JSON.stringify(kept)}`);
  });
  await waitForRow(page, `${tile(id)} .thumb`, 'its last screen on the tile', (r) => r === 'last-words');
  const before = failed.length;
  await page.click(tile(id));
  await waitForRow(page, SCREEN, 'its last screen open', (r) => r === 'last-words');
  for (const gone of ['#kill-btn', '#detach-btn', '#softkeys', '#queue-form']) {
    await page.waitForSelector(gone, { state: 'hidden' });
  }
  check(failed.length === before, `opening it made no failed request: ${failed.slice(before).join(', ')}`);
  check(!messages.length, `and logged nothing: ${messages.join('; ')}`);
  await page.click('#back');
  log('an ended session: "exited 3" and its last screen after a reload; opened without a feed or kill/detach/keys');
}

/** The Scrollback button brings the history into view (its box inside the viewport). */
async function scrollback(page, id) {
  await page.click(tile(id));
  await waitFor('the prompt', async () => (await rowTexts(page, SCREEN)).includes('$'));
  await page.keyboard.type('seq 1 100');
  await page.keyboard.press('Enter');
  await waitForRow(page, SCREEN, 'seq to finish', (r) => r === '100');
  await page.click('#scrollback-btn');
  await waitFor('the history', async () => (await page.textContent('#scrollback')).split('\n').includes('10'));
  const { body } = await api('GET', `/v1/sessions/${id}/scrollback?lines=2000`);
  check(await page.textContent('#scrollback') === body.lines.join('\n'), 'the history shown is the daemon\'s');
  const seen = await page.$eval('#scrollback', (h) => {
    const box = h.getBoundingClientRect();
    const host = h.parentElement.getBoundingClientRect();
    const top = Math.max(box.top, host.top, 0);
    const bottom = Math.min(box.bottom, host.bottom, innerHeight);
    return { top, bottom, height: bottom - top, innerHeight };
  });
  check(seen.height >= 50 && seen.bottom <= seen.innerHeight, `the history is in view: ${JSON.stringify(seen)}`);
  await page.click('#scrollback-btn');
  await page.waitForSelector('#scrollback', { state: 'hidden' });

  // The wheel at the top of the screen puts the history above it without
  // jumping to its top; the wheel goes on into it.
  // (Measured within the screen's box: the wheel may scroll the page too.)
  const termTop = () => page.$eval(`${SCREEN} .term`, (t) => t.getBoundingClientRect().top - t.parentElement.getBoundingClientRect().top);
  const before = await termTop();
  await page.mouse.move(300, await page.$eval(SCREEN, (h) => h.getBoundingClientRect().top + 40));
  await page.mouse.wheel(0, -120);
  await page.waitForSelector('#scrollback', { state: 'visible' });
  const after = await termTop();
  // Kept in place, then moved by no more than the wheel's own 120 px.
  check(after >= before && after - before <= 120, `the screen stayed put (${before} -> ${after} px in its box)`);
  await page.mouse.wheel(0, -400);
  await waitFor('the wheel to scroll into the history', () => page.$eval(SCREEN, (h) =>
    h.scrollTop > 0 && h.scrollTop < h.querySelector('#scrollback').offsetHeight - 100));

  // A-/A+ change the font a whole pixel at a time; fit goes back.
  const px = () => page.$eval(`${SCREEN} .term`, (t) => parseFloat(getComputedStyle(t).fontSize));
  const fitted = await px();
  await page.click('#font-larger');
  await waitUntil(`A+ to make the text ${fitted + 1}px`, px, (n) => n === fitted + 1);
  await page.click('#font-smaller');
  await waitUntil(`A- to make it ${fitted}px`, px, (n) => n === fitted);
  await page.click('#font-smaller');
  await waitUntil(`A- again to make it ${fitted - 1}px`, px, (n) => n === fitted - 1);
  await page.click('#font-fit');
  await waitUntil(`fit to go back to ${fitted}px`, px, (n) => n === fitted);

  // Copy takes the selection when there is one.
  const selected = await page.evaluate((sel) => {
    const row = [...document.querySelectorAll(`${sel} .term .row`)].find((r) => r.textContent.trim() === '99');
    const range = document.createRange();
    range.selectNodeContents(row);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    return getSelection().toString();
  }, SCREEN);
  check(selected.trim() === '99', `the row selected: ${JSON.stringify(selected)}`);
  await page.click('#copy-btn');
  await waitUntil('Copy to copy the selection', () => page.evaluate(() => navigator.clipboard.readText()), (t) => t === selected);
  await page.click('#back');
  await page.waitForSelector('#wall', { state: 'visible' });

  // The thumbnail shows the last non-empty rows (100 is the last), the whole screen on hover.
  const thumb = `${tile(id)} .thumb`;
  const shown = await waitUntil('the last rows on the tile at 11px or more', () => page.$eval(thumb, (t) => {
    const box = t.getBoundingClientRect();
    const row = [...t.querySelectorAll('.row')].find((r) => r.textContent.trim() === '100');
    const r = row.getBoundingClientRect();
    return { inside: r.top >= box.top && r.bottom <= box.bottom + 1, px: parseFloat(getComputedStyle(row).fontSize) };
  }), (s) => s.inside && s.px >= 11);
  const small = await page.$eval(thumb, (t) => t.clientHeight);
  await page.hover(thumb);
  await page.waitForSelector(`${tile(id)}.peek`);
  const whole = await waitUntil('hover to show the whole screen', () => page.$eval(thumb, (t) => t.clientHeight), (h) => h > small);
  await page.mouse.move(0, 0);
  await page.waitForSelector(`${tile(id)}:not(.peek)`);
  log(`Scrollback: ${Math.round(seen.height)} px of history in view; the wheel scrolls into it; A-/A+ by a pixel; Copy takes the selection; the tile shows the last rows, the whole screen on hover`);
}

/** At phone width: readable text, a compact header, soft keys, and an answer bar. */
async function phone(page) {
  const asker = await createSession('asker', String.raw`bash --norc -c 'read -p "Deploy to production? [y/N] " a; echo "answered-$a"; exec cat'`);
  // It asks, and tmuxd started it: it needs you, said once (issue 32, item 2).
  await waitFor('the asker needing you', async () =>
    (await page.$eval(`${tile(asker)} .mark`, (s) => s.textContent)) === '!needs you: asks for input');
  await waitUntil('the tile to say it once', () => page.$eval(`${tile(asker)} .status`, (s) => s.innerText),
    (status) => !status.includes('waiting for you'));
  await page.setViewportSize({ width: 390, height: 844 });
  await page.click(tile(asker));
  await page.waitForSelector('#answer-bar button', { state: 'visible' });
  const { px } = await waitUntil('the open session at 10 px or more, not scaled down',
    () => page.$eval(`${SCREEN} .term`, (t) => ({ px: parseFloat(getComputedStyle(t).fontSize), transform: getComputedStyle(t).transform })),
    (t) => t.px >= 10 && t.transform === 'none');
  await page.waitForSelector('header.bar', { state: 'hidden' });
  await page.waitForSelector('#softkeys button[data-key="Escape"]', { state: 'visible' });
  const labels = await waitUntil('the answers offered', () => page.$$eval('#answer-bar button', (b) => b.map((e) => e.textContent)),
    (l) => l.join() === 'y,n');
  await page.click('#answer-bar button:first-child');
  await waitForRow(page, SCREEN, 'the answer typed', (r) => r === 'answered-y');
  await page.waitForSelector('#answer-bar', { state: 'hidden' });
  await page.click('#back');
  await page.setViewportSize({ width: 1280, height: 800 });
  log(`phone: text ${px}px, header hidden, soft keys, answer bar (${labels}) answered y`);
}

/** Adopt from the list of untracked sessions. */
async function adopt(page) {
  const id = await createSession('wanderer', SHELL);
  await page.waitForSelector(tile(id));
  const { status } = await api('DELETE', `/v1/sessions/${id}?mode=detach`);
  check(status === 200, 'detached');
  await page.waitForSelector(tile(id), { state: 'detached' });
  await page.click('#adopt-session');
  const row = '#untracked tr[data-tmux-name="wanderer"]';
  await page.waitForSelector(row);
  const cells = await waitUntil('the row', () => page.$$eval(`${row} td`, (t) => t.map((e) => e.textContent)),
    (c) => c[0] === 'wanderer' && c[4] === 'detached from tmuxd');
  await page.click(`${row} button`);
  await page.waitForSelector('#adopt-dialog', { state: 'hidden' });
  await page.waitForSelector(tile(id));
  log(`adopted "wanderer" from the list (${cells.join(' | ')}) under its old id ${id}`);
}
