// With tokens: the page is refused until the token is entered (kept in
// session storage, never in a URL); a read token gives a read-only page; a
// login link (`tmuxd open`) works once and never shows the token, and
// "Forget token" ends the page's credential on the daemon.

import {
  BASE, TOKEN, api, check, createSession, launch, log, rowTexts, waitFor, watchPage,
} from './lib.mjs';

const READ_TOKEN = process.env.TMUXD_TEST_READ_TOKEN;
const tile = (id) => `#wall .tile[data-session-id="${id}"]`;

export async function tokens() {
  check(TOKEN && READ_TOKEN, 'TMUXD_TEST_TOKEN and TMUXD_TEST_READ_TOKEN are set');
  const id = await createSession('dash-secret');
  const { context, cleanup } = await launch();
  try {
    await fullToken(context, id);
    await readToken(context, id);
    await loginLink(context, id);
  } finally {
    await cleanup();
  }
}

/** Watches every request: none may carry a token in its URL. */
function requestsOf(page) {
  const urls = [];
  page.on('request', (r) => urls.push(`${r.method()} ${r.url()}`));
  return urls;
}

async function fullToken(context, id) {
  const page = await context.newPage();
  const messages = watchPage(page, 'full');
  const urls = requestsOf(page);
  try {
    await page.goto(`${BASE}/`);
    await page.waitForSelector('#login:not([hidden])');
    check(await page.$(tile(id)) === null, 'no session is shown before the token');
    const { status } = await api('GET', '/v1/sessions', undefined, '');
    check(status === 401, `the API refuses a request without the token (${status})`);

    await page.fill('#login-token', 'not-the-token');
    await page.click('#login-form button[type=submit]');
    await waitFor('the refusal', async () => (await page.textContent('#login-error')).includes('refused'));
    check(await page.$(tile(id)) === null, 'still nothing shown with a wrong token');
    log('refused before the token and with a wrong one');

    await page.fill('#login-token', TOKEN);
    await page.click('#login-form button[type=submit]');
    await page.waitForSelector(tile(id));
    await waitFor('the thumbnail (WebSocket auth by first message)', async () =>
      (await rowTexts(page, `${tile(id)} .thumb`)).some((r) => r.startsWith('$')));
    check(!(await page.$eval('body', (b) => b.classList.contains('readonly'))), 'a full token gives a writable page');
    await page.waitForSelector('#new-session', { state: 'visible' }); // New session is offered
    check(await page.evaluate(() => sessionStorage.getItem('tmuxd.token')) === TOKEN, 'the token is kept in sessionStorage');

    await page.reload();
    await page.waitForSelector(tile(id));
    check(await page.isHidden('#login'), 'no second prompt after a reload (same tab)');
    const leaked = urls.filter((u) => u.includes(TOKEN));
    check(leaked.length === 0, `the token appears in no URL: ${leaked}`);
    log(`the token was entered once; ${urls.length} requests, none with the token in the URL`);
  } finally {
    if (messages.length) log(messages.join('\n'));
    await page.close();
  }
}

async function readToken(context, id) {
  const page = await context.newPage();
  const messages = watchPage(page, 'read');
  const writes = [];
  page.on('request', (r) => { if (r.url().includes('/input')) writes.push(r.url()); });
  try {
    // sessionStorage is per tab: a new tab asks again.
    await page.goto(`${BASE}/`);
    await page.waitForSelector('#login:not([hidden])');
    await page.fill('#login-token', READ_TOKEN);
    await page.click('#login-form button[type=submit]');
    await page.waitForSelector(tile(id));
    await page.waitForSelector('body.readonly');
    await page.waitForSelector('#readonly-badge', { state: 'visible' }); // the page says read-only
    await page.waitForSelector('#new-session', { state: 'hidden' }); // no New session button
    await page.click(tile(id));
    await waitFor('the open session screen', async () => (await rowTexts(page, '#session-screen')).includes('$'));
    await page.waitForSelector('#kill-btn', { state: 'hidden' }); // no Kill button
    await page.waitForSelector('#detach-btn', { state: 'hidden' }); // no Detach button
    await page.waitForSelector('#queue-form', { state: 'hidden' }); // no queued input
    await page.keyboard.type('echo nope');
    await page.keyboard.press('Enter');
    // Any input request would be issued before this one, so it would be seen by now.
    const marker = page.waitForResponse((r) => r.url().includes('/scrollback'));
    await page.click('#scrollback-btn');
    await marker;
    check(writes.length === 0, `typing sends nothing with a read token (${writes})`);
    log('a read token gives a read-only page (no write controls, keys not sent)');
  } finally {
    if (messages.length) log(messages.join('\n'));
    await page.close();
  }
}

/** A one-time login link: the page gets a credential of its own, the link dies. */
async function loginLink(context, id) {
  const { status, body } = await api('POST', '/v1/login/code');
  check(status === 200, `a login code (${status})`);
  const first = await context.newPage();
  const messages = watchPage(first, 'link');
  const urls = requestsOf(first);
  try {
    await first.goto(body.url);
    await first.waitForSelector(tile(id));
    check(await first.isHidden('#login'), 'no token prompt after a login link');
    check(new URL(first.url()).hash === '#/', `the code left the address bar: ${first.url()}`);
    const credential = await first.evaluate(() => sessionStorage.getItem('tmuxd.token'));
    check(credential && credential !== TOKEN, 'the page holds a credential of its own, not the token');
    check(!urls.some((u) => u.includes(TOKEN) || u.includes(credential)), 'no credential in a URL');
    const second = await context.newPage();
    await second.goto(body.url);
    await second.waitForSelector('#login:not([hidden])');
    await waitFor('the used-link message', async () =>
      (await second.textContent('#login-error')).includes('tmuxd open'));
    await second.close();
    log('a login link logged one page in, and was refused the second time');

    // Issue 29, finding 10: "Forget token" ends the credential on the
    // daemon, not only in the tab; and a page's credential mints no codes.
    const minted = await api('POST', '/v1/login/code', undefined, credential);
    check(minted.status === 403, `a page credential cannot mint a login code (${minted.status})`);
    check((await api('GET', '/v1/whoami', undefined, credential)).status === 200, 'good before forgetting');
    await first.click('#logout');
    await first.waitForSelector('#login:not([hidden])');
    await waitFor('the daemon to refuse the forgotten credential', async () =>
      (await api('GET', '/v1/whoami', undefined, credential)).status === 401);
    check(await first.evaluate(() => sessionStorage.getItem('tmuxd.token')) === null, 'the tab forgot it');
    log('"Forget token" ended the page credential on the daemon');
  } finally {
    if (messages.length) log(messages.join('\n'));
    await first.close();
  }
}
