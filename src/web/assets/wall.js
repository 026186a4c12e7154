// The wall: one tile per session with a live thumbnail of its screen, its
// state and why, for how long, command, cwd, thought and last activity.
// Sessions with the attention flag up sort first. A tile's screen feed is open
// only while the tile is on screen, so a long wall costs little.

import { ScreenFeed } from './screen.js';

const STATE_ORDER = { waiting: 0, working: 1, starting: 2, idle: 3, exited: 4 };

/** `idle · shell_prompt`, then `· attention: bell` when the flag is up. */
export function stateText(s) {
  const parts = [s.state];
  if (s.state_reason) parts.push(s.state_reason);
  if (s.attention) parts.push(`attention: ${s.attention.reason}`);
  if (s.exit_status !== null && s.exit_status !== undefined) parts.push(`status ${s.exit_status}`);
  return parts.join(' · ');
}
const THUMB_MAX_HEIGHT = 220;
const HIDDEN_CLOSE_MS = 5000;

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

class Tile {
  constructor(summary, wall) {
    this.wall = wall;
    this.summary = summary;
    this.ended = null;
    this.visible = false;
    this.closeTimer = null;
    this.root = el('article', 'tile');
    this.root.tabIndex = 0;
    this.root.dataset.sessionId = summary.session_id;
    const head = el('div', 'tile-head');
    this.nameEl = el('span', 'name');
    this.stateEl = el('span', 'state');
    this.sinceEl = el('span', 'since');
    head.append(this.nameEl, this.stateEl, this.sinceEl);
    this.thumb = el('div', 'thumb');
    const foot = el('div', 'tile-foot');
    this.cmdEl = el('div', 'cmd');
    this.cwdEl = el('div', 'cwd');
    this.thoughtEl = el('div', 'thought');
    this.activityEl = el('div', 'activity');
    foot.append(this.cmdEl, this.cwdEl, this.thoughtEl, this.activityEl);
    this.root.append(head, this.thumb, foot);
    this.feed = new ScreenFeed(summary.session_id, {
      onChange: (frame) => frame.type === 'screen' && this.fit(),
      glance: true,
    });
    this.thumb.append(this.feed.view.el);
    this.root.addEventListener('click', (e) => {
      if (!e.target.closest('button')) wall.onOpen(this.id);
    });
    this.root.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && e.target === this.root) wall.onOpen(this.id);
    });
    this.render();
  }

  get id() {
    return this.summary.session_id;
  }

  get state() {
    return this.ended ? 'ended' : this.summary.state;
  }

  update(summary) {
    this.summary = { ...this.summary, ...summary };
    this.render();
  }

  render() {
    const s = this.summary;
    this.nameEl.textContent = s.tmux_name;
    this.nameEl.title = `${s.tmux_name} (${s.session_id})`;
    const flagged = !this.ended && !!s.attention;
    this.stateEl.className = `state ${this.state}${flagged ? ' attention' : ''}`;
    this.stateEl.textContent = this.ended ? `ended: ${this.ended}` : stateText(s);
    this.root.dataset.state = this.state;
    this.root.classList.toggle('attention', flagged);
    this.root.classList.toggle('ended', !!this.ended);
    this.cmdEl.textContent = s.current_command ? `› ${s.current_command}` : '';
    this.cwdEl.textContent = s.cwd || '';
    this.cwdEl.title = s.cwd || '';
    this.thoughtEl.textContent = s.thought && s.thought.text ? `💭 ${s.thought.text}` : '';
    this.thoughtEl.title = s.thought && s.thought.text ? s.thought.text : '';
    this.tick();
  }

  /** Refreshes the relative times. */
  tick(now = Date.now()) {
    const s = this.summary;
    this.sinceEl.textContent = this.ended ? '' : `for ${ago(s.state_since, now)}`;
    this.activityEl.textContent = s.last_activity_at ? `active ${ago(s.last_activity_at, now)} ago` : 'no output yet';
  }

  markEnded(reason) {
    this.ended = reason || 'ended';
    this.feed.close();
    const dismiss = el('button', 'dismiss', '×');
    dismiss.type = 'button';
    dismiss.title = 'remove from the wall';
    dismiss.addEventListener('click', () => this.wall.remove(this.id));
    this.sinceEl.after(dismiss);
    this.render();
  }

  setVisible(visible) {
    this.visible = visible;
    clearTimeout(this.closeTimer);
    if (this.ended) return;
    if (visible) this.feed.open();
    else this.closeTimer = setTimeout(() => this.feed.close(), HIDDEN_CLOSE_MS);
  }

  /** Scales the screen to the tile's width (and at most THUMB_MAX_HEIGHT). */
  fit() {
    const width = this.thumb.clientWidth;
    const view = this.feed.view;
    if (!width || !view.el.offsetWidth) return;
    const scale = view.fit(width, THUMB_MAX_HEIGHT);
    this.thumb.style.height = `${Math.ceil(view.el.offsetHeight * scale)}px`;
  }

  destroy() {
    clearTimeout(this.closeTimer);
    this.feed.close();
    this.root.remove();
  }
}

export class Wall {
  /** `onOpen(id)` when a tile is opened; `onChange()` after tiles or states change. */
  constructor(container, { onOpen, onChange, onAttention }) {
    this.container = container;
    this.onOpen = onOpen;
    this.onChange = onChange;
    this.onAttention = onAttention;
    this.tiles = new Map();
    this.filter = '';
    this.sortKey = 'activity';
    this.order = [];
    this.visibility = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        const tile = this.tiles.get(entry.target.dataset.sessionId);
        if (tile) tile.setVisible(entry.isIntersecting);
      }
    }, { rootMargin: '200px' });
    this.resizes = new ResizeObserver((entries) => {
      for (const entry of entries) {
        const tile = this.tiles.get(entry.target.closest('.tile').dataset.sessionId);
        if (tile) tile.fit();
      }
    });
    setInterval(() => this.tiles.forEach((t) => t.tick()), 1000);
  }

  get(id) {
    return this.tiles.get(id);
  }

  /** Replaces what the wall knows with `GET /v1/sessions`; ended tiles stay until dismissed. */
  setSessions(sessions) {
    const seen = new Set();
    for (const summary of sessions) {
      seen.add(summary.session_id);
      this.upsert(summary);
    }
    for (const tile of [...this.tiles.values()]) {
      if (!seen.has(tile.id) && !tile.ended) this.remove(tile.id);
    }
    this.arrange();
  }

  upsert(summary) {
    const tile = this.tiles.get(summary.session_id);
    if (tile) {
      const was = tile.summary.attention;
      tile.update(summary);
      const raised = summary.attention && (!was || was.since !== summary.attention.since);
      if (raised) this.onAttention(tile);
      return tile;
    }
    const created = new Tile(summary, this);
    this.tiles.set(created.id, created);
    this.container.append(created.root);
    this.visibility.observe(created.root);
    this.resizes.observe(created.thumb);
    // No notification for a session first seen needing attention (a page
    // load would raise one per session); the title counts it.
    return created;
  }

  remove(id) {
    const tile = this.tiles.get(id);
    if (!tile) return;
    this.visibility.unobserve(tile.root);
    this.resizes.unobserve(tile.thumb);
    tile.destroy();
    this.tiles.delete(id);
    this.arrange();
  }

  /** Applies one event from the feed; returns true if the list should be re-read. */
  applyEvent(event) {
    const tile = event.session_id ? this.tiles.get(event.session_id) : null;
    switch (event.kind) {
      case 'session_state':
        if (tile) {
          this.upsert({
            ...tile.summary,
            state: event.state,
            state_reason: event.reason,
            state_since: event.state_since,
            attention: event.attention ?? null,
          });
          this.arrange();
        }
        return true;
      case 'thought_update':
        if (tile) tile.update({ thought: event.thought });
        return false;
      case 'session_deleted':
      case 'session_detached':
        if (tile && (event.reason === 'process_exit' || event.reason === 'tmux_server_gone')) {
          tile.markEnded(event.reason);
          this.arrange();
        } else {
          this.remove(event.session_id);
        }
        return false;
      default:
        return true;
    }
  }

  setFilter(text) {
    this.filter = text.trim().toLowerCase();
    this.arrange();
  }

  setSort(key) {
    this.sortKey = key;
    this.arrange();
  }

  matches(tile) {
    if (!this.filter) return true;
    const s = tile.summary;
    const hay = [s.tmux_name, s.session_id, s.current_command, s.cwd, s.title, s.state, s.thought && s.thought.text]
      .filter(Boolean).join(' ').toLowerCase();
    return hay.includes(this.filter);
  }

  compare(a, b) {
    const rank = (t) => (t.ended ? 2 : t.summary.attention ? 0 : 1);
    if (rank(a) !== rank(b)) return rank(a) - rank(b);
    const byName = () => a.summary.tmux_name.localeCompare(b.summary.tmux_name, undefined, { numeric: true });
    if (this.sortKey === 'name') return byName();
    if (this.sortKey === 'state') {
      const d = (STATE_ORDER[a.summary.state] ?? 9) - (STATE_ORDER[b.summary.state] ?? 9);
      return d || byName();
    }
    const time = (t) => Date.parse(t.summary.last_activity_at || t.summary.created_at || 0) || 0;
    return time(b) - time(a) || byName();
  }

  /** Filters and orders the tiles; moves DOM nodes only when the order changed. */
  arrange() {
    const tiles = [...this.tiles.values()];
    for (const tile of tiles) tile.root.hidden = !this.matches(tile);
    tiles.sort((a, b) => this.compare(a, b));
    const order = tiles.map((t) => t.id);
    if (order.join() !== this.order.join()) {
      this.order = order;
      for (const tile of tiles) this.container.append(tile.root);
    }
    this.onChange();
  }

  attentionCount() {
    let n = 0;
    for (const tile of this.tiles.values()) if (!tile.ended && tile.summary.attention) n++;
    return n;
  }
}
