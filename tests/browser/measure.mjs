// 50 live sessions on the wall, one printing continuously: the page's JS
// heap and the daemon's CPU, first without the page (baseline), then with
// every tile on screen and its feed open, then with the printing session
// open (its full screen, with 2,000 lines of history loaded above it) and
// the wall behind it. Fails above the heap target.

import {
  check, cpuSeconds, createSession, launch, log, waitFor, watchPage, openDashboard,
} from './lib.mjs';

const SESSIONS = 50;
const HEAP_TARGET_BYTES = 50 * 1024 * 1024;
const BASELINE_MS = 4_000;
const MEASURE_MS = 10_000;
const PRINTER = String.raw`bash --norc -c 'i=0; while :; do i=$((i+1)); printf "\e[32m%s\e[0m line %d \e[1mprinting\e[0m\n" "$(date +%T)" $i; sleep 0.02; done'`;

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function measureFifty() {
  const pid = Number(process.env.TMUXD_PID);
  check(pid > 0, 'TMUXD_PID is set');
  for (let i = 1; i < SESSIONS; i++) await createSession(`m-${String(i).padStart(2, '0')}`);
  const printer = await createSession('m-printer', PRINTER);
  log(`${SESSIONS} sessions created`);

  // The measurement interval is the thing measured, not a wait for an event.
  const baseline = await cpuOver(pid, BASELINE_MS);
  log('baseline measured');
  const { context, cleanup } = await launch(['--enable-precise-memory-info', '--js-flags=--expose-gc']);
  try {
    const page = await context.newPage();
    const messages = watchPage(page, 'wall');
    await page.setViewportSize({ width: 1920, height: 3000 });
    await openDashboard(page);
    log('page loaded');
    await waitFor(`all ${SESSIONS} thumbnails rendered`, () => page.$$eval('#wall .tile .thumb .term', (terms) =>
      terms.filter((t) => t.textContent.trim()).length) .then((n) => n === SESSIONS));
    const visible = await page.$$eval('#wall .tile', (tiles) => tiles.filter((t) => {
      const r = t.getBoundingClientRect();
      return r.bottom > 0 && r.top < innerHeight;
    }).length);
    check(visible === SESSIONS, `all tiles on screen (${visible})`);
    log('all thumbnails rendered');
    await page.evaluate((id) => {
      window.rowUpdates = 0;
      const term = document.querySelector(`.tile[data-session-id="${id}"] .term`);
      new MutationObserver((records) => { window.rowUpdates += records.length; })
        .observe(term, { childList: true, subtree: true });
    }, printer);

    const heap = () => page.evaluate(() => performance.memory.usedJSHeapSize);
    await page.evaluate(() => window.gc());
    const heapStart = await heap();
    const cpuStart = cpuSeconds(pid);
    const started = Date.now();
    let heapMax = heapStart;
    while (Date.now() - started < MEASURE_MS) {
      await pause(1000);
      heapMax = Math.max(heapMax, await heap());
    }
    const seconds = (Date.now() - started) / 1000;
    const daemonCpu = (cpuSeconds(pid) - cpuStart) / seconds;
    const updates = await page.evaluate(() => window.rowUpdates);
    await page.evaluate(() => window.gc());
    const heapEnd = await heap();
    if (messages.length) log(messages.join('\n'));

    const open = await measureOpen(page, printer, heap);
    const mb = (b) => (b / 1024 / 1024).toFixed(1);
    const result = {
      sessions: SESSIONS,
      interval_s: Number(seconds.toFixed(1)),
      js_heap_mb_after_gc_start: Number(mb(heapStart)),
      js_heap_mb_max: Number(mb(heapMax)),
      js_heap_mb_after_gc_end: Number(mb(heapEnd)),
      daemon_cpu_percent_no_page: Number((baseline * 100).toFixed(1)),
      daemon_cpu_percent_with_page: Number((daemonCpu * 100).toFixed(1)),
      printer_dom_mutations_per_s: Math.round(updates / seconds),
      dom_elements: await page.evaluate(() => document.getElementsByTagName('*').length),
      open_js_heap_mb_after_gc_start: Number(mb(open.start)),
      open_js_heap_mb_max: Number(mb(open.max)),
      open_js_heap_mb_after_gc_end: Number(mb(open.end)),
      open_history_lines: open.historyLines,
      open_dom_mutations_per_s: Math.round(open.updates / open.seconds),
    };
    console.log(`MEASUREMENT ${JSON.stringify(result)}`);
    check(updates > 0, 'the printing session updated on the wall during the interval');
    check(heapMax <= HEAP_TARGET_BYTES, `JS heap ${mb(heapMax)} MB is over the ${mb(HEAP_TARGET_BYTES)} MB target`);
    check(open.updates > 0, 'the open session updated during the interval');
    check(open.max <= HEAP_TARGET_BYTES, `JS heap with a session open ${mb(open.max)} MB is over the ${mb(HEAP_TARGET_BYTES)} MB target`);
  } finally {
    await cleanup();
  }
}

/**
 * Opens the printing session (its screen live, its history loaded above
 * it, the 49 other tiles still on the page) and samples the heap over
 * MEASURE_MS.
 */
async function measureOpen(page, id, heap) {
  // Opened by its address, as a click does (a click on a wall this busy is
  // measured elsewhere; here it only made the run slower to start).
  await page.evaluate((sid) => { location.hash = `#/s/${sid}`; }, id);
  await page.waitForSelector('#session-screen .term .row').catch(async (e) => {
    const seen = await page.evaluate(() => ({
      hash: location.hash,
      error: document.getElementById('session-error').textContent,
      rows: document.querySelectorAll('#session-screen .term .row').length,
      hidden: document.getElementById('session').hidden,
    }));
    throw new Error(`${e.message}; the page: ${JSON.stringify(seen)}`);
  });
  await page.click('#scrollback-btn');
  await waitFor('the history loaded', () => page.$eval('#scrollback', (h) => !h.hidden && h.textContent.length > 0));
  const historyLines = await page.$eval('#scrollback', (h) => h.textContent.split('\n').length);
  await page.evaluate(() => {
    window.openUpdates = 0;
    new MutationObserver((records) => { window.openUpdates += records.length; })
      .observe(document.querySelector('#session-screen .term'), { childList: true, subtree: true });
  });
  await page.evaluate(() => window.gc());
  const start = await heap();
  let max = start;
  const started = Date.now();
  while (Date.now() - started < MEASURE_MS) {
    await pause(1000);
    max = Math.max(max, await heap());
  }
  const seconds = (Date.now() - started) / 1000;
  const updates = await page.evaluate(() => window.openUpdates);
  await page.evaluate(() => window.gc());
  return { start, max, end: await heap(), historyLines, updates, seconds };
}

/** The process's CPU use (1.0 = one core) over `ms`. */
async function cpuOver(pid, ms) {
  const start = cpuSeconds(pid);
  const t0 = Date.now();
  await pause(ms);
  return (cpuSeconds(pid) - start) / ((Date.now() - t0) / 1000);
}
