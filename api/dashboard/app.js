// memvet review dashboard: sign-in, tabs, keyboard, live updates. No build step.
import { gql, setToken, setUnauthorizedHandler, LiveClient, ApiError } from './js/gql.js';
import * as Q from './js/queries.js';
import { $, $$, announce, isTyping } from './js/dom.js';
import { QueueCounts } from './js/counts.js';
import { PendingView } from './js/pending.js';
import { ApprovedView } from './js/approved.js';
import { AdvancedView } from './js/advanced.js';

const TOKEN_KEY = 'memvet.token';
const TABS = ['pending', 'approved', 'advanced'];

const app = {
  token: null,
  viewer: null,
  live: null,
  tab: 'pending',
  views: {},
  persona: null,
  setCount(tab, n) {
    const el = document.getElementById(`count-${tab}`);
    if (el) el.textContent = n === null || n === undefined ? '' : String(n);
  },
  setPersona(name) {
    app.persona = name;
    const chip = document.getElementById('persona-chip');
    chip.textContent = name ? `persona: ${name}` : '';
    chip.hidden = !name;
  },
};

// The tab counts and the namespace chips: adjusted by every live event, read again once
// events pause and after our own actions (js/counts.js).
app.counts = new QueueCounts({
  load: () => gql(Q.STATS).then((data) => data.queueStats),
  onChange: (counts) => {
    app.setCount('pending', counts.pending);
    app.setCount('approved', counts.memories);
    app.views.pending?.renderChips();
  },
});
app.scheduleStats = () => app.counts.schedule();

function readStoredToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

function storeToken(token, remember) {
  try {
    sessionStorage.setItem(TOKEN_KEY, token);
    if (remember) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
  } catch { /* storage disabled: the session lasts as long as the page */ }
}

function clearToken() {
  try {
    sessionStorage.removeItem(TOKEN_KEY);
    localStorage.removeItem(TOKEN_KEY);
  } catch { /* nothing stored */ }
}

// The sign-in link is `/#token=…`: a fragment never reaches the server, so the token stays
// out of access logs. `/?token=…` still works (the server redacts it from its logs).
function takeTokenFromUrl() {
  const url = new URL(location.href);
  const fragment = new URLSearchParams(url.hash.replace(/^#/, ''));
  let token = fragment.get('token');
  if (token !== null) {
    url.hash = '';
  } else {
    token = url.searchParams.get('token');
    if (token === null) return null;
    url.searchParams.delete('token');
  }
  // drop it from the address bar (and history) before anything else happens
  history.replaceState(history.state, '', url.pathname + url.search + url.hash);
  return token.trim() || null;
}

function showSignin(message = '') {
  app.live?.stop();
  app.live = null;
  $('#app').hidden = true;
  $('#session').hidden = true;
  $('#signin').hidden = false;
  const err = $('#signin-error');
  err.textContent = message;
  err.hidden = !message;
  $('#token-input').value = '';
  $('#token-input').focus();
}

function describeSigninError(err) {
  if (err instanceof ApiError) {
    if (err.code === 'UNAUTHENTICATED') return 'That token is not valid, or it was revoked.';
    if (err.code === 'FORBIDDEN') return 'That token cannot review memory. Use a reviewer or admin token (agent tokens cannot sign in here).';
    if (err.code === 'NETWORK') return 'The memvet server cannot be reached.';
    return err.message;
  }
  return 'Sign-in failed.';
}

async function signIn(token, remember) {
  app.counts.reset();
  const since = app.counts.mark();
  const data = await gql(Q.WHOAMI, {}, { token });
  if (String(data.viewer.role).toUpperCase() === 'AGENT') throw new ApiError('agent', 'FORBIDDEN');
  app.viewer = data.viewer;
  storeToken(token, remember);
  app.token = token;
  setToken(token);
  app.setPersona(data.activePersona);
  const who = $('#viewer-chip');
  who.textContent = `${String(data.viewer.role).toLowerCase()} · ${data.viewer.name}`;
  who.title = data.viewer.namespaces ? `Limited to: ${data.viewer.namespaces.join(', ')}` : 'All namespaces';
  app.counts.set(data.queueStats, since);
  startSession();
}

function startSession() {
  $('#signin').hidden = true;
  $('#app').hidden = false;
  $('#session').hidden = false;
  for (const view of Object.values(app.views)) view.reset?.();
  const fromHash = location.hash.replace('#', '');
  selectTab(TABS.includes(fromHash) ? fromHash : 'pending', { focus: false, force: true });
  startLive();
  $('#main').focus({ preventScroll: true });
}

function signOut() {
  clearToken();
  setToken(null);
  app.token = null;
  app.viewer = null;
  for (const view of Object.values(app.views)) view.reset?.();
  showSignin('');
  announce('Signed out.');
}

function setConn(state) {
  const el = $('#conn');
  el.dataset.state = state;
  const text = {
    live: 'Live', connecting: 'Connecting…', reconnecting: 'Reconnecting…', denied: 'Live updates refused', off: 'Offline',
  }[state] || state;
  $('#conn-text').textContent = text;
  el.title = state === 'live' ? 'New candidates appear as they arrive' : 'Live updates are not connected; retrying';
}

function startLive() {
  app.live?.stop();
  const live = new LiveClient({
    token: app.token,
    onStatus: setConn,
    onReconnect: () => {
      // events may have been missed while disconnected
      app.views[app.tab].refresh?.();
      app.scheduleStats();
    },
  });
  live.subscribe(Q.REVIEW_EVENTS, {}, {
    next: (data) => {
      const ev = data && data.reviewEvents;
      if (!ev) return;
      app.counts.apply(ev);
      for (const view of Object.values(app.views)) view.onEvent?.(ev);
    },
    error: () => setConn('denied'),
  });
  app.live = live;
  live.start();
}

function selectTab(name, { focus = true, force = false } = {}) {
  if (!TABS.includes(name)) return;
  const changed = name !== app.tab;
  app.tab = name;
  for (const t of TABS) {
    const tab = document.getElementById(`tab-${t}`);
    const panel = document.getElementById(`panel-${t}`);
    const on = t === name;
    tab.setAttribute('aria-selected', on ? 'true' : 'false');
    tab.tabIndex = on ? 0 : -1;
    panel.hidden = !on;
  }
  if (location.hash !== `#${name}`) history.replaceState(history.state, '', `#${name}`);
  if (changed || force) app.views[name].show();
  if (focus) document.getElementById(`tab-${name}`).focus();
}

function helpDialog() {
  const dialog = $('#help-dialog');
  if (!dialog.open) dialog.showModal();
}

function onKeydown(event) {
  if ($('#app').hidden) return;
  if (document.querySelector('dialog[open]')) return; // dialogs handle their own keys
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const typing = isTyping(event.target);
  if (typing) {
    if (event.key === 'Escape') {
      if (app.views[app.tab].onKey?.('Escape', event)) event.preventDefault();
      else event.target.blur();
    }
    return;
  }
  const key = event.key;
  if (key === '?') { event.preventDefault(); helpDialog(); return; }
  if (key === '1' || key === '2' || key === '3') {
    event.preventDefault();
    selectTab(TABS[Number(key) - 1]);
    return;
  }
  if (app.views[app.tab].onKey?.(key, event)) event.preventDefault();
}

function wireTabs() {
  const tablist = $('.tabs');
  for (const tab of $$('[role=tab]', tablist)) {
    tab.addEventListener('click', () => selectTab(tab.dataset.tab, { focus: false }));
  }
  tablist.addEventListener('keydown', (event) => {
    const i = TABS.indexOf(app.tab);
    let next = null;
    if (event.key === 'ArrowRight') next = TABS[(i + 1) % TABS.length];
    else if (event.key === 'ArrowLeft') next = TABS[(i + TABS.length - 1) % TABS.length];
    else if (event.key === 'Home') next = TABS[0];
    else if (event.key === 'End') next = TABS[TABS.length - 1];
    if (next) {
      event.preventDefault();
      event.stopPropagation();
      selectTab(next);
    }
  });
  window.addEventListener('hashchange', () => {
    const name = location.hash.replace('#', '');
    if (TABS.includes(name) && name !== app.tab && !$('#app').hidden) selectTab(name, { focus: false });
  });
}

function wireSignin() {
  $('#signin-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = $('#token-input').value.trim();
    const err = $('#signin-error');
    if (!token) {
      err.textContent = 'Paste a token first.';
      err.hidden = false;
      return;
    }
    const button = $('#signin-form button[type=submit]');
    button.disabled = true;
    try {
      await signIn(token, $('#remember-input').checked);
      announce('Signed in.');
    } catch (e) {
      err.textContent = describeSigninError(e);
      err.hidden = false;
      $('#token-input').select();
    } finally {
      button.disabled = false;
    }
  });
  $('#signout-btn').addEventListener('click', signOut);
  $('#help-btn').addEventListener('click', helpDialog);
}

async function boot() {
  const fromUrl = takeTokenFromUrl();
  wireSignin();
  wireTabs();
  app.views.pending = new PendingView($('#panel-pending'), app);
  app.views.approved = new ApprovedView($('#panel-approved'), app);
  app.views.advanced = new AdvancedView($('#panel-advanced'), app);
  setUnauthorizedHandler(() => {
    if (!app.token) return;
    clearToken();
    setToken(null);
    app.token = null;
    showSignin('Your session ended: the token is no longer valid. Sign in again.');
  });
  document.addEventListener('keydown', onKeydown);
  const token = fromUrl || readStoredToken();
  if (!token) {
    showSignin('');
    return;
  }
  try {
    await signIn(token, !fromUrl && Boolean(localStorage.getItem(TOKEN_KEY)));
  } catch (e) {
    clearToken();
    showSignin(describeSigninError(e));
  }
}

boot();
