// One open session as a terminal: its live screen in exact cells at a
// font size that fits the window's width and height (or the one chosen
// with A-/A+; never below 10 px: past that the screen scrolls, and the
// view follows the cursor), its history above the screen
// (the wheel or the Scrollback button brings it in), text selection and
// copy, the keyboard forwarded through the input endpoint (text for
// characters and paste, tmux key names for the rest), an answer bar for a
// waiting session's question, queue-until-idle, detach and kill. An ended
// session shows its last screen, and only what still applies.

import { api } from './api.js';
import { confirmDialog } from './dialogs.js';
import { InputQueue, pasteText, translateKey } from './keys.js';
import { ScreenFeed } from './screen.js';
import { ago } from './wall.js';
import { answerOptions, isEnded, labels, stateWords } from './words.js';

const SCROLLBACK_LINES = 2000;
/** Readable on a phone; below this the screen scrolls sideways instead. */
const MIN_FONT_PX = 10;
const MAX_FIT_FONT_PX = 18;
const MAX_FONT_PX = 32;
const FONT_KEY = 'tmuxd.fontPx';
/** The screen's box is never made shorter than this, however little room the window leaves. */
const MIN_ROOM_PX = 200;
/** Cells kept in view beside the cursor when the view scrolls sideways to it. */
const CURSOR_CONTEXT_CELLS = 4;
const $ = (id) => document.getElementById(id);

export class SessionView {
  /** `onLeave()` when the user goes back to the wall; `onReadOnly()` after a 403. */
  constructor({ onLeave, onReadOnly }) {
    this.onLeave = onLeave;
    this.onReadOnly = onReadOnly;
    this.id = null;
    this.feed = null;
    this.queue = null;
    this.summary = null;
    this.sticky = { ctrl: false, alt: false };
    this.readOnly = false;
    this.forcedReadOnly = false;
    this.isEnded = false;
    this.history = null;
    this.answers = '';
    // Whether the view keeps the cursor in sight: until the user scrolls
    // it away (into the history); typing brings it back.
    this.following = true;
    const saved = Number(localStorage.getItem(FONT_KEY));
    this.fontPx = saved >= MIN_FONT_PX && saved <= MAX_FONT_PX ? saved : null;
    this.host = $('session-screen');
    this.historyEl = $('scrollback');
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
    $('scrollback-btn').addEventListener('click', () => this.toggleHistory().then(() => this.focus()));
    $('font-smaller').addEventListener('click', () => this.zoom(-1));
    $('font-larger').addEventListener('click', () => this.zoom(1));
    $('font-fit').addEventListener('click', () => this.zoom(0));
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
    // A click gives the keys back to the session; a drag selects text to copy.
    this.host.addEventListener('mouseup', () => {
      if (!window.getSelection().toString()) this.focus();
    });
    this.host.addEventListener('scroll', () => { this.following = this.cursorInView(); }, { passive: true });
    this.host.addEventListener('wheel', (e) => {
      if (e.deltaY < 0 && this.host.scrollTop === 0 && !this.history) this.loadHistory({ keepView: true });
    }, { passive: true });
    for (const button of $('softkeys').querySelectorAll('button')) {
      button.addEventListener('click', () => this.softKey(button));
    }
    window.addEventListener('resize', () => this.fit());
  }

  open(id, summary, { readOnly }) {
    this.close();
    this.id = id;
    this.summary = summary;
    this.isEnded = isEnded(summary);
    this.forcedReadOnly = readOnly || this.isEnded;
    this.readOnly = this.forcedReadOnly;
    $('readonly-toggle').checked = readOnly;
    $('session-error').textContent = '';
    $('queue-status').textContent = '';
    this.historyEl.hidden = true;
    this.historyEl.textContent = '';
    this.history = null;
    this.following = true;
    this.queue = new InputQueue((body) => api.input(id, body), (e) => this.fail(e));
    this.feed = new ScreenFeed(id, {
      onChange: (frame) => {
        if (frame.type === 'screen') this.fit();
        this.showAnswers();
        this.followCursor();
      },
      onClosed: (reason) => { $('session-error').textContent = `screen feed closed: ${reason}`; },
    });
    this.host.textContent = '';
    this.host.append(this.historyEl, this.feed.view.el);
    document.body.classList.add('in-session');
    this.update(summary);
    if (this.isEnded) this.showLastScreen();
    else this.feed.open();
    this.focus();
  }

  close() {
    if (this.feed) this.feed.close();
    this.feed = null;
    this.id = null;
    this.answers = '';
    $('answer-bar').hidden = true;
    document.body.classList.remove('in-session', 'session-ended');
  }

  update(summary) {
    if (!summary) return;
    this.summary = summary;
    if (!this.isEnded && isEnded(summary)) this.ended();
    $('session-name').textContent = `${summary.tmux_name}`;
    const words = stateWords(summary);
    const { mark, word } = labels(summary);
    const state = $('session-state');
    state.className = `state ${words.tone}${mark ? ' attention' : ''}`;
    const since = isEnded(summary) ? summary.ended_at : summary.state_since;
    const when = since ? `${ago(since)}${isEnded(summary) ? ' ago' : ''}` : '';
    state.textContent = [mark && `! ${mark}`, word, when].filter(Boolean).join(' · ');
    state.title = words.evidence;
    const bits = [words.evidence, summary.session_id, summary.current_command, summary.cwd].filter(Boolean);
    if (summary.thought && summary.thought.text) bits.push(`“${summary.thought.text}”`);
    $('session-info').textContent = bits.join(' · ');
    this.showAnswers();
  }

  /** The session ended while open: its screen stays; the keys, queue and actions go. */
  ended(reason) {
    this.isEnded = true;
    this.readOnly = this.forcedReadOnly = true;
    document.body.classList.add('session-ended');
    if (reason) $('session-error').textContent = `session ended (${reason})`;
    if (this.feed) this.feed.close();
    $('answer-bar').hidden = true;
    // The keys and the queue are gone: more room for the screen.
    this.fit();
  }

  /** An ended session has no screen feed: its last screen, as the daemon kept it. */
  async showLastScreen() {
    document.body.classList.add('session-ended');
    const id = this.id;
    try {
      const snap = await api.snapshot(id);
      if (this.id !== id) return;
      this.feed.view.apply({ ...snap, type: 'screen' });
      this.fit();
    } catch (e) {
      if (this.id === id) $('session-error').textContent = `no last screen kept: ${e.message}`;
    }
  }

  focus() {
    this.keyboard.focus({ preventScroll: true });
  }

  /**
   * The font size that fits the screen's columns in the page's width and
   * its rows in the window's height below the bar (up to
   * MAX_FIT_FONT_PX), or the one chosen; never below MIN_FONT_PX, where
   * the screen scrolls instead and the view follows the cursor. Whole
   * pixels, so cells stay exact.
   */
  fit() {
    if (!this.feed) return;
    const view = this.feed.view;
    if (!view.cols) return;
    const room = this.roomForScreen();
    this.host.style.maxHeight = `${room}px`;
    // (The host's 1 px border on each side.)
    const byWidth = Math.floor((this.host.clientWidth - 2) / (view.cols * view.cellRatio()));
    const byHeight = Math.floor((room - 2) / (view.rows * view.lineRatio()));
    const px = this.fontPx || Math.max(MIN_FONT_PX, Math.min(MAX_FIT_FONT_PX, byWidth, byHeight));
    for (const el of [view.el, this.historyEl]) el.style.fontSize = `${px}px`;
    $('font-size').textContent = `${px}px`;
    this.followCursor();
  }

  /**
   * The height the screen's box may take: from its top (the page scrolled
   * to the top) to the window's bottom, less what sits below it (the
   * answer bar above and the soft keys and queue below are measured, so a
   * phone's wrapped rows count).
   */
  roomForScreen() {
    const box = this.host.getBoundingClientRect();
    const section = $('session').getBoundingClientRect();
    const main = this.host.closest('main');
    const padding = main ? parseFloat(getComputedStyle(main).paddingBottom) || 0 : 0;
    const below = section.bottom - box.bottom + padding;
    const top = box.top + window.scrollY;
    return Math.max(MIN_ROOM_PX, Math.floor(window.innerHeight - top - below));
  }

  /** The cursor's cell in the host's scrolled content, in pixels; null before the first screen. */
  cursorBox() {
    const view = this.feed && this.feed.view;
    if (!view || !view.cols || !view.rows || !view.cursor) return null;
    const term = view.el;
    const cell = term.offsetWidth / view.cols;
    const line = term.offsetHeight / view.rows;
    const top = term.offsetTop + view.cursor.row * line;
    const left = term.offsetLeft + view.cursor.col * cell;
    return { top, bottom: top + line, left, right: left + cell, cell };
  }

  cursorInView() {
    const box = this.cursorBox();
    if (!box) return true;
    const h = this.host;
    return box.top >= h.scrollTop - 1 && box.bottom <= h.scrollTop + h.clientHeight + 1
      && box.left >= h.scrollLeft - 1 && box.right <= h.scrollLeft + h.clientWidth + 1;
  }

  /**
   * Scrolls the screen's box (never the page) just enough to show the
   * cursor, when the screen does not fit and the user has not scrolled
   * away from it.
   */
  followCursor() {
    if (!this.following || !this.feed || !this.feed.view.cursor?.visible) return;
    const box = this.cursorBox();
    if (!box) return;
    const h = this.host;
    if (box.bottom > h.scrollTop + h.clientHeight) h.scrollTop = Math.ceil(box.bottom - h.clientHeight);
    else if (box.top < h.scrollTop) h.scrollTop = Math.floor(box.top);
    const context = CURSOR_CONTEXT_CELLS * box.cell;
    if (box.right > h.scrollLeft + h.clientWidth) h.scrollLeft = Math.ceil(box.right + context - h.clientWidth);
    else if (box.left < h.scrollLeft) h.scrollLeft = Math.max(0, Math.floor(box.left - context));
  }

  /** A-/A+ change the font a pixel at a time; 0 goes back to fitting the window. */
  zoom(step) {
    if (!this.feed) return;
    const current = parseFloat(getComputedStyle(this.feed.view.el).fontSize) || 13;
    this.fontPx = step === 0 ? null : Math.max(MIN_FONT_PX, Math.min(MAX_FONT_PX, Math.round(current) + step));
    if (this.fontPx) localStorage.setItem(FONT_KEY, String(this.fontPx));
    else localStorage.removeItem(FONT_KEY);
    this.fit();
    this.focus();
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
    this.scrollToScreen();
  }

  /** Typing brings the live screen back into view from the history, and the view follows the cursor again. */
  scrollToScreen() {
    if (!this.feed) return;
    const term = this.feed.view.el;
    const below = term.offsetTop + term.offsetHeight - this.host.clientHeight;
    if (this.host.scrollTop < below) this.host.scrollTop = below;
    this.following = true;
    this.followCursor();
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

  /** Buttons for what a waiting session's question offers (`[y/N]`, numbered options). */
  showAnswers() {
    const bar = $('answer-bar');
    const s = this.summary;
    const asking = this.feed && !this.isEnded && !this.forcedReadOnly && s
      && (s.state === 'waiting' || (s.attention && s.attention.reason === 'needs_input'));
    const options = asking ? answerOptions(this.feed.view.texts()) : [];
    const key = JSON.stringify(options);
    if (key === this.answers) return;
    this.answers = key;
    const moved = bar.hidden !== !options.length;
    bar.hidden = !options.length;
    const buttons = options.map(({ label, input }) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = label;
      button.addEventListener('click', () => {
        this.type(input.submit ? { text: input.text } : input);
        if (input.submit) this.type({ key: 'Enter' });
        this.focus();
      });
      return button;
    });
    bar.replaceChildren(...buttons);
    // The bar sits above the screen: the room below it changed.
    if (moved) this.fit();
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
    const selected = window.getSelection().toString();
    const text = selected || (this.feed ? this.feed.view.text() : '');
    try {
      await navigator.clipboard.writeText(text);
      $('session-error').textContent = '';
    } catch {
      // No clipboard permission (or not a secure origin): select it to copy by hand.
      const range = document.createRange();
      range.selectNodeContents(this.feed.view.el);
      window.getSelection().removeAllRanges();
      window.getSelection().addRange(range);
    }
  }

  /** The Scrollback button: the history above the screen, scrolled into view; again hides it. */
  async toggleHistory() {
    if (this.history && !this.historyEl.hidden) {
      this.historyEl.hidden = true;
      this.history = null;
      return;
    }
    await this.loadHistory({ keepView: false });
  }

  /**
   * Reads the history (`?lines=2000`) and puts it above the screen. With
   * `keepView` (the wheel) the screen stays where it was and the wheel goes
   * on into the history; else its last lines are scrolled into view.
   */
  async loadHistory({ keepView }) {
    const id = this.id;
    this.history = 'loading';
    let lines;
    let missing = null;
    try {
      ({ lines, missing = null } = await api.scrollback(id, SCROLLBACK_LINES));
    } catch (e) {
      if (this.id !== id) return;
      this.history = null;
      if (e.status === 404 && this.isEnded) {
        lines = null;
      } else {
        this.fail(e);
        return;
      }
    }
    if (this.id !== id) return;
    this.history = lines;
    // An ended session's record may say why it has no history (`missing`).
    this.historyEl.textContent = lines === null ? '(no history kept for this ended session)'
      : lines.length ? lines.join('\n') : `(no scrollback${missing ? `: ${missing}` : ''})`;
    this.historyEl.hidden = false;
    const height = this.historyEl.offsetHeight;
    if (keepView) {
      this.host.scrollTop += height;
      return;
    }
    this.host.scrollIntoView({ block: 'nearest' });
    this.host.scrollTop = Math.max(0, height - this.host.clientHeight / 2);
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
      : `Detach "${name}" from tmuxd? The tmux session keeps running; adopt it again from the list.`;
    if (!(await confirmDialog(text, mode === 'kill' ? 'Kill' : 'Detach'))) return;
    try {
      await api.remove(this.id, mode);
      this.onLeave();
    } catch (e) {
      this.fail(e);
    }
  }
}
