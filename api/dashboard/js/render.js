// Rendering shared by the pending and approved views: shortened text, the age note on
// decisions and postmortems, and a candidate's history (its audit trail).
import { h, CRITICAL_KINDS, lower, timeEl, ageDays } from './dom.js';

const STALE_DAYS = 90;

/** `s` cut to `n` characters, with an ellipsis when it was longer. */
export const snippet = (s, n = 70) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** For an approved decision or postmortem: how old it is, flagged once it may be stale. */
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

/** The transitions of a candidate (and of the memory it became), oldest first. */
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
