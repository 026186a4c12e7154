// A hostile page on another port of the same machine (a dev server, a
// notebook, a malicious package's page) tries to type into a session and
// read screens through the daemon's WebSockets, which have no CORS
// preflight. It even knows the token. Served from `localhost:` and from
// `127.0.0.1:` origins; every attempt must be refused before any byte is
// typed or any screen is sent.

import http from 'node:http';

import { BASE, TOKEN, check, createSession, launch, log, waitFor } from './lib.mjs';

const MARKER = process.env.TMUXD_TEST_MARKER;

/** What the page does: every way in a script on another origin has. */
function attackPage(target, id, token, marker) {
  return `<!doctype html><meta charset="utf-8"><script>
const results = {};
const wsBase = ${JSON.stringify(target.replace('http://', 'ws://'))};
const id = ${JSON.stringify(id)};
const attempt = (name, path, first) => new Promise((resolve) => {
  let opened = false, received = 0;
  const socket = new WebSocket(wsBase + path);
  socket.onopen = () => {
    opened = true;
    for (const message of first) socket.send(message);
  };
  socket.onmessage = () => { received += 1; };
  const done = () => resolve({ opened, received });
  socket.onclose = done;
  socket.onerror = () => setTimeout(done, 50);
  setTimeout(done, 3000);
}).then((r) => { results[name] = r; });
const typed = JSON.stringify({ type: 'input', text: 'touch ${marker}\\r' });
const auth = JSON.stringify({ type: 'auth', token: ${JSON.stringify(token)} });
Promise.all([
  attempt('stream-bare', '/v1/sessions/' + id + '/stream', [typed]),
  attempt('stream-token', '/v1/sessions/' + id + '/stream', [auth, typed]),
  attempt('screen-bare', '/v1/sessions/' + id + '/screen', []),
  attempt('screen-token', '/v1/sessions/' + id + '/screen', [auth]),
]).then(() => { window.attackDone = results; });
</script>`;
}

export async function crossOrigin() {
  check(MARKER, 'TMUXD_TEST_MARKER is set');
  const id = await createSession('victim');
  const server = http.createServer((request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/html' });
    response.end(attackPage(BASE, id, TOKEN, MARKER));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  const { context, cleanup } = await launch();
  try {
    for (const origin of [`http://localhost:${port}`, `http://127.0.0.1:${port}`]) {
      const page = await context.newPage();
      await page.goto(`${origin}/`);
      const results = await waitFor(`the attack from ${origin} to finish`, () =>
        page.evaluate(() => window.attackDone));
      log(`from ${origin}: ${JSON.stringify(results)}`);
      check(Object.keys(results).length === 4, 'every attempt reported');
      for (const [name, r] of Object.entries(results)) {
        check(!r.opened, `${name} from ${origin}: the WebSocket opened`);
        check(r.received === 0, `${name} from ${origin}: ${r.received} messages arrived`);
      }
      await page.close();
    }
  } finally {
    server.close();
    await cleanup();
  }
}
