// The wall of a fleet hub: a heading per host with its status, each
// peer's tiles under its host (their thumbnails come through the hub's
// screen WebSocket), and a peer that goes away shown down, its tiles stale.

import { check, launch, log, openDashboard, rowTexts, waitFor, watchPage } from './lib.mjs';

const PEER_ID = process.env.TMUXD_TEST_PEER_ID;
const PEER_PID = Number(process.env.TMUXD_TEST_PEER_PID);
const LOCAL_ID = process.env.TMUXD_TEST_LOCAL_ID;
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
    const order = await page.$$eval('#wall > *', (nodes) =>
      nodes.map((n) => (n.classList.contains('host-head') ? `head:${n.dataset.host}` : n.dataset.sessionId)));
    check(
      JSON.stringify(order) === JSON.stringify(['head:', LOCAL_ID, 'head:a', PEER_ID]),
      `grouped by host, this one first: ${JSON.stringify(order)}`,
    );
    await waitFor('the peer heading says up', async () =>
      (await page.textContent('.host-head[data-host="a"]')).includes('up'));
    await waitFor('the peer tile thumbnail (screen WebSocket through the hub)', async () =>
      (await rowTexts(page, `${tile(PEER_ID)} .thumb`)).some((r) => r.startsWith('$')));
    log('grouped by host, the peer up, its thumbnail through the hub');

    process.kill(PEER_PID, 'SIGTERM');
    await waitFor('the peer heading says down', async () =>
      (await page.getAttribute('.host-head[data-host="a"]', 'class')).includes('down'), 30_000);
    await waitFor('the peer tile marked stale', async () =>
      (await page.getAttribute(tile(PEER_ID), 'class')).includes('stale'), 30_000);
    check((await page.textContent(`${tile(PEER_ID)} .state`)).includes('stale'), 'its state says stale');
    log('the peer down, its tile stale');
    check(!messages.some((m) => m.includes('page error')), `no page error: ${messages.join('\n')}`);
  } finally {
    await cleanup();
  }
}
