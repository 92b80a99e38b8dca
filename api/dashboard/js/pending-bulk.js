// Bulk review: which candidates are ticked, the bar above the queue (select all, how many are
// selected, approve / reject selected), and running those actions over the selection.
import { gql } from './gql.js';
import * as Q from './queries.js';
import { h, CRITICAL_KINDS, announce, confirmDialog } from './dom.js';
import { reasonField } from './pending-actions.js';

export class BulkActions {
  /** `view`: the PendingView whose candidates are selected. */
  constructor(view) {
    this.view = view;
    this.reset();
    this.build();
  }

  reset() {
    this.selected = new Set();
  }

  build() {
    this.selectAll = h('input', {
      type: 'checkbox', id: 'select-all', 'aria-label': 'Select all shown candidates',
      on: { change: () => this.toggleAll(this.selectAll.checked) },
    });
    this.info = h('span', { class: 'bulk-info', 'aria-live': 'polite' });
    this.approveButton = h('button', { type: 'button', class: 'btn', on: { click: () => this.run('approve') } }, 'Approve selected');
    this.rejectButton = h('button', { type: 'button', class: 'btn', on: { click: () => this.run('reject') } }, 'Reject selected');
    this.bar = h('div', { class: 'bulkbar', role: 'toolbar', 'aria-label': 'Bulk actions' },
      h('label', { class: 'check', for: 'select-all' }, this.selectAll, h('span', {}, 'Select all')),
      this.info, this.approveButton, this.rejectButton);
  }

  /** Keep only the selected candidates among `ids` (after a reload). */
  keep(ids) {
    for (const id of this.selected) if (!ids.has(id)) this.selected.delete(id);
  }

  update() {
    const n = this.selected.size;
    this.info.textContent = n ? `${n} selected` : '';
    this.approveButton.disabled = n === 0;
    this.rejectButton.disabled = n === 0;
    const shown = this.view.visibleItems();
    this.selectAll.checked = shown.length > 0 && shown.every((c) => this.selected.has(c.id));
    this.selectAll.indeterminate = n > 0 && !this.selectAll.checked;
    this.bar.classList.toggle('has-selection', n > 0);
  }

  toggle(id, on) {
    if (on) this.selected.add(id); else this.selected.delete(id);
    const box = this.view.list.querySelector(`li[data-id="${CSS.escape(id)}"] .row-check`);
    if (box) box.checked = on;
    this.update();
  }

  toggleAll(on) {
    for (const c of this.view.visibleItems()) this.toggle(c.id, on);
  }

  async run(action) {
    const v = this.view;
    const ids = v.items.filter((c) => this.selected.has(c.id)).map((c) => c.id);
    if (!ids.length) return;
    let reason = null;
    if (action === 'approve') {
      const critical = v.items.filter((c) => this.selected.has(c.id) && CRITICAL_KINDS.has(String(c.kind).toUpperCase())).length;
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
      const { el, input } = reasonField();
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
        else { done += 1; v.removeItem(item.id, false); }
      }
      this.selected.clear();
      v.renderList();
      v.focusActive();
      const verb = action === 'approve' ? 'Approved' : 'Rejected';
      announce(`${verb} ${done} candidate${done === 1 ? '' : 's'}${failures.length ? `; ${failures.length} failed: ${failures[0]}` : ''}.`, { error: failures.length > 0 });
      v.app.scheduleStats();
      if (action === 'approve') v.app.views.approved.invalidate();
    } catch (err) {
      v.showError(err);
      v.refresh();
    }
  }
}
