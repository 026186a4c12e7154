// Talking to the daemon: the token (kept in this tab's sessionStorage,
// sent as a bearer header, never in a URL) and JSON requests with the API's
// `{"error":{"code","message"}}` errors.

const TOKEN_KEY = 'tmuxd.token';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export function authHeaders(extra = {}) {
  const headers = { ...extra };
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  return headers;
}

/** Calls the API; resolves to the parsed body, rejects with ApiError. */
export async function request(method, path, body) {
  const init = { method, headers: authHeaders(), cache: 'no-store' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'network', `cannot reach tmuxd: ${e.message}`);
  }
  const text = await response.text();
  let value = null;
  try {
    value = text ? JSON.parse(text) : null;
  } catch {
    value = null;
  }
  if (!response.ok) {
    const error = value && value.error;
    throw new ApiError(response.status, error ? error.code : 'http_error',
      error ? error.message : `${response.status} ${response.statusText}`);
  }
  return value;
}

export const api = {
  list: () => request('GET', '/v1/sessions?include=ended'),
  hosts: () => request('GET', '/v1/hosts'),
  untracked: () => request('GET', '/v1/sessions/untracked'),
  snapshot: (id) => request('GET', `/v1/sessions/${encodeURIComponent(id)}/snapshot?format=ansi`),
  create: (body) => request('POST', '/v1/sessions', body),
  adopt: (tmuxName) => request('POST', '/v1/sessions/adopt', { tmux_name: tmuxName }),
  health: () => request('GET', '/healthz'),
  server: () => request('GET', '/v1/server'),
  restore: () => request('POST', '/v1/sessions/restore', {}),
  remove: (id, mode) => request('DELETE', `/v1/sessions/${encodeURIComponent(id)}?mode=${mode}`),
  input: (id, body) => request('POST', `/v1/sessions/${encodeURIComponent(id)}/input`, body),
  scrollback: (id, lines) => request('GET', `/v1/sessions/${encodeURIComponent(id)}/scrollback?lines=${lines}`),
};

/**
 * What this page may do: 'full', 'read' (a read token: the API answers 403
 * to writes), or 'login' (no credential or a wrong one).
 */
export async function probeAccess() {
  try {
    const who = await request('GET', '/v1/whoami');
    return who.access === 'write' ? 'full' : 'read';
  } catch (e) {
    if (e.status === 401) return 'login';
    throw e;
  }
}

/**
 * A login link (`tmuxd open`) carries a one-time code in the fragment,
 * `#login=CODE`, which no server sees: trade it for this tab's credential
 * and take it out of the address bar and history. False if there is none
 * or it did not work (used, expired).
 */
export async function redeemLoginLink() {
  const match = /^#login=([0-9a-f]+)$/.exec(location.hash);
  if (!match) return false;
  history.replaceState(null, '', `${location.pathname}${location.search}#/`);
  try {
    const grant = await request('POST', '/v1/login', { code: match[1] });
    setToken(grant.token);
    return true;
  } catch {
    return false;
  }
}

/** The WebSocket URL for a path on this origin. */
export function wsUrl(path) {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}${path}`;
}
