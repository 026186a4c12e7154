// Without a token: the wall, opening a session, typing, the rendered rows
// against the daemon's snapshot, a bell, the event feed's resume, phone
// width, and killing a session from the page.

import {
  BASE, SHELL, api, check, createSession, expectedCells, firstDifference, input, launch, log,
  renderedCells, rowTexts, tmuxSendKeys, waitFor, waitForRow, waitUntil, watchPage, openDashboard,
} from './lib.mjs';

const SCREEN = '#session-screen';
/** The daemon's HOME: where a session made without a directory starts. */
const HOME = process.env.TMUXD_TEST_HOME;
const tile = (id) => `#wall .tile[data-session-id="${id}"]`;

export async function endToEnd() {
  const { context, cleanup } = await launch();
  await context.grantPermissions(['notifications', 'clipboard-read', 'clipboard-write'], { origin: BASE });
  const page = await context.newPage();
  // Headless chromium shows no notifications; record what the page asks to show.
  await page.addInitScript(() => {
    const Real = window.Notification;
    window.notificationsShown = [];
    window.Notification = class extends Real {
      constructor(title, options) {
        super(title, options);
        window.notificationsShown.push(title);
      }
    };
  });
  const messages = watchPage(page, 'dashboard');
  try {
    await run(page);
  } finally {
    if (messages.length) log(messages.join('\n'));
    await cleanup();
  }
}

async function run(page) {
  const other = await createSession('dash-0-other');
  await openDashboard(page);
  await page.waitForSelector(tile(other));

  const id = await createSession('dash-a');
  await page.waitForSelector(tile(id));
  log('a session created through the API appeared on the wall');
  await waitFor('the thumbnail to show the prompt', async () =>
    (await rowTexts(page, `${tile(id)} .thumb`)).some((r) => r.startsWith('$')));

  await page.click(tile(id));
  await page.waitForSelector(`${SCREEN} .term`);
  await waitUntil('the session\'s address', () => new URL(page.url()).hash, (hash) => hash === `#/s/${id}`);
  await waitFor('the prompt in the open session', async () => (await rowTexts(page, SCREEN)).includes('$'));

  await page.keyboard.type('echo dash-ok');
  await page.keyboard.press('Enter');
  await waitFor('dash-ok rendered', async () => (await rowTexts(page, SCREEN)).includes('dash-ok'));
  log('typed echo dash-ok + Enter and saw dash-ok');

  await editingKeys(page);
  await specialKeys(page);
  await paste(page);
  await copyAndScrollback(page, id);
  await rowsEqualSnapshot(page, id);
  await bell(page, id, other);
  await resume(page);
  await phone(page, id);
  await actions(page);
  await kill(page, id);
  await endedByItself(page);
  await failedWithSound(page);
}

/**
 * Issue 32, item 2: a session that fails (a non-zero status) raises a
 * notification as attention does; the sound, off by default, beeps once
 * turned on and stays on after a reload.
 */
async function failedWithSound(page) {
  check(await page.textContent('#sound') === 'Sound off', 'the sound is off by default');
  await page.click('#sound');
  await page.waitForSelector('#sound[aria-pressed="true"]');
  const before = await page.evaluate(() => window.tmuxdDashboard.beeps());
  const id = await createSession('dash-fail');
  await page.waitForSelector(tile(id));
  tmuxSendKeys('dash-fail', ['exit 3', 'Enter']);
  await waitFor('a notification for the failed exit', async () =>
    (await page.evaluate(() => window.notificationsShown)).includes('dash-fail exited 3'));
  await waitFor('a beep for it', async () => (await page.evaluate(() => window.tmuxdDashboard.beeps())) > before);
  await page.reload();
  await page.waitForSelector('#sound[aria-pressed="true"]');
  await waitUntil('the sound to stay on after a reload', () => page.textContent('#sound'), (t) => t === 'Sound on');
  await page.click('#sound');
  await page.waitForSelector('#sound[aria-pressed="false"]');
  log('a failed exit notified "dash-fail exited 3" and beeped; the sound toggle is remembered');
}

/** Backspace, arrows, End, Ctrl+C reach the shell as keys. */
async function editingKeys(page) {
  await page.keyboard.press('Control+l');
  await page.keyboard.type('echo abcc');
  await page.keyboard.press('Backspace');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.type('X');
  await page.keyboard.press('End');
  await page.keyboard.type('Y');
  await page.keyboard.press('Enter');
  await waitFor('abXcY (Backspace, Left, End)', async () => (await rowTexts(page, SCREEN)).includes('abXcY'));
  await page.keyboard.type('sleep 600');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Control+c');
  // The shell's prompt after the ^C row: it reads again, so what is typed next reaches it.
  await waitFor('^C to end sleep and the prompt back', async () => {
    const rows = await rowTexts(page, SCREEN);
    const at = rows.findLastIndex((r) => r.endsWith('^C'));
    return at >= 0 && at + 1 < rows.length && rows[at + 1].trim() !== '';
  });
  log('Backspace, ArrowLeft, End and Ctrl+C were forwarded');
}

/** Tab, F-keys, Alt and Ctrl combos, Home, PgUp, Shift+Tab, Esc reach the program as tmux keys. */
async function specialKeys(page) {
  await page.keyboard.type('cat -A');
  await page.keyboard.press('Enter');
  // Keys that arrive before cat has the terminal in line mode would reach it unbuffered.
  await page.keyboard.type('ready');
  await page.keyboard.press('Enter');
  await waitForRow(page, SCREEN, 'cat to read lines', (r) => r === 'ready$');
  for (const key of ['Tab', 'F5', 'Alt+x', 'Home', 'PageUp', 'Shift+Tab', 'Control+ArrowLeft', 'Escape', 'F12', 'Enter']) {
    await page.keyboard.press(key);
  }
  const want = '^I^[[15~^[x^[[1~^[[5~^[[Z^[[1;5D^[^[[24~$';
  await waitForRow(page, SCREEN, `cat -A to show ${want}`, (r) => r === want);
  await page.keyboard.press('Control+d');
  log('Tab, F5, Alt+x, Home, PgUp, Shift+Tab, Ctrl+Left, Esc and F12 arrived as their escape sequences');
}

/** A multi-line paste is typed line by line. */
async function paste(page) {
  await page.evaluate(() => {
    const data = new DataTransfer();
    data.setData('text/plain', 'echo paste-1\necho paste-2\n');
    document.getElementById('keyboard').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  });
  await waitFor('both pasted lines run', async () => {
    const rows = await rowTexts(page, SCREEN);
    return rows.includes('paste-1') && rows.includes('paste-2');
  });
  log('a two-line paste ran both lines');
}

/** Copy text puts the screen on the clipboard; Scrollback shows lines above it. */
async function copyAndScrollback(page, id) {
  await page.click('#copy-btn');
  const copied = await waitFor('the clipboard', async () => {
    const text = await page.evaluate(() => navigator.clipboard.readText());
    return text.includes('paste-2') && text;
  });
  check(copied.split('\n').includes('paste-1'), `the copied screen has its lines: ${copied}`);
  await page.keyboard.type('seq 1 60');
  await page.keyboard.press('Enter');
  await waitForRow(page, SCREEN, 'seq to finish', (r) => r === '60');
  await page.click('#scrollback-btn');
  const history = await waitFor('the scrollback', async () => {
    const text = await page.textContent('#scrollback');
    return text.split('\n').includes('10') && text;
  });
  const { body } = await api('GET', `/v1/sessions/${id}/scrollback?lines=2000`);
  check(history === body.lines.join('\n'), 'the scrollback shown is the daemon\'s');
  await page.click('#scrollback-btn');
  await page.waitForSelector('#scrollback', { state: 'hidden' });
  await page.locator('#session-screen').click();
  log('Copy text and Scrollback show the screen and the history');
}

/** The page's cells (text, column, colours, attributes) and cursor equal the daemon's snapshot. */
async function rowsEqualSnapshot(page, id) {
  const printf = String.raw`clear; printf '\e[1;31mbold-red\e[0m \e[3;32mital-green\e[0m \e[4;94munder-brightblue\e[0m \e[7minverse\e[0m \e[7;33;44minv-colour\e[0m\n\e[38;5;208mcolour208\e[0m \e[48;5;22mbg22\e[0m \e[38;2;10;200;250mtruecolour\e[0m \e[48;2;90;0;90mtrue-bg\e[0m \e[100mbright-bg\e[0m\n宽字符 wide ✅ emoji e\u0301 combining │ box\n'`;
  await input(id, { text: printf, submit: true });
  const defaults = await page.$eval(`${SCREEN} .term`, (t) => ({ fg: getComputedStyle(t).color, bg: getComputedStyle(t).backgroundColor }));
  let difference = 'not compared yet';
  await waitFor('the page to show the daemon snapshot', async () => {
    const { body: snap } = await api('GET', `/v1/sessions/${id}/snapshot?format=ansi`);
    if (!snap.lines.some((l) => l.includes('box'))) return false;
    const got = await renderedCells(page, SCREEN);
    const want = expectedCells(snap.lines, defaults);
    difference = firstDifference(want, got.cells);
    if (!difference && (got.rows !== snap.rows || got.cols !== snap.cols)) difference = `size ${got.cols}x${got.rows} vs ${snap.cols}x${snap.rows}`;
    const c = snap.cursor;
    if (!difference && (got.cursor.visible !== c.visible || got.cursor.row !== c.row || got.cursor.col !== c.col)) {
      difference = `cursor ${JSON.stringify(got.cursor)} vs ${JSON.stringify(c)}`;
    }
    return !difference;
  }).catch((e) => {
    throw new Error(`${e.message}: ${difference}`);
  });
  log('every rendered cell (text, column, colours, bold/italic/underline/inverse, wide chars) and the cursor equal the snapshot');
}

/** A bell raises attention: the tile stands out, sorts first, the title counts it. */
async function bell(page, id, other) {
  await page.click('#back');
  await page.waitForSelector('#wall:not([hidden])');
  // By name `other` comes first; only attention can put `id` before it.
  await page.selectOption('#sort', 'name');
  const firstTile = () => page.$eval('#wall .tile', (t) => t.dataset.sessionId);
  await waitUntil('sorted by name before the bell', firstTile, (first) => first === other);
  // Rung through tmux itself: the daemon clears attention when input arrives
  // through its API, which may land after the bell that input caused.
  tmuxSendKeys('dash-a', [String.raw`printf '\a'`, 'Enter']);
  await page.waitForSelector(`${tile(id)}.attention`);
  await waitUntil('the session needing attention to sort first', firstTile, (first) => first === id);
  await waitFor('the title count', async () => (await page.title()) === '(1) tmuxd');
  await waitUntil('a notification', () => page.evaluate(() => window.notificationsShown),
    (shown) => shown.includes('dash-a needs attention'));
  const state = await waitUntil('the tile to say why', () => page.$eval(`${tile(id)} .mark`, (s) => s.textContent),
    (text) => text.includes('needs you') && text.includes('bell'));
  await page.selectOption('#sort', 'activity');
  await page.fill('#filter', '0-oth');
  await page.waitForSelector(tile(id), { state: 'hidden' });
  await page.waitForSelector(tile(other), { state: 'visible' });
  await page.fill('#filter', '');
  await page.waitForSelector(tile(id), { state: 'visible' });
  log(`a bell raised attention on the wall (${state}; sorted first; title "(1) tmuxd"; notified); the filter box filters`);
}

/** A session whose program exits stays on the wall, with how it ended, until dismissed (also after a reload). */
async function endedByItself(page) {
  const id = await createSession('dash-exit');
  await page.waitForSelector(tile(id));
  tmuxSendKeys('dash-exit', ['exit', 'Enter']);
  await page.waitForSelector(`${tile(id)}.ended`);
  // The end is shown at once; how it ended follows a moment later (the
  // exit status comes with the session's deletion event).
  const state = await waitUntil('the tile to say it ended', () => page.$eval(`${tile(id)} .state`, (s) => s.textContent),
    (text) => text === 'exited ok');
  await page.click(`${tile(id)} .dismiss`);
  await page.waitForSelector(tile(id), { state: 'detached' });
  await page.reload();
  // The list fills the wall in one go: once any tile is there, all are.
  await page.waitForSelector('#wall .tile');
  check(!(await page.$(tile(id))), 'a dismissed session stays off the wall after a reload');
  log(`a session that exited by itself stayed as "${state}" until dismissed`);
}

/** The event feed resumes after a drop from the last event seen (Last-Event-ID). */
async function resume(page) {
  const lastSeen = await page.evaluate(() => window.tmuxdDashboard.lastEventSeq());
  check(Number.isInteger(lastSeen), `the page saw events (last ${lastSeen})`);
  const reconnect = page.waitForRequest((r) => r.url().endsWith('/v1/events') && r.headers()['last-event-id']);
  await page.evaluate(() => window.tmuxdDashboard.dropEvents());
  const during = await createSession('dash-during-drop');
  const request = await reconnect;
  check(Number(request.headers()['last-event-id']) >= lastSeen, `resumed from ${request.headers()['last-event-id']}, had seen ${lastSeen}`);
  await page.waitForSelector(tile(during));
  const { status } = await api('DELETE', `/v1/sessions/${during}?mode=kill`);
  check(status === 200, `kill ${during}: ${status}`);
  await page.waitForSelector(`${tile(during)}.ended`);
  log(`the event feed resumed with Last-Event-ID ${request.headers()['last-event-id']}`);
}

/** At phone width: one column, and the on-screen keys type. */
async function phone(page, id) {
  await page.setViewportSize({ width: 390, height: 844 });
  await waitUntil('one column at phone width (the tiles\' lefts)',
    () => page.$$eval('#wall .tile:not([hidden])', (tiles) => tiles.map((t) => Math.round(t.getBoundingClientRect().left))),
    (lefts) => lefts.length >= 2 && new Set(lefts).size === 1);
  await page.click(tile(id));
  await page.waitForSelector('#softkeys button[data-key="Escape"]', { state: 'visible' });
  await page.keyboard.type('echo soft');
  await page.click('#softkeys button[data-key="Left"]');
  await page.click('#softkeys button[data-mod="ctrl"]');
  await page.keyboard.press('a');
  await page.keyboard.type('#');
  await page.click('#softkeys button[data-key="Enter"]');
  await waitFor('the soft keys (Left, Ctrl, then a = C-a) to edit the line', async () =>
    (await rowTexts(page, SCREEN)).includes('$ #echo soft'));
  await page.setViewportSize({ width: 1280, height: 800 });
  log('phone width: one column; soft Left, Ctrl and Enter keys typed');
}

/** New session, queued input, detach and adopt, all from the page. */
async function actions(page) {
  check(HOME, 'TMUXD_TEST_HOME names the daemon\'s HOME');
  await page.click('#back');
  await page.click('#new-session');
  // Issue 32: the dialog says where a session without a directory starts.
  await waitUntil('the dialog to show the default directory',
    () => page.getAttribute('#new-form input[name=cwd]', 'placeholder'), (shown) => shown === `${HOME} (default)`);
  await page.fill('#new-form input[name=name]', 'dash-new');
  await page.fill('#new-form input[name=command]', SHELL);
  await page.click('#new-form button[value=ok]');
  await page.waitForFunction(() => location.hash.startsWith('#/s/'));
  const id = decodeURIComponent(new URL(page.url()).hash.slice(4));
  await waitFor('the new session prompt', async () => (await rowTexts(page, SCREEN)).includes('$'));
  await waitUntil('the new session to run in the default directory',
    async () => (await api('GET', `/v1/sessions/${encodeURIComponent(id)}`)).body.session.cwd, (cwd) => cwd === HOME);
  await page.fill('#queue-text', 'echo queued-ok');
  await page.click('#queue-form button[type=submit]');
  await waitForRow(page, SCREEN, 'the queued input to run', (r) => r === 'queued-ok');
  // The input may run before the page has read the answer that says so.
  const status = await waitFor('the queue status', async () => {
    const text = await page.textContent('#queue-status');
    return /queued|typed/.test(text) && text;
  });

  await page.click('#detach-btn');
  await page.click('#confirm-ok');
  await page.waitForSelector(tile(id), { state: 'detached' });
  tmuxSendKeys('dash-new', ['echo still-alive', 'Enter']);
  await page.click('#adopt-session');
  await page.fill('#adopt-form input[name=tmux_name]', 'dash-new');
  await page.click('#adopt-form button[value=ok]');
  await page.waitForSelector(tile(id));
  await waitFor('the adopted session still running', async () =>
    (await rowTexts(page, `${tile(id)} .thumb`)).includes('still-alive'));
  log(`created ${id} from the page in ${HOME}, queued input ran (${status}), detached it and adopted it back`);
}

/** Kill from the page, with its confirm; the tile stays among the ended ones, "killed". */
async function kill(page, id) {
  await page.click(tile(id));
  await page.click('#kill-btn');
  await page.waitForSelector('#confirm-dialog[open]');
  await page.click('#confirm-ok');
  await page.waitForSelector('#wall:not([hidden])');
  await page.waitForSelector(`${tile(id)}.ended`);
  const { body } = await api('GET', '/v1/sessions');
  check(!body.sessions.some((s) => s.session_id === id), 'the daemon no longer lists the killed session');
  // The end shows at once; how it ended may come with a later event.
  await waitUntil('the tile to say how it ended', () => page.$eval(`${tile(id)} .state`, (s) => s.textContent),
    (state) => state === 'killed');
  log('killed the session from the page; its tile says "killed"');
}
