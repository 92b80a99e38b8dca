// The detail pane beside the queue: for the active candidate, the closest approved memories
// (and which one approving it would replace), where it came from, and its history; also
// opening the original turn behind a candidate.
import { gql } from './gql.js';
import * as Q from './queries.js';
import { h, lower, kindBadge, relTime, timeEl, announce, nextId } from './dom.js';
import { isPending } from './candidates.js';
import { historyList, staleNote } from './render.js';
import { openTurn } from './turn.js';

export class DetailPane {
  /** `view`: the PendingView whose active candidate this shows. */
  constructor(view) {
    this.view = view;
    this.el = h('aside', { class: 'detail', 'aria-label': 'Candidate details', id: 'detail' });
    this.reset();
  }

  reset() {
    this.details = new Map(); // id -> promise of CandidateDetail
    this.replace = new Map(); // candidate id -> the memory id approving it supersedes
  }

  /** Drop what is known about `id` (it changed or left the queue). */
  forget(id) { this.details.delete(id); }

  /** Drop everything loaded (related memories may have changed). */
  forgetAll() { this.details.clear(); }

  /** Forget `id` entirely, its replace choice included. */
  drop(id) {
    this.replace.delete(id);
    this.details.delete(id);
  }

  async load(id) {
    if (this.details.has(id)) return this.details.get(id);
    const promise = gql(Q.CANDIDATE_DETAIL, { id }).catch((err) => {
      this.details.delete(id);
      throw err;
    });
    this.details.set(id, promise);
    return promise;
  }

  render() {
    const v = this.view;
    const id = v.activeId;
    const c = v.items.find((x) => x.id === id);
    if (!c) {
      this.el.replaceChildren(h('p', { class: 'muted pad' }, v.items.length ? 'Select a candidate to see where it came from and what it would replace.' : ''));
      return;
    }
    clearTimeout(this.timer);
    const stamp = (this.stamp = Symbol('detail'));
    if (!this.el.querySelector(`[data-for="${CSS.escape(id)}"]`)) {
      this.el.replaceChildren(h('div', { class: 'pad muted', 'data-for': id }, 'Loading details…'));
    }
    this.timer = setTimeout(async () => {
      try {
        const data = await this.load(id);
        if (stamp !== this.stamp) return;
        this.el.replaceChildren(this.content(c, data));
      } catch (err) {
        if (stamp !== this.stamp) return;
        this.el.replaceChildren(h('p', { class: 'error pad' }, `Could not load details: ${err.message}`));
      }
    }, 60);
  }

  content(c, data) {
    const v = this.view;
    const full = data.candidate || c;
    const origins = full.origins || [];
    const related = data.related || [];
    const transitions = data.transitions || [];
    const groupName = nextId('replace');
    const chosen = this.replace.get(c.id) || '';
    const setReplace = (memId) => {
      if (memId) this.replace.set(c.id, memId); else this.replace.delete(c.id);
      v.rowEls.delete(c.id);
      const row = v.activeRow();
      if (row && !v.editor.is(c.id)) {
        const fresh = v.renderRow(v.items.find((x) => x.id === c.id));
        row.replaceWith(fresh);
        v.rowEls.set(c.id, fresh);
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

  /** Open the first stored turn behind candidate `id`, if it has one. */
  async openTurn(id) {
    const v = this.view;
    const c = v.items.find((x) => x.id === id);
    if (!c) return;
    try {
      const data = await this.load(id);
      const origins = (data.candidate && data.candidate.origins) || [];
      const i = origins.findIndex((o) => o.turnRef);
      if (i < 0) {
        announce('This candidate has no stored turn (it came from an explicit remember or was typed in).');
        return;
      }
      openTurn(data.candidate, origins, i);
    } catch (err) {
      v.showError(err);
    }
  }
}
