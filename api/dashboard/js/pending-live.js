// Live review events in the queue: new and merged candidates slot in (marked fresh for a while),
// candidates approved, rejected or archived elsewhere leave it, and each change is announced.
// The counts beside the queue follow the same events in counts.js.
import { lower, announce } from './dom.js';
import { isPending } from './candidates.js';
import { snippet } from './render.js';

const FRESH_MS = 12000;

export class LiveQueue {
  /** `view`: the PendingView the events update. */
  constructor(view) {
    this.view = view;
    this.reset();
  }

  reset() {
    this.fresh = new Map(); // id -> the tag its row shows: new, updated, edited, merged
  }

  onEvent(ev) {
    const v = this.view;
    const action = lower(ev.action);
    const cand = ev.candidate;
    if (!v.loaded) return;
    if (!v.reviewing) {
      if (['rejected', 'archived', 'revived', 'merged'].includes(action)) {
        clearTimeout(this.eventTimer);
        this.eventTimer = setTimeout(() => v.refresh(), 300);
      }
      return;
    }
    if (['created', 'merged', 'revived', 'edited'].includes(action) && cand) {
      if (!isPending(cand)) return;
      const known = v.items.some((c) => c.id === cand.id);
      if (!v.filters.matches(cand)) {
        if (known) v.removeItem(cand.id);
        return;
      }
      if (v.editor.is(cand.id)) {
        v.upsert(cand);
        return;
      }
      v.upsert(cand);
      v.detail.forget(cand.id);
      v.rowEls.delete(cand.id);
      const tag = action === 'merged' ? 'merged' : (known ? (action === 'edited' ? 'edited' : 'updated') : 'new');
      if (action !== 'edited' || !known) this.markFresh(cand.id, tag);
      v.renderList();
      if (action === 'created' || (action === 'revived' && !known)) announce(`New candidate in ${cand.namespace}: ${snippet(cand.content)}`);
      else if (action === 'merged') announce(`Seen again (${cand.observations}×): ${snippet(cand.content)}`);
      return;
    }
    if (['approved', 'rejected', 'archived'].includes(action)) {
      const id = cand ? cand.id : ev.candidateId;
      if (id && v.items.some((c) => c.id === id)) {
        v.removeItem(id);
        if (action === 'approved' && /policy/i.test(ev.actor || '')) announce(`Auto-approved by the policy: ${snippet(cand ? cand.content : '')}`);
        else announce(`${action[0].toUpperCase()}${action.slice(1)} by ${ev.actor || 'another reviewer'}.`);
      }
    }
    if (['memory_updated', 'memory_deleted', 'approved'].includes(action)) {
      // related memories may have changed
      v.detail.forgetAll();
      if (v.activeId) v.detail.render();
    }
  }

  /** Mark a row fresh (highlighted, with `tag`) for a while. */
  markFresh(id, tag) {
    this.fresh.set(id, tag);
    setTimeout(() => {
      if (this.fresh.get(id) !== tag) return;
      this.fresh.delete(id);
      const row = this.view.list.querySelector(`li[data-id="${CSS.escape(id)}"]`);
      if (row) {
        row.classList.remove('is-fresh');
        row.querySelector('.fresh-tag')?.remove();
      }
    }, FRESH_MS);
  }
}
