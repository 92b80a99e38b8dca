"""The tab counts and the namespace chips follow live events: a burst of remembers from
another client, a merge, approve / reject / archive done elsewhere, and a revival. A watcher in
the page records every state the page shows, and in none of them may a row show under a count
that does not include it (or a count include a row that is gone). Its own server: the archive
step empties the whole queue, and the counts are exact only when no other test adds any."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.dashboard.support import Server, memvet_server, row, sign_in

pytestmark = pytest.mark.slow

REJECT = """
mutation($id: ID!, $reason: String) {
  rejectCandidate(id: $id, reason: $reason) {
    __typename
    ... on Candidate { id status }
    ... on UserError { code message }
  }
}"""

ARCHIVE_STALE = """
mutation($days: Int) {
  archiveStale(olderThanDays: $days) {
    __typename
    ... on ArchiveResult { count }
    ... on UserError { code message }
  }
}"""

STATS = "query { queueStats { pending memories pendingByNamespace { namespace count } } }"

# Records each distinct state of the queue and its counts, from a MutationObserver: it runs
# after the task that changed the page, which is what a person could ever see.
WATCH = """([ns, firstText]) => {
  const num = (el) => (el ? Number(el.textContent) : 0);
  const chip = (label) => num([...document.querySelectorAll('.ns-chips .chip')]
    .find((b) => b.querySelector('.chip-label').textContent === label)
    ?.querySelector('.chip-count'));
  const snap = () => {
    const rows = [...document.querySelectorAll('#queue li.cand')];
    return {
      phase: window.__phase || 'start',
      rows: rows.length,
      rowsNs: rows.filter((r) => r.querySelector('.cand-meta .ns')?.textContent === ns).length,
      tab: document.getElementById('count-pending').textContent,
      all: chip('All'),
      chipNs: chip(ns),
      approved: document.getElementById('count-approved').textContent,
      first: rows.some((r) => r.querySelector('.cand-content')?.textContent === firstText),
    };
  };
  window.__states = [snap()];
  new MutationObserver(() => {
    const s = snap();
    if (JSON.stringify(s) !== JSON.stringify(window.__states.at(-1))) window.__states.push(s);
  }).observe(document.getElementById('app'),
    { subtree: true, childList: true, characterData: true });
}"""


@pytest.fixture(scope="module")
def counts_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with memvet_server(tmp_path_factory.mktemp("dashboard-counts")) as server:
        yield server


def wait_rows(page: Any, n: int) -> None:
    page.wait_for_function("n => document.querySelectorAll('#queue li.cand').length === n", arg=n)


def test_counts_follow_a_burst_of_live_events(page: Any, counts_server: Server) -> None:
    ns, other = "workspace:burst-demo", "workspace:counts-other"
    for i in range(2):
        counts_server.remember(f"The counts-other fact number {i}.", "FACT", other)
    texts = [f"The burst-demo rule number {i} holds." for i in range(12)]
    sign_in(page, counts_server)
    page.wait_for_function("() => document.querySelector('#count-pending').textContent === '2'")
    wait_rows(page, 2)
    page.evaluate(WATCH, [ns, texts[0]])

    # a burst of remembers from another client, several at once
    with ThreadPoolExecutor(4) as pool:
        made = list(pool.map(lambda t: counts_server.remember(t, "PATTERN", ns), texts))
    wait_rows(page, 14)
    # the same again merges: a row changes, no count does
    page.evaluate("window.__phase = 'merge'")
    counts_server.remember(texts[0], "PATTERN", ns)
    row(page, texts[0]).locator(".cand-meta", has_text="seen 2×").wait_for()

    # approved, rejected and archived by someone else: the rows leave, the counts follow
    page.evaluate("window.__phase = 'approve'")
    counts_server.approve(made[0]["id"])
    wait_rows(page, 13)
    page.evaluate("window.__phase = 'reject'")
    counts_server.ok(REJECT, "rejectCandidate", "admin", id=made[1]["id"], reason="duplicate")
    wait_rows(page, 12)
    page.evaluate("window.__phase = 'archive'")
    archived = counts_server.ok(ARCHIVE_STALE, "archiveStale", "admin", days=0)
    assert archived["count"] == 12
    wait_rows(page, 0)
    # an archived candidate observed again is pending again (a merge that revives it)
    page.evaluate("window.__phase = 'revive'")
    counts_server.remember(texts[2], "PATTERN", ns)
    wait_rows(page, 1)
    page.wait_for_timeout(1200)  # the counts are read again once the events pause

    states: list[dict[str, Any]] = page.evaluate("window.__states")
    wrong = [s for s in states
             if not (s["tab"] == str(s["rows"]) and s["all"] == s["rows"]
                     and s["chipNs"] == s["rowsNs"])]
    assert not wrong, "rows shown under wrong counts:\n" + "\n".join(map(json.dumps, wrong[:5]))
    # one memory from the moment the approved row leaves, none before
    reviewed = ("approve", "reject", "archive", "revive")
    lagged = [s for s in states
              if s["approved"] != ("1" if s["phase"] in reviewed and not s["first"] else "0")]
    assert not lagged, "approved count lagged:\n" + "\n".join(map(json.dumps, lagged[:5]))
    # the page went through every count from 2 to 14, down to 0 and up to 1 again
    assert {s["rows"] for s in states} >= {2, 14, 13, 12, 0, 1}
    last = states[-1]
    assert (last["tab"], last["all"], last["chipNs"], last["approved"]) == ("1", 1, 1, "1")
    assert page.locator(".ns-chips .chip").count() == 2  # "All" and the namespace
    stats = counts_server.gql(STATS)["queueStats"]
    assert stats["pending"] == 1 and stats["memories"] == 1
    assert stats["pendingByNamespace"] == [{"namespace": ns, "count": 1}]
