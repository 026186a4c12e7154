// Web Push from the page: the service worker (sw.js), the browser's push
// subscription sent to tmuxd, and the dashboard credential left in
// IndexedDB for the worker, which answers from a notification with it
// (and which a home-screen launch, whose tab storage starts empty, reuses
// until it expires). Logging out takes the subscription and the stored
// credential away.

import { request, token } from './api.js';

export function pushSupported() {
  return 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
}

/** Registers the worker (the app shell offline, and pushes). */
export async function registerWorker() {
  if (!('serviceWorker' in navigator)) return;
  try {
    await navigator.serviceWorker.register('/sw.js');
  } catch {
    // Not a secure context (plain http to a name other than localhost):
    // the page works, without offline or pushes.
  }
}

/**
 * Subscribes this browser (again, if tmuxd's key changed) and tells tmuxd,
 * under this page's credential. Rejects with what went wrong.
 */
export async function enablePush() {
  const registration = await navigator.serviceWorker.ready;
  const { public_key: publicKey } = await request('GET', '/v1/push');
  const key = fromBase64Url(publicKey);
  let subscription = await registration.pushManager.getSubscription();
  if (subscription && !sameKey(subscription, key)) {
    await subscription.unsubscribe();
    subscription = null;
  }
  if (!subscription) {
    subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  }
  await request('POST', '/v1/push/subscriptions', subscription.toJSON());
  await storeCredential(token());
}

/** Whether this browser gets pushes: then they notify, not the page. */
export async function pushActive() {
  if (!pushSupported() || Notification.permission !== 'granted') return false;
  const registration = await navigator.serviceWorker.getRegistration();
  return !!(registration && await registration.pushManager.getSubscription());
}

/** After a login: the subscription is this credential's now. */
export async function renewPush() {
  if (!pushSupported() || Notification.permission !== 'granted') return;
  const registration = await navigator.serviceWorker.getRegistration();
  if (!registration || !(await registration.pushManager.getSubscription())) return;
  await enablePush();
}

/** At logout, before the credential ends: no more pushes here. */
export async function forgetPush() {
  await storeCredential('');
  if (!pushSupported()) return;
  const registration = await navigator.serviceWorker.getRegistration();
  const subscription = registration && await registration.pushManager.getSubscription();
  if (!subscription) return;
  try {
    await request('POST', '/v1/push/unsubscribe', { endpoint: subscription.endpoint });
  } finally {
    await subscription.unsubscribe();
  }
}

function sameKey(subscription, key) {
  const had = subscription.options && subscription.options.applicationServerKey;
  if (!had) return true;
  const bytes = new Uint8Array(had);
  return bytes.length === key.length && bytes.every((b, i) => b === key[i]);
}

function fromBase64Url(text) {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const raw = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

function database() {
  return new Promise((resolve, reject) => {
    const opened = indexedDB.open('tmuxd', 1);
    opened.onupgradeneeded = () => opened.result.createObjectStore('push');
    opened.onsuccess = () => resolve(opened.result);
    opened.onerror = () => reject(opened.error);
  });
}

/** The credential the worker answers with ('' removes it). */
export async function storeCredential(value) {
  const db = await database();
  await new Promise((resolve, reject) => {
    const tx = db.transaction('push', 'readwrite');
    if (value) tx.objectStore('push').put(value, 'credential');
    else tx.objectStore('push').delete('credential');
    tx.oncomplete = resolve;
    tx.onerror = () => reject(tx.error);
  });
  db.close();
}

/** The credential left for the worker, or ''. */
export async function storedCredential() {
  if (!('indexedDB' in window)) return '';
  try {
    const db = await database();
    const value = await new Promise((resolve) => {
      const get = db.transaction('push').objectStore('push').get('credential');
      get.onsuccess = () => resolve(get.result || '');
      get.onerror = () => resolve('');
    });
    db.close();
    return value;
  } catch {
    return '';
  }
}
