// Browser keys to what the input endpoint takes: printable characters as
// `text`, everything else as tmux key names (`Enter`, `C-c`, `M-x`, `F5`,
// `C-Left`...). Input is sent in order, one request at a time; keys pressed
// while a request is in flight are merged into the next one.

const NAMED = {
  Enter: 'Enter', Backspace: 'BSpace', Tab: 'Tab', Escape: 'Escape', Delete: 'DC', Insert: 'IC',
  ArrowUp: 'Up', ArrowDown: 'Down', ArrowLeft: 'Left', ArrowRight: 'Right',
  Home: 'Home', End: 'End', PageUp: 'PPage', PageDown: 'NPage',
};

/**
 * What a keydown means: `{text}`, `{key}` (a tmux key name), or null for
 * keys the browser keeps (Meta/Cmd shortcuts, Ctrl+Shift+C/V for copy and
 * paste, modifiers alone, IME composition).
 */
export function translateKey(e, sticky = {}) {
  if (e.isComposing || e.key === 'Process' || e.key === 'Unidentified' || e.key === 'Dead') return null;
  if (e.metaKey) return null;
  const ctrl = e.ctrlKey || !!sticky.ctrl;
  const alt = e.altKey || !!sticky.alt;
  if (['Control', 'Shift', 'Alt', 'Meta', 'CapsLock', 'NumLock', 'OS', 'AltGraph'].includes(e.key)) return null;
  if (e.ctrlKey && e.shiftKey && ['C', 'V', 'c', 'v'].includes(e.key)) return null;
  // AltGr (reported as Ctrl+Alt on some systems) types a character.
  if (e.getModifierState && e.getModifierState('AltGraph') && [...e.key].length === 1) return { text: e.key };
  let name = NAMED[e.key];
  if (!name && /^F([1-9]|1[0-9]|2[0-4])$/.test(e.key)) name = e.key;
  if (name) {
    if (name === 'Tab' && e.shiftKey && !ctrl && !alt) return { key: 'BTab' };
    const shift = e.shiftKey && name !== 'Tab' && name !== 'Enter' && name !== 'BSpace';
    return { key: prefix(ctrl, alt, shift) + name };
  }
  if ([...e.key].length !== 1) return null;
  if (!ctrl && !alt) return { text: e.key };
  if (e.key === ' ') return { key: prefix(ctrl, alt, false) + 'Space' };
  // Ctrl+letter is the same key with or without Shift in a terminal.
  const ch = ctrl && /^[A-Z]$/.test(e.key) ? e.key.toLowerCase() : e.key;
  return { key: prefix(ctrl, alt, false) + ch };
}

function prefix(ctrl, alt, shift) {
  return (ctrl ? 'C-' : '') + (alt ? 'M-' : '') + (shift ? 'S-' : '');
}

/** Pasted text as typed: line breaks become Enter (CR), as terminals paste. */
export function pasteText(text) {
  return text.replace(/\r\n|\n/g, '\r');
}

/** An in-order input queue for one session. `send(body)` returns a promise. */
export class InputQueue {
  constructor(send, onError) {
    this.send = send;
    this.onError = onError;
    this.pending = [];
    this.busy = false;
  }

  push(item) {
    const last = this.pending[this.pending.length - 1];
    if (item.text !== undefined) {
      if (last && !last.keys.length) last.text += item.text;
      else this.pending.push({ text: item.text, keys: [] });
    } else if (item.key !== undefined) {
      if (last) last.keys.push(item.key);
      else this.pending.push({ text: '', keys: [item.key] });
    }
    this.pump();
  }

  async pump() {
    if (this.busy) return;
    this.busy = true;
    while (this.pending.length) {
      const next = this.pending.shift();
      const body = {};
      if (next.text) body.text = next.text;
      if (next.keys.length) body.keys = next.keys;
      try {
        await this.send(body);
      } catch (e) {
        this.pending = [];
        this.onError(e);
      }
    }
    this.busy = false;
  }
}
