// The queue's keyboard shortcuts (listed in the help dialog in index.html): j/k or the arrows
// move, a approves, r rejects, e edits, x ticks, t opens the turn, / searches, Esc cancels an
// edit. app.js hands over the keys that are not typed into a field (and Esc from one).

/** Handle `key` for the pending `view`; true when it was one of ours. */
export function handleQueueKey(view, key) {
  const id = view.activeId;
  if (key === 'Escape') {
    if (view.editor.editing) { view.editor.cancel(); return true; }
    return false;
  }
  switch (key) {
    case 'j': case 'ArrowDown': view.move(1); return true;
    case 'k': case 'ArrowUp': view.move(-1); return true;
    case 'a': if (id && view.reviewing) view.actions.approve(id); return true;
    case 'r': if (id && view.reviewing) view.actions.reject(id); return true;
    case 'e': if (id && view.reviewing) view.editor.start(id); return true;
    case 't': if (id) view.detail.openTurn(id); return true;
    case 'x': if (id && view.reviewing) view.bulk.toggle(id, !view.bulk.selected.has(id)); return true;
    case '/': view.filters.focusSearch(); return true;
    default: return false;
  }
}
