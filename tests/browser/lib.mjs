// Helpers for the dashboard's browser tests: Debian's chromium driven by
// playwright-core, the daemon's API over HTTP, polling with a deadline, and
// reading the cells a page renders (text, column, colours, attributes).

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const BASE = required('TMUXD_URL');
export const SHELL = required('TMUXD_TEST_SHELL');
export const TOKEN = process.env.TMUXD_TEST_TOKEN || '';
const TMUX_SOCKET = process.env.TMUXD_TEST_TMUX_SOCKET;
/** As long as the Rust harness waits for anything (common::PATIENCE). */
export const PATIENCE_MS = 60_000;

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (tests/dashboard.rs sets it)`);
  return value;
}

export class Failure extends Error {}

export function check(condition, message) {
  if (!condition) throw new Failure(message);
}

export function log(...args) {
  console.log(`[${new Date().toISOString().slice(11, 23)}]`, ...args);
}

/** Launches chromium with a fresh profile; `extraArgs` as needed. */
export async function launch(extraArgs = []) {
  const executablePath = process.env.TMUXD_CHROMIUM || '/usr/bin/chromium';
  check(fs.existsSync(executablePath), `no chromium at ${executablePath} (scripts/test installs it)`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tmuxd-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ...extraArgs,
    ],
  });
  context.setDefaultTimeout(PATIENCE_MS);
  const cleanup = async () => {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return { context, cleanup };
}

/** Collects what the page logs, so a failure shows it. */
export function watchPage(page, name) {
  const lines = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') lines.push(`${name} console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => lines.push(`${name} page error: ${e.message}`));
  return lines;
}

/** The API, with the test's token if any. */
export async function api(method, urlPath, body, token = TOKEN) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(BASE + urlPath, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let value = text;
  try { value = JSON.parse(text); } catch { /* not JSON */ }
  return { status: response.status, body: value };
}

/**
 * Opens the dashboard logged in as a user is: through a one-time link, as
 * `tmuxd open` prints it (POST /v1/login/code with the test's token). The
 * page trades the code for a credential of its own and drops it from the URL.
 */
export async function openDashboard(page) {
  const { status, body } = await api('POST', '/v1/login/code');
  check(status === 200, `a login code: ${status} ${JSON.stringify(body)}`);
  check(body.url.startsWith(`${BASE}/#login=`), `the link names this daemon: ${body.url}`);
  await page.goto(body.url);
  await page.waitForFunction(() => location.hash === '#/' && !!sessionStorage.getItem('tmuxd.token'));
}

export async function createSession(name, command = SHELL) {
  const { status, body } = await api('POST', '/v1/sessions', { name, command });
  check(status === 201, `create ${name}: ${status} ${JSON.stringify(body)}`);
  return body.session.session_id;
}

export async function input(id, body) {
  const { status, body: answer } = await api('POST', `/v1/sessions/${id}/input`, body);
  check(status === 200, `input to ${id}: ${status} ${JSON.stringify(answer)}`);
}

/**
 * Polls `probe` until it returns a truthy value; fails after PATIENCE_MS.
 * A probe that throws (an element not there yet) counts as not yet.
 */
export async function waitFor(what, probe, timeoutMs = PATIENCE_MS) {
  const deadline = Date.now() + timeoutMs;
  let error = null;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
      error = null;
    } catch (e) {
      if (e instanceof Failure) throw e;
      error = e;
    }
    if (Date.now() > deadline) throw new Failure(`timed out waiting for ${what}${error ? ` (last error: ${error.message})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Polls `probe` until `test` holds for what it returns, and returns that;
 * fails after `timeoutMs` with the last value seen. Every check that
 * follows an action goes through this or `waitFor`: the page reacts in its
 * own time (a hashchange, an event, a screen frame), later under load.
 */
export async function waitUntil(what, probe, test = Boolean, timeoutMs = PATIENCE_MS) {
  let last;
  try {
    const { value } = await waitFor(what, async () => {
      last = await probe();
      return test(last) ? { value: last } : null;
    }, timeoutMs);
    return value;
  } catch (e) {
    if (e instanceof Failure) throw new Failure(`${e.message}; last seen: ${JSON.stringify(last)}`);
    throw e;
  }
}

/** Types into a session through the test's private tmux server (not through tmuxd). */
export function tmuxSendKeys(name, keys) {
  check(TMUX_SOCKET, 'TMUXD_TEST_TMUX_SOCKET is set');
  execFileSync('tmux', ['-L', TMUX_SOCKET, 'send-keys', '-t', `=${name}:`, ...keys], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME || '/tmp' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Waits until some rendered row under `selector` passes `test`; a failure shows the rows. */
export async function waitForRow(page, selector, what, test) {
  let rows = [];
  try {
    return await waitFor(what, async () => {
      rows = await rowTexts(page, selector);
      return rows.some(test);
    });
  } catch (e) {
    throw new Failure(`${e.message}; the page shows:\n${rows.join('\n')}`);
  }
}

/** The text of each rendered row under `selector` (a `.term`). */
export function rowTexts(page, selector) {
  return page.$$eval(`${selector} .row`, (rows) => rows.map((r) => r.textContent.trimEnd()));
}

/**
 * Every cell the page shows in the `.term` under `selector`: row, column
 * (from where the browser laid it out), text and the styles it was drawn
 * with, plus where the cursor box is.
 */
export function renderedCells(page, selector) {
  return page.$eval(selector, (host) => {
    const term = host.matches('.term') ? host : host.querySelector('.term');
    const cols = Number(term.dataset.cols);
    const termStyle = getComputedStyle(term);
    const up = (node, pick) => {
      for (let e = node; e && e !== term; e = e.parentElement) {
        const v = pick(getComputedStyle(e));
        if (v) return v;
      }
      return null;
    };
    const bgOf = (node) => up(node, (s) => (s.backgroundColor !== 'rgba(0, 0, 0, 0)' ? s.backgroundColor : null))
      || termStyle.backgroundColor;
    const cells = [];
    const rows = [...term.querySelectorAll('.row')];
    rows.forEach((row, r) => {
      const rowRect = row.getBoundingClientRect();
      const cell = rowRect.width / cols;
      const walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const parent = node.parentElement;
        const style = getComputedStyle(parent);
        const attrs = {
          fg: style.color,
          bg: bgOf(parent),
          bold: Number(style.fontWeight) >= 600,
          italic: style.fontStyle === 'italic',
          underline: !!up(parent, (s) => (s.textDecorationLine.includes('underline') ? 'yes' : null)),
        };
        const boxed = parent.classList.contains('c1') || parent.classList.contains('c2');
        if (boxed) {
          const left = parent.getBoundingClientRect().left;
          cells.push({ row: r, col: Math.round((left - rowRect.left) / cell), text: node.data, ...attrs });
          continue;
        }
        const range = document.createRange();
        let offset = 0;
        for (const ch of node.data) {
          range.setStart(node, offset);
          range.setEnd(node, offset + ch.length);
          const left = range.getBoundingClientRect().left;
          cells.push({ row: r, col: Math.round((left - rowRect.left) / cell), text: ch, ...attrs });
          offset += ch.length;
        }
      }
    });
    const cursorEl = term.querySelector('.cursor');
    const first = rows[0].getBoundingClientRect();
    const cursorRect = cursorEl.getBoundingClientRect();
    const cursor = {
      visible: getComputedStyle(cursorEl).display !== 'none',
      row: Math.round((cursorRect.top - first.top) / first.height),
      col: Math.round((cursorRect.left - first.left) / (first.width / cols)),
    };
    return { cols, rows: rows.length, cells, cursor, fg: termStyle.color, bg: termStyle.backgroundColor };
  });
}

// The test's own reading of the daemon's SGR lines, written apart from the
// page's renderer so the two can disagree.
const XTERM16 = [
  [0, 0, 0], [205, 0, 0], [0, 205, 0], [205, 205, 0], [0, 0, 238], [205, 0, 205], [0, 205, 205], [229, 229, 229],
  [127, 127, 127], [255, 0, 0], [0, 255, 0], [255, 255, 0], [92, 92, 255], [255, 0, 255], [0, 255, 255], [255, 255, 255],
];

function xterm(n) {
  if (n < 16) return XTERM16[n];
  if (n >= 232) return Array(3).fill(8 + 10 * (n - 232));
  const level = (v) => (v === 0 ? 0 : 55 + 40 * v);
  const i = n - 16;
  return [level(Math.floor(i / 36)), level(Math.floor(i / 6) % 6), level(i % 6)];
}

const rgb = ([r, g, b]) => `rgb(${r}, ${g}, ${b})`;

/** Display width of the characters the tests print (CJK, emoji: 2; combining: 0). */
function width(cp) {
  if ((cp >= 0x300 && cp <= 0x36f)) return 0;
  if ((cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) || (cp >= 0xac00 && cp <= 0xd7a3)
    || (cp >= 0xff00 && cp <= 0xff60) || (cp >= 0x1f300 && cp <= 0x1faff) || cp === 0x2705) return 2;
  return 1;
}

/** The cells an `?format=ansi` snapshot describes, styled as the page should draw them. */
export function expectedCells(lines, defaults) {
  const cells = [];
  lines.forEach((line, row) => {
    let pen = {};
    let col = 0;
    const parts = line.split(/(\x1b\[[0-9;]*m)/);
    for (const part of parts) {
      const sgr = part.match(/^\x1b\[([0-9;]*)m$/);
      if (sgr) {
        pen = applySgr(pen, sgr[1]);
        continue;
      }
      for (const ch of part) {
        const w = width(ch.codePointAt(0));
        if (w === 0 && cells.length && cells[cells.length - 1].row === row) {
          cells[cells.length - 1].text += ch;
          continue;
        }
        let fg = pen.fg ? rgb(pen.fg) : defaults.fg;
        let bg = pen.bg ? rgb(pen.bg) : defaults.bg;
        if (pen.inverse) [fg, bg] = [bg, fg];
        cells.push({ row, col, text: ch, fg, bg, bold: !!pen.bold, italic: !!pen.italic, underline: !!pen.underline });
        col += w;
      }
    }
  });
  return cells;
}

function applySgr(pen, params) {
  const p = { ...pen };
  const codes = params === '' ? [0] : params.split(';').map(Number);
  for (let i = 0; i < codes.length; i++) {
    const c = codes[i];
    if (c === 0) for (const k of Object.keys(p)) delete p[k];
    else if (c === 1) p.bold = true;
    else if (c === 3) p.italic = true;
    else if (c === 4) p.underline = true;
    else if (c === 7) p.inverse = true;
    else if (c >= 30 && c <= 37) p.fg = xterm(c - 30);
    else if (c >= 40 && c <= 47) p.bg = xterm(c - 40);
    else if (c >= 90 && c <= 97) p.fg = xterm(c - 82);
    else if (c >= 100 && c <= 107) p.bg = xterm(c - 92);
    else if (c === 38 || c === 48) {
      const color = codes[i + 1] === 5 ? xterm(codes[i + 2]) : codes.slice(i + 2, i + 5);
      i += codes[i + 1] === 5 ? 2 : 4;
      if (c === 38) p.fg = color; else p.bg = color;
    }
  }
  return p;
}

/** The first difference between two cell lists, or null. */
export function firstDifference(want, got) {
  const key = (c) => JSON.stringify([c.row, c.col, c.text, c.fg, c.bg, c.bold, c.italic, c.underline]);
  for (let i = 0; i < Math.max(want.length, got.length); i++) {
    if (!want[i] || !got[i] || key(want[i]) !== key(got[i])) {
      return `cell ${i}: daemon ${want[i] ? key(want[i]) : 'none'} vs page ${got[i] ? key(got[i]) : 'none'}`;
    }
  }
  return null;
}

/** CPU seconds (user + system) a process has used, from /proc/PID/stat. */
export function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the line, in clock ticks (USER_HZ = 100 on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
