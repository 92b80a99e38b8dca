"""`memvet review`'s Textual queue, headless (Textual's pilot), against a real server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from rich.text import Text
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import DataTable, Input, Select, TextArea

from memvet.api.review.client import ReviewClient
from memvet.api.review.screens import EditScreen, FilterScreen, HelpScreen, RejectScreen, TurnScreen
from memvet.api.review.tui import QueueScreen, ReviewApp
from memvet.api.review.widgets import TextPane
from tests.fixtures.net import free_port
from tests.graph.support import Server
from tests.review.support import Relay, approve, candidate, remember, space, submit_turn

Scenario = Callable[[ReviewApp, Pilot[int]], Awaitable[None]]
SIZE = (140, 40)


def run_app(server: Server, scenario: Scenario, *, namespace: str | None = None,
            as_: str = "reviewer", url: str | None = None,
            before: Callable[[], Awaitable[Any]] | None = None) -> None:
    """Open the queue on `server` (filtered to `namespace`) and play `scenario` in it."""
    async def main() -> None:
        if before is not None:
            await before()
        client = ReviewClient(url=url or server.url, token=server.tokens[as_],
                              delay=lambda attempt: 0.3)
        try:
            viewer = await client.viewer()
            app = ReviewApp(client, viewer=viewer, namespace=namespace)
            async with app.run_test(size=SIZE) as pilot:
                await scenario(app, pilot)
        finally:
            await client.aclose()
    asyncio.run(main())


async def until(pilot: Pilot[int], check: Callable[[], Any], what: str,
                timeout: float = 60.0) -> Any:
    """Let the app run until `check()` is truthy (generous: the machine may be loaded)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        await pilot.pause(0.05)


async def dialog(app: ReviewApp, pilot: Pilot[int], kind: type[Screen[Any]]) -> Any:
    """Wait for a dialog of `kind` to open with its first field focused (keys go there)."""
    return await until(pilot, lambda: isinstance(app.screen, kind) and (
        app.screen.focused is not None or kind in (TurnScreen, HelpScreen)) and app.screen,
        f"the {kind.__name__}")


async def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """A blocking API call from the test, off the app's event loop."""
    return await asyncio.to_thread(fn, *args, **kwargs)


async def type_text(pilot: Pilot[int], text: str) -> None:
    await pilot.press(*("space" if ch == " " else ch for ch in text))


def queue(app: ReviewApp) -> QueueScreen:
    return app.queue


def rows(app: ReviewApp) -> list[str]:
    """The candidate ids in the table, top to bottom."""
    table: DataTable[str] = app.queue.query_one("#queue", DataTable)
    return [str(key.value) for key in table.rows]


def pane(app: ReviewApp, selector: str) -> str:
    return app.screen.query_one(selector, TextPane).text.plain


def highlighted(text: Text) -> list[str]:
    return [text.plain[s.start:s.end] for s in text.spans if "yellow" in str(s.style)]


async def loaded(app: ReviewApp, pilot: Pilot[int], ids: list[str]) -> None:
    await until(pilot, lambda: set(ids) <= set(rows(app)), f"rows {ids}")


def test_rows_show_with_details_and_j_k_move(server: Server) -> None:
    ns = space("rows")
    memory = approve(server, remember(server, "shop-api deploys with Docker", ns)["id"])
    first = remember(server, "shop-api uses pnpm, not npm", ns, confidence=0.65)
    second = remember(server, "Tauri was chosen over Electron", ns, "DECISION")

    async def scenario(app: ReviewApp, pilot: Pilot[int]) -> None:
        await loaded(app, pilot, [first["id"], second["id"]])
        assert rows(app) == [second["id"], first["id"]]  # newest first
        table: DataTable[str] = app.queue.query_one("#queue", DataTable)
        assert table.get_row_at(1)[:5] == ["fact", ns, "explicit", "0.65", "1"]
        await until(pilot, lambda: "Tauri" in pane(app, "#detail"), "the detail pane")
        detail = pane(app, "#detail")
        assert "Review strictly" in detail  # a decision
        assert "shop-api deploys with Docker" in detail and memory in detail  # related
        await pilot.press("j")
        assert queue(app).selected is not None and queue(app).selected.id == first["id"]
        await until(pilot, lambda: "pnpm" in pane(app, "#detail"), "the second's detail")
        assert "0.65" in pane(app, "#detail")
        await pilot.press("j")  # stays on the last row
        assert table.cursor_row == 1
        await pilot.press("k")
        assert table.cursor_row == 0 and "memvet review" in pane(app, "#title")

    run_app(server, scenario, namespace=ns)


def test_a_approves_the_selected_candidate(server: Server) -> None:
    ns = space("approve")
    keep = remember(server, "Keep me pending", ns)
    take = remember(server, "Approve me with a", ns)

    async def scenario(app: ReviewApp, pilot: Pilot[int]) -> None:
        await loaded(app, pilot, [keep["id"], take["id"]])
        assert rows(app)[0] == take["id"]
        await pilot.press("a")
        await until(pilot, lambda: rows(app) == [keep["id"]], "the approved row to go")
        now = await call(candidate, server, take["id"])
        assert now["status"] == "APPROVED" and now["memory"]["content"] == "Approve me with a"
        assert (await call(candidate, server, keep["id"]))["status"] == "PENDING"

    run_app(server, scenario, namespace=ns)


def test_e_edits_then_approves(server: Server) -> None:
    ns, moved = space("edit"), space("edit-moved")
    cand = remember(server, "we use pnpm", ns, "PREFERENCE")

    async def scenario(app: ReviewApp, pilot: Pilot[int]) -> None:
        await loaded(app, pilot, [cand["id"]])
        await pilot.press("e")
        screen = await dialog(app, pilot, EditScreen)
        assert screen.query_one("#content", TextArea).has_focus
        await pilot.press("end", "ctrl+u")
        await type_text(pilot, "shop-api uses pnpm, never npm")
        await pilot.press("tab")  # the kind
        await until(pilot, lambda: screen.query_one("#kind", Select).has_focus, "the kind")
        await pilot.press("enter")
        await type_text(pilot, "fact")
        await pilot.press("enter")
        await until(pilot, lambda: screen.query_one("#kind", Select).value == "fact", "fact")
        await pilot.press("tab", "end", "ctrl+u")  # the namespace
        await type_text(pilot, moved)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, EditScreen), "the dialog to go")
        await until(pilot, lambda: cand["id"] not in rows(app), "the row to go")
        now = await call(candidate, server, cand["id"])
        assert now["status"] == "APPROVED"
        assert now["memory"] == {"id": now["memory"]["id"], "content":
                                 "shop-api uses pnpm, never npm", "kind": "FACT",
                                 "namespace": moved}

    run_app(server, scenario, namespace=ns)


def test_e_keeps_the_dialog_open_when_the_server_refuses(server: Server) -> None:
    ns = space("edit-bad")
    cand = remember(server, "Namespace typo ahead", ns)

    async def scenario(app: ReviewApp, pilot: Pilot[int]) -> None:
        await loaded(app, pilot, [cand["id"]])
        await pilot.press("e")
        screen = await dialog(app, pilot, EditScreen)
        screen.query_one("#namespace", Input).focus()
        await pilot.press("end", "ctrl+u")
        await type_text(pilot, "project:nope")
        await pilot.press("ctrl+s")
        error = await until(pilot, lambda: str(screen.query_one("#error").render()),
                            "the error")
        assert "INVALID_NAMESPACE" in error or "namespace" in error.lower()
        assert isinstance(app.screen, EditScreen)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, QueueScreen), "the queue")
        assert (await call(candidate, server, cand["id"]))["status"] == "PENDING"

    run_app(server, scenario, namespace=ns)


def test_r_rejects_with_a_reason_or_none(server: Server) -> None:
    ns = space("reject")
    plain = remember(server, "Reject me without a word", ns)
    why = remember(server, "Reject me with a reason", ns)

    async def scenario(app: ReviewApp, pilot: Pilot[int]) -> None:
        await loaded(app, pilot, [plain["id"], why["id"]])
        await pilot.press("r")
        await dialog(app, pilot, RejectScreen)
        await type_text(pilot, "one-off remark")
        await pilot.press("enter")
        await until(pilot, lambda: rows(app) == [plain["id"]], "the rejected row to go")
        now = await call(candidate, server, why["id"])
        assert now["status"] == "REJECTED" and now["reviewReason"] == "one-off remark"

        await pilot.press("r")
        await dialog(app, pilot, RejectScreen)
        await pilot.press("enter")  # no reason: fine
        await until(pilot, lambda: rows(app) == [], "the queue to empty")
        now = await call(candidate, server, plain["id"])
        assert now["status"] == "REJECTED" and now["reviewReason"] is None
        assert "Nothing pending" in pane(app, "#detail")

    run_app(server, scenario, namespace=ns)


def test_slash_filters_by_text_namespace_and_kind(server: Server) -> None:
    ns, other = space("filter"), space("filter-other")
    pnpm = remember(server, "shop-api uses pnpm", ns)
    tauri = remember(server, "Tauri over Electron", ns, "DECISION")
    elsewhere = remember(server, "pnpm elsewhere too", other)

    async def scenario(app: ReviewApp, pilot: Pilot[int]) -> None:
        await loaded(app, pilot, [pnpm["id"], tauri["id"], elsewhere["id"]])
        await pilot.press("slash")
        screen = await dialog(app, pilot, FilterScreen)
        await type_text(pilot, "pnpm")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, QueueScreen), "the queue")
        shown = set(rows(app))
        assert {pnpm["id"], elsewhere["id"]} <= shown and tauri["id"] not in shown

        await pilot.press("slash")
        screen = await dialog(app, pilot, FilterScreen)
        screen.query_one("#text", Input).value = ""
        screen.query_one("#namespace", Input).focus()
        await type_text(pilot, ns)
        await pilot.press("enter")
        await until(pilot, lambda: set(rows(app)) == {pnpm["id"], tauri["id"]}, "namespace")
        assert ns in pane(app, "#title")

        await pilot.press("slash")
        screen = await dialog(app, pilot, FilterScreen)
        screen.query_one("#kind", Select).value = "decision"
        screen.query_one("#namespace", Input).focus()
        await pilot.press("enter")
        await until(pilot, lambda: rows(app) == [tauri["id"]], "the kind filter")

    run_app(server, scenario)


def test_t_shows_the_turn_with_the_excerpt_highlighted(server: Server) -> None:
    workspace = space("turn").removeprefix("workspace:")
    exchange = [
        {"role": "user", "content": "Can you add the lodash dependency?"},
        {"role": "assistant", "content": "Sure, running npm install lodash now."},
        {"role": "user", "content": "Stop: we use pnpm here, not npm."},
    ]
    result = submit_turn(server, f"conv-{workspace}", exchange, workspace)
    assert result["candidates"], result
    extracted = result["candidates"][0]
    explicit = remember(server, "Typed by hand, no turn", f"workspace:{workspace}")

    async def scenario(app: ReviewApp, pilot: Pilot[int]) -> None:
        await loaded(app, pilot, [extracted["id"], explicit["id"]])
        assert rows(app)[0] == explicit["id"]
        await pilot.press("t")  # an explicit candidate has no turn: says so, stays put
        await pilot.pause(0.5)
        assert isinstance(app.screen, QueueScreen)
        await pilot.press("j")
        await until(pilot, lambda: "pnpm here" in pane(app, "#detail"), "the excerpt")
        await pilot.press("t")
        screen = await dialog(app, pilot, TurnScreen)
        shown = screen.text.plain
        assert all(m["content"] in shown for m in exchange)
        assert f"conv-{workspace}" in shown
        assert screen.marked >= 1
        assert any("we use pnpm here, not npm" in h for h in highlighted(screen.text))
        assert not any("lodash" in h for h in highlighted(screen.text))
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, QueueScreen), "the queue")

    run_app(server, scenario, namespace=f"workspace:{workspace}")


def test_help_and_q_quits(server: Server) -> None:
    ns = space("help")
    remember(server, "Something to look at", ns)

    async def scenario(app: ReviewApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: rows(app), "a row")
        await pilot.press("question_mark")
        await dialog(app, pilot, HelpScreen)
        text = pane(app, "#help")
        for key in ("j / ↓", "k / ↑", "a ", "e ", "r ", "t ", "/ ", "? ", "q "):
            assert key in text
        await pilot.press("a")  # keys of the queue do nothing behind the help
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, QueueScreen), "the queue")
        assert rows(app)
        await pilot.press("q")
        await until(pilot, lambda: app.return_code == 0, "the app to quit")

    run_app(server, scenario, namespace=ns)


def test_an_answer_that_arrives_after_quitting_is_dropped(server: Server) -> None:
    """A detail still loading when the user quits can answer after the queue's widgets are
    gone (the app tears them down before it cancels workers): it is dropped, not a crash."""
    from textual.worker import WorkerState

    ns = space("late")
    cand = remember(server, "Loads slowly, and the user quits meanwhile", ns)

    async def scenario(app: ReviewApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: cand["id"] in rows(app), "the row")
        # the row's own detail first: a later highlight would start a detail worker of its
        # own, which cancels this test's (one detail load at a time)
        await until(pilot, lambda: "quits meanwhile" in pane(app, "#detail"), "the detail")
        screen, fetch, release = queue(app), queue(app).client.detail, asyncio.Event()

        async def held_detail(candidate_id: str) -> Any:
            await release.wait()
            return await fetch(candidate_id)

        screen.client.detail = held_detail  # type: ignore[method-assign]
        screen.details.clear()
        worker = screen.show_detail(cand["id"])
        await screen.query_one("#queue").remove()  # the state a quitting app is in
        release.set()
        await until(pilot, lambda: worker.is_finished, "the detail worker")
        assert worker.state == WorkerState.SUCCESS, worker.error
        await pilot.press("q")

    run_app(server, scenario, namespace=ns)


def test_new_and_merged_candidates_appear_live(server: Server) -> None:
    ns = space("live")
    probe_ns = space("live-probe")

    async def scenario(app: ReviewApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: queue(app).live.state == "live" and queue(app).loads
                    and not queue(app).loads_in_flight, "the live connection and its catch-up load")
        # graphql-transport-ws does not confirm a subscription: probe until one arrives (no
        # load runs from here on, so whatever shows up came as an event).
        deadline = time.monotonic() + 60
        probes: list[str] = []
        while not set(probes) & set(rows(app)):
            assert time.monotonic() < deadline, "the subscription never delivered"
            probes.append((await call(remember, server, f"probe {len(probes)}", probe_ns))["id"])
            await pilot.pause(0.5)
        loads = queue(app).loads

        cand = await call(remember, server, "Arrives while the queue is open", ns)
        await until(pilot, lambda: cand["id"] in rows(app), "the new candidate, live")
        assert "live" in pane(app, "#status")
        await call(remember, server, "Arrives while the queue is open", ns)  # merges
        table: DataTable[str] = app.queue.query_one("#queue", DataTable)
        await until(pilot, lambda: table.get_row(cand["id"])[4] == "2", "the merge, live")
        await call(approve, server, cand["id"])  # another reviewer approves it
        await until(pilot, lambda: cand["id"] not in rows(app), "the approval, live")
        assert queue(app).loads == loads  # events, not reloads, did all that

    run_app(server, scenario)


def test_the_queue_says_when_the_server_goes_away_and_catches_up(server: Server) -> None:
    ns = space("reconnect")
    port = int(server.url.rsplit(":", 1)[1])
    relay = Relay(port, free_port())
    before = remember(server, "Here before the outage", ns)

    async def scenario(app: ReviewApp, pilot: Pilot[int]) -> None:
        await loaded(app, pilot, [before["id"]])
        await until(pilot, lambda: queue(app).live.state == "live", "live")
        await relay.drop()
        await until(pilot, lambda: queue(app).live.state == "retrying", "the outage noticed")
        assert "unreachable" in pane(app, "#status")
        during = await call(remember, server, "Arrives during the outage", ns)
        await pilot.pause(1.0)
        assert during["id"] not in rows(app)
        await relay.restore()
        await until(pilot, lambda: queue(app).live.state == "live", "the reconnect")
        await until(pilot, lambda: during["id"] in rows(app), "the catch-up reload")
        assert "live" in pane(app, "#status")
        await relay.drop()

    run_app(server, scenario, namespace=ns, url=relay.url, before=relay.restore)
