// What the wall and an open session keep readable and in view (issue 32,
// items 7 and 8): the filter finds a session by a word on its screen, also
// one never scrolled into view; the hover preview's text is at least
// 11 px, inside the window; an open 90x30 session with its prompt on the
// last row shows the cursor at 1280x720 and 1440x900 (its rows fitted to
// the height too) and on a 390x844 phone (where the view follows the
// cursor sideways), and still when A+ makes it too big to fit.

import {
  SHELL, api, check, input, launch, log, openDashboard, waitFor, waitUntil, watchPage,
} from './lib.mjs';

const SCREEN = '#session-screen';
const tile = (id) => `#wall .tile[data-session-id="${id}"]`;
const FILLERS = 7;
/** Typed without Enter on the wide session's last row: the cursor ends far right. */
const LONG_LINE = `echo ${'x'.repeat(70)}`;

async function create(fields) {
  const body = { command: SHELL, ...fields };
  const { status, body: answer } = await api('POST', '/v1/sessions', body);
  check(status === 201, `create ${body.name}: ${status} ${JSON.stringify(answer)}`);
  return answer.session.session_id;
}

async function snapshotHas(id, test) {
  const { status, body } = await api('GET', `/v1/sessions/${id}/snapshot`);
  return status === 200 && test(body);
}

export async function readable() {
  const wide = await create({ name: 'wide-30', cols: 90, rows: 30 });
  const fillers = [];
  for (let i = 0; i < FILLERS; i++) fillers.push(await create({ name: `filler-${i}` }));
  // A word only the output has: the command line says `$((40+2))`.
  for (const [i, id] of fillers.entries()) await input(id, { text: `echo mark-${i}-$((40+2))`, submit: true });
  await input(wide, { text: 'seq 1 40', submit: true });
  for (const [i, id] of fillers.entries()) {
    await waitFor(`filler-${i} to print its mark`, () => snapshotHas(id, (s) => s.lines.includes(`mark-${i}-42`)));
  }
  await waitFor('seq to finish on the wide session', () => snapshotHas(wide, (s) => s.lines.includes('40')));
  await input(wide, { text: LONG_LINE });
  const cursor = await waitUntil('the wide session\'s cursor at the end of its last row',
    async () => {
      const { body } = await api('GET', `/v1/sessions/${wide}/snapshot`);
      return { ...body.cursor, cols: body.cols, rows: body.rows, tail: body.lines.slice(-3) };
    },
    (c) => c && c.row === 29 && c.col === 2 + LONG_LINE.length);

  const { context, cleanup } = await launch();
  const page = await context.newPage();
  const messages = watchPage(page, 'readable');
  try {
    await filterOnScreenText(page, fillers);
    await readablePreview(page, wide);
    await cursorInView(page, wide, cursor);
    check(!messages.length, `nothing logged: ${messages.join('; ')}`);
  } finally {
    if (messages.length) log(messages.join('\n'));
    await cleanup();
  }
}

const shownTiles = (page) => page.$$eval('#wall .tile:not([hidden])', (t) => t.map((e) => e.dataset.sessionId));

/** On a phone's one column the last tiles were never on screen: the filter still finds them by screen text. */
async function filterOnScreenText(page, fillers) {
  await page.setViewportSize({ width: 390, height: 844 });
  await openDashboard(page);
  for (const id of fillers) await page.waitForSelector(tile(id));
  const order = await waitUntil('every tile placed', () => page.$$eval('#wall .tile', (t) => t.map((e) => e.dataset.sessionId)),
    (ids) => ids.length === fillers.length + 1);
  const near = order.find((id) => fillers.includes(id));
  const far = [...order].reverse().find((id) => fillers.includes(id));
  const [nearWord, farWord] = [near, far].map((id) => `mark-${fillers.indexOf(id)}-42`);
  await waitFor('the first tile\'s screen', async () => (await page.$$(`${tile(order[0])} .term .row`)).length > 0);
  const seen = await page.$eval(tile(far), (t) => t.querySelectorAll('.term .row').length);
  check(seen === 0, `a tile at the end of a phone's column has never been on screen (${seen} rows)`);

  for (const [id, word] of [[near, nearWord], [far, farWord]]) {
    await page.fill('#filter', word);
    await waitUntil(`the filter "${word}" to leave ${id} alone`, () => shownTiles(page), (ids) => ids.join() === id);
  }
  await page.fill('#filter', '');
  await waitUntil('the cleared filter to show every tile', () => shownTiles(page), (ids) => ids.length === fillers.length + 1);
  log(`the filter found sessions by screen text ("${nearWord}", and "${farWord}" on a tile never on screen)`);
}

/** The hover preview: text at least 11 px, the whole screen's rows, inside the window. */
async function readablePreview(page, wide) {
  await page.setViewportSize({ width: 1280, height: 800 });
  const thumb = `${tile(wide)} .thumb`;
  await page.locator(thumb).scrollIntoViewIfNeeded();
  await waitUntil('the wide tile\'s thumbnail', () => page.$eval(thumb, (t) => t.querySelectorAll('.term .row').length), (n) => n === 30);
  await page.hover(thumb);
  await page.waitForSelector(`${tile(wide)}.peek`);
  const seen = await waitUntil('a readable preview inside the window', () => page.$eval(thumb, (t) => {
    const rows = [...t.querySelectorAll('.term .row')];
    const box = t.getBoundingClientRect();
    const row = rows[0].getBoundingClientRect();
    const lineHeight = parseFloat(getComputedStyle(rows[0]).lineHeight) || parseFloat(getComputedStyle(rows[0]).height);
    const px = parseFloat(getComputedStyle(rows[0]).fontSize) * (row.height / lineHeight);
    const last = rows.filter((r) => r.textContent.includes('echo x')).pop();
    const lastBox = last ? last.getBoundingClientRect() : null;
    return {
      px: Math.round(px * 10) / 10,
      left: box.left,
      right: box.right,
      innerWidth: document.documentElement.clientWidth,
      lastRowShown: !!lastBox && lastBox.top >= box.top && lastBox.bottom <= box.bottom + 1,
      wholeWidth: t.querySelector('.term').getBoundingClientRect().width <= box.width + 1,
    };
  }), (s) => s.px >= 11 && s.left >= 0 && s.right <= s.innerWidth && s.lastRowShown && s.wholeWidth);
  await page.mouse.move(0, 0);
  await page.waitForSelector(`${tile(wide)}:not(.peek)`);
  log(`the hover preview at ${seen.px}px, ${Math.round(seen.right - seen.left)} px wide inside the window, the prompt row shown`);
}

/** Where the open session's cursor is, against the screen's box and the window. */
function cursorPlace(page) {
  return page.$eval(SCREEN, (host) => {
    const term = host.querySelector('.term');
    const cursor = term.querySelector('.cursor');
    const c = cursor.getBoundingClientRect();
    const h = host.getBoundingClientRect();
    const inner = {
      left: h.left + host.clientLeft,
      top: h.top + host.clientTop,
      right: h.left + host.clientLeft + host.clientWidth,
      bottom: h.top + host.clientTop + host.clientHeight,
    };
    const t = term.getBoundingClientRect();
    const inside = (b, o) => b.left >= o.left - 0.5 && b.right <= o.right + 0.5 && b.top >= o.top - 0.5 && b.bottom <= o.bottom + 0.5;
    const windowBox = { left: 0, top: 0, right: innerWidth, bottom: innerHeight };
    const first = term.querySelector('.row').getBoundingClientRect();
    return {
      px: parseFloat(getComputedStyle(term).fontSize),
      shown: getComputedStyle(cursor).display !== 'none' && c.width > 0,
      row: Math.round((c.top - first.top) / first.height),
      inHost: inside(c, inner),
      inWindow: inside(c, windowBox),
      wholeScreen: inside(t, inner) && inside(t, windowBox),
    };
  });
}

async function cursorInView(page, wide, cursor) {
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.click(tile(wide));
  await page.waitForFunction((id) => location.hash === `#/s/${id}`, wide);
  const sizes = [
    { width: 1280, height: 720, whole: true },
    { width: 1440, height: 900, whole: true },
    { width: 390, height: 844, whole: false },
  ];
  const said = [];
  const fittedAt = {};
  let smaller = 0;
  for (const size of sizes) {
    await page.setViewportSize({ width: size.width, height: size.height });
    // A larger window gets larger text (the fit follows the window), a phone the readable minimum.
    const place = await waitUntil(`the cursor in view at ${size.width}x${size.height}`, () => cursorPlace(page),
      (p) => p.shown && p.row === cursor.row && p.inHost && p.inWindow && p.px >= 10
        && (!size.whole || (p.wholeScreen && p.px > smaller)));
    if (size.whole) smaller = place.px;
    fittedAt[`${size.width}x${size.height}`] = place.px;
    said.push(`${size.width}x${size.height} at ${place.px}px${place.wholeScreen ? ' (whole screen)' : ''}`);
  }

  // Made too big to fit (A+), the view follows the cursor. Back at 1280x720 the fit is the one
  // measured there before (waiting for that size, not just a whole screen: the phone's smaller
  // text also fits whole for a moment, until the page refits to the larger window).
  await page.setViewportSize({ width: 1280, height: 720 });
  const fitted = await waitUntil('the fitted size back at 1280x720', () => cursorPlace(page),
    (p) => p.wholeScreen && p.px === fittedAt['1280x720']);
  for (let i = 0; i < 6; i++) await page.click('#font-larger');
  const zoomed = await waitUntil('the cursor in view with A+ six times', () => cursorPlace(page),
    (p) => p.px === fitted.px + 6 && !p.wholeScreen && p.shown && p.inHost && p.inWindow);
  await page.click('#font-fit');
  await waitUntil('fit again', () => cursorPlace(page), (p) => p.px === fitted.px);
  await page.click('#back');
  await page.waitForSelector('#wall:not([hidden])');
  log(`the cursor in view at ${said.join(', ')}; followed at ${zoomed.px}px`);
}
