// "Jump to the original turn": the stored exchange (or compacted stretch) with the passage the
// candidate came from highlighted, plus every other origin merged into the candidate.
import { gql } from './gql.js';
import * as Q from './queries.js';
import { h, lower, timeEl, highlightText, kindBadge } from './dom.js';

const cache = new Map();

function loadTurn(ref) {
  if (!cache.has(ref)) {
    cache.set(ref, gql(Q.TURN, { id: ref }).then((d) => d.turn).catch((err) => { cache.delete(ref); throw err; }));
  }
  return cache.get(ref);
}

/** Open the turn behind `origins[index]` of `candidate` in the turn dialog. */
export async function openTurn(candidate, origins, index) {
  const dialog = document.getElementById('turn-dialog');
  const body = document.getElementById('turn-body');
  const origin = origins[index];
  const opener = document.activeElement;
  body.replaceChildren(h('p', { class: 'muted' }, 'Loading the original turn…'));
  if (!dialog.open) {
    dialog.showModal();
    dialog.addEventListener('close', () => {
      if (opener && opener.isConnected) opener.focus();
    }, { once: true });
  }
  let turn;
  try {
    turn = await loadTurn(origin.turnRef);
  } catch (err) {
    body.replaceChildren(h('p', { class: 'error' }, `Could not load the turn: ${err.message}`));
    return;
  }
  const trigger = lower(turn.trigger) === 'compaction' ? 'Compacted stretch' : 'Turn';
  const messages = h('div', { class: 'messages', role: 'list', 'aria-label': 'Messages in this exchange' },
    (turn.messages || []).map((m) => h('div', { class: ['msg', `msg-${lower(m.role).replace(/[^a-z]/g, '')}`], role: 'listitem', 'data-hl-block': '' },
      h('div', { class: 'msg-role' }, lower(m.role)),
      h('div', { class: 'msg-text' }, m.content))));
  const sameTurn = origins.filter((o, i) => i !== index && o.turnRef === origin.turnRef && o.excerpt);
  const others = origins.filter((o, i) => i !== index && o.turnRef !== origin.turnRef);
  const head = h('div', { class: 'turn-meta' },
    h('div', { class: 'turn-cand' },
      kindBadge(candidate.kind),
      h('span', { class: 'ns' }, candidate.namespace),
      h('span', { class: 'turn-cand-text' }, candidate.content)),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Kind of record'), h('dd', {}, trigger),
      h('dt', {}, 'Conversation'), h('dd', { class: 'mono' }, turn.conversationId || '–'),
      h('dt', {}, 'Turn'), h('dd', { class: 'mono' }, turn.turnId || '–'),
      turn.workspace ? [h('dt', {}, 'Workspace'), h('dd', {}, turn.workspace)] : null,
      turn.persona ? [h('dt', {}, 'Persona'), h('dd', {}, turn.persona)] : null,
      h('dt', {}, 'Stored'), h('dd', {}, timeEl(turn.createdAt))));
  const excerptNote = origin.excerpt
    ? h('p', { class: 'excerpt-note' }, 'Highlighted: the passage this candidate was extracted from.')
    : h('p', { class: 'muted' }, 'This origin recorded no excerpt.');
  const otherList = others.length
    ? h('section', { class: 'other-origins', 'aria-labelledby': 'other-origins-h' },
      h('h3', { id: 'other-origins-h' }, `Also observed in ${others.length} other place${others.length === 1 ? '' : 's'} (merged into this candidate)`),
      h('ol', { class: 'origins' }, others.map((o) => h('li', {},
        h('div', { class: 'origin-meta' },
          h('span', { class: 'badge' }, lower(o.source)),
          o.conversationId ? h('span', { class: 'mono' }, o.conversationId) : null,
          o.turnId ? h('span', { class: 'mono' }, `turn ${o.turnId}`) : null,
          timeEl(o.createdAt)),
        o.excerpt ? h('blockquote', { class: 'quote' }, o.excerpt) : null,
        o.turnRef ? h('button', { type: 'button', class: 'btn ghost sm', on: { click: () => openTurn(candidate, origins, origins.indexOf(o)) } }, 'Open this turn') : null))))
    : null;
  body.replaceChildren(...[head, excerptNote, messages, otherList].filter(Boolean));
  document.getElementById('turn-title').textContent = trigger === 'Turn' ? 'Original turn' : 'Original compacted stretch';
  let marks = [];
  if (origin.excerpt) marks = highlightText(messages, origin.excerpt, 'hl');
  for (const o of sameTurn) highlightText(messages, o.excerpt, 'hl hl-other');
  if (origin.excerpt && !marks.length) {
    excerptNote.textContent = 'The excerpt below was recorded for this origin; it is not verbatim in the stored messages:';
    excerptNote.after(h('blockquote', { class: 'quote' }, origin.excerpt));
  }
  if (marks.length) {
    marks[0].id = 'turn-first-mark';
    marks[0].tabIndex = -1;
    marks[0].scrollIntoView({ block: 'center' });
  }
}
