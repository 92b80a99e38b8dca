// The queue's counts: pending in all, pending per namespace, approved memories. They feed the
// tab counts and the namespace chips, and they must follow live events, bursts included.
//
// Each live event adjusts the counts at once, in the same task that renders its row, so a row
// never shows under a count that does not include it. Once events pause, the counts are read
// again from the server (queueStats), which settles what an event cannot tell (an edit that
// moved a candidate, events missed while reconnecting). A snapshot only counts if no event
// arrived while it was on its way: it may or may not include that event, and adding the
// event's delta to it could count the event twice. The read after the pause brings the truth.
import { lower } from './dom.js';

export class QueueCounts {
  /**
   * load(): resolves to queueStats { pending memories pendingByNamespace }.
   * onChange(counts): called after every change.
   */
  constructor({ load, onChange = () => {}, delay = 250 }) {
    this.load = load;
    this.onChange = onChange;
    this.delay = delay;
    this.seq = 0; // bumped by every event: a snapshot asked for before it is stale
    this.asked = 0;
    this.applied = 0;
    this.timer = null;
    this.reset();
  }

  reset() {
    clearTimeout(this.timer);
    this.timer = null;
    this.seq += 1;
    this.pending = null;
    this.memories = null;
    this.byNamespace = null; // Map namespace -> pending count
  }

  /** Take before asking the server for anything that carries queueStats; hand it to `set`. */
  mark() { return this.seq; }

  /** The stats as the server returned them, or null before any arrived. */
  get stats() {
    if (this.pending === null) return null;
    return {
      pending: this.pending,
      memories: this.memories,
      pendingByNamespace: this.byNamespace
        ? [...this.byNamespace].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([namespace, count]) => ({ namespace, count }))
        : null,
    };
  }

  /** Apply a snapshot (queueStats, whole or partial) asked for at `since`; false if stale. */
  set(stats, since) {
    if (!stats || since !== this.seq) return false;
    if (stats.pending !== undefined) this.pending = stats.pending;
    if (stats.memories !== undefined) this.memories = stats.memories;
    if (stats.pendingByNamespace) this.byNamespace = new Map(stats.pendingByNamespace.map((c) => [c.namespace, c.count]));
    this.onChange(this);
    return true;
  }

  /** A live review event: adjust now, read again once events pause. */
  apply(ev) {
    this.seq += 1;
    const ns = ev.namespace;
    let pending = 0;
    let memories = 0;
    switch (lower(ev.action)) {
      case 'created': pending = 1; break;
      case 'merged': if (lower(ev.outcome) === 'revived') pending = 1; break; // archived -> pending
      case 'approved': pending = -1; memories = 1; break;
      case 'rejected': case 'archived': pending = -1; break;
      case 'memory_deleted': memories = -1; break;
      default: break; // edited, memory_updated: a namespace may have changed; the next read says
    }
    let changed = false;
    if (pending && this.pending !== null) {
      this.pending = Math.max(0, this.pending + pending);
      changed = true;
    }
    if (pending && this.byNamespace && ns) {
      const n = Math.max(0, (this.byNamespace.get(ns) || 0) + pending);
      if (n) this.byNamespace.set(ns, n); else this.byNamespace.delete(ns);
    }
    if (memories && this.memories !== null) {
      this.memories = Math.max(0, this.memories + memories);
      changed = true;
    }
    if (changed) this.onChange(this);
    this.schedule();
  }

  /** Read the counts again after `delay` ms without events (after an action of ours, too). */
  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh(), this.delay);
  }

  async refresh() {
    this.timer = null;
    const since = this.mark();
    const asked = ++this.asked;
    let stats;
    try {
      stats = await this.load();
    } catch {
      return; // a transient failure; the next event or action reads again
    }
    if (asked < this.applied) return; // an answer to a later question already landed
    if (this.set(stats, since)) this.applied = asked;
  }
}
