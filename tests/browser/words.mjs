// The page's pure decisions, table-tested in node (no browser): a
// summary's state in words, the answers a question on the screen offers
// (src/web/assets/words.js), and the pen SGR parameters give (term.js).

import { parseLine } from '../../src/web/assets/term.js';
import { answerOptions, describe, endWords, stateWords } from '../../src/web/assets/words.js';
import { check, log } from './lib.mjs';

const STATES = [
  [{ state: 'working', state_reason: 'output_activity' }, 'working · its screen is changing'],
  [{ state: 'working', state_reason: 'prompt_marker' }, 'working · the shell marked a command running'],
  [{ state: 'waiting', state_reason: 'terminal_read', attention: { reason: 'needs_input' } },
    'waiting for you · needs you: asks for input · a program is reading the terminal'],
  [{ state: 'idle', state_reason: 'shell_prompt', attention: { reason: 'bell' } },
    'at the prompt · needs you: rang the bell · a shell is at its prompt'],
  [{ state: 'idle', state_reason: 'quiet' }, 'quiet · no output for a while'],
  [{ state: 'waiting', state_reason: 'shell_read', attention: { reason: 'notification', text: 'build done' } },
    'waiting for you · needs you: sent a notification: build done · a script asks for a line (read)'],
  [{ state: 'working', state_reason: 'spinner' }, 'working · screen rule "spinner" matched'],
  // The flag of an ended session needs nobody.
  [{ state: 'exited', state_reason: 'process_exit', exit_status: 0, attention: { reason: 'bell' } }, 'exited ok · its program ended'],
  [{ state: 'exited', state_reason: 'process_exit', exit_status: 3 }, 'exited 3 · its program ended'],
  [{ state: 'exited', state_reason: 'process_exit', exit_status: null, exit_signal: 9 }, 'killed (signal 9) · its program ended'],
  [{ state: 'exited', state_reason: 'api_kill', exit_status: null }, 'killed · it was killed through tmuxd'],
  [{ state: 'exited', state_reason: 'tmux_server_gone' }, 'tmux lost · the tmux server went away'],
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
];

export async function words() {
  for (const [summary, want] of STATES) {
    const got = describe(summary);
    check(got === want, `${JSON.stringify(summary)}: "${got}", want "${want}"`);
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
  log(`${STATES.length} summaries in words, ${ANSWERS.length} screens' answers, ${PENS.length} lines' pens`);
}
