// DOM helpers. Everything that comes from agents (content, namespaces, excerpts, reasons,
// actor names) is untrusted: it only ever reaches the page as text nodes via these helpers.
// Nothing in this dashboard assigns innerHTML/outerHTML or uses insertAdjacentHTML.

/**
 * Create an element. `attrs`: class, text, on:{event:fn}, dataset:{}, any attribute
 * (values set with setAttribute; booleans toggle the attribute). Children: nodes, strings
 * (become text nodes), arrays, null/undefined/false (skipped).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
    else if (key === 'text') el.textContent = String(value);
    else if (key === 'on') for (const [ev, fn] of Object.entries(value)) el.addEventListener(ev, fn);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'value') el.value = value;
    else if (key === 'checked' || key === 'selected' || key === 'disabled' || key === 'hidden') el[key] = Boolean(value);
    else if (key.startsWith('on')) throw new Error('use on:{} for listeners');
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

let uid = 0;
export const nextId = (prefix = 'id') => `${prefix}-${++uid}`;

export const KINDS = ['PREFERENCE', 'FACT', 'DECISION', 'PATTERN', 'POSTMORTEM', 'EVENT'];
export const SOURCES = ['EXPLICIT', 'TURN', 'COMPACTION', 'MANUAL'];
export const CRITICAL_KINDS = new Set(['DECISION', 'POSTMORTEM']);

export const lower = (v) => String(v ?? '').toLowerCase();

export function kindBadge(kind) {
  const k = lower(kind);
  return h('span', { class: `badge kind kind-${k.replace(/[^a-z]/g, '')}`, title: `Kind: ${k}` }, k);
}

export function sourceLabel(source) {
  return lower(source);
}

export function pct(conf) {
  if (conf === null || conf === undefined) return '–';
  return Number(conf).toFixed(2);
}

const DAY = 86400000;
export function ageDays(iso) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return null;
  return Math.max(0, (Date.now() - t) / DAY);
}

export function relTime(iso) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const s = Math.max(0, (Date.now() - t) / 1000);
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  const d = Math.round(s / 86400);
  if (d < 60) return `${d} d ago`;
  if (d < 730) return `${Math.round(d / 30)} mo ago`;
  return `${Math.round(d / 365)} y ago`;
}

export function timeEl(iso, prefix = '') {
  if (!iso) return null;
  return h('time', { datetime: iso, title: new Date(iso).toLocaleString() }, prefix + relTime(iso));
}

/** Screen-reader announcement plus a short visible toast. */
export function announce(message, { error = false } = {}) {
  const region = document.getElementById(error ? 'alerts' : 'announcer');
  if (region) {
    region.textContent = '';
    // a fresh text node so repeated identical messages are still announced
    setTimeout(() => { region.textContent = message; }, 30);
  }
  const toasts = document.getElementById('toasts');
  if (toasts) {
    const toast = h('div', { class: ['toast', error && 'toast-error'] }, message);
    toasts.append(toast);
    setTimeout(() => toast.classList.add('leaving'), error ? 6000 : 3500);
    setTimeout(() => toast.remove(), error ? 6600 : 4100);
  }
}

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A pattern that finds `needle` in text, tolerant of whitespace and case differences. */
function needlePattern(needle) {
  const words = String(needle).trim().split(/\s+/).filter(Boolean).map(escapeRegExp);
  if (!words.length) return null;
  return new RegExp(words.join('\\s+'), 'giu');
}

/**
 * Highlight every occurrence of `needle` inside `root` by splitting its text nodes and
 * wrapping the matched parts in <mark> elements created with DOM APIs (never HTML strings).
 * Matches may span adjacent text nodes within one block. Returns the created marks.
 */
export function highlightText(root, needle, className = 'hl') {
  const pattern = needlePattern(needle);
  if (!pattern) return [];
  const marks = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => (n.parentElement && n.parentElement.closest('mark') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  // group text nodes by their block so a match never spans two messages
  const blocks = new Map();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const block = n.parentElement.closest('[data-hl-block]') || root;
    if (!blocks.has(block)) blocks.set(block, []);
    blocks.get(block).push(n);
  }
  for (const nodes of blocks.values()) {
    const text = nodes.map((n) => n.data).join('');
    const ranges = [];
    pattern.lastIndex = 0;
    for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
      if (!m[0].length) { pattern.lastIndex += 1; continue; }
      ranges.push([m.index, m.index + m[0].length]);
    }
    // wrap from the end so earlier offsets stay valid
    for (const [start, end] of ranges.reverse()) {
      const group = [];
      let offset = 0;
      for (const node of nodes) {
        const len = node.data.length;
        const s = Math.max(start, offset);
        const e = Math.min(end, offset + len);
        if (s < e) group.push([node, s - offset, e - offset]);
        offset += len;
      }
      for (const [node, s, e] of group.reverse()) {
        let target = node;
        if (e < target.data.length) target.splitText(e);
        if (s > 0) target = target.splitText(s);
        const mark = document.createElement('mark');
        mark.className = className;
        target.parentNode.insertBefore(mark, target);
        mark.append(target);
        marks.unshift(mark);
      }
    }
  }
  return marks;
}

/** Open a modal confirm dialog; resolves true/false (and the extra element's value, if any). */
export function confirmDialog({ title, body, ok = 'OK', danger = true, extra = null }) {
  const dialog = document.getElementById('confirm-dialog');
  const okBtn = document.getElementById('confirm-ok');
  const cancelBtn = document.getElementById('confirm-cancel');
  document.getElementById('confirm-title').textContent = title;
  const bodyEl = document.getElementById('confirm-body');
  bodyEl.replaceChildren(...(Array.isArray(body) ? body : [body]).filter(Boolean).map((b) => (b instanceof Node ? b : h('p', {}, b))));
  const extraEl = document.getElementById('confirm-extra');
  extraEl.replaceChildren(...(extra ? [extra] : []));
  okBtn.textContent = ok;
  okBtn.className = `btn ${danger ? 'danger' : 'primary'}`;
  const opener = document.activeElement;
  return new Promise((resolve) => {
    let done = false;
    const finish = (value) => {
      if (done) return;
      done = true;
      cancelBtn.removeEventListener('click', onCancel);
      dialog.removeEventListener('close', onClose);
      if (dialog.open) dialog.close();
      if (opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
      resolve(value);
    };
    const onCancel = () => finish(false);
    const onClose = () => finish(dialog.returnValue === 'ok');
    cancelBtn.addEventListener('click', onCancel);
    dialog.addEventListener('close', onClose);
    dialog.returnValue = '';
    dialog.showModal();
    const field = extraEl.querySelector('input, textarea, select');
    (field || okBtn).focus();
  });
}

export function isTyping(target) {
  if (!target || !(target instanceof Element)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag === 'INPUT') {
    const type = (target.getAttribute('type') || 'text').toLowerCase();
    return !['checkbox', 'radio', 'button', 'submit', 'reset'].includes(type);
  }
  return false;
}
