// One open session: its live screen at full size, the keyboard forwarded
// through the input endpoint (text for characters and paste, tmux key names
// for the rest), a read-only toggle, scrollback, copy, queue-until-idle,
// detach and kill.

import { api } from './api.js';
import { confirmDialog } from './dialogs.js';
import { InputQueue, pasteText, translateKey } from './keys.js';
import { ScreenFeed } from './screen.js';
import { ago, stateText } from './wall.js';

const SCROLLBACK_LINES = 2000;
/** Smallest scale of the open screen (13px text at 0.7 is about 9px). */
const MIN_SCALE = 0.7;
const $ = (id) => document.getElementById(id);

export class SessionView {
  /** `onLeave()` when the user goes back to the wall; `onReadOnly()` after a 403. */
  constructor({ onLeave, onReadOnly }) {
    this.onLeave = onLeave;
    this.onReadOnly = onReadOnly;
    this.id = null;
    this.feed = null;
    this.queue = null;
    this.sticky = { ctrl: false, alt: false };
    this.readOnly = false;
    this.forcedReadOnly = false;
    this.host = $('session-screen');
    this.keyboard = $('keyboard');
    this.bind();
  }

  bind() {
    $('back').addEventListener('click', () => this.onLeave());
    $('readonly-toggle').addEventListener('change', (e) => {
      this.readOnly = e.target.checked;
      this.focus();
    });
    // Keys keep going to the session after a toolbar button.
    $('copy-btn').addEventListener('click', () => this.copy().then(() => this.focus()));
    $('scrollback-btn').addEventListener('click', () => this.toggleScrollback().then(() => this.focus()));
    $('detach-btn').addEventListener('click', () => this.remove('detach'));
    $('kill-btn').addEventListener('click', () => this.remove('kill'));
    $('queue-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.queueInput();
    });
    this.keyboard.addEventListener('keydown', (e) => this.onKey(e));
    this.keyboard.addEventListener('paste', (e) => {
      e.preventDefault();
      const text = e.clipboardData.getData('text/plain');
      if (text) this.type({ text: pasteText(text) });
    });
    // Characters that arrive without a usable keydown (phone keyboards), and
    // composed text (IME) once composition ends.
    const takeTyped = () => {
      const text = this.keyboard.value;
      this.keyboard.value = '';
      if (text) this.type({ text: pasteText(text) });
    };
    this.keyboard.addEventListener('input', (e) => {
      if (!e.isComposing) takeTyped();
    });
    this.keyboard.addEventListener('compositionend', takeTyped);
    this.keyboard.addEventListener('focus', () => this.host.classList.add('focused'));
    this.keyboard.addEventListener('blur', () => this.host.classList.remove('focused'));
    this.host.addEventListener('mouseup', () => {
      if (!window.getSelection().toString()) this.focus();
    });
    for (const button of $('softkeys').querySelectorAll('button')) {
      button.addEventListener('click', () => this.softKey(button));
    }
    window.addEventListener('resize', () => this.fit());
  }

  open(id, summary, { readOnly }) {
    this.close();
    this.id = id;
    this.forcedReadOnly = readOnly;
    this.readOnly = readOnly;
    $('readonly-toggle').checked = readOnly;
    $('session-error').textContent = '';
    $('queue-status').textContent = '';
    $('scrollback').hidden = true;
    this.queue = new InputQueue((body) => api.input(id, body), (e) => this.fail(e));
    this.feed = new ScreenFeed(id, {
      onChange: (frame) => frame.type === 'screen' && this.fit(),
      onClosed: (reason) => { $('session-error').textContent = `screen feed closed: ${reason}`; },
    });
    this.host.textContent = '';
    this.host.append(this.feed.view.el);
    this.feed.open();
    this.update(summary);
    this.focus();
  }

  close() {
    if (this.feed) this.feed.close();
    this.feed = null;
    this.id = null;
  }

  update(summary) {
    if (!summary) return;
    $('session-name').textContent = `${summary.tmux_name}`;
    const state = $('session-state');
    state.className = `state ${summary.state}${summary.attention ? ' attention' : ''}`;
    state.textContent = `${stateText(summary)} · ${ago(summary.state_since)}`;
    const bits = [summary.session_id, summary.current_command, summary.cwd].filter(Boolean);
    if (summary.thought && summary.thought.text) bits.push(`💭 ${summary.thought.text}`);
    $('session-info').textContent = bits.join(' · ');
  }

  ended(reason) {
    $('session-error').textContent = `session ended (${reason})`;
    this.readOnly = true;
  }

  focus() {
    this.keyboard.focus({ preventScroll: true });
  }

  /**
   * As wide as the page allows, up to twice the natural size, keeping the
   * soft keys in view; on a phone not below a readable size (it scrolls).
   */
  fit() {
    if (!this.feed) return;
    const view = this.feed.view;
    const room = window.innerHeight - this.host.getBoundingClientRect().top - 110;
    const scale = view.fit(this.host.clientWidth - 2, Math.max(200, room), 2, MIN_SCALE);
    this.host.style.height = `${Math.ceil(view.el.offsetHeight * scale) + 2}px`;
  }

  onKey(e) {
    const action = translateKey(e, this.sticky);
    if (!action) return;
    e.preventDefault();
    this.clearSticky();
    this.type(action);
  }

  type(action) {
    if (this.readOnly || !this.queue) return;
    this.queue.push(action);
  }

  softKey(button) {
    const mod = button.dataset.mod;
    if (mod) {
      this.sticky[mod] = !this.sticky[mod];
      button.setAttribute('aria-pressed', String(this.sticky[mod]));
    } else {
      const prefix = (this.sticky.ctrl ? 'C-' : '') + (this.sticky.alt ? 'M-' : '');
      this.type({ key: prefix + button.dataset.key });
      this.clearSticky();
    }
    this.focus();
  }

  clearSticky() {
    if (!this.sticky.ctrl && !this.sticky.alt) return;
    this.sticky = { ctrl: false, alt: false };
    for (const b of $('softkeys').querySelectorAll('[data-mod]')) b.setAttribute('aria-pressed', 'false');
  }

  fail(e) {
    if (e.status === 403) {
      this.onReadOnly();
      this.readOnly = this.forcedReadOnly = true;
      $('readonly-toggle').checked = true;
    }
    $('session-error').textContent = e.message;
  }

  async copy() {
    const text = this.feed ? this.feed.view.text() : '';
    try {
      await navigator.clipboard.writeText(text);
      $('session-error').textContent = '';
    } catch {
      // No clipboard permission (or not a secure origin): show it selectable instead.
      this.showText(text);
    }
  }

  showText(text) {
    const pre = $('scrollback');
    pre.hidden = false;
    pre.textContent = text;
    const range = document.createRange();
    range.selectNodeContents(pre);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  async toggleScrollback() {
    const pre = $('scrollback');
    if (!pre.hidden) {
      pre.hidden = true;
      return;
    }
    try {
      const { lines } = await api.scrollback(this.id, SCROLLBACK_LINES);
      pre.textContent = lines.length ? lines.join('\n') : '(no scrollback)';
      pre.hidden = false;
      pre.scrollTop = pre.scrollHeight;
    } catch (e) {
      this.fail(e);
    }
  }

  async queueInput() {
    const text = $('queue-text').value;
    const submit = $('queue-submit').checked;
    if (!text && !submit) return;
    try {
      const outcome = await api.input(this.id, { text, submit, when: 'idle' });
      $('queue-status').textContent = outcome.delivered ? 'typed now (the session was idle)' : 'queued until idle';
      $('queue-text').value = '';
    } catch (e) {
      this.fail(e);
    }
  }

  async remove(mode) {
    const name = $('session-name').textContent;
    const text = mode === 'kill'
      ? `Kill tmux session "${name}"? Its programs are ended.`
      : `Detach "${name}" from tmuxd? The tmux session keeps running; adopt it again by name.`;
    if (!(await confirmDialog(text, mode === 'kill' ? 'Kill' : 'Detach'))) return;
    try {
      await api.remove(this.id, mode);
      this.onLeave();
    } catch (e) {
      this.fail(e);
    }
  }
}
