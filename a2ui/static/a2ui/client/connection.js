// The socket: stream token -> WebSocket -> a2ui.init (resume with the stored session id) ->
// JSON-RPC messages. Reconnects with exponential backoff and full jitter, a new token each time,
// except after a close that retrying cannot fix (STOP_ON_CLOSE): then one message, no retry.

import { gettext as _, interpolate } from './i18n.js';

const SESSION_KEY = 'a2ui.session_id';
// Closes that retrying cannot fix: the client stops, says what happened and what to do, and
// waits for the Reconnect button. (4006 gets one retry with a new token first: see closed().)
const STOP_ON_CLOSE = {
  4005: _('The session expired after a long time without activity. Press Reconnect to start a new one.'),
  4006: _('The server did not accept this sign-in. Sign in again or reload the page, then press Reconnect.'),
  4007: _('Too many open sessions with this assistant right now. Close other tabs or windows with the assistant, or try again later, then press Reconnect.'),
  4010: _('An operator ended this session.'),
  4011: _('Your access to this assistant was withdrawn.'),
};
const TOO_MANY_WITH_LIMIT = _('Too many open sessions with this assistant right now (limit %(limit)s). Close other tabs or windows with the assistant, or try again later, then press Reconnect.');
const DROP_SESSION_ON = new Set([4005, 4010, 4011]);
// The JSON-RPC error the server sends just before each of those closes: no toast for it (the
// status says it once), but its reason or limit goes into the message.
const CLOSE_OF_ERROR = { [-32005]: 4005, [-32006]: 4006, [-32007]: 4007 };
const RESUME_ERRORS = new Set([-32000, -32005]);
const BACKOFF_BASE_MS = 1000;
const BACKOFF_CAP_MS = 30000;

export function storedSessionId() {
  try { return sessionStorage.getItem(SESSION_KEY); } catch { return null; }
}
function storeSessionId(id) {
  try { if (id) sessionStorage.setItem(SESSION_KEY, id); else sessionStorage.removeItem(SESSION_KEY); } catch { /* storage off */ }
}

class FatalError extends Error {}

/** The reason in a DRF error body ({detail} or {field: [messages]}), as plain text. */
async function errorReason(resp) {
  let body;
  try { body = await resp.json(); } catch { return _('The server refused.'); }
  if (body && typeof body === 'object') {
    if (typeof body.detail === 'string') return body.detail;
    const messages = Object.values(body).flat().filter((m) => typeof m === 'string');
    if (messages.length) return messages.join(' ');
  }
  return _('The server refused.');
}

export class Connection {
  /**
   * options: tokenUrl, wsPath, csrfToken, clientInfo, capabilities, agent (name, optional);
   * hooks: onState(state, detail), onMessage(msg), onSession({sessionId, resumed, result}), onError(err)
   */
  constructor(options, hooks) {
    this.options = options;
    this.hooks = hooks;
    this.ws = null;
    this.attempt = 0;
    this.timer = null;
    this.stopped = false;
    this.nextId = 1;
    this.pending = new Map();
    this.state = 'idle';
    this.authFailures = 0; // 4006 closes since the last successful init
    this.closingError = null; // the error that announced the coming close
  }

  setState(state, detail = '') {
    this.state = state;
    this.hooks.onState?.(state, detail);
  }

  start() {
    this.stopped = false;
    this.attempt = 0;
    this.authFailures = 0;
    clearTimeout(this.timer);
    this.connect();
  }

  stop(reason = _('Closed.')) {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.ws) { this.ws.onclose = null; this.ws.close(1000); this.ws = null; }
    this.setState('closed', reason);
  }

  async fetchToken() {
    const resp = await fetch(this.options.tokenUrl, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRFToken': this.options.csrfToken || '' },
      body: JSON.stringify(this.options.agent ? { token_type: 'stream_a2ui', agent_id: this.options.agent } : { token_type: 'stream_a2ui' }),
    });
    if (resp.status === 401 || resp.status === 403) throw new FatalError(_('You are not signed in, or not allowed to use this assistant. Sign in again, then reload the page.'));
    // Any other 4xx (400: no default agent, bad request) will not change by retrying: show the
    // server's reason and stop. 5xx and network errors are retried with backoff.
    if (resp.status >= 400 && resp.status < 500 && resp.status !== 408 && resp.status !== 429) {
      throw new FatalError(interpolate(_('The assistant could not be reached. %(reason)s'), { reason: await errorReason(resp) }));
    }
    if (!resp.ok) throw new Error(_('The server is not answering.'));
    const body = await resp.json();
    if (!body || typeof body.token !== 'string') throw new Error(_('The server is not answering.'));
    return body.token;
  }

  async connect() {
    if (this.stopped) return;
    this.setState(this.attempt ? 'reconnecting' : 'connecting', this.attempt ? interpolate(_('attempt %(n)s…'), { n: this.attempt + 1 }) : '');
    let token;
    try {
      token = await this.fetchToken();
    } catch (err) {
      if (err instanceof FatalError) { this.stopped = true; this.setState('closed', err.message); return; }
      this.scheduleReconnect(err instanceof TypeError ? _('The network is not reachable.') : (err.message || _('The network is not reachable.')));
      return;
    }
    if (this.stopped) return;
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const url = `${scheme}//${location.host}${this.options.wsPath}?token=${encodeURIComponent(token)}`;
    let ws;
    try { ws = new WebSocket(url); } catch (err) { console.warn('a2ui:', err); this.scheduleReconnect(_('The connection could not be opened.')); return; }
    this.ws = ws;
    this.nextId = 1;
    this.pending.clear();
    ws.onopen = () => this.init(storedSessionId());
    ws.onmessage = (ev) => this.receive(ev.data);
    ws.onerror = () => { /* onclose follows with the code */ };
    ws.onclose = (ev) => this.closed(ev);
  }

  init(sessionId) {
    const params = {
      client_info: { ...this.options.clientInfo, viewport: { width: window.innerWidth, height: window.innerHeight } },
      capabilities: this.options.capabilities,
    };
    if (sessionId) params.session_id = sessionId;
    this.request('a2ui.init', params).then((result) => {
      const id = result?.session_id ?? null;
      storeSessionId(id);
      this.attempt = 0;
      this.authFailures = 0;
      this.setState('connected', '');
      // A new tab may be given the person's detached session: the server says it resumed.
      const resumed = typeof result?.resumed === 'boolean' ? result.resumed : Boolean(sessionId) && id === sessionId;
      this.hooks.onSession?.({ sessionId: id, resumed, result });
    }, (error) => {
      if (sessionId && RESUME_ERRORS.has(error?.code)) {
        storeSessionId(null); // the old session is gone: start a fresh one on this socket
        this.init(null);
        return;
      }
      if (error?.closed) return; // the socket closed first: closed() decides what follows
      if (CLOSE_OF_ERROR[error?.code] === 4007) { // the server closes with 4007 too
        this.fail(4007, error);
        return;
      }
      this.hooks.onError?.(error);
      this.ws?.close(4000, 'init failed'); // reconnect with backoff
    });
  }

  request(method, params) {
    const id = String(this.nextId++);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (!this.rawSend({ jsonrpc: '2.0', method, id, params })) {
        this.pending.delete(id);
        reject({ code: -32603, message: 'Not connected.', notConnected: true });
      }
    });
  }

  /** Send a notification; false when the socket is not open (the caller tells the user). */
  notify(method, params) {
    if (this.state !== 'connected') return false;
    return this.rawSend({ jsonrpc: '2.0', method, params });
  }

  rawSend(message) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  receive(raw) {
    let msg;
    try { msg = JSON.parse(raw); } catch { this.hooks.onError?.({ code: -32700, message: 'Unreadable message from the server.', fromServer: true }); return; }
    const batch = Array.isArray(msg) ? msg : [msg];
    for (const m of batch) {
      if (!m || typeof m !== 'object') continue;
      if (typeof m.method === 'string') {
        if (m.id !== undefined && m.id !== null) {
          this.rawSend({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
        } else {
          this.hooks.onMessage?.(m);
        }
        continue;
      }
      const pending = m.id !== undefined && m.id !== null ? this.pending.get(String(m.id)) : null;
      if (pending) {
        this.pending.delete(String(m.id));
        if (m.error) pending.reject(m.error); else pending.resolve(m.result);
      } else if (m.error) {
        if (CLOSE_OF_ERROR[m.error.code]) this.closingError = m.error; // the close follows
        else this.hooks.onError?.(m.error);
      }
    }
  }

  closed(ev) {
    this.ws = null;
    for (const p of this.pending.values()) p.reject({ code: -32603, message: 'Connection closed.', closed: true });
    this.pending.clear();
    if (this.stopped) return;
    this.hooks.onDisconnect?.(ev.code);
    const error = this.closingError;
    this.closingError = null;
    if (ev.code === 4006 && this.authFailures++ === 0) {
      // Once: a token can expire or be revoked on its way; a new one may be accepted.
      this.scheduleReconnect(_('The server did not accept the sign-in; trying once more.'));
      return;
    }
    if (STOP_ON_CLOSE[ev.code]) {
      this.fail(ev.code, error, ev.reason);
      return;
    }
    if (ev.code) console.info(`a2ui: connection closed (${ev.code}${ev.reason ? `: ${ev.reason}` : ''})`);
    this.scheduleReconnect(_('The connection was lost.'));
  }

  /** Stop for good (until Reconnect) after a close that retrying cannot fix; one message. */
  fail(code, error = null, reason = '') {
    if (DROP_SESSION_ON.has(code)) storeSessionId(null);
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.ws) { this.ws.onclose = null; this.ws.close(1000); this.ws = null; }
    let detail = STOP_ON_CLOSE[code];
    const limit = error?.data?.limit;
    if (code === 4007 && Number.isInteger(limit)) detail = interpolate(TOO_MANY_WITH_LIMIT, { limit });
    const why = typeof error?.data?.reason === 'string' ? error.data.reason : reason;
    if (why && code !== 4007) detail = `${detail} (${why})`;
    this.setState('closed', detail);
  }

  scheduleReconnect(reason) {
    if (this.stopped) return;
    const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** this.attempt);
    const delay = Math.random() * ceiling; // full jitter
    this.attempt += 1;
    this.setState('reconnecting', interpolate(_('%(reason)s Trying again in %(seconds)s s.'), { reason, seconds: Math.ceil(delay / 1000) }));
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), delay);
  }
}
