// The dashboard's service worker (served at /sw.js, scope /). Two jobs:
//
// 1. The app shell offline: the page and its files (never an API answer,
//    a session's screen or a credential) are kept in one cache, refreshed
//    from the network on every load, and served from the cache only when
//    the network fails, so a home-screen app opens without tmuxd in reach.
// 2. Web Push: shows what tmuxd pushed (the session's name, host and one
//    line), and an action button sends its answer back with this browser's
//    dashboard credential (kept in IndexedDB by the page when it turned
//    notifications on). tmuxd types it only while the attention it answers
//    is still up; otherwise it says the session has moved on (409), and so
//    does a notification here.

const SHELL_CACHE = 'tmuxd-shell-v1';
const SHELL = [
  '/',
  '/assets/style.css', '/assets/app.js', '/assets/api.js', '/assets/events.js',
  '/assets/keys.js', '/assets/screen.js', '/assets/session.js', '/assets/term.js',
  '/assets/wall.js', '/assets/words.js', '/assets/dialogs.js', '/assets/push.js',
  '/assets/icon.svg', '/assets/icon-192.png', '/assets/icon-512.png',
  '/assets/manifest.webmanifest',
];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(SHELL_CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name !== SHELL_CACHE) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

/** Whether a request is for the shell: a GET of this origin, a listed path, no credential. */
function isShell(request) {
  const url = new URL(request.url);
  return request.method === 'GET' && url.origin === self.location.origin
    && SHELL.includes(url.pathname) && !request.headers.has('Authorization');
}

self.addEventListener('fetch', (event) => {
  if (!isShell(event.request)) return;
  event.respondWith((async () => {
    const cache = await caches.open(SHELL_CACHE);
    try {
      const response = await fetch(event.request, { cache: 'no-cache' });
      if (response.ok) await cache.put(new URL(event.request.url).pathname, response.clone());
      return response;
    } catch (e) {
      const kept = await cache.match(new URL(event.request.url).pathname);
      if (kept) return kept;
      throw e;
    }
  })());
});

// --- Web Push ---

self.addEventListener('push', (event) => {
  let message;
  try {
    message = event.data.json();
  } catch {
    return;
  }
  event.waitUntil(show(message));
});

function show(message) {
  const answers = Array.isArray(message.answers) ? message.answers : [];
  return self.registration.showNotification(String(message.title || 'tmuxd'), {
    body: String(message.body || ''),
    tag: String(message.tag || 'tmuxd'),
    icon: '/assets/icon-192.png',
    badge: '/assets/icon-192.png',
    data: {
      url: String(message.url || '/'),
      session_id: message.session_id,
      since: message.since,
      answers,
    },
    actions: answers.map((a) => ({ action: String(a.action), title: String(a.title) })),
  });
}

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  // Started before `waitUntil`, which refuses an event not dispatched by
  // the browser (a test's): the answer is sent either way.
  const done = onClick(event.notification.data || {}, event.action);
  event.waitUntil(done);
});

async function onClick(data, action) {
  const answer = (data.answers || []).find((a) => a.action === action);
  if (!answer) return openPage(data.url);
  let response;
  try {
    response = await sendAnswer(data, answer);
  } catch (e) {
    return self.registration.showNotification('tmuxd: answer not sent', {
      body: `cannot reach tmuxd: ${e.message}`, tag: String(data.session_id || 'tmuxd'),
    });
  }
  if (response.ok) return undefined;
  if (response.status === 401 || response.status === 403) return openPage(data.url);
  const error = await response.json().catch(() => null);
  const said = error && error.error ? error.error.message : `${response.status}`;
  return self.registration.showNotification('tmuxd: nothing typed', {
    body: said, tag: String(data.session_id || 'tmuxd'), data: { url: data.url, answers: [] },
  });
}

async function sendAnswer(data, answer) {
  const credential = await storedCredential();
  const headers = { 'Content-Type': 'application/json' };
  if (credential) headers.Authorization = `Bearer ${credential}`;
  return fetch(`/v1/sessions/${encodeURIComponent(data.session_id)}/answer`, {
    method: 'POST',
    headers,
    cache: 'no-store',
    body: JSON.stringify({ since: data.since, text: answer.text ?? null, keys: answer.keys || [] }),
  });
}

// Opens this dashboard at `url`: never another origin, whatever a push says.
async function openPage(url) {
  let target = new URL(url || '/', self.location.origin);
  if (target.origin !== self.location.origin) target = new URL('/', self.location.origin);
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const client of windows) {
    if (new URL(client.url).origin !== self.location.origin) continue;
    await client.focus();
    try {
      return await client.navigate(target.href);
    } catch {
      break; // A window this worker does not control: a new one instead.
    }
  }
  return self.clients.openWindow(target.href);
}

// The credential the page left for answers (push.js writes it).
function storedCredential() {
  return new Promise((resolve) => {
    const opened = indexedDB.open('tmuxd', 1);
    opened.onupgradeneeded = () => opened.result.createObjectStore('push');
    opened.onerror = () => resolve('');
    opened.onsuccess = () => {
      const db = opened.result;
      const get = db.transaction('push').objectStore('push').get('credential');
      get.onsuccess = () => { db.close(); resolve(get.result || ''); };
      get.onerror = () => { db.close(); resolve(''); };
    };
  });
}
