// The pending queue: filters, counts per namespace, in-place edit, approve (optionally
// replacing a related memory), reject, bulk actions, live updates, related memories, history.
import { gql, unwrap, ApiError } from './gql.js';
import * as Q from './queries.js';
import {
  h, $, KINDS, SOURCES, CRITICAL_KINDS, lower, kindBadge, pct, relTime, timeEl, ageDays,
  announce, confirmDialog, nextId,
} from './dom.js';
import { openTurn } from './turn.js';

const PAGE = 50;
const ORDERS = [
  ['NEWEST', 'Newest first'],
  ['OLDEST', 'Oldest first'],
  ['OBSERVATIONS', 'Most observed'],
  ['CONFIDENCE', 'Most confident'],
  ['LAST_OBSERVED', 'Recently observed'],
];
const STALE_DAYS = 90;
const snippet = (s, n = 70) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
// an explicit or manual candidate seen once has no stored turn behind it
const hasTurn = (c) => !(c.observations <= 1 && ['EXPLICIT', 'MANUAL'].includes(String(c.source).toUpperCase()));
const isPending = (c) => c && String(c.status).toUpperCase() === 'PENDING';

function compare(order) {
  const t = (iso) => Date.parse(iso) || 0;
  switch (order) {
    case 'OLDEST': return (a, b) => t(a.createdAt) - t(b.createdAt);
    case 'OBSERVATIONS': return (a, b) => b.observations - a.observations || t(b.createdAt) - t(a.createdAt);
    case 'CONFIDENCE': return (a, b) => b.confidence - a.confidence || t(b.createdAt) - t(a.createdAt);
    case 'LAST_OBSERVED': return (a, b) => t(b.lastObservedAt) - t(a.lastObservedAt);
    default: return (a, b) => t(b.createdAt) - t(a.createdAt);
  }
}

export function staleNote(memory) {
  if (!CRITICAL_KINDS.has(String(memory.kind).toUpperCase())) return null;
  const days = ageDays(memory.updatedAt || memory.approvedAt);
  if (days === null) return null;
  const stale = days >= STALE_DAYS;
  return h('span', {
    class: ['badge', stale ? 'stale' : 'critical'],
    title: stale ? `A ${lower(memory.kind)} approved ${Math.round(days)} days ago: check it still holds` : `Approved ${Math.round(days)} days ago`,
  }, stale ? `stale? ${Math.round(days)} d old` : `${lower(memory.kind)} · ${days < 1 ? 'approved today' : `${Math.round(days)} d old`}`);
}

export class PendingView {
  constructor(root, app) {
    this.root = root;
    this.app = app;
    this.reset();
    this.build();
  }

  reset() {
    this.items = [];
    this.total = 0;
    this.cursor = null;
    this.hasNext = false;
    this.filters = { status: 'PENDING', namespace: '', kind: '', source: '', order: 'NEWEST', text: '' };
    this.activeId = null;
    this.selected = new Set();
    this.editing = null; // { id, draft }
    this.fresh = new Map();
    this.replace = new Map();
    this.details = new Map();
    this.stats = null;
    this.namespaces = [];
    this.loaded = false;
    this.busy = new Set();
    this.rowEls = new Map();
    if (this.list) this.renderAll();
  }

  // ------------------------------------------------------------------ layout
  build() {
    const f = this.filters;
    const sel = (id, label, options, key) => {
      const select = h('select', { id, on: { change: () => { this.filters[key] = select.value; this.refresh(); } } },
        options.map(([value, text]) => h('option', { value }, text)));
      return h('label', { class: 'field', for: id }, h('span', {}, label), select);
    };
    this.nsSelect = h('select', { id: 'f-namespace', on: { change: () => { this.filters.namespace = this.nsSelect.value; this.refresh(); } } });
    this.textInput = h('input', {
      id: 'f-text', type: 'search', placeholder: 'Filter loaded candidates…', 'aria-keyshortcuts': '/', autocomplete: 'off',
      on: { input: () => { this.filters.text = this.textInput.value; this.renderList(); } },
    });
    this.toolbar = h('div', { class: 'toolbar', role: 'search', 'aria-label': 'Filter the queue' },
      h('label', { class: 'field grow', for: 'f-text' }, h('span', {}, 'Search'), this.textInput),
      h('label', { class: 'field', for: 'f-namespace' }, h('span', {}, 'Namespace'), this.nsSelect),
      sel('f-kind', 'Kind', [['', 'All kinds'], ...KINDS.map((k) => [k, lower(k)])], 'kind'),
      sel('f-source', 'Source', [['', 'All sources'], ...SOURCES.map((s) => [s, lower(s)])], 'source'),
      sel('f-order', 'Sort', ORDERS, 'order'),
      sel('f-status', 'Showing', [['PENDING', 'Pending'], ['REJECTED', 'Rejected'], ['ARCHIVED', 'Archived']], 'status'));
    void f;
    this.chips = h('div', { class: 'ns-chips', role: 'group', 'aria-label': 'Pending per namespace' });
    this.selectAll = h('input', {
      type: 'checkbox', id: 'select-all', 'aria-label': 'Select all shown candidates',
      on: { change: () => this.toggleAll(this.selectAll.checked) },
    });
    this.bulkInfo = h('span', { class: 'bulk-info', 'aria-live': 'polite' });
    this.bulkApprove = h('button', { type: 'button', class: 'btn', on: { click: () => this.bulk('approve') } }, 'Approve selected');
    this.bulkReject = h('button', { type: 'button', class: 'btn', on: { click: () => this.bulk('reject') } }, 'Reject selected');
    this.bulkbar = h('div', { class: 'bulkbar', role: 'toolbar', 'aria-label': 'Bulk actions' },
      h('label', { class: 'check', for: 'select-all' }, this.selectAll, h('span', {}, 'Select all')),
      this.bulkInfo, this.bulkApprove, this.bulkReject);
    this.list = h('ul', { class: 'queue', id: 'queue', 'aria-label': 'Pending candidates' });
    this.more = h('button', { type: 'button', class: 'btn ghost more', hidden: true, on: { click: () => this.loadMore() } }, 'Load more');
    this.empty = h('div', { class: 'empty', hidden: true });
    this.detail = h('aside', { class: 'detail', 'aria-label': 'Candidate details', id: 'detail' });
    this.root.replaceChildren(
      this.toolbar,
      this.chips,
      h('div', { class: 'split' },
        h('div', { class: 'split-main' }, this.bulkbar, this.list, this.empty, this.more),
        this.detail));
  }

  show() {
    if (!this.loaded) this.refresh();
    else this.renderAll();
  }

  // ------------------------------------------------------------------ data
  variables(after = null) {
    const f = this.filters;
    return {
      status: f.status || 'PENDING', namespace: f.namespace || null, kind: f.kind || null, source: f.source || null,
      order: f.order || 'NEWEST', first: PAGE, after,
    };
  }

  async refresh() {
    const token = (this.loadToken = Symbol('load'));
    this.list.setAttribute('aria-busy', 'true');
    try {
      const data = await gql(Q.PENDING, this.variables());
      if (token !== this.loadToken) return;
      const conn = data.candidates;
      this.items = conn.edges.map((e) => e.node);
      this.total = conn.totalCount;
      this.cursor = conn.pageInfo.endCursor;
      this.hasNext = conn.pageInfo.hasNextPage;
      this.namespaces = data.namespaces || [];
      this.setStats(data.queueStats, false);
      this.loaded = true;
      const keep = new Set(this.items.map((c) => c.id));
      for (const id of this.selected) if (!keep.has(id)) this.selected.delete(id);
      if (!keep.has(this.activeId)) this.activeId = this.items[0]?.id ?? null;
      if (this.editing && !keep.has(this.editing.id)) this.editing = null;
      this.renderAll();
    } catch (err) {
      if (token !== this.loadToken) return;
      this.showError(err);
    } finally {
      if (token === this.loadToken) this.list.removeAttribute('aria-busy');
    }
  }

  async loadMore() {
    if (!this.hasNext) return;
    try {
      const data = await gql(Q.PENDING, this.variables(this.cursor));
      const conn = data.candidates;
      const seen = new Set(this.items.map((c) => c.id));
      this.items.push(...conn.edges.map((e) => e.node).filter((c) => !seen.has(c.id)));
      this.cursor = conn.pageInfo.endCursor;
      this.hasNext = conn.pageInfo.hasNextPage;
      this.total = conn.totalCount;
      this.renderList();
    } catch (err) {
      this.showError(err);
    }
  }

  showError(err) {
    announce(err.message || 'Something went wrong.', { error: true });
  }

  setStats(stats, render = true) {
    if (!stats) return;
    this.stats = stats;
    this.app.setCount('pending', stats.pending);
    if (stats.memories !== undefined) this.app.setCount('approved', stats.memories);
    if (render) this.renderChips();
  }

  get reviewing() { return this.filters.status === 'PENDING'; }

  matches(c) {
    const f = this.filters;
    if (String(c.status).toUpperCase() !== f.status) return false;
    if (f.namespace && c.namespace !== f.namespace) return false;
    if (f.kind && String(c.kind).toUpperCase() !== f.kind) return false;
    if (f.source && String(c.source).toUpperCase() !== f.source) return false;
    return true;
  }

  visibleItems() {
    const text = this.filters.text.trim().toLowerCase();
    if (!text) return this.items;
    return this.items.filter((c) => `${c.content}\n${c.namespace}\n${lower(c.kind)}`.toLowerCase().includes(text));
  }

  // ------------------------------------------------------------------ rendering
  renderAll() {
    this.renderChips();
    this.renderList();
  }

  renderChips() {
    const counts = (this.stats && this.stats.pendingByNamespace) || [];
    const names = new Set([...this.namespaces, ...counts.map((c) => c.namespace)]);
    if (this.filters.namespace) names.add(this.filters.namespace);
    const current = this.filters.namespace;
    this.nsSelect.replaceChildren(
      h('option', { value: '' }, 'All namespaces'),
      ...[...names].sort().map((ns) => h('option', { value: ns, selected: ns === current }, ns)));
    this.nsSelect.value = current;
    const total = this.stats ? this.stats.pending : this.total;
    const chip = (ns, label, count) => h('button', {
      type: 'button', class: 'chip', 'aria-pressed': String(current === ns),
      on: { click: () => { this.filters.namespace = ns; this.nsSelect.value = ns; this.refresh(); } },
    }, h('span', { class: 'chip-label' }, label), h('span', { class: 'chip-count' }, String(count)));
    this.chips.replaceChildren(
      chip('', 'All', total ?? 0),
      ...counts.filter((c) => c.count > 0).map((c) => chip(c.namespace, c.namespace, c.count)));
  }

  renderList() {
    const hadFocus = this.root.contains(document.activeElement) && document.activeElement.closest('.queue');
    const items = this.visibleItems();
    if (items.length && !items.some((c) => c.id === this.activeId)) this.activeId = items[0].id;
    if (!items.length) this.activeId = null;
    const rows = items.map((c) => {
      if (this.editing && this.editing.id === c.id && this.rowEls.has(c.id)) return this.rowEls.get(c.id);
      const row = this.renderRow(c);
      this.rowEls.set(c.id, row);
      return row;
    });
    this.list.replaceChildren(...rows);
    let emptyText = 'Nothing matches these filters.';
    if (this.total === 0 && !this.filters.namespace && !this.filters.kind && !this.filters.source) {
      emptyText = this.reviewing ? 'The queue is empty. New candidates appear here as agents learn.' : `No ${lower(this.filters.status)} candidates.`;
    }
    this.bulkbar.hidden = !this.reviewing;
    this.list.classList.toggle('readonly', !this.reviewing);
    this.empty.hidden = items.length > 0 || !this.loaded;
    this.empty.replaceChildren(h('p', {}, emptyText));
    this.more.hidden = !this.hasNext;
    this.list.setAttribute('aria-label', `${this.reviewing ? 'Pending' : lower(this.filters.status)} candidates, ${items.length} shown of ${this.total}`);
    this.updateBulkbar();
    if (hadFocus) this.focusActive();
    this.renderDetail();
  }

  renderRow(c) {
    const id = c.id;
    const active = id === this.activeId;
    const contentId = nextId('c');
    const metaId = nextId('m');
    const fresh = this.fresh.get(id);
    const kind = String(c.kind).toUpperCase();
    const check = h('input', {
      type: 'checkbox', class: 'row-check', checked: this.selected.has(id), disabled: !isPending(c),
      'aria-label': `Select: ${snippet(c.content, 60)}`,
      on: { change: (e) => { this.toggle(id, e.target.checked); } },
    });
    const replaceId = this.replace.get(id);
    const row = h('li', {
      class: ['cand', active && 'is-active', fresh && 'is-fresh', CRITICAL_KINDS.has(kind) && 'is-critical'],
      dataset: { id, kind: lower(kind) },
      tabindex: active ? '0' : '-1',
      'aria-current': active ? 'true' : null,
      'aria-labelledby': contentId,
      'aria-describedby': metaId,
      on: {
        click: (e) => { if (!e.target.closest('button, input, a, select, textarea')) this.activate(id, true); },
        focusin: () => { if (this.activeId !== id) this.activate(id, false); },
      },
    },
    h('div', { class: 'cand-check' }, check),
    h('div', { class: 'cand-main' },
      h('div', { class: 'cand-top' },
        kindBadge(c.kind),
        fresh ? h('span', { class: 'badge fresh-tag' }, fresh === 'merged' ? `seen again · ${c.observations}×` : fresh) : null,
        CRITICAL_KINDS.has(kind) ? h('span', { class: 'badge critical', title: 'Decisions and postmortems weigh more in recall: be strict' }, 'review strictly') : null,
        replaceId ? h('span', { class: 'badge replaces' }, 'replaces a memory on approve') : null),
      h('p', { class: 'cand-content', id: contentId }, c.content),
      h('div', { class: 'cand-meta', id: metaId },
        h('span', { class: 'ns', title: 'Namespace' }, c.namespace),
        h('span', { title: 'Source' }, lower(c.source)),
        h('span', { title: 'Confidence' }, `confidence ${pct(c.confidence)}`),
        h('span', { title: 'Observations, and in how many separate conversations (one per token outside a conversation): the policy counts the second', class: c.observations > 1 ? 'strong' : '' }, `seen ${c.observations}× · in ${c.independentObservations} conversation${c.independentObservations === 1 ? '' : 's'}`),
        h('span', { title: 'First observed' }, timeEl(c.createdAt))),
      isPending(c) ? null : h('div', { class: 'review-line' },
        `${lower(c.status)}${c.reviewedBy ? ` by ${c.reviewedBy}` : ''} `, timeEl(c.reviewedAt),
        c.reviewReason ? h('span', { class: 'reason' }, ` — Reason: ${c.reviewReason}`) : null)),
    isPending(c) ? h('div', { class: 'cand-actions' },
      hasTurn(c) ? h('button', { type: 'button', class: 'btn ghost sm', 'aria-label': `Open the original turn: ${snippet(c.content, 40)}`, on: { click: () => this.openTurn(id) } }, 'Turn') : null,
      h('button', { type: 'button', class: 'btn ghost sm', 'aria-label': `Edit: ${snippet(c.content, 40)}`, on: { click: () => this.startEdit(id) } }, 'Edit'),
      h('button', { type: 'button', class: 'btn sm', 'aria-label': `Reject: ${snippet(c.content, 40)}`, on: { click: () => this.reject(id) } }, 'Reject'),
      h('button', { type: 'button', class: 'btn primary sm', 'aria-label': `Approve: ${snippet(c.content, 40)}`, on: { click: () => this.approve(id) } }, replaceId ? 'Approve & replace' : 'Approve'))
      : h('div', { class: 'cand-actions' },
        hasTurn(c) ? h('button', { type: 'button', class: 'btn ghost sm', 'aria-label': `Open the original turn: ${snippet(c.content, 40)}`, on: { click: () => this.openTurn(id) } }, 'Turn') : null));
    if (this.editing && this.editing.id === id) this.fillEditor(row, c);
    return row;
  }

  updateBulkbar() {
    const n = this.selected.size;
    this.bulkInfo.textContent = n ? `${n} selected` : '';
    this.bulkApprove.disabled = n === 0;
    this.bulkReject.disabled = n === 0;
    const shown = this.visibleItems();
    this.selectAll.checked = shown.length > 0 && shown.every((c) => this.selected.has(c.id));
    this.selectAll.indeterminate = n > 0 && !this.selectAll.checked;
    this.bulkbar.classList.toggle('has-selection', n > 0);
  }

  // ------------------------------------------------------------------ selection
  activate(id, focus) {
    if (this.activeId === id) {
      if (focus) this.focusActive();
      return;
    }
    this.activeId = id;
    for (const row of this.list.children) {
      const on = row.dataset.id === id;
      row.classList.toggle('is-active', on);
      row.tabIndex = on ? 0 : -1;
      if (on) row.setAttribute('aria-current', 'true');
      else row.removeAttribute('aria-current');
    }
    if (focus) this.focusActive();
    this.renderDetail();
  }

  focusActive() {
    const row = this.activeRow();
    if (row) {
      row.focus({ preventScroll: true });
      row.scrollIntoView({ block: 'nearest' });
    }
  }

  activeRow() {
    return this.activeId ? this.list.querySelector(`li[data-id="${CSS.escape(this.activeId)}"]`) : null;
  }

  move(delta) {
    const items = this.visibleItems();
    if (!items.length) return;
    const i = items.findIndex((c) => c.id === this.activeId);
    const next = items[Math.min(items.length - 1, Math.max(0, (i < 0 ? 0 : i + delta)))];
    this.activate(next.id, true);
  }

  toggle(id, on) {
    if (on) this.selected.add(id); else this.selected.delete(id);
    const row = this.list.querySelector(`li[data-id="${CSS.escape(id)}"] .row-check`);
    if (row) row.checked = on;
    this.updateBulkbar();
  }

  toggleAll(on) {
    for (const c of this.visibleItems()) this.toggle(c.id, on);
  }

  // ------------------------------------------------------------------ editing
  startEdit(id) {
    const c = this.items.find((x) => x.id === id);
    if (!c || !isPending(c)) return;
    this.activate(id, false);
    this.editing = { id };
    const row = this.rowEls.get(id) && this.rowEls.get(id).isConnected ? this.rowEls.get(id) : this.activeRow();
    if (row) this.fillEditor(row, c);
  }

  fillEditor(row, c) {
    const main = row.querySelector('.cand-main');
    const actions = row.querySelector('.cand-actions');
    const cid = nextId('edit');
    const content = h('textarea', { id: `${cid}-content`, class: 'edit-content', rows: '3', value: c.content, maxlength: '16000' });
    content.value = c.content;
    const kind = h('select', { id: `${cid}-kind` }, KINDS.map((k) => h('option', { value: k, selected: k === String(c.kind).toUpperCase() }, lower(k))));
    const listId = `${cid}-ns-list`;
    const ns = h('input', { id: `${cid}-ns`, type: 'text', value: c.namespace, list: listId, spellcheck: 'false', autocomplete: 'off' });
    ns.value = c.namespace;
    const datalist = h('datalist', { id: listId }, this.namespaces.map((n) => h('option', { value: n })));
    const err = h('p', { class: 'error', role: 'alert', hidden: true });
    const readEdit = () => {
      const edit = {};
      const text = content.value.trim();
      if (text !== c.content) edit.content = text;
      if (kind.value !== String(c.kind).toUpperCase()) edit.kind = kind.value;
      if (ns.value.trim() !== c.namespace) edit.namespace = ns.value.trim();
      return edit;
    };
    const form = h('form', {
      class: 'editor', 'aria-label': 'Edit candidate before approving',
      on: {
        submit: (e) => { e.preventDefault(); this.approve(c.id, { edit: readEdit(), errorEl: err }); },
        keydown: (e) => {
          if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); this.cancelEdit(); }
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); this.approve(c.id, { edit: readEdit(), errorEl: err }); }
        },
      },
    },
    h('label', { for: content.id }, 'Content'), content,
    h('div', { class: 'editor-row' },
      h('label', { class: 'field', for: kind.id }, h('span', {}, 'Kind'), kind),
      h('label', { class: 'field grow', for: ns.id }, h('span', {}, 'Namespace'), ns, datalist)),
    err,
    h('div', { class: 'editor-actions' },
      h('button', { type: 'submit', class: 'btn primary sm' }, 'Approve as edited'),
      h('button', { type: 'button', class: 'btn sm', on: { click: () => this.saveEdit(c.id, readEdit(), err) } }, 'Save edit'),
      h('button', { type: 'button', class: 'btn ghost sm', on: { click: () => this.cancelEdit() } }, 'Cancel'),
      h('span', { class: 'hint' }, 'Ctrl+Enter approves · Esc cancels')));
    main.replaceChildren(form);
    actions.hidden = true;
    row.classList.add('is-editing');
    this.rowEls.set(c.id, row);
    content.focus();
    content.setSelectionRange(content.value.length, content.value.length);
  }

  cancelEdit() {
    if (!this.editing) return;
    const id = this.editing.id;
    this.editing = null;
    this.rowEls.delete(id);
    this.renderList();
    this.activate(id, true);
    this.focusActive();
  }

  async saveEdit(id, edit, errEl) {
    if (!Object.keys(edit).length) { this.cancelEdit(); return; }
    if (edit.content === '') { errEl.textContent = 'Content must not be empty.'; errEl.hidden = false; return; }
    try {
      const data = await gql(Q.EDIT_CANDIDATE, { id, edit });
      const cand = unwrap(data.editCandidate);
      this.upsert(cand);
      this.editing = null;
      this.rowEls.delete(id);
      this.details.delete(id);
      this.renderList();
      this.activate(id, true);
      this.focusActive();
      announce('Edit saved.');
    } catch (err) {
      errEl.textContent = err.message;
      errEl.hidden = false;
    }
  }

  // ------------------------------------------------------------------ review actions
  async approve(id, { edit = null, errorEl = null } = {}) {
    const c = this.items.find((x) => x.id === id);
    if (!c || !isPending(c) || this.busy.has(id)) return;
    if (edit && edit.content === '') {
      if (errorEl) { errorEl.textContent = 'Content must not be empty.'; errorEl.hidden = false; }
      return;
    }
    const supersede = this.replace.get(id) || null;
    this.busy.add(id);
    try {
      const vars = { id, edit: edit && Object.keys(edit).length ? edit : null, supersede };
      const data = await gql(Q.APPROVE, vars);
      const memory = unwrap(data.approveCandidate);
      this.removeItem(id);
      announce(supersede ? `Approved and replaced the older memory: ${snippet(memory.content)}` : `Approved: ${snippet(memory.content)}`);
      this.app.scheduleStats();
      this.app.views.approved.invalidate();
    } catch (err) {
      if (errorEl) { errorEl.textContent = err.message; errorEl.hidden = false; }
      else this.showError(err);
      if (err instanceof ApiError && (err.code === 'NOT_FOUND' || err.code === 'INVALID_TRANSITION')) this.refresh();
    } finally {
      this.busy.delete(id);
    }
  }

  reasonField(label = 'Reason (optional)') {
    const id = nextId('reason');
    const input = h('input', { id, type: 'text', maxlength: '500', autocomplete: 'off', placeholder: 'e.g. wrong, one-off, outdated' });
    return { el: h('div', { class: 'field-block' }, h('label', { for: id }, label), input), input };
  }

  async reject(id) {
    const c = this.items.find((x) => x.id === id);
    if (!c || !isPending(c) || this.busy.has(id)) return;
    const { el, input } = this.reasonField();
    const ok = await confirmDialog({
      title: 'Reject this candidate?',
      body: [h('blockquote', { class: 'quote' }, c.content), 'Equivalent observations will be counted on it and not asked again.'],
      ok: 'Reject', extra: el,
    });
    if (!ok) return;
    this.busy.add(id);
    try {
      const data = await gql(Q.REJECT, { id, reason: input.value.trim() || null });
      unwrap(data.rejectCandidate);
      this.removeItem(id);
      announce(`Rejected: ${snippet(c.content)}`);
      this.app.scheduleStats();
    } catch (err) {
      this.showError(err);
    } finally {
      this.busy.delete(id);
    }
  }

  async bulk(action) {
    const ids = this.items.filter((c) => this.selected.has(c.id)).map((c) => c.id);
    if (!ids.length) return;
    let reason = null;
    if (action === 'approve') {
      const critical = this.items.filter((c) => this.selected.has(c.id) && CRITICAL_KINDS.has(String(c.kind).toUpperCase())).length;
      const ok = await confirmDialog({
        title: `Approve ${ids.length} candidate${ids.length === 1 ? '' : 's'}?`,
        body: [
          'They become memories that agents recall.',
          critical ? h('p', { class: 'warn' }, `${critical} of them ${critical === 1 ? 'is a decision or postmortem' : 'are decisions or postmortems'}: these weigh more in recall.`) : null,
        ],
        ok: 'Approve', danger: false,
      });
      if (!ok) return;
    } else {
      const { el, input } = this.reasonField();
      const ok = await confirmDialog({ title: `Reject ${ids.length} candidate${ids.length === 1 ? '' : 's'}?`, body: 'They will not be asked again.', ok: 'Reject', extra: el });
      if (!ok) return;
      reason = input.value.trim() || null;
    }
    try {
      const data = action === 'approve'
        ? await gql(Q.BULK_APPROVE, { ids })
        : await gql(Q.BULK_REJECT, { ids, reason });
      const results = action === 'approve' ? data.approveCandidates : data.rejectCandidates;
      let done = 0;
      const failures = [];
      for (const item of results) {
        const r = item.result;
        if (!r || (typeof r.code === 'string' && !('id' in r))) failures.push(r ? r.message : 'failed');
        else { done += 1; this.removeItem(item.id, false); }
      }
      this.selected.clear();
      this.renderList();
      this.focusActive();
      const verb = action === 'approve' ? 'Approved' : 'Rejected';
      announce(`${verb} ${done} candidate${done === 1 ? '' : 's'}${failures.length ? `; ${failures.length} failed: ${failures[0]}` : ''}.`, { error: failures.length > 0 });
      this.app.scheduleStats();
      if (action === 'approve') this.app.views.approved.invalidate();
    } catch (err) {
      this.showError(err);
      this.refresh();
    }
  }

  removeItem(id, render = true) {
    const items = this.visibleItems();
    const i = items.findIndex((c) => c.id === id);
    const wasActive = this.activeId === id;
    const before = this.items.length;
    this.items = this.items.filter((c) => c.id !== id);
    if (this.items.length < before) this.total = Math.max(0, this.total - 1);
    this.selected.delete(id);
    this.replace.delete(id);
    this.details.delete(id);
    this.rowEls.delete(id);
    if (this.editing && this.editing.id === id) this.editing = null;
    if (wasActive) {
      const rest = this.visibleItems();
      this.activeId = rest.length ? rest[Math.min(Math.max(i, 0), rest.length - 1)].id : null;
    }
    if (render) {
      const focusInList = this.root.contains(document.activeElement) || document.activeElement === document.body;
      this.renderList();
      if (focusInList && wasActive) this.focusActive();
    }
  }

  upsert(cand) {
    const i = this.items.findIndex((c) => c.id === cand.id);
    if (i >= 0) this.items[i] = { ...this.items[i], ...cand };
    else {
      this.items.push(cand);
      this.total += 1;
    }
    this.items.sort(compare(this.filters.order));
  }

  // ------------------------------------------------------------------ live events
  onEvent(ev) {
    const action = lower(ev.action);
    const cand = ev.candidate;
    if (!this.loaded) return;
    if (!this.reviewing) {
      if (['rejected', 'archived', 'revived', 'merged'].includes(action)) {
        clearTimeout(this.eventTimer);
        this.eventTimer = setTimeout(() => this.refresh(), 300);
      }
      return;
    }
    if (['created', 'merged', 'revived', 'edited'].includes(action) && cand) {
      if (!isPending(cand)) return;
      const known = this.items.some((c) => c.id === cand.id);
      if (!this.matches(cand)) {
        if (known) this.removeItem(cand.id);
        return;
      }
      if (this.editing && this.editing.id === cand.id) {
        this.upsert(cand);
        return;
      }
      this.upsert(cand);
      this.details.delete(cand.id);
      this.rowEls.delete(cand.id);
      const tag = action === 'merged' ? 'merged' : (known ? (action === 'edited' ? 'edited' : 'updated') : 'new');
      if (action !== 'edited' || !known) this.markFresh(cand.id, tag);
      this.renderList();
      if (action === 'created' || (action === 'revived' && !known)) announce(`New candidate in ${cand.namespace}: ${snippet(cand.content)}`);
      else if (action === 'merged') announce(`Seen again (${cand.observations}×): ${snippet(cand.content)}`);
      return;
    }
    if (['approved', 'rejected', 'archived'].includes(action)) {
      const id = cand ? cand.id : ev.candidateId;
      if (id && this.items.some((c) => c.id === id)) {
        this.removeItem(id);
        if (action === 'approved' && /policy/i.test(ev.actor || '')) announce(`Auto-approved by the policy: ${snippet(cand ? cand.content : '')}`);
        else announce(`${action[0].toUpperCase()}${action.slice(1)} by ${ev.actor || 'another reviewer'}.`);
      }
    }
    if (['memory_updated', 'memory_deleted', 'approved'].includes(action)) {
      // related memories may have changed
      this.details.clear();
      if (this.activeId) this.renderDetail();
    }
  }

  markFresh(id, tag) {
    this.fresh.set(id, tag);
    setTimeout(() => {
      if (this.fresh.get(id) !== tag) return;
      this.fresh.delete(id);
      const row = this.list.querySelector(`li[data-id="${CSS.escape(id)}"]`);
      if (row) {
        row.classList.remove('is-fresh');
        row.querySelector('.fresh-tag')?.remove();
      }
    }, 12000);
  }

  // ------------------------------------------------------------------ details
  async loadDetail(id) {
    if (this.details.has(id)) return this.details.get(id);
    const promise = gql(Q.CANDIDATE_DETAIL, { id }).catch((err) => {
      this.details.delete(id);
      throw err;
    });
    this.details.set(id, promise);
    return promise;
  }

  renderDetail() {
    const id = this.activeId;
    const c = this.items.find((x) => x.id === id);
    if (!c) {
      this.detail.replaceChildren(h('p', { class: 'muted pad' }, this.items.length ? 'Select a candidate to see where it came from and what it would replace.' : ''));
      return;
    }
    clearTimeout(this.detailTimer);
    const stamp = (this.detailStamp = Symbol('detail'));
    if (!this.detail.querySelector(`[data-for="${CSS.escape(id)}"]`)) {
      this.detail.replaceChildren(h('div', { class: 'pad muted', 'data-for': id }, 'Loading details…'));
    }
    this.detailTimer = setTimeout(async () => {
      try {
        const data = await this.loadDetail(id);
        if (stamp !== this.detailStamp) return;
        this.detail.replaceChildren(this.detailContent(c, data));
      } catch (err) {
        if (stamp !== this.detailStamp) return;
        this.detail.replaceChildren(h('p', { class: 'error pad' }, `Could not load details: ${err.message}`));
      }
    }, 60);
  }

  detailContent(c, data) {
    const full = data.candidate || c;
    const origins = full.origins || [];
    const related = data.related || [];
    const transitions = data.transitions || [];
    const groupName = nextId('replace');
    const chosen = this.replace.get(c.id) || '';
    const setReplace = (memId) => {
      if (memId) this.replace.set(c.id, memId); else this.replace.delete(c.id);
      this.rowEls.delete(c.id);
      const row = this.activeRow();
      if (row && !(this.editing && this.editing.id === c.id)) {
        const fresh = this.renderRow(this.items.find((x) => x.id === c.id));
        row.replaceWith(fresh);
        this.rowEls.set(c.id, fresh);
      }
      announce(memId ? 'On approve, the selected memory will be retired (superseded).' : 'On approve, nothing will be replaced.');
    };
    const radio = (value, label, extra = null) => {
      const rid = nextId('r');
      return h('div', { class: ['related-item', value && 'has-memory'] },
        h('input', { type: 'radio', id: rid, name: groupName, value, checked: chosen === value, on: { change: () => setReplace(value) } }),
        h('label', { for: rid }, label),
        extra);
    };
    const relatedSection = !isPending(c) ? null : h('section', { class: 'detail-section', 'aria-labelledby': `${groupName}-h` },
      h('h3', { id: `${groupName}-h` }, 'Closest approved memories ', h('span', { class: 'muted' }, `in ${c.namespace}`)),
      related.length
        ? h('fieldset', { class: 'related' },
          h('legend', {}, 'On approve, replace (supersede):'),
          radio('', 'Nothing — keep all of them'),
          related.map((hit) => {
            const m = hit.memory;
            return radio(m.id,
              h('span', { class: 'related-label' },
                h('span', { class: 'related-top' }, kindBadge(m.kind), staleNote(m), h('span', { class: 'score', title: 'Similarity score' }, `score ${Number(hit.score).toFixed(2)}`)),
                h('span', { class: 'related-content' }, m.content),
                h('span', { class: 'related-meta muted' }, `approved ${relTime(m.approvedAt)} by ${m.approvedBy || 'unknown'} · seen ${m.observations}×`)));
          }))
        : h('p', { class: 'muted' }, 'No approved memory in this namespace is close to it.'));
    const originSection = h('section', { class: 'detail-section' },
      h('h3', {}, `Where it came from `, h('span', { class: 'muted' }, `(${origins.length} observation${origins.length === 1 ? '' : 's'})`)),
      origins.length
        ? h('ol', { class: 'origins' }, origins.map((o, i) => h('li', {},
          h('div', { class: 'origin-meta' },
            h('span', { class: 'badge' }, lower(o.source)),
            o.conversationId ? h('span', { class: 'mono', title: 'Conversation' }, o.conversationId) : null,
            o.turnId ? h('span', { class: 'mono', title: 'Turn' }, `turn ${o.turnId}`) : null,
            timeEl(o.createdAt)),
          o.excerpt ? h('blockquote', { class: 'quote' }, o.excerpt) : null,
          o.turnRef ? h('button', { type: 'button', class: 'btn ghost sm', on: { click: () => openTurn(full, origins, i) } }, 'Open turn') : null)))
        : h('p', { class: 'muted' }, 'No recorded origin.'));
    const historySection = h('section', { class: 'detail-section' },
      h('h3', {}, 'History'),
      historyList(transitions));
    return h('div', { 'data-for': c.id, class: 'detail-inner' },
      h('div', { class: 'detail-head' },
        h('h2', {}, 'Candidate'),
        h('div', { class: 'detail-badges' }, kindBadge(c.kind), h('span', { class: 'ns' }, c.namespace))),
      h('p', { class: 'detail-content' }, c.content),
      relatedSection, originSection, historySection);
  }

  async openTurn(id) {
    const c = this.items.find((x) => x.id === id);
    if (!c) return;
    try {
      const data = await this.loadDetail(id);
      const origins = (data.candidate && data.candidate.origins) || [];
      const i = origins.findIndex((o) => o.turnRef);
      if (i < 0) {
        announce('This candidate has no stored turn (it came from an explicit remember or was typed in).');
        return;
      }
      openTurn(data.candidate, origins, i);
    } catch (err) {
      this.showError(err);
    }
  }

  // ------------------------------------------------------------------ keyboard
  onKey(key) {
    if (key === 'Escape') {
      if (this.editing) { this.cancelEdit(); return true; }
      return false;
    }
    switch (key) {
      case 'j': case 'ArrowDown': this.move(1); return true;
      case 'k': case 'ArrowUp': this.move(-1); return true;
      case 'a': if (this.activeId && this.reviewing) this.approve(this.activeId); return true;
      case 'r': if (this.activeId && this.reviewing) this.reject(this.activeId); return true;
      case 'e': if (this.activeId && this.reviewing) this.startEdit(this.activeId); return true;
      case 't': if (this.activeId) this.openTurn(this.activeId); return true;
      case 'x': if (this.activeId && this.reviewing) this.toggle(this.activeId, !this.selected.has(this.activeId)); return true;
      case '/': this.textInput.focus(); this.textInput.select(); return true;
      default: return false;
    }
  }
}

export function historyList(transitions) {
  if (!transitions.length) return h('p', { class: 'muted' }, 'No recorded transitions.');
  return h('ol', { class: 'history' }, transitions.map((t) => {
    let changes = t.changes;
    if (typeof changes === 'string') {
      try { changes = JSON.parse(changes); } catch { changes = null; }
    }
    const changeText = changes && typeof changes === 'object'
      ? Object.entries(changes)
        .filter(([k, v]) => k !== 'observations' && Array.isArray(v) && v.length === 2)
        .map(([k, v]) => `${k}: “${snippet(String(v[0] ?? ''), 60)}” → “${snippet(String(v[1] ?? ''), 60)}”`)
        .join('; ')
      : '';
    return h('li', {},
      h('span', { class: `badge action action-${lower(t.action)}` }, lower(t.action).replace('_', ' ')),
      h('span', { class: 'who' }, ` by ${t.actor || 'unknown'} `),
      timeEl(t.at),
      t.fromStatus || t.toStatus ? h('span', { class: 'muted' }, ` · ${lower(t.fromStatus) || '∅'} → ${lower(t.toStatus) || '∅'}`) : null,
      changeText ? h('div', { class: 'changes' }, `Changed ${changeText}`) : null,
      t.reason ? h('div', { class: 'reason' }, `Reason: ${t.reason}`) : null);
  }));
}

void $;
