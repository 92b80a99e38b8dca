// GraphQL over HTTP (POST /graphql) and over WebSocket (graphql-transport-ws protocol).

export class ApiError extends Error {
  constructor(message, code = 'ERROR', status = 0) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = status;
  }
}

let currentToken = null;
let onUnauthorized = () => {};

export function setToken(token) { currentToken = token; }
export function setUnauthorizedHandler(fn) { onUnauthorized = fn; }

/** Run a query or mutation; returns `data` or throws ApiError. */
export async function gql(query, variables = {}, { token = currentToken, signal } = {}) {
  let response;
  try {
    response = await fetch('/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json, application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify({ query, variables }),
      credentials: 'omit',
      signal,
    });
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new ApiError('The server cannot be reached.', 'NETWORK');
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const firstError = body && Array.isArray(body.errors) && body.errors[0];
  const code = firstError && firstError.extensions && firstError.extensions.code;
  if (response.status === 401 || code === 'UNAUTHENTICATED' || code === 'UNAUTHORIZED') {
    const err = new ApiError((firstError && firstError.message) || 'Your token is not valid (any more).', 'UNAUTHENTICATED', 401);
    if (token === currentToken) onUnauthorized(err);
    throw err;
  }
  if (firstError) throw new ApiError(firstError.message || 'Request failed', code || 'ERROR', response.status);
  if (!response.ok || !body) throw new ApiError(`Request failed (HTTP ${response.status})`, 'HTTP', response.status);
  return body.data;
}

/** Mutation results are unions: a success type or a UserError { code message }. */
export function unwrap(result) {
  if (!result) throw new ApiError('Empty result', 'ERROR');
  if (typeof result.code === 'string' && typeof result.message === 'string' && !('id' in result)) {
    throw new ApiError(result.message, result.code);
  }
  return result;
}

/**
 * A graphql-transport-ws client with automatic reconnect (exponential backoff with jitter).
 * Subscriptions registered with `subscribe` are re-sent after every (re)connection.
 */
export class LiveClient {
  constructor({ token, onStatus = () => {}, onReconnect = () => {} }) {
    this.token = token;
    this.onStatus = onStatus;
    this.onReconnect = onReconnect;
    this.subs = new Map();
    this.ws = null;
    this.attempt = 0;
    this.stopped = false;
    this.acked = false;
    this.everConnected = false;
    this.nextId = 1;
    this.timer = null;
  }

  url() {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return `${proto}//${location.host}/graphql`;
  }

  start() {
    this.stopped = false;
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.ws) {
      try { this.ws.close(1000, 'bye'); } catch { /* already closed */ }
    }
    this.ws = null;
    this.onStatus('off');
  }

  subscribe(query, variables, handlers) {
    const id = String(this.nextId++);
    this.subs.set(id, { query, variables, handlers });
    if (this.acked) this.send({ id, type: 'subscribe', payload: { query, variables } });
    return () => {
      this.subs.delete(id);
      if (this.acked) this.send({ id, type: 'complete' });
    };
  }

  send(message) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  connect() {
    if (this.stopped) return;
    this.acked = false;
    this.onStatus(this.everConnected ? 'reconnecting' : 'connecting');
    let ws;
    try {
      ws = new WebSocket(this.url(), 'graphql-transport-ws');
    } catch {
      this.retry();
      return;
    }
    this.ws = ws;
    ws.addEventListener('open', () => {
      ws.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${this.token}` } }));
    });
    ws.addEventListener('message', (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      this.handle(msg);
    });
    ws.addEventListener('close', (ev) => {
      if (this.ws !== ws) return;
      this.acked = false;
      this.ws = null;
      if (this.stopped) return;
      if (ev.code === 4401 || ev.code === 4403) {
        this.onStatus('denied');
        // a token problem will not fix itself quickly; still retry, slowly
        this.attempt = Math.max(this.attempt, 5);
      }
      this.retry();
    });
    ws.addEventListener('error', () => { /* a close event follows */ });
  }

  retry() {
    if (this.stopped) return;
    const base = Math.min(15000, 500 * 2 ** this.attempt);
    const delay = base / 2 + Math.random() * base / 2;
    this.attempt += 1;
    this.onStatus(this.everConnected ? 'reconnecting' : 'connecting');
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), delay);
  }

  handle(msg) {
    switch (msg.type) {
      case 'connection_ack': {
        this.acked = true;
        this.attempt = 0;
        const again = this.everConnected;
        this.everConnected = true;
        this.onStatus('live');
        for (const [id, sub] of this.subs) this.send({ id, type: 'subscribe', payload: { query: sub.query, variables: sub.variables } });
        if (again) this.onReconnect();
        break;
      }
      case 'ping':
        this.send({ type: 'pong' });
        break;
      case 'next': {
        const sub = this.subs.get(msg.id);
        if (!sub) break;
        const payload = msg.payload || {};
        if (payload.errors && payload.errors.length && sub.handlers.error) sub.handlers.error(payload.errors);
        if (payload.data) sub.handlers.next(payload.data);
        break;
      }
      case 'error': {
        const sub = this.subs.get(msg.id);
        if (sub && sub.handlers.error) sub.handlers.error(msg.payload);
        break;
      }
      case 'complete': {
        // the server ended it; ask again on the next connection
        break;
      }
      default:
        break;
    }
  }
}
