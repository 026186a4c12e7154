// Terminal rows as DOM. The daemon sends each row as text with SGR
// sequences (`ESC[0;1;31m`...; blanks are spaces, wide characters take one
// character but two columns). A row becomes one div; ASCII runs stay plain
// text, every other character sits in a box one or two cells wide, so
// columns line up whatever font the glyph falls back to.

const BASE16 = [
  '#000000', '#cd0000', '#00cd00', '#cdcd00', '#0000ee', '#cd00cd', '#00cdcd', '#e5e5e5',
  '#7f7f7f', '#ff0000', '#00ff00', '#ffff00', '#5c5cff', '#ff00ff', '#00ffff', '#ffffff',
];
const CUBE = [0, 95, 135, 175, 215, 255];

/** The xterm colour for palette index `n` (0-255), as `#rrggbb`. */
export function paletteColor(n) {
  if (n < 16) return BASE16[n];
  if (n < 232) {
    const i = n - 16;
    return hex(CUBE[Math.floor(i / 36)], CUBE[Math.floor(i / 6) % 6], CUBE[i % 6]);
  }
  const grey = 8 + (n - 232) * 10;
  return hex(grey, grey, grey);
}

function hex(r, g, b) {
  return '#' + [r, g, b].map((v) => v.toString(16).padStart(2, '0')).join('');
}

const DEFAULT_PEN = Object.freeze({
  fg: null, bg: null, bold: false, dim: false, italic: false, underline: false, inverse: false,
  strike: false, hidden: false, overline: false, blink: false,
  // How the underline is drawn ('single', 'double', 'curly', 'dotted',
  // 'dashed') and its colour (null: the text's).
  ulStyle: null, ulColor: null,
});

const UNDERLINE_STYLES = [null, 'single', 'double', 'curly', 'dotted', 'dashed'];

function setUnderline(p, style) {
  p.underline = style !== null;
  p.ulStyle = style;
}

/** A colour from `38;5;N` / `38;2;R;G;B` (semicolons) or their colon forms
 * (`38:5:N`, `38:2::R:G:B`, `38:2:R:G:B`); returns [colour, parameters used]. */
function extendedColor(values) {
  const n = (v) => (v === undefined || v === '' ? 0 : Number(v));
  if (n(values[0]) === 5) return [paletteColor(n(values[1]) & 255), 2];
  if (n(values[0]) === 2) {
    const rgb = values.length >= 5 ? values.slice(2, 5) : values.slice(1, 4);
    return [hex(n(rgb[0]) & 255, n(rgb[1]) & 255, n(rgb[2]) & 255), 4];
  }
  return [null, 0];
}

/** Applies SGR parameters to a pen; returns the new pen. */
export function applySgr(pen, params) {
  const p = { ...pen };
  const parts = params === '' ? ['0'] : params.split(';');
  const num = (s) => (s === undefined || s === '' ? 0 : Number(s));
  for (let i = 0; i < parts.length; i++) {
    const sub = parts[i].split(':');
    const c = num(sub[0]);
    if (sub.length > 1) {
      // Colon sub-parameters: an underline style, or a colour in one part.
      if (c === 4) {
        const style = num(sub[1]);
        setUnderline(p, style < UNDERLINE_STYLES.length ? UNDERLINE_STYLES[style] : 'single');
      }
      else if (c === 38 || c === 48 || c === 58) {
        const [color] = extendedColor(sub.slice(1));
        if (c === 38) p.fg = color; else if (c === 48) p.bg = color; else p.ulColor = color;
      }
      continue;
    }
    if (c === 0) Object.assign(p, DEFAULT_PEN);
    else if (c === 1) p.bold = true;
    else if (c === 2) p.dim = true;
    else if (c === 3) p.italic = true;
    else if (c === 4) setUnderline(p, 'single');
    else if (c === 21) setUnderline(p, 'double');
    else if (c === 5 || c === 6) p.blink = true;
    else if (c === 8) p.hidden = true;
    else if (c === 9) p.strike = true;
    else if (c === 7) p.inverse = true;
    else if (c === 22) p.bold = p.dim = false;
    else if (c === 23) p.italic = false;
    else if (c === 24) setUnderline(p, null);
    else if (c === 25) p.blink = false;
    else if (c === 28) p.hidden = false;
    else if (c === 29) p.strike = false;
    else if (c === 27) p.inverse = false;
    else if (c === 53) p.overline = true;
    else if (c === 55) p.overline = false;
    else if (c >= 30 && c <= 37) p.fg = paletteColor(c - 30);
    else if (c >= 40 && c <= 47) p.bg = paletteColor(c - 40);
    else if (c >= 90 && c <= 97) p.fg = paletteColor(c - 90 + 8);
    else if (c >= 100 && c <= 107) p.bg = paletteColor(c - 100 + 8);
    else if (c === 39) p.fg = null;
    else if (c === 49) p.bg = null;
    else if (c === 59) p.ulColor = null;
    else if (c === 38 || c === 48 || c === 58) {
      const [color, used] = extendedColor(parts.slice(i + 1));
      i += used;
      if (c === 38) p.fg = color; else if (c === 48) p.bg = color; else p.ulColor = color;
    }
  }
  return p;
}

/** A row as runs of `{pen, text}`. */
export function parseLine(line) {
  const runs = [];
  let pen = DEFAULT_PEN;
  let start = 0;
  let i = 0;
  while (i < line.length) {
    if (line.charCodeAt(i) === 0x1b && line[i + 1] === '[') {
      let end = i + 2;
      while (end < line.length && !/[@-~]/.test(line[end])) end++;
      if (i > start) runs.push({ pen, text: line.slice(start, i) });
      if (line[end] === 'm') pen = applySgr(pen, line.slice(i + 2, end));
      i = start = end + 1;
    } else {
      i++;
    }
  }
  if (start < line.length) runs.push({ pen, text: line.slice(start) });
  return runs;
}

// East Asian Wide and Fullwidth ranges, and emoji shown wide, as the
// daemon's parser (unicode-width) counts them.
const WIDE = [
  [0x1100, 0x115f], [0x231a, 0x231b], [0x2329, 0x232a], [0x23e9, 0x23ec], [0x23f0, 0x23f0],
  [0x23f3, 0x23f3], [0x25fd, 0x25fe], [0x2614, 0x2615], [0x2648, 0x2653], [0x267f, 0x267f],
  [0x2693, 0x2693], [0x26a1, 0x26a1], [0x26aa, 0x26ab], [0x26bd, 0x26be], [0x26c4, 0x26c5],
  [0x26ce, 0x26ce], [0x26d4, 0x26d4], [0x26ea, 0x26ea], [0x26f2, 0x26f3], [0x26f5, 0x26f5],
  [0x26fa, 0x26fa], [0x26fd, 0x26fd], [0x2705, 0x2705], [0x270a, 0x270b], [0x2728, 0x2728],
  [0x274c, 0x274c], [0x274e, 0x274e], [0x2753, 0x2755], [0x2757, 0x2757], [0x2795, 0x2797],
  [0x27b0, 0x27b0], [0x27bf, 0x27bf], [0x2b1b, 0x2b1c], [0x2b50, 0x2b50], [0x2b55, 0x2b55],
  [0x2e80, 0x303e], [0x3041, 0x33ff], [0x3400, 0x4dbf], [0x4e00, 0x9fff], [0xa000, 0xa4cf],
  [0xa960, 0xa97f], [0xac00, 0xd7a3], [0xf900, 0xfaff], [0xfe10, 0xfe19], [0xfe30, 0xfe6f],
  [0xff00, 0xff60], [0xffe0, 0xffe6], [0x16fe0, 0x16fe4], [0x17000, 0x18cff], [0x1b000, 0x1b2ff],
  [0x1f004, 0x1f004], [0x1f0cf, 0x1f0cf], [0x1f18e, 0x1f18e], [0x1f191, 0x1f19a],
  [0x1f200, 0x1f251], [0x1f300, 0x1f320], [0x1f32d, 0x1f335], [0x1f337, 0x1f37c],
  [0x1f37e, 0x1f393], [0x1f3a0, 0x1f3ca], [0x1f3cf, 0x1f3d3], [0x1f3e0, 0x1f3f0],
  [0x1f3f4, 0x1f3f4], [0x1f3f8, 0x1f43e], [0x1f440, 0x1f440], [0x1f442, 0x1f4fc],
  [0x1f4ff, 0x1f53d], [0x1f54b, 0x1f54e], [0x1f550, 0x1f567], [0x1f57a, 0x1f57a],
  [0x1f595, 0x1f596], [0x1f5a4, 0x1f5a4], [0x1f5fb, 0x1f64f], [0x1f680, 0x1f6c5],
  [0x1f6cc, 0x1f6cc], [0x1f6d0, 0x1f6d2], [0x1f6d5, 0x1f6d7], [0x1f6dc, 0x1f6df],
  [0x1f6eb, 0x1f6ec], [0x1f6f4, 0x1f6fc], [0x1f7e0, 0x1f7eb], [0x1f7f0, 0x1f7f0],
  [0x1f90c, 0x1f93a], [0x1f93c, 0x1f945], [0x1f947, 0x1f9ff], [0x1fa70, 0x1faff],
  [0x20000, 0x2fffd], [0x30000, 0x3fffd],
];

/** Columns a code point takes: 0 (combining), 1 or 2. */
export function cellWidth(cp) {
  if (cp < 0x300) return 1;
  if ((cp >= 0x300 && cp <= 0x36f) || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x20d0 && cp <= 0x20ff)
    || (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef)) return 0;
  let lo = 0;
  let hi = WIDE.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < WIDE[mid][0]) hi = mid - 1;
    else if (cp > WIDE[mid][1]) lo = mid + 1;
    else return 2;
  }
  return 1;
}

/** Puts `text` into `parent`: ASCII as text nodes, anything else boxed. */
function appendCells(parent, text) {
  let ascii = '';
  let box = null;
  for (const ch of text) {
    const cp = ch.codePointAt(0);
    if (cp < 0x7f) {
      box = null;
      ascii += ch;
      continue;
    }
    const width = cellWidth(cp);
    if (width === 0 && box) {
      box.textContent += ch;
      continue;
    }
    // A combining mark joins the cell before it, which leaves the ASCII run.
    const base = width === 0 && ascii ? ascii.slice(-1) : '';
    if (base) ascii = ascii.slice(0, -1);
    if (ascii) parent.append(ascii);
    ascii = '';
    box = document.createElement('span');
    box.className = width === 2 ? 'c2' : 'c1';
    box.textContent = base + ch;
    parent.append(box);
  }
  if (ascii) parent.append(ascii);
}

function isDefault(pen) {
  return !pen.fg && !pen.bg && !pen.bold && !pen.dim && !pen.italic && !pen.underline && !pen.inverse
    && !pen.strike && !pen.hidden && !pen.overline && !pen.blink;
}

/** Fills a row element from an SGR line. */
export function renderRow(rowEl, line) {
  rowEl.textContent = '';
  for (const { pen, text } of parseLine(line)) {
    if (isDefault(pen)) {
      appendCells(rowEl, text);
      continue;
    }
    const span = document.createElement('span');
    const classes = [];
    if (pen.bold) classes.push('bo');
    if (pen.dim) classes.push('dm');
    if (pen.italic) classes.push('it');
    if (pen.underline) classes.push('ul');
    if (pen.ulStyle && pen.ulStyle !== 'single') classes.push(`ul-${pen.ulStyle}`);
    if (pen.strike) classes.push('st');
    if (pen.overline) classes.push('ol');
    if (pen.blink) classes.push('bl');
    if (pen.hidden) classes.push('hd');
    if (classes.length) span.className = classes.join(' ');
    let fg = pen.fg;
    let bg = pen.bg;
    if (pen.inverse) {
      fg = pen.bg || 'var(--term-bg)';
      bg = pen.fg || 'var(--term-fg)';
    }
    // Set through the CSSOM, which the page's CSP allows (style attributes it does not).
    if (fg) span.style.color = fg;
    if (bg) span.style.backgroundColor = bg;
    if (pen.ulColor) span.style.textDecorationColor = pen.ulColor;
    appendCells(span, text);
    rowEl.append(span);
  }
}

/** Plain text of an SGR line. */
export function stripSgr(line) {
  return parseLine(line).map((r) => r.text).join('');
}

/**
 * A screen: rows, cursor, size. `apply` takes the screen WebSocket's frames
 * (`{"type":"screen",cols,rows,cursor,lines}` and `{"type":"rows",rows:[{row,line}],cursor}`).
 */
export class ScreenView {
  constructor() {
    this.el = document.createElement('div');
    this.el.className = 'term';
    this.cursorEl = document.createElement('div');
    this.cursorEl.className = 'cursor';
    this.rowEls = [];
    this.lines = [];
    this.cols = 0;
    this.rows = 0;
    this.title = '';
    /** The last cursor the daemon sent (`{row, col, visible}`); null before the first. */
    this.cursor = null;
    /** The screen as lowercase plain text, for the wall's filter; null when stale. */
    this.searchable = null;
  }

  apply(frame) {
    if (frame.type === 'screen') {
      this.resize(frame.cols, frame.rows);
      frame.lines.forEach((line, i) => this.setLine(i, line));
    } else if (frame.type === 'rows') {
      for (const { row, line } of frame.rows) this.setLine(row, line);
    } else {
      return;
    }
    this.title = frame.title || '';
    this.setCursor(frame.cursor);
  }

  resize(cols, rows) {
    if (cols === this.cols && rows === this.rows) return;
    this.cols = cols;
    this.rows = rows;
    this.searchable = null;
    this.el.textContent = '';
    this.rowEls = [];
    this.lines = [];
    for (let i = 0; i < rows; i++) {
      const row = document.createElement('div');
      row.className = 'row';
      this.rowEls.push(row);
      this.lines.push('');
      this.el.append(row);
    }
    this.el.append(this.cursorEl);
    this.el.style.width = `${cols}ch`;
    this.el.dataset.cols = String(cols);
    this.el.dispatchEvent(new Event('resized'));
  }

  setLine(i, line) {
    if (i >= this.rows || this.lines[i] === line) return;
    this.lines[i] = line;
    this.searchable = null;
    renderRow(this.rowEls[i], line);
  }

  setCursor(cursor) {
    if (!cursor) return;
    this.cursor = cursor;
    this.cursorEl.classList.toggle('hidden-cursor', !cursor.visible);
    this.cursorEl.style.left = `${cursor.col}ch`;
    this.cursorEl.style.top = `calc(${cursor.row} * var(--lh))`;
  }

  /** Each row as plain text, trailing blanks trimmed. */
  texts() {
    return this.lines.map((l) => stripSgr(l).trimEnd());
  }

  /** The screen as plain text, trailing blank rows dropped. */
  text() {
    const lines = this.texts();
    while (lines.length && !lines[lines.length - 1]) lines.pop();
    return lines.join('\n');
  }

  /** The screen's text in lower case, rows joined by newlines (kept until a row changes). */
  searchText() {
    if (this.searchable === null) this.searchable = this.texts().join('\n').toLowerCase();
    return this.searchable;
  }

  /** Width of one cell per pixel of font size, as laid out now (about 0.6 for a monospace font). */
  cellRatio() {
    const px = parseFloat(getComputedStyle(this.el).fontSize);
    return this.cols && px ? this.el.offsetWidth / this.cols / px : 0.6;
  }

  /** Height of one row per pixel of font size, as laid out now (the stylesheet's 1.2). */
  lineRatio() {
    const px = parseFloat(getComputedStyle(this.el).fontSize);
    return this.rows && px && this.el.offsetHeight ? this.el.offsetHeight / this.rows / px : 1.2;
  }

  /**
   * Scales the screen to fit `width` x `height`, within `min`..`max`
   * (below `min` the host scrolls instead); returns the scale.
   */
  fit(width, height, max = 1, min = 0) {
    const naturalWidth = this.el.offsetWidth;
    const naturalHeight = this.el.offsetHeight;
    if (!naturalWidth || !naturalHeight) return 1;
    const fits = Math.min(max, width / naturalWidth, height ? height / naturalHeight : Infinity);
    const scale = Math.max(min, fits);
    this.el.style.transform = scale === 1 ? '' : `scale(${scale})`;
    return scale;
  }
}
