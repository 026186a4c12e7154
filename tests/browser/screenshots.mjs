// The pictures in README.md and docs/guide.md: the wall with sessions working, at the prompt,
// waiting for you, needing attention and ended; one open session; an
// ended one; and a phone answering a question. Written to
// $TMUXD_SCREENSHOT_DIR (tests/dashboard.rs passes docs/).

import path from 'node:path';
import {
  api, check, createSession, input, launch, log, tmuxSendKeys, waitFor, openDashboard,
} from './lib.mjs';

const BUILD = String.raw`python3 -c 'import time
for n in range(1, 10**6):
    print(f"\x1b[1;32m   Compiling\x1b[0m crate-{n:03} v0.{n % 9}.0", flush=True)
    time.sleep(0.4)'`;

const AGENT = String.raw`bash --norc -c 'read go; printf "\e[1mPlan:\e[0m migrate the schema, then backfill\n  1. add column \e[36musers.plan\e[0m\n  2. backfill from \e[36mbilling\e[0m\n\e[33m? Run the migration now?\e[0m [y/N] \a"; read answer'`;

export async function screenshots() {
  const dir = process.env.TMUXD_SCREENSHOT_DIR;
  check(dir, 'TMUXD_SCREENSHOT_DIR is set');
  const build = await createSession('build', BUILD);
  const shell = await createSession('shell');
  await input(shell, { text: String.raw`ls -l --color=always /usr/share/doc | head -12`, submit: true });
  const editor = await createSession('editor', 'vim -u NONE -c "syntax on" -c "set number" tests/browser/lib.mjs');
  const monitor = await createSession('monitor', 'top -d 1');
  const python = await createSession('python', 'python3 -q');
  await input(python, { text: 'print("\\N{CJK UNIFIED IDEOGRAPH-4F60}\\N{CJK UNIFIED IDEOGRAPH-597D}", [n * n for n in range(8)])', submit: true });
  // The bell comes from the program once tmuxd is attached (create returns
  // then), prompted through tmux, not tmuxd's input (which clears attention).
  const agent = await createSession('agent', AGENT);
  tmuxSendKeys('agent', ['Enter']);
  const tests = await createSession('tests', String.raw`bash --norc -c 'printf "running 42 tests\n"; for i in $(seq 1 40); do printf "test case_%02d ... \e[32mok\e[0m\n" $i; done; printf "test case_41 ... \e[31mFAILED\e[0m\n\nfailures: case_41\n"; exit 3'`);
  const deploy = await createSession('deploy', String.raw`bash --norc -c 'printf "\e[1mDeploy plan\e[0m: 3 services, 12 hosts\n\n"; read -p "Deploy to production? [y/N] " a; exec cat'`);
  const thought = await api('PUT', `/v1/sessions/${agent}/thought`, { text: 'waiting for approval to run the migration', state: 'waiting' });
  check(thought.status === 200, `thought: ${thought.status}`);

  const { context, cleanup } = await launch();
  try {
    const page = await context.newPage();
    await openDashboard(page);
    await page.waitForSelector(`.tile[data-session-id="${agent}"].attention`);
    for (const id of [build, shell, editor, monitor, python, agent]) {
      await waitFor(`${id} thumbnail`, () => page.$eval(`.tile[data-session-id="${id}"] .term`, (t) => t.textContent.trim().length > 0));
    }
    await waitFor('the editor and monitor to draw', async () => {
      const { body } = await api('GET', '/v1/sessions');
      const byId = Object.fromEntries(body.sessions.map((s) => [s.session_id, s]));
      return byId[editor].current_command === 'vim' && byId[monitor].current_command === 'top';
    });
    await page.waitForSelector(`.tile[data-session-id="${tests}"].ended`);
    await page.waitForSelector(`.tile[data-session-id="${deploy}"][data-state="waiting"]`);
    await page.mouse.move(0, 0);
    await page.screenshot({ path: path.join(dir, 'dashboard.png') });
    await page.click(`.tile[data-session-id="${editor}"]`);
    await waitFor('the editor full size', () => page.$eval('#session-screen .term', (t) => t.textContent.includes('~') || t.textContent.includes('import')));
    await page.screenshot({ path: path.join(dir, 'dashboard-session.png') });
    await page.click('#back');
    await page.click(`.tile[data-session-id="${tests}"]`);
    await waitFor('the ended session\'s last screen', () => page.$eval('#session-screen .term', (t) => t.textContent.includes('failures')));
    await page.screenshot({ path: path.join(dir, 'dashboard-ended.png') });
    await page.click('#back');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.click(`.tile[data-session-id="${deploy}"]`);
    await page.waitForSelector('#answer-bar button', { state: 'visible' });
    await page.screenshot({ path: path.join(dir, 'dashboard-phone.png') });
    log(`wrote ${dir}/dashboard.png, dashboard-session.png, dashboard-ended.png and dashboard-phone.png`);
  } finally {
    await cleanup();
  }
}
