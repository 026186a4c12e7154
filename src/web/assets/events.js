// The event feed (`GET /v1/events`, Server-Sent Events) read with fetch(),
// because EventSource cannot send the Authorization header. Resumes after a
// dropped connection from the last seq seen (`Last-Event-ID`), so no event
// is missed or repeated.

import { authHeaders } from './api.js';

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 10000;

export class EventFeed {
  /**
   * `onEvent(event)` for each event; `onConnected()` each time the feed is
   * (re)connected, before replayed events; `onStatus(text, live)`;
   * `onRefused(status)` when the daemon refuses the token.
   */
  constructor({ onEvent, onConnected, onStatus, onRefused }) {
    Object.assign(this, { onEvent, onConnected, onStatus, onRefused });
    this.lastSeq = null;
    this.controller = null;
    this.stopped = false;
    this.retryMs = RETRY_MIN_MS;
  }

  start() {
    this.stopped = false;
    this.loop();
  }

  stop() {
    this.stopped = true;
    if (this.controller) this.controller.abort();
  }

  /** Drops the connection (as a network failure would); it resumes by itself. */
  drop() {
    if (this.controller) this.controller.abort();
  }

  async loop() {
    while (!this.stopped) {
      const outcome = await this.connectOnce();
      if (this.stopped || outcome === 'refused') return;
      this.onStatus(`reconnecting in ${Math.round(this.retryMs / 100) / 10}s`, false);
      await new Promise((resolve) => setTimeout(resolve, this.retryMs));
      this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
    }
  }

  async connectOnce() {
    this.controller = new AbortController();
    const headers = authHeaders({ Accept: 'text/event-stream' });
    if (this.lastSeq !== null) headers['Last-Event-ID'] = String(this.lastSeq);
    let response;
    try {
      response = await fetch('/v1/events', { headers, signal: this.controller.signal, cache: 'no-store' });
    } catch {
      return 'failed';
    }
    if (response.status === 401 || response.status === 403) {
      this.onRefused(response.status);
      return 'refused';
    }
    if (!response.ok || !response.body) return 'failed';
    this.retryMs = RETRY_MIN_MS;
    this.onStatus('live', true);
    this.onConnected();
    try {
      await this.read(response.body);
    } catch {
      // Aborted or cut: the loop reconnects.
    }
    return 'ended';
  }

  async read(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let message = { id: null, event: 'message', data: [] };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let newline;
      while ((newline = buffer.search(/\r\n|\n|\r/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        if (line === '') {
          this.dispatch(message);
          message = { id: null, event: 'message', data: [] };
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') message.data.push(text);
        else if (field === 'id') message.id = text;
        else if (field === 'event') message.event = text;
      }
    }
  }

  dispatch(message) {
    if (message.id !== null && /^\d+$/.test(message.id)) this.lastSeq = Number(message.id);
    if (!message.data.length) return;
    let data;
    try {
      data = JSON.parse(message.data.join('\n'));
    } catch {
      return;
    }
    this.onEvent({ type: message.event, ...data });
  }
}
