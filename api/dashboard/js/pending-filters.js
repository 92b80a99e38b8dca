// The queue's filters: the search box, the namespace / kind / source / sort / status selects and
// the per-namespace chips; the filter state they edit, and which candidates it lets through.
import { h, KINDS, SOURCES, lower } from './dom.js';
import { ORDERS } from './candidates.js';

const DEFAULTS = { status: 'PENDING', namespace: '', kind: '', source: '', order: 'NEWEST', text: '' };

export class QueueFilters {
  /**
   * onChange(): a server-side filter changed (load the queue again);
   * onText(): the search text changed (filter what is loaded).
   */
  constructor({ onChange, onText }) {
    this.onChange = onChange;
    this.onText = onText;
    Object.assign(this, DEFAULTS);
    this.build();
  }

  reset() {
    Object.assign(this, DEFAULTS);
    this.textInput.value = '';
    for (const [key, select] of Object.entries(this.selects)) select.value = this[key];
  }

  build() {
    this.selects = {};
    const sel = (id, label, options, key) => {
      const select = h('select', { id, on: { change: () => { this[key] = select.value; this.onChange(); } } },
        options.map(([value, text]) => h('option', { value }, text)));
      this.selects[key] = select;
      return h('label', { class: 'field', for: id }, h('span', {}, label), select);
    };
    this.nsSelect = h('select', { id: 'f-namespace', on: { change: () => { this.namespace = this.nsSelect.value; this.onChange(); } } });
    this.textInput = h('input', {
      id: 'f-text', type: 'search', placeholder: 'Filter loaded candidates…', 'aria-keyshortcuts': '/', autocomplete: 'off',
      on: { input: () => { this.text = this.textInput.value; this.onText(); } },
    });
    this.toolbar = h('div', { class: 'toolbar', role: 'search', 'aria-label': 'Filter the queue' },
      h('label', { class: 'field grow', for: 'f-text' }, h('span', {}, 'Search'), this.textInput),
      h('label', { class: 'field', for: 'f-namespace' }, h('span', {}, 'Namespace'), this.nsSelect),
      sel('f-kind', 'Kind', [['', 'All kinds'], ...KINDS.map((k) => [k, lower(k)])], 'kind'),
      sel('f-source', 'Source', [['', 'All sources'], ...SOURCES.map((s) => [s, lower(s)])], 'source'),
      sel('f-order', 'Sort', ORDERS, 'order'),
      sel('f-status', 'Showing', [['PENDING', 'Pending'], ['REJECTED', 'Rejected'], ['ARCHIVED', 'Archived']], 'status'));
    this.chips = h('div', { class: 'ns-chips', role: 'group', 'aria-label': 'Pending per namespace' });
  }

  /** The query variables for these filters (without paging). */
  variables() {
    return {
      status: this.status || 'PENDING', namespace: this.namespace || null, kind: this.kind || null, source: this.source || null,
      order: this.order || 'NEWEST',
    };
  }

  /** Showing the pending queue (where candidates can be reviewed), not rejected or archived. */
  get reviewing() { return this.status === 'PENDING'; }

  /** Whether the server-side filters let `c` in. */
  matches(c) {
    if (String(c.status).toUpperCase() !== this.status) return false;
    if (this.namespace && c.namespace !== this.namespace) return false;
    if (this.kind && String(c.kind).toUpperCase() !== this.kind) return false;
    if (this.source && String(c.source).toUpperCase() !== this.source) return false;
    return true;
  }

  /** The loaded candidates the search text lets through. */
  visible(items) {
    const text = this.text.trim().toLowerCase();
    if (!text) return items;
    return items.filter((c) => `${c.content}\n${c.namespace}\n${lower(c.kind)}`.toLowerCase().includes(text));
  }

  focusSearch() {
    this.textInput.focus();
    this.textInput.select();
  }

  /** The namespace select and chips; `stats` is queueStats (or null), `total` the fallback. */
  renderChips({ stats, namespaces, total }) {
    const counts = (stats && stats.pendingByNamespace) || [];
    const names = new Set([...namespaces, ...counts.map((c) => c.namespace)]);
    if (this.namespace) names.add(this.namespace);
    const current = this.namespace;
    this.nsSelect.replaceChildren(
      h('option', { value: '' }, 'All namespaces'),
      ...[...names].sort().map((ns) => h('option', { value: ns, selected: ns === current }, ns)));
    this.nsSelect.value = current;
    const all = stats ? stats.pending : total;
    const chip = (ns, label, count) => h('button', {
      type: 'button', class: 'chip', 'aria-pressed': String(current === ns),
      on: { click: () => { this.namespace = ns; this.nsSelect.value = ns; this.onChange(); } },
    }, h('span', { class: 'chip-label' }, label), h('span', { class: 'chip-count' }, String(count)));
    this.chips.replaceChildren(
      chip('', 'All', all ?? 0),
      ...counts.filter((c) => c.count > 0).map((c) => chip(c.namespace, c.namespace, c.count)));
  }
}
