// Editing a pending candidate in place: the form that replaces a row's content (content, kind,
// namespace), approving as edited, saving the edit without approving, and cancelling.
import { gql, unwrap } from './gql.js';
import * as Q from './queries.js';
import { h, KINDS, lower, announce, nextId } from './dom.js';
import { isPending } from './candidates.js';

export class CandidateEditor {
  /** `view`: the PendingView whose rows this edits. */
  constructor(view) {
    this.view = view;
    this.reset();
  }

  reset() {
    this.editing = null; // { id }
  }

  /** Whether candidate `id` is being edited. */
  is(id) { return Boolean(this.editing) && this.editing.id === id; }

  start(id) {
    const v = this.view;
    const c = v.items.find((x) => x.id === id);
    if (!c || !isPending(c)) return;
    v.activate(id, false);
    this.editing = { id };
    const kept = v.rowEls.get(id);
    const row = kept && kept.isConnected ? kept : v.activeRow();
    if (row) this.fill(row, c);
  }

  /** Replace `row`'s content and buttons with the edit form for `c`. */
  fill(row, c) {
    const main = row.querySelector('.cand-main');
    const actions = row.querySelector('.cand-actions');
    const cid = nextId('edit');
    const content = h('textarea', { id: `${cid}-content`, class: 'edit-content', rows: '3', value: c.content, maxlength: '16000' });
    content.value = c.content;
    const kind = h('select', { id: `${cid}-kind` }, KINDS.map((k) => h('option', { value: k, selected: k === String(c.kind).toUpperCase() }, lower(k))));
    const listId = `${cid}-ns-list`;
    const ns = h('input', { id: `${cid}-ns`, type: 'text', value: c.namespace, list: listId, spellcheck: 'false', autocomplete: 'off' });
    ns.value = c.namespace;
    const datalist = h('datalist', { id: listId }, this.view.namespaces.map((n) => h('option', { value: n })));
    const err = h('p', { class: 'error', role: 'alert', hidden: true });
    const readEdit = () => {
      const edit = {};
      const text = content.value.trim();
      if (text !== c.content) edit.content = text;
      if (kind.value !== String(c.kind).toUpperCase()) edit.kind = kind.value;
      if (ns.value.trim() !== c.namespace) edit.namespace = ns.value.trim();
      return edit;
    };
    const approve = () => this.view.actions.approve(c.id, { edit: readEdit(), errorEl: err });
    const form = h('form', {
      class: 'editor', 'aria-label': 'Edit candidate before approving',
      on: {
        submit: (e) => { e.preventDefault(); approve(); },
        keydown: (e) => {
          if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); this.cancel(); }
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); approve(); }
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
      h('button', { type: 'button', class: 'btn sm', on: { click: () => this.save(c.id, readEdit(), err) } }, 'Save edit'),
      h('button', { type: 'button', class: 'btn ghost sm', on: { click: () => this.cancel() } }, 'Cancel'),
      h('span', { class: 'hint' }, 'Ctrl+Enter approves · Esc cancels')));
    main.replaceChildren(form);
    actions.hidden = true;
    row.classList.add('is-editing');
    this.view.rowEls.set(c.id, row);
    content.focus();
    content.setSelectionRange(content.value.length, content.value.length);
  }

  cancel() {
    if (!this.editing) return;
    const v = this.view;
    const id = this.editing.id;
    this.editing = null;
    v.rowEls.delete(id);
    v.renderList();
    v.activate(id, true);
    v.focusActive();
  }

  async save(id, edit, errEl) {
    if (!Object.keys(edit).length) { this.cancel(); return; }
    if (edit.content === '') { errEl.textContent = 'Content must not be empty.'; errEl.hidden = false; return; }
    const v = this.view;
    try {
      const data = await gql(Q.EDIT_CANDIDATE, { id, edit });
      const cand = unwrap(data.editCandidate);
      v.upsert(cand);
      this.editing = null;
      v.rowEls.delete(id);
      v.detail.forget(id);
      v.renderList();
      v.activate(id, true);
      v.focusActive();
      announce('Edit saved.');
    } catch (err) {
      errEl.textContent = err.message;
      errEl.hidden = false;
    }
  }
}
