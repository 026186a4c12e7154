// The page's pure decisions, table-tested in node (no browser): a
// summary's state in words, the answers a question on the screen offers
// (src/web/assets/words.js), and the pen SGR parameters give (term.js).

import { parseLine } from '../../src/web/assets/term.js';
import { answerOptions, describe, endWords, failedExit, labels, stateWords } from '../../src/web/assets/words.js';
import { check, log } from './lib.mjs';

const STATES = [
  [{ state: 'working', state_reason: 'output_activity' }, 'working · its screen is changing'],
  [{ state: 'working', state_reason: 'prompt_marker' }, 'working · the shell marked a command running'],
  [{ state: 'waiting', state_reason: 'terminal_read', attention: { reason: 'needs_input' } },
    'needs you: asks for input · a program is reading the terminal'],
  [{ state: 'idle', state_reason: 'shell_prompt', attention: { reason: 'bell' } },
    'at the prompt · needs you: rang the bell · a shell is at its prompt'],
  [{ state: 'idle', state_reason: 'quiet' }, 'quiet · no output for a while'],
  [{ state: 'waiting', state_reason: 'shell_read', attention: { reason: 'notification', text: 'build done' } },
    'needs you: sent a notification: build done · a script asks for a line (read)'],
  [{ state: 'working', state_reason: 'spinner' }, 'working · screen rule "spinner" matched'],
  // The flag of an ended session needs nobody.
  [{ state: 'exited', state_reason: 'process_exit', exit_status: 0, attention: { reason: 'bell' } }, 'exited ok · its program ended'],
  [{ state: 'exited', state_reason: 'process_exit', exit_status: 3 }, 'exited 3 · its program ended'],
  [{ state: 'exited', state_reason: 'process_exit', exit_status: null, exit_signal: 9 }, 'killed (signal 9) · its program ended'],
  [{ state: 'exited', state_reason: 'api_kill', exit_status: null }, 'killed · it was killed through tmuxd'],
  [{ state: 'exited', state_reason: 'tmux_server_gone' }, 'tmux lost · the tmux server went away'],
];

// What a tile says, once (issue 32, item 2): the mark, and the state word
// unless the mark already says it.
const LABELS = [
  [{ state: 'waiting', state_reason: 'terminal_read', attention: { reason: 'needs_input' } },
    { mark: 'needs you: asks for input', word: '' }],
  [{ state: 'waiting', state_reason: 'terminal_read', attention: null }, { mark: '', word: 'waiting for you' }],
  [{ state: 'idle', state_reason: 'shell_prompt', attention: { reason: 'bell' } },
    { mark: 'needs you: rang the bell', word: 'at the prompt' }],
  [{ state: 'working', state_reason: 'cpu', attention: { reason: 'long_silence' } },
    { mark: 'needs you: silent for a long time', word: 'working' }],
  [{ state: 'exited', state_reason: 'process_exit', exit_status: 3, attention: { reason: 'needs_input' } },
    { mark: '', word: 'exited 3' }],
];

// Which ends the dashboard notifies of.
const FAILED = [
  [{ state: 'exited', state_reason: 'process_exit', exit_status: 3 }, true],
  [{ state: 'exited', state_reason: 'process_exit', exit_status: null, exit_signal: 9 }, true],
  [{ state: 'exited', state_reason: 'process_exit', exit_status: 0 }, false],
  [{ state: 'exited', state_reason: 'api_kill', exit_status: null }, false],
  [{ state: 'exited', state_reason: 'tmux_server_gone' }, false],
  [{ state: 'waiting', state_reason: 'terminal_read', exit_status: 3 }, false],
];

const ANSWERS = [
  [['Proceed? [y/N] '], ['y', 'n'], [{ text: 'y', submit: true }, { text: 'n', submit: true }]],
  [['Overwrite (yes/no)? ', '', ''], ['yes', 'no'], [{ text: 'yes', submit: true }, { text: 'no', submit: true }]],
  // Answered: the question is no longer on the last line.
  [['Proceed? [y/N] y', 'done'], [], []],
  [['Do you want to proceed?', '❯ 1. Yes', "  2. Yes, and don't ask again", '  3. No', '', 'Esc to cancel'],
    ['1. Yes', "2. Yes, and don't ask again", '3. No'], [{ text: '1' }, { text: '2' }, { text: '3' }]],
  [['1) red', '2) blue', '#? '], ['1. red', '2. blue'], [{ text: '1', submit: true }, { text: '2', submit: true }]],
  [['step 1. build', 'nothing to choose'], [], []],
  [['', ''], [], []],
];

// Attributes beyond bold/italic/underline/inverse, which a screen model
// that keeps them (the fidelity work) sends.
const PENS = [
  ['\x1b[9mgone\x1b[29m back', [['gone', 'strike'], [' back', '']]],
  ['\x1b[1;9mboth\x1b[0m', [['both', 'bold+strike']]],
  ['\x1b[8msecret\x1b[28mshown', [['secret', 'hidden'], ['shown', '']]],
  ['\x1b[21mdouble', [['double', 'underline']]],
  // Colon sub-parameters (what tmux keeps and tmuxd's screen sends).
  ['\x1b[0;4:3mcurly\x1b[4:0mplain', [['curly', 'underline'], ['plain', '']]],
  ['\x1b[0;53mover\x1b[55m', [['over', 'overline']]],
  ['\x1b[0;4;58:2::255:0:0mred line', [['red line', 'underline']]],
  ['\x1b[0;38:5:196;5mblink', [['blink', 'blink']]],
];

export async function words() {
  for (const [summary, want] of STATES) {
    const got = describe(summary);
    check(got === want, `${JSON.stringify(summary)}: "${got}", want "${want}"`);
  }
  for (const [summary, want] of LABELS) {
    const got = labels(summary);
    check(JSON.stringify(got) === JSON.stringify(want), `labels ${JSON.stringify(summary)}: ${JSON.stringify(got)}`);
  }
  for (const [summary, want] of FAILED) {
    check(failedExit(summary) === want, `failedExit ${JSON.stringify(summary)}: want ${want}`);
  }
  check(stateWords({ state: 'exited', exit_status: 0 }).tone === 'ok', 'exited ok is not a failure');
  check(endWords({ state: 'exited', exit_status: 1 }) === 'exited 1', 'exited 1');
  for (const [screen, labels, inputs] of ANSWERS) {
    const got = answerOptions(screen);
    const same = JSON.stringify(got.map((o) => o.label)) === JSON.stringify(labels)
      && JSON.stringify(got.map((o) => o.input)) === JSON.stringify(inputs);
    check(same, `${JSON.stringify(screen)}: ${JSON.stringify(got)}`);
  }
  for (const [line, want] of PENS) {
    const got = parseLine(line).map(({ pen, text }) => [text, Object.keys(pen).filter((k) => pen[k] === true).join('+')]);
    check(JSON.stringify(got) === JSON.stringify(want), `${JSON.stringify(line)}: ${JSON.stringify(got)}`);
  }
  const [curly] = parseLine('\x1b[0;4:3;58:5:196mx');
  check(curly.pen.ulStyle === 'curly' && curly.pen.ulColor === '#ff0000',
    `a curly red underline: ${JSON.stringify(curly.pen)}`);
  const [rgb] = parseLine('\x1b[0;38:2::1:2:3;48;2;4;5;6mx');
  check(rgb.pen.fg === '#010203' && rgb.pen.bg === '#040506', `colours both ways: ${JSON.stringify(rgb.pen)}`);
  log(`${STATES.length} summaries in words, ${ANSWERS.length} screens' answers, ${PENS.length} lines' pens`);
}
