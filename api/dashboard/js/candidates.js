// What the queue needs to know about a candidate, apart from how it looks: its status, whether
// a stored turn stands behind it, and the orders the queue can be sorted in.

export const ORDERS = [
  ['NEWEST', 'Newest first'],
  ['OLDEST', 'Oldest first'],
  ['OBSERVATIONS', 'Most observed'],
  ['CONFIDENCE', 'Most confident'],
  ['LAST_OBSERVED', 'Recently observed'],
];

export const isPending = (c) => c && String(c.status).toUpperCase() === 'PENDING';

// an explicit or manual candidate seen once has no stored turn behind it
export const hasTurn = (c) => !(c.observations <= 1 && ['EXPLICIT', 'MANUAL'].includes(String(c.source).toUpperCase()));

/** A comparator that sorts loaded candidates the way the server sorts them for `order`. */
export function compare(order) {
  const t = (iso) => Date.parse(iso) || 0;
  switch (order) {
    case 'OLDEST': return (a, b) => t(a.createdAt) - t(b.createdAt);
    case 'OBSERVATIONS': return (a, b) => b.observations - a.observations || t(b.createdAt) - t(a.createdAt);
    case 'CONFIDENCE': return (a, b) => b.confidence - a.confidence || t(b.createdAt) - t(a.createdAt);
    case 'LAST_OBSERVED': return (a, b) => t(b.lastObservedAt) - t(a.lastObservedAt);
    default: return (a, b) => t(b.createdAt) - t(a.createdAt);
  }
}
