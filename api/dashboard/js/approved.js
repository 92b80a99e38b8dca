// Approved memories: grouped by namespace, searchable with recall, editable, deletable,
// each with its audit trail.
import { gql, unwrap } from './gql.js';
import * as Q from './queries.js';
import { h, KINDS, lower, kindBadge, relTime, timeEl, announce, confirmDialog, nextId } from './dom.js';
import { historyList, snippet, staleNote } from './render.js';

export class ApprovedView {
  constructor(root, app) {
    this.root = root;
    this.app = app;
    this.reset();
    this.build();
  }

  reset() {
    this.groups = [];
    this.hits = null;
    this.query = '';
    this.activeId = null;
    this.editing = null;
    this.history = new Map();
    this.stale = true;
    this.loaded = false;
    if (this.body) {
      this.body.replaceChildren();
      if (this.search) this.search.value = '';
    }
  }

  build() {
    this.search = h('input', {
      id: 'recall-q', type: 'search', placeholder: 'Search approved memories (semantic + exact words)…', autocomplete: 'off',
      'aria-keyshortcuts': '/',
    });
    this.scope = h('select', { id: 'recall-ns' }, h('option', { value: '' }, 'All namespaces'));
    this.form = h('form', {
      class: 'toolbar', role: 'search', 'aria-label': 'Search approved memories',
      on: { submit: (e) => { e.preventDefault(); this.runSearch(); } },
    },
    h('label', { class: 'field grow', for: 'recall-q' }, h('span', {}, 'Search (recall)'), this.search),
    h('label', { class: 'field', for: 'recall-ns' }, h('span', {}, 'In'), this.scope),
    h('div', { class: 'field buttons' }, h('span', { 'aria-hidden': 'true' }, '\u00a0'),
      h('div', {},
        h('button', { type: 'submit', class: 'btn primary' }, 'Search'),
        h('button', { type: 'button', class: 'btn ghost', on: { click: () => this.clearSearch() } }, 'Clear'))));
    this.body = h('div', { class: 'memories', id: 'memories' });
    this.root.replaceChildren(this.form, this.body);
  }

  invalidate() { this.stale = true; }

  show() {
    if (this.stale || !this.loaded) this.refresh();
    else this.render();
  }

  async refresh() {
    if (this.editing) { this.stale = true; return; }
    this.body.setAttribute('aria-busy', 'true');
    const since = this.app.counts.mark();
    try {
      const data = await gql(Q.MEMORY_GROUPS);
      this.groups = data.memoryGroups || [];
      this.app.counts.set(data.queueStats, since);
      this.stale = false;
      this.loaded = true;
      const current = this.scope.value;
      this.scope.replaceChildren(h('option', { value: '' }, 'All namespaces'),
        ...this.groups.map((g) => h('option', { value: g.namespace, selected: g.namespace === current }, g.namespace)));
      if (this.query) await this.runSearch(false);
      else this.render();
    } catch (err) {
      announce(err.message, { error: true });
    } finally {
      this.body.removeAttribute('aria-busy');
    }
  }

  async runSearch(announceIt = true) {
    const q = this.search.value.trim();
    this.query = q;
    if (!q) { this.hits = null; this.render(); return; }
    try {
      const data = await gql(Q.RECALL, { query: q, namespace: this.scope.value || null, limit: 25 });
      this.hits = data.recall || [];
      this.render();
      if (announceIt) announce(`${this.hits.length} memor${this.hits.length === 1 ? 'y' : 'ies'} found for “${snippet(q, 40)}”.`);
    } catch (err) {
      announce(err.message, { error: true });
    }
  }

  clearSearch() {
    this.search.value = '';
    this.query = '';
    this.hits = null;
    this.render();
    this.search.focus();
  }

  allMemories() {
    if (this.hits) return this.hits.map((hit) => hit.memory);
    return this.groups.flatMap((g) => g.memories);
  }

  render() {
    const hadFocus = this.body.contains(document.activeElement);
    const mems = this.allMemories();
    if (!mems.some((m) => m.id === this.activeId)) this.activeId = mems[0]?.id ?? null;
    if (this.hits) {
      this.body.replaceChildren(
        h('h2', { class: 'group-title' }, `Results for “${this.query}” `, h('span', { class: 'count' }, String(this.hits.length))),
        this.hits.length
          ? h('ul', { class: 'mem-list', 'aria-label': 'Search results' }, this.hits.map((hit) => this.renderRow(hit.memory, hit.score)))
          : h('p', { class: 'empty' }, 'No approved memory matches. Only approved memories are searchable.'));
    } else if (!this.groups.length) {
      this.body.replaceChildren(h('p', { class: 'empty' }, 'No approved memories yet. Approve candidates in the pending queue.'));
    } else {
      this.body.replaceChildren(...this.groups.map((g) => {
        const hid = nextId('g');
        return h('section', { class: 'group', 'aria-labelledby': hid },
          h('h2', { class: 'group-title', id: hid }, h('span', { class: 'ns' }, g.namespace), ' ', h('span', { class: 'count', 'aria-label': `${g.count ?? g.memories.length} memories` }, String(g.count ?? g.memories.length))),
          h('ul', { class: 'mem-list', 'aria-label': `Memories in ${g.namespace}` }, g.memories.map((m) => this.renderRow(m))));
      }));
    }
    if (hadFocus) this.focusActive();
  }

  renderRow(m, score = null) {
    const active = m.id === this.activeId;
    const cid = nextId('mc');
    const row = h('li', {
      class: ['mem', active && 'is-active', ['DECISION', 'POSTMORTEM'].includes(String(m.kind).toUpperCase()) && 'is-critical'],
      dataset: { id: m.id }, tabindex: active ? '0' : '-1', 'aria-labelledby': cid,
      'aria-current': active ? 'true' : null,
      on: {
        focusin: () => this.activate(m.id, false),
        click: (e) => { if (!e.target.closest('button, input, select, textarea')) this.activate(m.id, true); },
      },
    });
    if (this.editing === m.id) {
      row.append(this.editor(m));
      return row;
    }
    const historyOpen = this.history.has(m.id);
    const histId = nextId('hist');
    row.append(
      h('div', { class: 'mem-main' },
        h('div', { class: 'cand-top' }, kindBadge(m.kind), staleNote(m),
          score !== null ? h('span', { class: 'score' }, `score ${Number(score).toFixed(2)}`) : null,
          this.hits ? h('span', { class: 'ns' }, m.namespace) : null),
        h('p', { class: 'cand-content', id: cid }, m.content),
        h('div', { class: 'cand-meta' },
          h('span', {}, `seen ${m.observations}×`),
          h('span', {}, 'approved ', timeEl(m.approvedAt), ` by ${m.approvedBy || 'unknown'}`),
          m.updatedAt && m.updatedAt !== m.approvedAt ? h('span', {}, 'edited ', timeEl(m.updatedAt)) : null)),
      h('div', { class: 'cand-actions' },
        h('button', {
          type: 'button', class: 'btn ghost sm', 'aria-expanded': String(historyOpen), 'aria-controls': histId,
          on: { click: () => this.toggleHistory(m) },
        }, 'History'),
        h('button', { type: 'button', class: 'btn ghost sm', 'aria-label': `Edit memory: ${snippet(m.content, 40)}`, on: { click: () => this.startEdit(m.id) } }, 'Edit'),
        h('button', { type: 'button', class: 'btn sm danger-ghost', 'aria-label': `Delete memory: ${snippet(m.content, 40)}`, on: { click: () => this.remove(m) } }, 'Delete')),
      h('div', { class: 'mem-history', id: histId, hidden: !historyOpen }, historyOpen ? this.historyBody(m) : null));
    return row;
  }

  historyBody(m) {
    const entry = this.history.get(m.id);
    if (!entry || entry === 'loading') return h('p', { class: 'muted' }, 'Loading history…');
    if (entry instanceof Error) return h('p', { class: 'error' }, entry.message);
    return historyList(entry);
  }

  async toggleHistory(m) {
    if (this.history.has(m.id)) {
      this.history.delete(m.id);
      this.render();
      return;
    }
    this.history.set(m.id, 'loading');
    this.render();
    try {
      const data = await gql(Q.TRANSITIONS, { candidateId: m.candidateId });
      this.history.set(m.id, data.transitions || []);
    } catch (err) {
      this.history.set(m.id, err);
    }
    if (this.history.has(m.id)) this.render();
  }

  editor(m) {
    const id = nextId('me');
    const content = h('textarea', { id: `${id}-c`, rows: '3', class: 'edit-content' });
    content.value = m.content;
    const kind = h('select', { id: `${id}-k` }, KINDS.map((k) => h('option', { value: k, selected: k === String(m.kind).toUpperCase() }, lower(k))));
    const ns = h('input', { id: `${id}-n`, type: 'text', spellcheck: 'false', autocomplete: 'off' });
    ns.value = m.namespace;
    const err = h('p', { class: 'error', role: 'alert', hidden: true });
    const save = async () => {
      const edit = {};
      if (content.value.trim() !== m.content) edit.content = content.value.trim();
      if (kind.value !== String(m.kind).toUpperCase()) edit.kind = kind.value;
      if (ns.value.trim() !== m.namespace) edit.namespace = ns.value.trim();
      if (!Object.keys(edit).length) { this.cancelEdit(); return; }
      if (edit.content === '') { err.textContent = 'Content must not be empty.'; err.hidden = false; return; }
      try {
        const data = await gql(Q.UPDATE_MEMORY, { id: m.id, edit });
        unwrap(data.updateMemory);
        this.editing = null;
        announce('Memory updated (re-embedded for recall).');
        await this.refresh();
        this.focusActive();
      } catch (e) {
        err.textContent = e.message;
        err.hidden = false;
      }
    };
    setTimeout(() => content.focus(), 0);
    return h('form', {
      class: 'editor', 'aria-label': 'Edit memory',
      on: {
        submit: (e) => { e.preventDefault(); save(); },
        keydown: (e) => {
          if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); this.cancelEdit(); }
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); save(); }
        },
      },
    },
    h('label', { for: content.id }, 'Content'), content,
    h('div', { class: 'editor-row' },
      h('label', { class: 'field', for: kind.id }, h('span', {}, 'Kind'), kind),
      h('label', { class: 'field grow', for: ns.id }, h('span', {}, 'Namespace'), ns)),
    err,
    h('div', { class: 'editor-actions' },
      h('button', { type: 'submit', class: 'btn primary sm' }, 'Save'),
      h('button', { type: 'button', class: 'btn ghost sm', on: { click: () => this.cancelEdit() } }, 'Cancel'),
      h('span', { class: 'hint' }, 'Ctrl+Enter saves · Esc cancels')));
  }

  startEdit(id) {
    this.activeId = id;
    this.editing = id;
    this.render();
  }

  cancelEdit() {
    this.editing = null;
    if (this.stale) this.refresh().then(() => this.focusActive());
    else { this.render(); this.focusActive(); }
  }

  async remove(m) {
    const ok = await confirmDialog({
      title: 'Delete this memory?',
      body: [h('blockquote', { class: 'quote' }, m.content), 'Agents will no longer recall it. The deletion is recorded in its history.'],
      ok: 'Delete',
    });
    if (!ok) return;
    try {
      const data = await gql(Q.DELETE_MEMORY, { id: m.id });
      unwrap(data.deleteMemory);
      announce(`Deleted: ${snippet(m.content)}`);
      const mems = this.allMemories();
      const i = mems.findIndex((x) => x.id === m.id);
      const next = mems[i + 1] || mems[i - 1];
      this.activeId = next ? next.id : null;
      if (this.hits) this.hits = this.hits.filter((hit) => hit.memory.id !== m.id);
      await this.refresh();
      this.focusActive();
    } catch (err) {
      announce(err.message, { error: true });
    }
  }

  activate(id, focus) {
    if (this.activeId !== id) {
      this.activeId = id;
      for (const row of this.body.querySelectorAll('li.mem')) {
        const on = row.dataset.id === id;
        row.classList.toggle('is-active', on);
        row.tabIndex = on ? 0 : -1;
        if (on) row.setAttribute('aria-current', 'true'); else row.removeAttribute('aria-current');
      }
    }
    if (focus) this.focusActive();
  }

  focusActive() {
    const row = this.activeId && this.body.querySelector(`li.mem[data-id="${CSS.escape(this.activeId)}"]`);
    if (row) {
      row.focus({ preventScroll: true });
      row.scrollIntoView({ block: 'nearest' });
    }
  }

  move(delta) {
    const mems = this.allMemories();
    if (!mems.length) return;
    const i = mems.findIndex((m) => m.id === this.activeId);
    const next = mems[Math.min(mems.length - 1, Math.max(0, i < 0 ? 0 : i + delta))];
    this.activate(next.id, true);
  }

  onEvent(ev) {
    const action = lower(ev.action);
    if (['approved', 'memory_updated', 'memory_deleted'].includes(action)) {
      this.stale = true;
      if (this.history.size) this.history.clear();
      if (this.app.tab === 'approved' && !this.editing) {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.refresh(), 200);
      }
    }
  }

  onKey(key) {
    if (key === 'Escape') {
      if (this.editing) { this.cancelEdit(); return true; }
      return false;
    }
    switch (key) {
      case 'j': case 'ArrowDown': this.move(1); return true;
      case 'k': case 'ArrowUp': this.move(-1); return true;
      case 'e': if (this.activeId) this.startEdit(this.activeId); return true;
      case 'Delete': {
        const m = this.allMemories().find((x) => x.id === this.activeId);
        if (m) this.remove(m);
        return true;
      }
      case '/': this.search.focus(); this.search.select(); return true;
      default: return false;
    }
  }
}

void relTime;
