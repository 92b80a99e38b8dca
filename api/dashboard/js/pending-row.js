// One row of the queue: a candidate's checkbox, badges, content, facts (namespace, source,
// confidence, observations, age), the review line of a rejected or archived one, and its
// buttons. Markup only: what the buttons do is handed in.
import { h, CRITICAL_KINDS, lower, kindBadge, pct, timeEl, nextId } from './dom.js';
import { isPending, hasTurn } from './candidates.js';
import { snippet } from './render.js';

/**
 * `state`: { active, fresh (a tag or undefined), selected, replacing (approve supersedes) }.
 * `on`: { isActive(id), activate(id, focus), toggle(id, on), turn(id), edit(id), reject(id),
 * approve(id) }.
 */
export function candidateRow(c, { active, fresh, selected, replacing }, on) {
  const id = c.id;
  const contentId = nextId('c');
  const metaId = nextId('m');
  const kind = String(c.kind).toUpperCase();
  const check = h('input', {
    type: 'checkbox', class: 'row-check', checked: selected, disabled: !isPending(c),
    'aria-label': `Select: ${snippet(c.content, 60)}`,
    on: { change: (e) => { on.toggle(id, e.target.checked); } },
  });
  const turnButton = () => (hasTurn(c)
    ? h('button', { type: 'button', class: 'btn ghost sm', 'aria-label': `Open the original turn: ${snippet(c.content, 40)}`, on: { click: () => on.turn(id) } }, 'Turn')
    : null);
  return h('li', {
    class: ['cand', active && 'is-active', fresh && 'is-fresh', CRITICAL_KINDS.has(kind) && 'is-critical'],
    dataset: { id, kind: lower(kind) },
    tabindex: active ? '0' : '-1',
    'aria-current': active ? 'true' : null,
    'aria-labelledby': contentId,
    'aria-describedby': metaId,
    on: {
      click: (e) => { if (!e.target.closest('button, input, a, select, textarea')) on.activate(id, true); },
      focusin: () => { if (!on.isActive(id)) on.activate(id, false); },
    },
  },
  h('div', { class: 'cand-check' }, check),
  h('div', { class: 'cand-main' },
    h('div', { class: 'cand-top' },
      kindBadge(c.kind),
      fresh ? h('span', { class: 'badge fresh-tag' }, fresh === 'merged' ? `seen again · ${c.observations}×` : fresh) : null,
      CRITICAL_KINDS.has(kind) ? h('span', { class: 'badge critical', title: 'Decisions and postmortems weigh more in recall: be strict' }, 'review strictly') : null,
      replacing ? h('span', { class: 'badge replaces' }, 'replaces a memory on approve') : null),
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
    turnButton(),
    h('button', { type: 'button', class: 'btn ghost sm', 'aria-label': `Edit: ${snippet(c.content, 40)}`, on: { click: () => on.edit(id) } }, 'Edit'),
    h('button', { type: 'button', class: 'btn sm', 'aria-label': `Reject: ${snippet(c.content, 40)}`, on: { click: () => on.reject(id) } }, 'Reject'),
    h('button', { type: 'button', class: 'btn primary sm', 'aria-label': `Approve: ${snippet(c.content, 40)}`, on: { click: () => on.approve(id) } }, replacing ? 'Approve & replace' : 'Approve'))
    : h('div', { class: 'cand-actions' }, turnButton()));
}
