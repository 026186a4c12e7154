// The wall of a fleet hub: a heading per host with its status, each
// peer's tiles under its host (their thumbnails come through the hub's
// screen WebSocket); a peer's session that needs you above every host's
// group, under "needs you" and naming its host (issue 32, item 8: it was
// below this host's ended tiles); and a peer that goes away shown down,
// its tiles stale.

import {
  check, createSession, launch, log, openDashboard, rowTexts, tmuxSendKeys, waitFor, waitUntil, watchPage,
} from './lib.mjs';

const PEER_ID = process.env.TMUXD_TEST_PEER_ID;
const PEER_PID = Number(process.env.TMUXD_TEST_PEER_PID);
const LOCAL_ID = process.env.TMUXD_TEST_LOCAL_ID;
/** The peer's session's tmux name, on the peer's tmux server (TMUXD_TEST_TMUX_SOCKET). */
const PEER_TMUX_NAME = 'remote';
const tile = (id) => `#wall .tile[data-session-id="${id}"]`;

export async function fleet() {
  check(PEER_ID && PEER_PID && LOCAL_ID, 'TMUXD_TEST_PEER_ID, TMUXD_TEST_PEER_PID and TMUXD_TEST_LOCAL_ID are set');
  const { context, cleanup } = await launch();
  try {
    const page = await context.newPage();
    const messages = watchPage(page, 'fleet');
    await openDashboard(page);
    await page.waitForSelector(tile(PEER_ID));
    await page.waitForSelector(tile(LOCAL_ID));
    const order = () => page.$$eval('#wall > *', (nodes) => nodes.map((n) => {
      if (n.classList.contains('needs-head')) return 'needs you';
      return n.classList.contains('host-head') ? `head:${n.dataset.host}` : n.dataset.sessionId;
    }));
    await waitUntil('grouped by host, this one first', order,
      (o) => JSON.stringify(o) === JSON.stringify(['head:', LOCAL_ID, 'head:a', PEER_ID]));
    await waitFor('the peer heading says up', async () =>
      (await page.textContent('.host-head[data-host="a"]')).includes('up'));
    await waitFor('the peer tile thumbnail (screen WebSocket through the hub)', async () =>
      (await rowTexts(page, `${tile(PEER_ID)} .thumb`)).some((r) => r.startsWith('$')));
    log('grouped by host, the peer up, its thumbnail through the hub');

    // An ended session here, then the peer's session rings: it needs you,
    // and comes first, above this host's live and ended tiles.
    const ended = await createSession('finished', String.raw`bash --norc -c 'printf "done\n"; exit 0'`);
    await page.waitForSelector(`${tile(ended)}.ended`);
    await waitUntil('the ended tile last in this host\'s group', order,
      (o) => JSON.stringify(o) === JSON.stringify(['head:', LOCAL_ID, ended, 'head:a', PEER_ID]));
    tmuxSendKeys(PEER_TMUX_NAME, [String.raw`printf '\a'`, 'Enter']);
    await page.waitForSelector(`${tile(PEER_ID)}.attention`);
    await waitUntil('the peer\'s session needing you above every host\'s group', order,
      (o) => JSON.stringify(o) === JSON.stringify(['needs you', PEER_ID, 'head:', LOCAL_ID, ended, 'head:a']));
    const says = await waitUntil('the tile to name its host', () => page.textContent(`${tile(PEER_ID)} .host-chip`),
      (t) => t === 'on a');
    const head = await page.textContent('.needs-head');
    check(head === 'needs you · 1', `the group's heading: ${head}`);
    log(`a peer's session needing you sits first, under "${head}", saying "${says}"`);

    process.kill(PEER_PID, 'SIGTERM');
    await waitFor('the peer heading says down', async () =>
      (await page.getAttribute('.host-head[data-host="a"]', 'class')).includes('down'));
    await waitFor('the peer tile marked stale', async () =>
      (await page.getAttribute(tile(PEER_ID), 'class')).includes('stale'));
    await waitUntil('its state to say stale', () => page.textContent(`${tile(PEER_ID)} .state`), (t) => t.includes('stale'));
    log('the peer down, its tile stale');
    check(!messages.some((m) => m.includes('page error')), `no page error: ${messages.join('\n')}`);
  } finally {
    await cleanup();
  }
}
