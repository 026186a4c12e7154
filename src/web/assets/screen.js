// One session's screen feed: `GET /v1/sessions/{id}/screen` over a
// WebSocket (the whole screen first, then changed rows). Browsers cannot
// set headers on a WebSocket, so with a token the first message is
// `{"type":"auth","token":...}`. Reconnects unless the session ended.
// A wall tile's feed says so (`?view=tile`): a thumbnail is not someone
// looking at the session, so it must not acknowledge its attention flag
// the way opening the session does.

import { token, wsUrl } from './api.js';
import { ScreenView } from './term.js';

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 10000;
const CLOSE_NORMAL = 1000;
const CLOSE_POLICY = 1008;

export class ScreenFeed {
  /**
   * `onChange()` after each frame; `onClosed(reason)` when it stops for
   * good; `tile` for a wall thumbnail.
   */
  constructor(sessionId, { onChange = () => {}, onClosed = () => {}, tile = false } = {}) {
    this.sessionId = sessionId;
    this.tile = tile;
    this.view = new ScreenView();
    this.onChange = onChange;
    this.onClosed = onClosed;
    this.socket = null;
    this.wanted = false;
    this.retryMs = RETRY_MIN_MS;
    this.timer = null;
  }

  get connected() {
    return this.socket !== null;
  }

  open() {
    if (this.wanted) return;
    this.wanted = true;
    this.connect();
  }

  close() {
    this.wanted = false;
    clearTimeout(this.timer);
    if (this.socket) {
      const socket = this.socket;
      this.socket = null;
      socket.close(CLOSE_NORMAL);
    }
  }

  connect() {
    const view = this.tile ? '?view=tile' : '';
    const path = `/v1/sessions/${encodeURIComponent(this.sessionId)}/screen${view}`;
    const socket = new WebSocket(wsUrl(path));
    this.socket = socket;
    socket.addEventListener('open', () => {
      const t = token();
      if (t) socket.send(JSON.stringify({ type: 'auth', token: t }));
    });
    socket.addEventListener('message', (message) => {
      if (typeof message.data !== 'string') return;
      let frame;
      try {
        frame = JSON.parse(message.data);
      } catch {
        return;
      }
      this.retryMs = RETRY_MIN_MS;
      this.view.apply(frame);
      this.onChange(frame);
    });
    socket.addEventListener('close', (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (!this.wanted) return;
      const ended = event.code === CLOSE_NORMAL || event.code === CLOSE_POLICY;
      if (ended) {
        this.wanted = false;
        this.onClosed(event.reason || 'closed');
        return;
      }
      this.timer = setTimeout(() => this.wanted && this.connect(), this.retryMs);
      this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
    });
  }
}
