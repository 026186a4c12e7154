// The dashboard's entry point: asks for a token when the daemon needs one,
// then wires the wall, the event feed, the open session, notifications and
// the page's routes (`#/` the wall, `#/s/<id>` one session).

import { api, probeAccess, redeemLoginLink, request, setToken, token } from './api.js';
import { formDialog } from './dialogs.js';
import {
  enablePush, forgetPush, pushActive, pushSupported, registerWorker, renewPush, storedCredential,
} from './push.js';
import { EventFeed } from './events.js';
import { SessionView } from './session.js';
import { Wall, ago } from './wall.js';
import { describe, endWords } from './words.js';

const LIST_REFRESH_MS = 5000;
const REFRESH_DEBOUNCE_MS = 150;
const $ = (id) => document.getElementById(id);

let access = 'login';
let wall = null;
let feed = null;
let sessionView = null;
let refreshTimer = null;
let pollTimer = null;
// This browser gets Web Push: its notifications come from there (with the
// page closed too), so the page shows none of its own, which would repeat them.
let pushed = false;

function banner(text) {
  $('banner').textContent = text || '';
  $('banner').hidden = !text;
}

function setAccess(value) {
  access = value;
  document.body.classList.toggle('readonly', access === 'read');
  $('readonly-badge').hidden = access !== 'read';
  $('logout').hidden = !token();
}

async function boot() {
  registerWorker();
  const linked = location.hash.startsWith('#login=');
  if (linked && !(await redeemLoginLink())) {
    return showLogin('that login link was used or has expired: run `tmuxd open` for a new one');
  }
  // A home-screen launch starts with empty tab storage: the credential
  // left for notifications' answers still logs it in, until it expires.
  if (!token()) setToken(await storedCredential());
  let found;
  try {
    found = await probeAccess();
  } catch (e) {
    banner(`tmuxd refused the page: ${e.message}`);
    return;
  }
  if (found === 'login') {
    setToken('');
    return showLogin('');
  }
  setAccess(found);
  start();
  if (linked) renewPush().catch((e) => banner(`notifications: ${e.message}`));
  pushed = await pushActive().catch(() => false);
  showNotifyButton();
}

function showLogin(error) {
  stop();
  $('login').hidden = false;
  $('wall').hidden = true;
  $('session').hidden = true;
  $('empty').hidden = true;
  $('login-error').textContent = error;
  $('login-token').focus();
}

async function login(event) {
  event.preventDefault();
  setToken($('login-token').value);
  let found;
  try {
    found = await probeAccess();
  } catch (e) {
    $('login-error').textContent = e.message;
    return;
  }
  if (found === 'login') {
    setToken('');
    $('login-error').textContent = 'tmuxd refused that token';
    return;
  }
  $('login').hidden = true;
  $('login-token').value = '';
  setAccess(found);
  start();
}

function start() {
  $('login').hidden = true;
  wall = new Wall($('wall'), {
    onOpen: (id) => { location.hash = `#/s/${encodeURIComponent(id)}`; },
    onChange: wallChanged,
    onAttention: (tile) => notify(tile, `${tile.summary.tmux_name} needs attention`),
    onFailedExit: (tile) => notify(tile, `${tile.summary.tmux_name} ${endWords(tile.summary)}`),
  });
  sessionView = sessionView || new SessionView({
    onLeave: () => { location.hash = '#/'; },
    onReadOnly: () => setAccess('read'),
  });
  feed = new EventFeed({
    onEvent,
    onConnected: scheduleRefresh,
    onStatus: (text, live) => {
      $('conn').textContent = live ? 'live' : text;
      $('conn').className = `conn ${live ? 'live' : 'down'}`;
    },
    onRefused: () => showLogin('tmuxd refused the token'),
  });
  feed.start();
  pollTimer = setInterval(scheduleRefresh, LIST_REFRESH_MS);
  route();
  // A hook for tests: cut the event feed as a network failure would.
  window.tmuxdDashboard = { dropEvents: () => feed.drop(), lastEventSeq: () => feed.lastSeq, beeps: () => beeps };
}

function stop() {
  if (feed) feed.stop();
  feed = null;
  clearInterval(pollTimer);
  if (wall) for (const id of [...wall.tiles.keys()]) wall.remove(id);
  wall = null;
  if (sessionView) sessionView.close();
}

function scheduleRefresh() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refresh, REFRESH_DEBOUNCE_MS);
}

async function refresh() {
  if (!wall) return;
  try {
    const [{ sessions }, { hosts }] = await Promise.all([api.list(), api.hosts()]);
    if (!wall) return;
    wall.setHosts(hosts);
    wall.setSessions(sessions);
    banner('');
    if (sessionView.id) sessionView.update(wall.get(sessionView.id)?.summary);
    showTmuxLost((await api.health()).tmux_lost);
  } catch (e) {
    if (e.status === 401) showLogin('tmuxd refused the token');
    else banner(e.message);
  }
}

// The tmux server was lost with sessions tmuxd can make again: say since
// when and how many, with a Restore button (for a read-write login).
function showTmuxLost(lost) {
  const box = $('tmux-lost');
  box.hidden = !lost;
  if (!lost) return;
  const since = new Date(lost.since).toLocaleString();
  $('tmux-lost-text').textContent =
    `The tmux server was lost (${since}); ${lost.restorable} session(s) can be restored.`;
}

async function restoreSessions() {
  const button = $('restore-sessions');
  button.disabled = true;
  try {
    const outcome = await api.restore();
    if (outcome.failed.length) {
      banner(outcome.failed.map((f) => `${f.tmux_name}: ${f.message}`).join('; '));
    }
  } catch (e) {
    banner(e.message);
  } finally {
    button.disabled = false;
    scheduleRefresh();
  }
}

function onEvent(event) {
  if (!wall) return;
  if (event.kind === 'tmux_lost' || event.kind === 'session_restored') scheduleRefresh();
  if (event.type === 'replay_truncated') return scheduleRefresh();
  const reread = wall.applyEvent(event);
  if (sessionView.id && event.session_id === sessionView.id) {
    const tile = wall.get(sessionView.id);
    if (tile) sessionView.update(tile.summary);
    if (event.kind === 'session_deleted') sessionView.ended(event.reason);
    if (event.kind === 'session_detached') sessionView.ended('detached from tmuxd');
  }
  if (reread) scheduleRefresh();
}

// The tab title counts the live sessions whose attention flag is up.
function wallChanged() {
  const n = wall.attentionCount();
  document.title = n ? `(${n}) tmuxd` : 'tmuxd';
  $('empty').hidden = wall.tiles.size > 0 || !$('session').hidden;
}

// A session needs attention or failed: a browser notification (once the
// browser allows it) and, when chosen, a beep; not for the session open
// in front of the user.
function notify(tile, title) {
  if (!document.hidden && sessionView.id === tile.id) return;
  if (soundOn()) beep();
  if (pushed || !('Notification' in window) || Notification.permission !== 'granted') return;
  const s = tile.summary;
  const note = new Notification(title, {
    body: [describe(s), s.current_command, s.thought && s.thought.text]
      .filter(Boolean)
      .join(' · '),
    tag: `tmuxd-${s.session_id}`,
    icon: '/assets/icon.svg',
  });
  note.addEventListener('click', () => {
    window.focus();
    location.hash = `#/s/${encodeURIComponent(s.session_id)}`;
  });
}

const SOUND_KEY = 'tmuxd.sound';
let audio = null;
let beeps = 0;

function soundOn() {
  return localStorage.getItem(SOUND_KEY) === 'on';
}

// A short beep from Web Audio (no file to fetch). Browsers let audio
// start only after a gesture on the page: the click that turns the sound
// on, or (after a reload) the first click or key.
function beep() {
  beeps += 1;
  if (!unlockAudio()) return;
  const osc = audio.createOscillator();
  const gain = audio.createGain();
  osc.frequency.value = 880;
  gain.gain.setValueAtTime(0.2, audio.currentTime);
  gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.25);
  osc.connect(gain).connect(audio.destination);
  osc.start();
  osc.stop(audio.currentTime + 0.25);
}

/** The audio context, made (or resumed) now; null without Web Audio. */
function unlockAudio() {
  if (!('AudioContext' in window)) return null;
  audio = audio || new AudioContext();
  if (audio.state === 'suspended') audio.resume();
  return audio;
}

// Sound is opt-in, off until chosen, remembered by this browser.
function setupSoundButton() {
  const button = $('sound');
  const show = () => {
    button.setAttribute('aria-pressed', String(soundOn()));
    button.textContent = soundOn() ? 'Sound on' : 'Sound off';
  };
  button.addEventListener('click', () => {
    localStorage.setItem(SOUND_KEY, soundOn() ? 'off' : 'on');
    if (soundOn()) beep();
    show();
  });
  const unlock = () => { if (soundOn()) unlockAudio(); };
  document.addEventListener('pointerdown', unlock, { once: true });
  document.addEventListener('keydown', unlock, { once: true });
  show();
}

// Notify: the browser's permission, then (where the browser has Web Push
// and the page is a secure context) a push subscription, so notifications
// come with the page closed, to a phone too.
function showNotifyButton() {
  const button = $('notify');
  const supported = 'Notification' in window;
  const granted = supported && Notification.permission === 'granted';
  button.hidden = !supported || Notification.permission === 'denied';
  button.textContent = granted ? (pushed ? 'Push on' : 'Notifications on') : 'Notify';
  button.disabled = granted && (pushed || !pushSupported());
}

function setupNotifyButton() {
  const button = $('notify');
  const show = showNotifyButton;
  button.addEventListener('click', async () => {
    if (Notification.permission !== 'granted') await Notification.requestPermission();
    if (Notification.permission === 'granted' && pushSupported() && access === 'full') {
      try {
        await enablePush();
        pushed = true;
      } catch (e) {
        banner(`push notifications: ${e.message}`);
      }
    }
    show();
  });
  show();
}

async function route() {
  if (!wall) return;
  const match = location.hash.match(/^#\/s\/(.+)$/);
  const id = match ? decodeURIComponent(match[1]) : null;
  if (id) {
    $('wall').hidden = true;
    $('empty').hidden = true;
    $('session').hidden = false;
    if (sessionView.id !== id) {
      // A session not on the wall yet (a link, a reload) is asked for first:
      // an ended one opens its last screen, not a screen feed.
      let summary = wall.get(id)?.summary;
      if (!summary) {
        try {
          ({ session: summary } = await request('GET', `/v1/sessions/${encodeURIComponent(id)}`));
        } catch (e) {
          banner(`${id}: ${e.message}`);
          location.hash = '#/';
          return;
        }
      }
      if (location.hash !== `#/s/${encodeURIComponent(id)}` && location.hash !== `#/s/${id}`) return;
      sessionView.open(id, summary, { readOnly: access === 'read' });
    }
  } else {
    sessionView.close();
    $('session').hidden = true;
    $('wall').hidden = false;
    wallChanged();
  }
}

function setupControls() {
  $('login-form').addEventListener('submit', login);
  $('filter').addEventListener('input', (e) => wall && wall.setFilter(e.target.value));
  $('sort').addEventListener('change', (e) => wall && wall.setSort(e.target.value));
  $('restore-sessions').addEventListener('click', restoreSessions);
  $('logout').addEventListener('click', async () => {
    // Ends the page's credential on the daemon too, so a copy of it (a
    // stolen sessionStorage, a shared screen) is worth nothing after.
    // A token pasted in stays valid: only its configuration ends it.
    pushed = false;
    try {
      await forgetPush();
    } catch {
      // The daemon forgets this credential's subscriptions at logout too.
    }
    try {
      await request('POST', '/v1/logout');
    } catch {
      // Forgotten here all the same.
    }
    setToken('');
    showLogin('');
  });
  $('new-session').addEventListener('click', () => {
    formDialog('new-dialog', async (values) => {
      const body = {};
      for (const key of ['name', 'cwd', 'command']) if (values[key].trim()) body[key] = values[key].trim();
      const { session } = await api.create(body);
      scheduleRefresh();
      location.hash = `#/s/${encodeURIComponent(session.session_id)}`;
    });
    showDefaultCwd();
  });
  $('adopt-session').addEventListener('click', () => {
    formDialog('adopt-dialog', async (values) => {
      await api.adopt(values.tmux_name.trim());
      scheduleRefresh();
    });
    listUntracked();
  });
  window.addEventListener('hashchange', route);
  document.addEventListener('keydown', wallKeys);
  setupNotifyButton();
  setupSoundButton();
}

/** The directory a session made without one starts in, as the daemon says. */
async function showDefaultCwd() {
  try {
    const { default_cwd: cwd } = await api.server();
    if (cwd) document.querySelector('#new-form input[name=cwd]').placeholder = `${cwd} (default)`;
  } catch {
    // The placeholder's generic words stay.
  }
}

const UNTRACKED_WHY = {
  detached: 'detached from tmuxd',
  excluded: 'excluded by discovery.exclude',
  invalid_name: 'a name tmuxd cannot use',
  pending: 'new: not adopted yet',
};

// The adopt dialog's list: the tmux sessions tmuxd does not track, each
// with an Adopt button (none for a name tmuxd refuses).
async function listUntracked() {
  const body = $('untracked').tBodies[0];
  const error = $('adopt-form').querySelector('.error');
  body.replaceChildren();
  let sessions;
  try {
    ({ sessions } = await api.untracked());
  } catch (e) {
    error.textContent = e.message;
    return;
  }
  $('untracked').hidden = !sessions.length;
  $('untracked-empty').hidden = sessions.length > 0;
  for (const s of sessions) {
    const row = body.insertRow();
    row.dataset.tmuxName = s.tmux_name;
    const created = `${ago(s.created_at)} ago`;
    for (const text of [s.tmux_name, s.windows, s.attached_clients, created, UNTRACKED_WHY[s.reason] || s.reason]) {
      row.insertCell().textContent = String(text);
    }
    const cell = row.insertCell();
    if (s.reason === 'invalid_name') continue;
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'primary';
    button.textContent = 'Adopt';
    button.addEventListener('click', async () => {
      button.disabled = true;
      try {
        const { session } = await api.adopt(s.tmux_name);
        $('adopt-dialog').close();
        scheduleRefresh();
        wall?.upsert(session);
        wall?.arrange();
      } catch (e) {
        error.textContent = e.message;
        button.disabled = false;
      }
    });
    cell.append(button);
  }
}

// The wall from the keyboard: j/k or arrows move between tiles, Enter
// opens (the tile's own handler), `/` filters, Esc leaves the filter or an
// open session (when the keys are not going to the session).
function wallKeys(e) {
  if (!wall || e.ctrlKey || e.metaKey || e.altKey || document.querySelector('dialog[open]')) return;
  const target = e.target;
  const typing = target.matches('input, textarea, select');
  if (!$('session').hidden) {
    if (e.key === 'Escape' && (target !== $('keyboard') || sessionView.isEnded)) location.hash = '#/';
    return;
  }
  if (target === $('filter') && e.key === 'Escape') {
    $('filter').value = '';
    wall.setFilter('');
    wall.moveFocus(0);
    return;
  }
  if (typing) return;
  const steps = { j: 1, ArrowDown: 1, ArrowRight: 1, k: -1, ArrowUp: -1, ArrowLeft: -1 };
  if (e.key === '/') {
    e.preventDefault();
    $('filter').focus();
  } else if (e.key in steps) {
    e.preventDefault();
    wall.moveFocus(steps[e.key]);
  }
}

setupControls();
boot();
