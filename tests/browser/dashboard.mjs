// The dashboard in headless chromium against the real daemon, which
// tests/dashboard.rs starts (with a private tmux server) and names in the
// environment. Usage: node dashboard.mjs <scenario>. Exits non-zero with
// the reason when a check fails.

import { Failure, log } from './lib.mjs';
import { crossOrigin } from './cross_origin.mjs';
import { endToEnd } from './end_to_end.mjs';
import { fleet } from './fleet.mjs';
import { measureFifty } from './measure.mjs';
import { push } from './push.mjs';
import { readable } from './readable.mjs';
import { screenshots } from './screenshots.mjs';
import { tokens } from './tokens.mjs';
import { triage } from './triage.mjs';
import { words } from './words.mjs';

const SCENARIOS = {
  'end-to-end': endToEnd, fleet, tokens, 'measure-fifty': measureFifty, screenshots, 'cross-origin': crossOrigin, triage, words, readable, push,
};

const name = process.argv[2];
const scenario = SCENARIOS[name];
if (!scenario) {
  console.error(`unknown scenario ${name}; one of ${Object.keys(SCENARIOS).join(', ')}`);
  process.exit(2);
}
const started = Date.now();
try {
  await scenario();
  log(`${name}: passed in ${((Date.now() - started) / 1000).toFixed(1)}s`);
} catch (e) {
  console.error(e instanceof Failure ? `FAILED: ${e.message}` : e);
  process.exit(1);
}
