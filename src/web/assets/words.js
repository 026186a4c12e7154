// What a session is doing, in the words a person uses ("working",
// "waiting for you", "at the prompt", "exited 3"), with the daemon's
// evidence as a sentence for hover and the open view; and the answers a
// waiting session's question offers. Pure functions of summaries and
// screen text: no DOM.

/** Evidence per state reason (README, "States and evidence"). */
const EVIDENCE = {
  attaching: 'attaching to its tmux session',
  input: 'input was just typed',
  output_activity: 'its screen is changing',
  cpu: 'it is using the CPU',
  foreground_process: 'a program holds the terminal, asleep on a timer, a child or a socket',
  terminal_read: 'a program is reading the terminal',
  shell_read: 'a script asks for a line (read)',
  screen_question: 'a question is on its screen',
  redraw: 'a live display redraws itself',
  event_wait: 'a program waits on its events (a socket, a timer), screen still',
  shell_prompt: 'a shell is at its prompt',
  quiet: 'no output for a while',
  process_exit: 'its program ended',
  tmux_server_gone: 'the tmux server went away',
  api_kill: 'it was killed through tmuxd',
  api_delete: 'it was detached from tmuxd',
  attach_failed: 'tmuxd could not attach to it',
  startup_missing_tmux: 'it was gone from tmux when tmuxd started',
};

const ATTENTION = {
  bell: 'rang the bell',
  notification: 'sent a notification',
  needs_input: 'asks for input',
  long_silence: 'silent for a long time',
};

/** How an ended session ended: `exited ok`, `exited 3`, `killed (signal 9)`, `killed`... */
export function endWords(s) {
  if (s.exit_status === 0) return 'exited ok';
  if (Number.isInteger(s.exit_status)) return `exited ${s.exit_status}`;
  if (Number.isInteger(s.exit_signal)) return `killed (signal ${s.exit_signal})`;
  switch (s.state_reason) {
    case 'api_kill': return 'killed';
    case 'tmux_server_gone': return 'tmux lost';
    case 'attach_failed': return 'not attached';
    default: return 'ended';
  }
}

/** Whether a summary is of a session that ended. */
export function isEnded(s) {
  return s.state === 'exited' || !!s.ended_at;
}

/**
 * `{word, tone, evidence}`: the state as a person says it, a class for its
 * colour (`working`, `waiting`, `idle`, `ok`, `failed`), and why.
 */
export function stateWords(s) {
  const reason = s.state_reason || '';
  let evidence = EVIDENCE[reason] || (reason ? `screen rule "${reason}" matched` : '');
  if (reason === 'prompt_marker') {
    evidence = s.state === 'working' ? 'the shell marked a command running' : 'the shell marked its prompt';
  }
  if (isEnded(s)) {
    const word = endWords(s);
    return { word, tone: word === 'exited ok' ? 'ok' : 'failed', evidence };
  }
  switch (s.state) {
    case 'working': return { word: 'working', tone: 'working', evidence };
    case 'waiting': return { word: 'waiting for you', tone: 'waiting', evidence };
    case 'idle': return { word: reason === 'quiet' ? 'quiet' : 'at the prompt', tone: 'idle', evidence };
    case 'starting': return { word: 'starting', tone: 'idle', evidence };
    default: return { word: s.state || '', tone: 'idle', evidence };
  }
}

/** `rang the bell`, `asks for input`..., or '' when the flag is down or the session ended. */
export function attentionWords(s) {
  if (!s.attention || isEnded(s)) return '';
  const words = ATTENTION[s.attention.reason] || s.attention.reason;
  // A notification (OSC 9/777/99) carries what the program said.
  return s.attention.text ? `${words}: ${s.attention.text}` : words;
}

/**
 * `{mark, word}`: what a tile or the open session says, once. `mark` is
 * why the session needs you ('' when nobody is needed); `word` the state
 * in words, left out when the mark already says it (a wait with the flag
 * up is "needs you", not also "waiting for you").
 */
export function labels(s) {
  const attention = attentionWords(s);
  const mark = attention ? `needs you: ${attention}` : '';
  const { word } = stateWords(s);
  return { mark, word: mark && s.state === 'waiting' ? '' : word };
}

/** The state, and what needs you, as one line for a title or a notification. */
export function describe(s) {
  const { mark, word } = labels(s);
  return [word, mark, stateWords(s).evidence].filter(Boolean).join(' · ');
}

/** Whether a session ended badly: a non-zero status, or killed by a signal. */
export function failedExit(s) {
  if (!isEnded(s)) return false;
  if (Number.isInteger(s.exit_status)) return s.exit_status !== 0;
  return Number.isInteger(s.exit_signal);
}

/** Index of the last row with something on it, or -1. */
export function lastNonEmptyRow(texts) {
  for (let i = texts.length - 1; i >= 0; i--) if (texts[i].trim()) return i;
  return -1;
}

const YES_NO = /[[(]\s*(y(?:es)?)\s*\/\s*(n(?:o)?)\s*[\])]/i;
const OPTION = /^\s*(?:[>❯›▸→*]\s*)?(\d{1,2})[.)]\s+(\S.*?)\s*$/;
const MENU_MARKER = /^\s*[>❯›▸→]\s*\d/;

/**
 * The answers the question at the bottom of a screen offers, as buttons:
 * `[y/N]`, `(yes/no)`, or a numbered list (1. ..., 2. ...). Each is
 * `{label, input}`, `input` being what the input endpoint takes. A list with
 * a selection marker (`❯ 1.`) is a menu that takes the digit alone; a plain
 * numbered question takes the number and Enter.
 */
export function answerOptions(texts) {
  const last = lastNonEmptyRow(texts);
  if (last < 0) return [];
  // A yes/no question is asked on the last line (where the answer is typed).
  const m = YES_NO.exec(texts[last]);
  if (m) {
    return [m[1], m[2]].map((word) => ({ label: word.toLowerCase(), input: { text: word.toLowerCase(), submit: true } }));
  }
  const tail = texts.slice(Math.max(0, last - 11), last + 1);
  const options = [];
  let menu = false;
  for (const line of tail) {
    const m = OPTION.exec(line);
    if (!m) continue;
    const n = Number(m[1]);
    if (n === 1) {
      options.length = 0;
      menu = false;
    }
    if (n !== options.length + 1) continue;
    if (MENU_MARKER.test(line)) menu = true;
    options.push({ n, text: m[2] });
  }
  if (options.length < 2) return [];
  return options.map(({ n, text }) => ({
    label: `${n}. ${text}`,
    input: menu ? { text: String(n) } : { text: String(n), submit: true },
  }));
}
