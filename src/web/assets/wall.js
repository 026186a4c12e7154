// The wall, for triage: one tile per session with its name on a line of
// its own (nothing squeezes it), what it is doing in words, a mark (icon
// and text, not colour alone) when it needs you, and the last non-empty
// rows of its screen at a readable size (the whole screen on hover, at
// the same size). Sessions that need you come first, ended ones last with
// how they ended; on a fleet hub the ones that need you, whatever their
// host, sit in a group of their own above the hosts' groups. The filter
// searches the screens too. A tile's screen feed is open only while the
// tile is on screen.

import { api } from './api.js';
import { ScreenFeed } from './screen.js';
import { describe, failedExit, isEnded, labels, lastNonEmptyRow, stateWords } from './words.js';

const STATE_ORDER = { waiting: 0, working: 1, starting: 2, idle: 3, exited: 4 };
/** Rows a thumbnail shows: the last non-empty ones. */
const THUMB_ROWS = 8;
const HIDDEN_CLOSE_MS = 5000;
const PEEK_DELAY_MS = 350;
/** Kept between a peek and the window's edges. */
const PEEK_MARGIN_PX = 8;
const DISMISSED_KEY = 'tmuxd.dismissed';

/** `12s`, `5m`, `3h`, `2d` since `iso` (RFC 3339). */
export function ago(iso, now = Date.now()) {
  if (!iso) return '';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Ended sessions the user dismissed, kept in this browser so a reload does not bring them back. */
function dismissed() {
  try {
    return new Set(JSON.parse(localStorage.getItem(DISMISSED_KEY) || '[]'));
  } catch {
    return new Set();
  }
}

function dismiss(id) {
  const ids = dismissed();
  ids.add(id);
  localStorage.setItem(DISMISSED_KEY, JSON.stringify([...ids].slice(-500)));
}

/** The coding agent a summary names (issue 19 adds `agent`), as a word; '' if none. */
function agentName(agent) {
  if (!agent) return '';
  if (typeof agent === 'string') return agent;
  return agent.name || agent.kind || '';
}

class Tile {
  constructor(summary, wall) {
    this.wall = wall;
    this.summary = summary;
    this.visible = false;
    this.closeTimer = null;
    this.peekTimer = null;
    this.snapshotLoaded = false;
    this.searchScreenAsked = false;
    // A session already failed when first seen (a page load) is not news.
    this.failureSeen = failedExit(summary);
    this.root = el('article', 'tile');
    this.root.tabIndex = 0;
    this.root.dataset.sessionId = summary.session_id;
    this.nameEl = el('div', 'name');
    const status = el('div', 'status');
    this.markEl = el('span', 'mark');
    this.markEl.append(el('span', 'mark-icon', '!'), el('span', 'mark-text'));
    this.stateEl = el('span', 'state');
    // A peer's tile names its host: in the "needs you" group it is away from its host's heading.
    this.hostEl = el('span', 'host-chip');
    this.sinceEl = el('span', 'since');
    status.append(this.markEl, this.stateEl, this.hostEl, this.sinceEl);
    // The slot keeps the tile's size while the thumbnail grows over what is below (peek).
    const slot = el('div', 'thumb-slot');
    this.thumb = el('div', 'thumb');
    slot.append(this.thumb);
    const foot = el('div', 'tile-foot');
    this.cmdEl = el('div', 'cmd');
    this.cwdEl = el('div', 'cwd');
    this.thoughtEl = el('div', 'thought');
    this.activityEl = el('div', 'activity');
    foot.append(this.cmdEl, this.cwdEl, this.thoughtEl, this.activityEl);
    this.root.append(this.nameEl, status, slot, foot);
    this.feed = new ScreenFeed(summary.session_id, { onChange: () => this.showTail(), tile: true });
    this.thumb.append(this.feed.view.el);
    this.root.addEventListener('click', (e) => {
      if (!e.target.closest('button')) wall.onOpen(this.id);
    });
    this.root.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && e.target === this.root) wall.onOpen(this.id);
    });
    this.thumb.addEventListener('mouseenter', () => {
      this.peekTimer = setTimeout(() => this.setPeek(true), PEEK_DELAY_MS);
    });
    this.thumb.addEventListener('mouseleave', () => {
      clearTimeout(this.peekTimer);
      this.setPeek(false);
    });
    this.render();
  }

  get id() {
    return this.summary.session_id;
  }

  get ended() {
    return isEnded(this.summary);
  }

  /** The attention flag counts while the session lives. */
  get needsYou() {
    return !this.ended && !!this.summary.attention;
  }

  update(summary) {
    const wasEnded = this.ended;
    this.summary = { ...this.summary, ...summary };
    if (this.ended && !wasEnded) this.feed.close();
    this.render();
    // The exit status may come with a later event than the end itself.
    if (!this.failureSeen && failedExit(this.summary)) {
      this.failureSeen = true;
      this.wall.onFailedExit(this);
    }
    if (this.ended && this.visible) this.loadLastScreen();
  }

  render() {
    const s = this.summary;
    const words = stateWords(s);
    const { mark, word } = labels(s);
    this.nameEl.textContent = s.tmux_name;
    this.nameEl.title = `${s.tmux_name} (${s.session_id})`;
    this.markEl.hidden = !mark;
    this.markEl.querySelector('.mark-text').textContent = mark;
    this.stateEl.className = `state ${words.tone}`;
    // A down peer's session shows its last known state, marked stale.
    const stateText = [word, this.summary.stale && '(stale)'].filter(Boolean).join(' ');
    this.stateEl.textContent = stateText;
    this.stateEl.hidden = !stateText;
    this.hostEl.textContent = s.host ? `on ${s.host}` : '';
    this.hostEl.hidden = !s.host;
    this.root.title = describe(s);
    this.root.dataset.state = this.ended ? 'ended' : s.state;
    this.root.classList.toggle('attention', this.needsYou);
    this.root.classList.toggle('ended', this.ended);
    this.root.classList.toggle('stale', !!this.summary.stale);
    if (this.ended && !this.root.querySelector('.dismiss')) {
      const button = el('button', 'dismiss', '×');
      button.type = 'button';
      button.title = 'remove from the wall';
      button.setAttribute('aria-label', `remove ${s.tmux_name} from the wall`);
      button.addEventListener('click', () => {
        dismiss(this.id);
        this.wall.remove(this.id);
      });
      this.sinceEl.after(button);
    }
    const agent = agentName(s.agent);
    this.cmdEl.textContent = [s.current_command && `› ${s.current_command}`, agent && `agent: ${agent}`]
      .filter(Boolean).join(' · ');
    this.cwdEl.textContent = s.cwd || '';
    this.cwdEl.title = s.cwd || '';
    this.thoughtEl.textContent = s.thought && s.thought.text ? `“${s.thought.text}”` : '';
    this.thoughtEl.title = s.thought && s.thought.text ? s.thought.text : '';
    this.tick();
  }

  /** Refreshes the relative times. */
  tick(now = Date.now()) {
    const s = this.summary;
    if (this.ended) {
      this.sinceEl.textContent = s.ended_at ? `${ago(s.ended_at, now)} ago` : '';
      this.activityEl.textContent = s.ended_at ? `ended ${new Date(s.ended_at).toLocaleString()}` : '';
      return;
    }
    this.sinceEl.textContent = `for ${ago(s.state_since, now)}`;
    this.activityEl.textContent = s.last_activity_at ? `active ${ago(s.last_activity_at, now)} ago` : 'no output yet';
  }

  setVisible(visible) {
    this.visible = visible;
    clearTimeout(this.closeTimer);
    if (this.ended) {
      if (visible) this.loadLastScreen();
      return;
    }
    if (visible) this.feed.open();
    else this.closeTimer = setTimeout(() => this.feed.close(), HIDDEN_CLOSE_MS);
  }

  /** An ended session has no screen feed: its last screen is read once. */
  async loadLastScreen() {
    if (this.snapshotLoaded) return;
    this.snapshotLoaded = true;
    try {
      const snap = await api.snapshot(this.id);
      this.feed.view.apply({ ...snap, type: 'screen' });
      this.showTail();
    } catch {
      // Past the retention window: the tile says how it ended, without a screen.
    }
  }

  /**
   * The filter searches screens, and a tile never on screen has none: its
   * screen is read once (a snapshot, not a feed), unless a feed brings it first.
   */
  async loadScreenToSearch() {
    if (this.ended) return this.loadLastScreen();
    if (this.searchScreenAsked) return;
    this.searchScreenAsked = true;
    try {
      const snap = await api.snapshot(this.id);
      if (this.feed.view.rows) return;
      this.feed.view.apply({ ...snap, type: 'screen' });
      this.showTail();
    } catch {
      // Gone meanwhile: the list will say so.
    }
  }

  /** What the filter searches on the screen: the rows the tile has from its feed or a snapshot. */
  screenText() {
    return this.feed.view.searchText();
  }

  /** Shows the last THUMB_ROWS non-empty rows, at the thumbnail's own font size. */
  showTail() {
    // A filter over screen text follows the screen as it changes.
    if (this.wall.filter) this.root.hidden = !this.wall.matches(this);
    if (this.root.classList.contains('peek')) return this.fitWhole();
    const view = this.feed.view;
    const last = lastNonEmptyRow(view.texts());
    const first = Math.max(0, last + 1 - THUMB_ROWS);
    view.el.style.transform = `translateY(calc(${-first} * var(--lh)))`;
  }

  /** The whole screen over the tiles around it (hover). */
  setPeek(on) {
    if (this.root.classList.contains('peek') === on) return;
    this.root.classList.toggle('peek', on);
    if (on) this.fitWhole();
    else {
      for (const key of ['height', 'width', 'left', 'right']) this.thumb.style[key] = '';
      this.showTail();
    }
  }

  /**
   * The peek: the screen at the thumbnail's own readable size, never
   * scaled down (a screen scaled to a tile's width was ~6 px text), as
   * wide as the screen within the window, moved left to stay inside it;
   * as many rows as fit below the tile's top, ending at the last
   * non-empty one, when the whole screen does not fit.
   */
  fitWhole() {
    const view = this.feed.view;
    const term = view.el;
    if (!term.offsetWidth || !view.rows) return;
    const slot = this.thumb.parentElement.getBoundingClientRect();
    const windowWidth = document.documentElement.clientWidth;
    const width = Math.max(slot.width, Math.min(term.offsetWidth, windowWidth - 2 * PEEK_MARGIN_PX));
    const left = Math.max(PEEK_MARGIN_PX - slot.left, Math.min(0, windowWidth - PEEK_MARGIN_PX - slot.left - width));
    Object.assign(this.thumb.style, { left: `${left}px`, right: 'auto', width: `${width}px` });
    const line = term.offsetHeight / view.rows;
    const fit = Math.max(THUMB_ROWS, Math.floor((window.innerHeight - PEEK_MARGIN_PX - slot.top) / line));
    const shown = Math.min(view.rows, fit);
    const first = shown < view.rows ? Math.max(0, lastNonEmptyRow(view.texts()) + 1 - shown) : 0;
    term.style.transform = first ? `translateY(calc(${-first} * var(--lh)))` : '';
    this.thumb.style.height = `${Math.ceil(shown * line)}px`;
  }

  destroy() {
    clearTimeout(this.closeTimer);
    clearTimeout(this.peekTimer);
    this.feed.close();
    this.root.remove();
  }
}

export class Wall {
  /**
   * `onOpen(id)` when a tile is opened; `onChange()` after tiles or states
   * change; `onAttention(tile)` when a flag is newly raised;
   * `onFailedExit(tile)` when a session seen alive ends with a non-zero
   * status or a signal.
   */
  constructor(container, { onOpen, onChange, onAttention, onFailedExit }) {
    this.container = container;
    this.onOpen = onOpen;
    this.onChange = onChange;
    this.onAttention = onAttention;
    this.onFailedExit = onFailedExit || (() => {});
    this.tiles = new Map();
    this.filter = '';
    this.sortKey = 'activity';
    this.order = [];
    // Fleet peers by name (`GET /v1/hosts`), and the heading shown above each
    // host's tiles once any tile is a peer's.
    this.hosts = new Map();
    this.heads = new Map();
    this.needsHead = el('h2', 'host-head needs-head');
    this.visibility = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        const tile = this.tiles.get(entry.target.dataset.sessionId);
        if (tile) tile.setVisible(entry.isIntersecting);
      }
    }, { rootMargin: '200px' });
    setInterval(() => this.tiles.forEach((t) => t.tick()), 1000);
  }

  get(id) {
    return this.tiles.get(id);
  }

  /**
   * Replaces what the wall knows with `GET /v1/sessions?include=ended`:
   * live sessions, and ended ones within the retention window unless dismissed.
   */
  setSessions(sessions) {
    const seen = new Set();
    const gone = dismissed();
    for (const summary of sessions) {
      if (isEnded(summary) && gone.has(summary.session_id)) continue;
      seen.add(summary.session_id);
      this.upsert(summary);
    }
    for (const tile of [...this.tiles.values()]) {
      if (!seen.has(tile.id)) this.remove(tile.id);
    }
    this.arrange();
  }

  upsert(summary) {
    const tile = this.tiles.get(summary.session_id);
    if (tile) {
      const was = tile.summary.attention;
      tile.update(summary);
      const raised = tile.needsYou && (!was || was.since !== summary.attention.since);
      if (raised) this.onAttention(tile);
      return tile;
    }
    const created = new Tile(summary, this);
    this.tiles.set(created.id, created);
    this.container.append(created.root);
    this.visibility.observe(created.root);
    // No notification for a session first seen needing attention (a page
    // load would raise one per session); the title counts it.
    return created;
  }

  remove(id) {
    const tile = this.tiles.get(id);
    if (!tile) return;
    this.visibility.unobserve(tile.root);
    tile.destroy();
    this.tiles.delete(id);
    this.arrange();
  }

  /** Applies one event from the feed; returns true if the list should be re-read. */
  applyEvent(event) {
    const found = event.session_id ? this.tiles.get(event.session_id) : null;
    // A peer's event applies only to that peer's tiles (the hub drops any
    // naming another host's session; this holds even if one got through).
    const tile = found && (found.summary.host || '') === (event.host || '') ? found : null;
    switch (event.kind) {
      case 'session_state':
        if (tile) {
          const update = {
            state: event.state,
            state_reason: event.reason,
            state_since: event.state_since,
            attention: event.attention ?? null,
          };
          if (event.state === 'exited') {
            update.exit_status = event.exit_status ?? null;
            update.exit_signal = event.exit_signal ?? null;
          }
          this.upsert({ ...tile.summary, ...update });
          this.arrange();
        }
        return true;
      case 'thought_update':
        if (tile) tile.update({ thought: event.thought });
        return false;
      case 'session_detached':
        if (tile) this.remove(tile.id);
        return false;
      case 'session_deleted':
        // Ended, not forgotten: the list (with ended sessions) says how.
        if (tile) {
          const end = { state: 'exited', state_reason: event.reason, ended_at: event.at, attention: null };
          if (event.exit_status !== undefined) end.exit_status = event.exit_status;
          if (event.exit_signal !== undefined) end.exit_signal = event.exit_signal;
          tile.update(end);
          this.arrange();
        }
        return true;
      default:
        return true;
    }
  }

  setFilter(text) {
    this.filter = text.trim().toLowerCase();
    // Tiles never on screen have no rows to search: read each one's screen once.
    if (this.filter) for (const tile of this.tiles.values()) if (!tile.feed.view.rows) tile.loadScreenToSearch();
    this.arrange();
  }

  setSort(key) {
    this.sortKey = key;
    this.arrange();
  }

  matches(tile) {
    if (!this.filter) return true;
    const s = tile.summary;
    // The state word too: a tile whose mark stands for it is still found by it.
    const hay = [s.tmux_name, s.session_id, s.current_command, agentName(s.agent), s.cwd, s.title, describe(s),
      stateWords(s).word, s.thought && s.thought.text, s.host]
      .filter(Boolean).join(' ').toLowerCase();
    return hay.includes(this.filter) || tile.screenText().includes(this.filter);
  }

  /** Takes `GET /v1/hosts`: each peer's status for its heading. */
  setHosts(hosts) {
    this.hosts = new Map(hosts.map((h) => [h.name, h]));
    this.arrange();
  }

  /** A host's heading: its name, status and since when (and why, when down). */
  head(host) {
    let head = this.heads.get(host);
    if (!head) {
      head = el('h2', 'host-head');
      head.dataset.host = host;
      this.heads.set(host, head);
    }
    const info = host ? this.hosts.get(host) : null;
    const status = host ? info?.status ?? 'unknown' : 'here';
    head.className = `host-head ${status}`;
    let text = host || 'this host';
    if (info) {
      text += ` · ${info.status} ${ago(info.since)}`;
      if (info.status === 'down' && info.last_error) text += ` · ${info.last_error}`;
    }
    head.textContent = text;
    return head;
  }

  compare(a, b) {
    // Needing you first, whatever the host; the rest grouped by host: this
    // daemon's own first, then each peer by name; ended ones last.
    if (a.needsYou !== b.needsYou) return a.needsYou ? -1 : 1;
    const host = (t) => t.summary.host || '';
    if (!a.needsYou && host(a) !== host(b)) return host(a).localeCompare(host(b));
    if (a.ended !== b.ended) return a.ended ? 1 : -1;
    const byName = () => a.summary.tmux_name.localeCompare(b.summary.tmux_name, undefined, { numeric: true });
    if (a.ended) return Date.parse(b.summary.ended_at || 0) - Date.parse(a.summary.ended_at || 0) || byName();
    if (this.sortKey === 'name') return byName();
    if (this.sortKey === 'state') {
      const d = (STATE_ORDER[a.summary.state] ?? 9) - (STATE_ORDER[b.summary.state] ?? 9);
      return d || byName();
    }
    const time = (t) => Date.parse(t.summary.last_activity_at || t.summary.created_at || 0) || 0;
    return time(b) - time(a) || byName();
  }

  /**
   * Filters and orders the tiles; moves DOM nodes only when the order
   * changed. On a fleet hub: a "needs you" heading over the sessions that
   * need you (on any host), then a heading per host over the rest.
   */
  arrange() {
    const tiles = [...this.tiles.values()];
    for (const tile of tiles) tile.root.hidden = !this.matches(tile);
    tiles.sort((a, b) => this.compare(a, b));
    const grouped = tiles.some((t) => t.summary.host) || this.hosts.size > 0;
    // Headings for hosts with tiles, and for peers without any (down ones too).
    const hosts = new Set(grouped ? tiles.map((t) => t.summary.host || '') : []);
    for (const name of this.hosts.keys()) hosts.add(name);
    if (!grouped) hosts.clear();
    for (const [name, head] of this.heads) {
      if (!hosts.has(name)) { head.remove(); this.heads.delete(name); }
    }
    const needy = grouped ? tiles.filter((t) => t.needsYou) : [];
    const groups = needy.length ? [{ key: '!needs', head: this.needsHead, tiles: needy }] : [];
    if (needy.length) this.needsHead.textContent = `needs you · ${needy.length}`;
    else this.needsHead.remove();
    if (grouped) {
      for (const name of [...hosts].sort()) {
        const own = tiles.filter((t) => !t.needsYou && (t.summary.host || '') === name);
        groups.push({ key: `@${name}`, head: this.head(name), tiles: own });
      }
    } else {
      groups.push({ key: '', head: null, tiles });
    }
    const order = groups.flatMap((g) => [g.key, ...g.tiles.map((t) => t.id)]);
    if (order.join() !== this.order.join()) {
      this.order = order;
      for (const group of groups) {
        if (group.head) this.container.append(group.head);
        for (const tile of group.tiles) this.container.append(tile.root);
      }
    }
    this.onChange();
  }

  /** Live sessions with the attention flag up (what the tab title counts). */
  attentionCount() {
    let n = 0;
    for (const tile of this.tiles.values()) if (tile.needsYou) n++;
    return n;
  }

  /** The tiles shown, in order. */
  shown() {
    // (`order` also holds the headings' keys, `!needs` and `@host`: not tiles.)
    return this.order.map((id) => this.tiles.get(id)).filter((t) => t && !t.root.hidden);
  }

  /** Moves keyboard focus `step` tiles from the focused one (j/k, arrows). */
  moveFocus(step) {
    const tiles = this.shown();
    if (!tiles.length) return;
    const at = tiles.findIndex((t) => t.root === document.activeElement);
    const next = at < 0 ? 0 : Math.min(tiles.length - 1, Math.max(0, at + step));
    tiles[next].root.focus();
    tiles[next].root.scrollIntoView({ block: 'nearest' });
  }
}
