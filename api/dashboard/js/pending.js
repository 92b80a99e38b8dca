// The pending queue view. It composes one module per concept and owns what they share: the
// loaded candidates, paging, the active row and the rendered rows.
//   pending-filters.js  search, selects, namespace chips, the filter state
//   pending-row.js      one candidate's row
//   pending-editor.js   editing a candidate in place
//   pending-actions.js  approve / reject one candidate
//   pending-bulk.js     selection and bulk approve / reject
//   pending-live.js     live review events in the queue
//   pending-detail.js   the detail pane (related memories, origins, history) and the turn
//   pending-keys.js     keyboard shortcuts
// The counts in the tab and the chips live in counts.js (app.counts), shared with the app.
import { gql } from './gql.js';
import * as Q from './queries.js';
import { h, lower, announce } from './dom.js';
import { compare } from './candidates.js';
import { QueueFilters } from './pending-filters.js';
import { candidateRow } from './pending-row.js';
import { CandidateEditor } from './pending-editor.js';
import { ReviewActions } from './pending-actions.js';
import { BulkActions } from './pending-bulk.js';
import { LiveQueue } from './pending-live.js';
import { DetailPane } from './pending-detail.js';
import { handleQueueKey } from './pending-keys.js';

const PAGE = 50;

export class PendingView {
  constructor(root, app) {
    this.root = root;
    this.app = app;
    this.filters = new QueueFilters({ onChange: () => this.refresh(), onText: () => this.renderList() });
    this.editor = new CandidateEditor(this);
    this.actions = new ReviewActions(this);
    this.bulk = new BulkActions(this);
    this.live = new LiveQueue(this);
    this.detail = new DetailPane(this);
    this.rowHandlers = {
      isActive: (id) => this.activeId === id,
      activate: (id, focus) => this.activate(id, focus),
      toggle: (id, on) => this.bulk.toggle(id, on),
      turn: (id) => this.detail.openTurn(id),
      edit: (id) => this.editor.start(id),
      reject: (id) => this.actions.reject(id),
      approve: (id) => this.actions.approve(id),
    };
    this.reset();
    this.build();
  }

  reset() {
    this.items = [];
    this.total = 0;
    this.cursor = null;
    this.hasNext = false;
    this.activeId = null;
    this.namespaces = [];
    this.loaded = false;
    this.rowEls = new Map();
    for (const part of [this.filters, this.editor, this.actions, this.bulk, this.live, this.detail]) part.reset();
    if (this.list) this.renderAll();
  }

  // ------------------------------------------------------------------ layout
  build() {
    this.list = h('ul', { class: 'queue', id: 'queue', 'aria-label': 'Pending candidates' });
    this.more = h('button', { type: 'button', class: 'btn ghost more', hidden: true, on: { click: () => this.loadMore() } }, 'Load more');
    this.empty = h('div', { class: 'empty', hidden: true });
    this.root.replaceChildren(
      this.filters.toolbar,
      this.filters.chips,
      h('div', { class: 'split' },
        h('div', { class: 'split-main' }, this.bulk.bar, this.list, this.empty, this.more),
        this.detail.el));
  }

  show() {
    if (!this.loaded) this.refresh();
    else this.renderAll();
  }

  // ------------------------------------------------------------------ data
  variables(after = null) {
    return { ...this.filters.variables(), first: PAGE, after };
  }

  async refresh() {
    const token = (this.loadToken = Symbol('load'));
    const since = this.app.counts.mark();
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
      this.app.counts.set(data.queueStats, since);
      this.loaded = true;
      const keep = new Set(this.items.map((c) => c.id));
      this.bulk.keep(keep);
      if (!keep.has(this.activeId)) this.activeId = this.items[0]?.id ?? null;
      if (this.editor.editing && !keep.has(this.editor.editing.id)) this.editor.reset();
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

  get reviewing() { return this.filters.reviewing; }

  visibleItems() { return this.filters.visible(this.items); }

  // ------------------------------------------------------------------ rendering
  renderAll() {
    this.renderChips();
    this.renderList();
  }

  /** The namespace select and chips, from the shared counts. */
  renderChips() {
    const stats = this.app.counts ? this.app.counts.stats : null;
    this.filters.renderChips({ stats, namespaces: this.namespaces, total: this.total });
  }

  renderList() {
    const hadFocus = this.root.contains(document.activeElement) && document.activeElement.closest('.queue');
    const items = this.visibleItems();
    if (items.length && !items.some((c) => c.id === this.activeId)) this.activeId = items[0].id;
    if (!items.length) this.activeId = null;
    const rows = items.map((c) => {
      if (this.editor.is(c.id) && this.rowEls.has(c.id)) return this.rowEls.get(c.id);
      const row = this.renderRow(c);
      this.rowEls.set(c.id, row);
      return row;
    });
    this.list.replaceChildren(...rows);
    const f = this.filters;
    let emptyText = 'Nothing matches these filters.';
    if (this.total === 0 && !f.namespace && !f.kind && !f.source) {
      emptyText = this.reviewing ? 'The queue is empty. New candidates appear here as agents learn.' : `No ${lower(f.status)} candidates.`;
    }
    this.bulk.bar.hidden = !this.reviewing;
    this.list.classList.toggle('readonly', !this.reviewing);
    this.empty.hidden = items.length > 0 || !this.loaded;
    this.empty.replaceChildren(h('p', {}, emptyText));
    this.more.hidden = !this.hasNext;
    this.list.setAttribute('aria-label', `${this.reviewing ? 'Pending' : lower(f.status)} candidates, ${items.length} shown of ${this.total}`);
    this.bulk.update();
    if (hadFocus) this.focusActive();
    this.detail.render();
  }

  renderRow(c) {
    const id = c.id;
    const row = candidateRow(c, {
      active: id === this.activeId,
      fresh: this.live.fresh.get(id),
      selected: this.bulk.selected.has(id),
      replacing: Boolean(this.detail.replace.get(id)),
    }, this.rowHandlers);
    if (this.editor.is(id)) this.editor.fill(row, c);
    return row;
  }

  // ------------------------------------------------------------------ the active row
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
    this.detail.render();
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

  // ------------------------------------------------------------------ the loaded items
  /** Take `id` out of the queue (reviewed here or elsewhere); the next row becomes active. */
  removeItem(id, render = true) {
    const items = this.visibleItems();
    const i = items.findIndex((c) => c.id === id);
    const wasActive = this.activeId === id;
    const before = this.items.length;
    this.items = this.items.filter((c) => c.id !== id);
    if (this.items.length < before) this.total = Math.max(0, this.total - 1);
    this.bulk.selected.delete(id);
    this.detail.drop(id);
    this.rowEls.delete(id);
    if (this.editor.is(id)) this.editor.reset();
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

  /** Add `cand` or update the loaded copy, keeping the sort order. */
  upsert(cand) {
    const i = this.items.findIndex((c) => c.id === cand.id);
    if (i >= 0) this.items[i] = { ...this.items[i], ...cand };
    else {
      this.items.push(cand);
      this.total += 1;
    }
    this.items.sort(compare(this.filters.order));
  }

  // ------------------------------------------------------------------ from the app
  onEvent(ev) { this.live.onEvent(ev); }

  onKey(key) { return handleQueueKey(this, key); }
}
