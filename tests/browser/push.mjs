// Web Push in chromium (issue 33). Chromium's own PushManager.subscribe
// needs Google's push service (GCM/FCM), which a test without the internet
// cannot reach: the page's `subscribe` is replaced (before the page runs)
// by one that returns a subscription to this test's fake push service with
// keys the test holds. Everything after is the real thing: the page sends
// the subscription to tmuxd, tmuxd encrypts and POSTs a push to the fake
// service, the test opens it with the subscription's keys (RFC 8291), and
// hands the plaintext to the service worker through the DevTools protocol
// (`ServiceWorker.deliverPushMessage`, which skips only the decryption a
// push service would have the browser do). The notification must show
// with the question's answers; its `y` action, dispatched to the worker as
// a click would, types into the tmux session; the same action again, with
// the attention already acknowledged, types nothing and says so.

import crypto from 'node:crypto';
import http from 'node:http';

import {
  BASE, api, check, createSession, launch, log, openDashboard, waitFor, waitUntil, watchPage,
} from './lib.mjs';

const ASKER = String.raw`bash --norc -c 'read -p "Proceed? [y/N] " a; echo "answered-$a"; exec cat'`;

/** A fake push service: every POST's body, in order. */
async function fakePushService() {
  const received = [];
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (c) => chunks.push(c));
    request.on('end', () => {
      received.push({ path: request.url, headers: request.headers, body: Buffer.concat(chunks) });
      response.writeHead(201).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, received, close: () => server.close() };
}

/** The browser's side of RFC 8291: the message inside an aes128gcm body. */
function decrypt(body, ecdh, auth) {
  const salt = body.subarray(0, 16);
  const keyLength = body[20];
  const sender = body.subarray(21, 21 + keyLength);
  const shared = ecdh.computeSecret(sender);
  const info = Buffer.concat([Buffer.from('WebPush: info\0'), ecdh.getPublicKey(), sender]);
  const ikm = Buffer.from(crypto.hkdfSync('sha256', shared, auth, info, 32));
  const cek = Buffer.from(crypto.hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(crypto.hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const record = body.subarray(21 + keyLength);
  const decipher = crypto.createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  const plain = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  check(plain[plain.length - 1] === 2, 'one record, the last');
  return plain.subarray(0, plain.length - 1).toString('utf8');
}

export async function push() {
  const service = await fakePushService();
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  const auth = crypto.randomBytes(16);
  const fake = {
    endpoint: `${service.url}/push/chromium`,
    p256dh: ecdh.getPublicKey().toString('base64url'),
    auth: auth.toString('base64url'),
  };
  const { context, cleanup } = await launch();
  await context.grantPermissions(['notifications'], { origin: BASE });
  await context.addInitScript((sub) => {
    let current = null;
    const make = (options) => ({
      endpoint: sub.endpoint,
      expirationTime: null,
      options,
      toJSON() { return { endpoint: sub.endpoint, expirationTime: null, keys: { p256dh: sub.p256dh, auth: sub.auth } }; },
      async unsubscribe() { current = null; return true; },
    });
    PushManager.prototype.subscribe = async function subscribe(options) {
      current = make(options);
      window.tmuxdTestSubscribed = true;
      return current;
    };
    PushManager.prototype.getSubscription = async function getSubscription() { return current; };
  }, fake);
  const page = await context.newPage();
  const messages = watchPage(page, 'push');
  try {
    await openDashboard(page);
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
    const worker = context.serviceWorkers()[0] || await context.waitForEvent('serviceworker');
    check(new URL(worker.url()).pathname === '/sw.js', `the worker: ${worker.url()}`);

    // The app shell is installable: a manifest with icons the server has.
    const manifest = await page.evaluate(async () => {
      const link = document.querySelector('link[rel="manifest"]');
      return (await fetch(link.href)).json();
    });
    check(manifest.display === 'standalone' && manifest.icons.some((i) => i.sizes === '512x512'), JSON.stringify(manifest));

    await page.click('#notify');
    await waitUntil('the Notify button to say push is on', () => page.textContent('#notify'), (t) => t === 'Push on');
    check(await page.evaluate(() => window.tmuxdTestSubscribed === true), 'the page subscribed');
    const info = await api('GET', '/v1/push');
    check(info.status === 200 && info.body.subscriptions === 1, `one subscription: ${JSON.stringify(info.body)}`);

    const id = await createSession('asker', ASKER);
    const pictures = process.env.TMUXD_SCREENSHOT_DIR;
    if (pictures) {
      // The guide's phone flow: the wall at 390x844 with push on and the
      // question waiting.
      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForSelector(`#wall .tile[data-session-id="${id}"] .mark`);
      await page.screenshot({ path: `${pictures}/push-phone.png` });
    }
    const delivered = await waitFor('a push at the fake push service', () => service.received[0]);
    check(delivered.path === '/push/chromium', delivered.path);
    check(delivered.headers['content-encoding'] === 'aes128gcm', JSON.stringify(delivered.headers));
    check(delivered.headers.authorization.startsWith('vapid t='), delivered.headers.authorization);
    const plaintext = decrypt(delivered.body, ecdh, auth);
    const message = JSON.parse(plaintext);
    check(message.session_id === id && message.body === `asker (${id}) asks: Proceed? [y/N]`, plaintext);
    log(`pushed: ${plaintext}`);

    // Into the service worker, as the push service would deliver it.
    const cdp = await context.newCDPSession(page);
    const registrations = [];
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => registrations.push(...e.registrations));
    await cdp.send('ServiceWorker.enable');
    const registration = await waitFor('the worker registration', () =>
      registrations.find((r) => !r.isDeleted && r.scopeURL === `${BASE}/`));
    // Chromium drops a notification from getNotifications() when asked
    // before its display is done (it syncs its list with what is shown):
    // the test asks only once showNotification has resolved.
    await worker.evaluate(() => {
      const show = self.registration.showNotification.bind(self.registration);
      self.tmuxdShown = 0;
      self.registration.showNotification = async (...args) => {
        await show(...args);
        self.tmuxdShown += 1;
      };
    });
    const deliver = () => cdp.send('ServiceWorker.deliverPushMessage', {
      origin: BASE, registrationId: registration.registrationId, data: plaintext,
    });
    const shownCount = () => worker.evaluate(() => self.tmuxdShown);
    await deliver();
    await waitUntil('the notification shown', shownCount, (n) => n === 1);
    const shown = await waitUntil('the notification', () => worker.evaluate(async () =>
      (await self.registration.getNotifications()).map((n) => ({
        title: n.title, body: n.body, tag: n.tag, actions: n.actions.map((a) => a.title),
      }))), (ns) => ns.length === 1);
    check(shown[0].body === message.body && shown[0].actions.join() === 'y,n' && shown[0].title.startsWith('asker on '),
      JSON.stringify(shown));

    // The `y` action, as a tap on it reaches the worker.
    const tap = (action) => worker.evaluate(async (which) => {
      const [notification] = await self.registration.getNotifications({ tag: self.tmuxdTag });
      self.dispatchEvent(new NotificationEvent('notificationclick', { notification, action: which }));
    }, action);
    await worker.evaluate((tag) => { self.tmuxdTag = tag; }, message.tag);
    await tap('a0');
    await waitFor('the answer typed', async () => {
      const { body } = await api('GET', `/v1/sessions/${id}/snapshot`);
      return body.lines && body.lines.some((l) => l.includes('answered-y'));
    });
    const { body: events } = await api('GET', '/v1/events?format=json');
    const list = Array.isArray(events) ? events : events.events;
    check(list.some((e) => e.session_id === id && e.acknowledged_by === 'push_action'), 'acknowledged_by push_action');

    // The same push again (a second phone, a late delivery), its `y`
    // tapped with the attention already acknowledged: a 409, nothing
    // typed, and a notification that says so.
    await deliver();
    await waitUntil('the notification shown again', shownCount, (n) => n === 2);
    await waitUntil('the notification again', () => worker.evaluate(async () =>
      (await self.registration.getNotifications()).length), (n) => n === 1);
    await tap('a0');
    await waitUntil('the notice shown', shownCount, (n) => n === 3);
    const said = await waitUntil('a notification saying nothing was typed', () => worker.evaluate(async () =>
      (await self.registration.getNotifications()).map((n) => `${n.title}: ${n.body}`)),
    (ns) => ns.some((n) => n.startsWith('tmuxd: nothing typed')));
    check(said.some((n) => n.includes('moved on')), JSON.stringify(said));

    // The worker's cache holds the app shell only.
    const cached = await worker.evaluate(async () =>
      (await (await caches.open('tmuxd-shell-v1')).keys()).map((r) => new URL(r.url).pathname));
    check(cached.length > 5 && cached.every((p) => p === '/' || p.startsWith('/assets/')), JSON.stringify(cached));
    log(`push: subscribed, pushed, shown, answered once; ${cached.length} shell files cached`);
  } finally {
    if (messages.length) log(messages.join('\n'));
    service.close();
    await cleanup();
  }
}
