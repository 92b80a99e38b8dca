// Reviewing one candidate: approve (as is, as edited, or replacing a related memory) and reject
// with an optional reason; one action per candidate at a time.
import { gql, unwrap, ApiError } from './gql.js';
import * as Q from './queries.js';
import { h, announce, confirmDialog, nextId } from './dom.js';
import { isPending } from './candidates.js';
import { snippet } from './render.js';

/** The optional reason field of a reject dialog. */
export function reasonField(label = 'Reason (optional)') {
  const id = nextId('reason');
  const input = h('input', { id, type: 'text', maxlength: '500', autocomplete: 'off', placeholder: 'e.g. wrong, one-off, outdated' });
  return { el: h('div', { class: 'field-block' }, h('label', { for: id }, label), input), input };
}

export class ReviewActions {
  /** `view`: the PendingView that holds the candidates. */
  constructor(view) {
    this.view = view;
    this.reset();
  }

  reset() {
    this.busy = new Set();
  }

  async approve(id, { edit = null, errorEl = null } = {}) {
    const v = this.view;
    const c = v.items.find((x) => x.id === id);
    if (!c || !isPending(c) || this.busy.has(id)) return;
    if (edit && edit.content === '') {
      if (errorEl) { errorEl.textContent = 'Content must not be empty.'; errorEl.hidden = false; }
      return;
    }
    const supersede = v.detail.replace.get(id) || null;
    this.busy.add(id);
    try {
      const vars = { id, edit: edit && Object.keys(edit).length ? edit : null, supersede };
      const data = await gql(Q.APPROVE, vars);
      const memory = unwrap(data.approveCandidate);
      v.removeItem(id);
      announce(supersede ? `Approved and replaced the older memory: ${snippet(memory.content)}` : `Approved: ${snippet(memory.content)}`);
      v.app.scheduleStats();
      v.app.views.approved.invalidate();
    } catch (err) {
      if (errorEl) { errorEl.textContent = err.message; errorEl.hidden = false; }
      else v.showError(err);
      if (err instanceof ApiError && (err.code === 'NOT_FOUND' || err.code === 'INVALID_TRANSITION')) v.refresh();
    } finally {
      this.busy.delete(id);
    }
  }

  async reject(id) {
    const v = this.view;
    const c = v.items.find((x) => x.id === id);
    if (!c || !isPending(c) || this.busy.has(id)) return;
    const { el, input } = reasonField();
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
      v.removeItem(id);
      announce(`Rejected: ${snippet(c.content)}`);
      v.app.scheduleStats();
    } catch (err) {
      v.showError(err);
    } finally {
      this.busy.delete(id);
    }
  }
}
