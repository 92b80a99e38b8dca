"""`memvet review`'s interactive queue (Textual): pending candidates, a detail pane, the
dashboard's keys, and live updates from the `reviewEvents` subscription.

A thin client: every decision (who may approve, what a transition allows, which events this
token sees) is the server's; the queue asks, shows the answer, and follows the events.
"""

from __future__ import annotations

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Footer

from memvet.api.client import ClientError
from memvet.api.review.client import ReviewClient
from memvet.api.review.format import age, clip
from memvet.api.review.models import Candidate, Detail, Edit, Event, LiveStatus, Viewer
from memvet.api.review.screens import (
    EditScreen,
    Filters,
    FilterScreen,
    HelpScreen,
    RejectScreen,
    TurnScreen,
)
from memvet.api.review.widgets import TextPane, detail_text, status_text

LOAD_LIMIT = 2000  # the queue is for skimming; past this, narrow it with `/`
GONE = ("approved", "rejected", "archived")
CHANGED = ("created", "merged", "edited")


class QueueScreen(Screen[None]):
    """The queue: the candidate table, the detail pane, the status line, the keys."""

    BINDINGS = [
        Binding("j", "move(1)", "next", show=False),
        Binding("k", "move(-1)", "previous", show=False),
        Binding("a", "approve", "approve"),
        Binding("e", "edit", "edit+approve"),
        Binding("r", "reject", "reject"),
        Binding("t", "turn", "turn"),
        Binding("slash", "filter", "filter"),
        Binding("question_mark", "help", "help"),
        Binding("q", "quit", "quit"),
    ]
    DEFAULT_CSS = """
    QueueScreen #title { height: 1; background: $primary; color: $text; padding: 0 1; }
    QueueScreen #queue { height: 1fr; min-height: 5; }
    QueueScreen #side { height: 1fr; border-top: solid $primary; padding: 0 1; }
    QueueScreen #status { height: 1; padding: 0 1; }
    """

    def __init__(self, client: ReviewClient, viewer: Viewer, filters: Filters) -> None:
        super().__init__()
        self.client = client
        self.viewer = viewer
        self.filters = filters
        self.items: list[Candidate] = []  # what the server sent, newest first
        self.total = 0
        self.details: dict[str, Detail] = {}
        self.live = LiveStatus("connecting")
        self.loads = 0  # finished loads, so callers (and tests) can tell a refresh landed
        self.loads_in_flight = 0  # loads in flight (a newer one cancels an older one)
        self.acting: set[str] = set()  # ids with an approve/reject on its way: `a a` is one

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield TextPane(id="title")
        yield DataTable(id="queue", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="side"):
            yield TextPane("loading…", id="detail")
        yield TextPane(status_text(self.live), id="status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.table
        for label, key in (("kind", "kind"), ("namespace", "namespace"),
                           ("source", "source"), ("conf", "conf"), ("seen", "seen"),
                           ("age", "age"), ("content", "content")):
            table.add_column(label, key=key)
        table.focus()
        self.load()
        self.follow()

    def on_resize(self) -> None:
        self.render_rows(self.selected.id if self.selected else None)

    def torn_down(self) -> bool:
        """True once the app has begun to quit and removed the queue's widgets: a worker whose
        answer arrives after that has nothing left to show it in."""
        return not self.query("#queue")

    @property
    def table(self) -> DataTable[str]:
        return self.query_one("#queue", DataTable)

    @property
    def shown(self) -> list[Candidate]:
        """The loaded candidates that pass the filters, in table order."""
        return [c for c in self.items if self.filters.shows(c)]

    @property
    def selected(self) -> Candidate | None:
        """The candidate under the cursor."""
        table = self.table
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return next((c for c in self.items if c.id == key), None)

    def render_rows(self, keep: str | None = None) -> None:
        """Redraw the table from `items`, keeping the cursor on `keep` (or its place)."""
        table = self.table
        if not table.columns:  # not mounted yet
            return
        row = table.cursor_row
        table.clear()
        shown = self.shown
        cells = [(c.kind, c.namespace, c.source, f"{c.confidence:.2f}", str(c.observations),
                  age(c.created_at)) for c in shown]
        # The content takes what the other columns leave of the width (each pads 1 + 1).
        used = sum(max([len(str(col.label))] + [len(r[i]) for r in cells]) + 2
                   for i, col in enumerate(table.ordered_columns[:-1]))
        room = max(24, (table.size.width or self.app.size.width) - used - 4)
        for c, row_cells in zip(shown, cells, strict=True):
            table.add_row(*row_cells, clip(c.content, room), key=c.id)
        ids = [c.id for c in shown]
        if keep in ids:
            row = ids.index(keep)
        if shown:
            table.move_cursor(row=min(max(row, 0), len(shown) - 1))
            if (selected := self.selected) is not None:
                self.show_detail(selected.id)
        else:
            self.query_one("#detail", TextPane).show(
                "Nothing pending here. New candidates appear as agents learn."
                if not self.filters.text and self.total == 0 else "Nothing matches the filter.")
        self.render_title()

    def render_title(self) -> None:
        count = f"{len(self.shown)} shown of {self.total} pending"
        self.query_one("#title", TextPane).show(
            f"memvet review · {self.viewer.name} ({self.viewer.role}) · "
            f"{self.filters.describe()} · {count} · {self.client.url}")

    def notify_error(self, err: ClientError) -> None:
        self.notify(" ".join(str(err).split()), severity="error", timeout=8)

    # ------------------------------------------------------------------ loading
    @work(exclusive=True, group="load")
    async def load(self) -> None:
        """(Re)load the pending candidates under the server-side filters."""
        keep = self.selected.id if self.selected else None
        self.loads_in_flight += 1
        try:
            page = await self.client.pending(namespace=self.filters.namespace,
                                             kind=self.filters.kind, limit=LOAD_LIMIT)
        except ClientError as err:
            self.notify_error(err)
            return
        finally:
            self.loads_in_flight -= 1
        if self.torn_down():
            return
        self.items, self.total = list(page.candidates), page.total
        self.details.clear()
        self.render_rows(keep)
        self.loads += 1

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self.show_detail(event.row_key.value)

    @work(exclusive=True, group="detail")
    async def show_detail(self, candidate_id: str) -> None:
        """Fill the detail pane (origins, excerpts, related memories) for one candidate."""
        detail = self.details.get(candidate_id)
        if detail is None:
            try:
                detail = await self.client.detail(candidate_id)
            except ClientError as err:
                if not self.torn_down():
                    self.query_one("#detail", TextPane).show(
                        f"cannot load this candidate: {err}")
                return
            self.details[candidate_id] = detail
        if self.torn_down():
            return
        if self.selected is not None and self.selected.id == candidate_id:
            self.query_one("#detail", TextPane).show(detail_text(detail))

    # ------------------------------------------------------------------ live updates
    @work(exclusive=True, group="live")
    async def follow(self) -> None:
        """Apply review events as they come, reconnecting for as long as the queue is open."""
        async for event in self.client.events(self.on_live_status):
            if self.torn_down():
                return
            self.apply(event)

    def on_live_status(self, status: LiveStatus) -> None:
        """Show the connection's state; after a (re)connect, catch up on what was missed."""
        self.live = status
        if self.torn_down():
            return
        self.query_one("#status", TextPane).show(status_text(status))
        if status.state == "live":
            self.load()

    def apply(self, event: Event) -> None:
        """Fold one review event into the list, as the dashboard does."""
        cand, known = event.candidate, {c.id for c in self.items}
        keep = self.selected.id if self.selected else None
        if event.action in CHANGED and cand is not None and cand.status == "pending":
            self.details.pop(cand.id, None)
            if cand.id in known:
                self.items = [cand if c.id == cand.id else c for c in self.items]
            elif self._server_side(cand):
                self.items.insert(0, cand)
                self.total += 1
            self.render_rows(keep)
            if keep == cand.id:
                self.show_detail(cand.id)
        elif event.action in GONE:
            gone = cand.id if cand else event.candidate_id
            if gone in known:
                self._drop(gone)
                self.notify(f"{event.action} by {event.actor or 'another reviewer'}")
        if event.action in ("approved", "memory_updated", "memory_deleted"):
            self.details.clear()  # the related memories may have changed

    def _server_side(self, cand: Candidate) -> bool:
        """Whether the server would list `cand` under the namespace and kind filters."""
        return Filters(namespace=self.filters.namespace, kind=self.filters.kind).shows(cand)

    def _drop(self, candidate_id: str | None) -> None:
        before = len(self.items)
        self.items = [c for c in self.items if c.id != candidate_id]
        self.total -= before - len(self.items)
        self.details.pop(candidate_id or "", None)
        self.render_rows()

    # ------------------------------------------------------------------ keys
    def action_move(self, step: int) -> None:
        table = self.table
        if table.row_count:
            table.move_cursor(row=min(max(table.cursor_row + step, 0), table.row_count - 1))

    def action_approve(self) -> None:
        if (cand := self.selected) is not None:
            self._approve(cand, None)

    @work(group="act")
    async def _approve(self, cand: Candidate, edit: Edit | None) -> None:
        error = await self.approve(cand, edit)
        if error and cand.id not in self.acting:  # a repeated `a` is not worth a warning
            self.notify(error, severity="error", timeout=8)

    async def approve(self, cand: Candidate, edit: Edit | None) -> str | None:
        """Approve (after `edit`); None when done, else what went wrong."""
        if cand.id in self.acting:
            return "this candidate is already being approved or rejected"
        self.acting.add(cand.id)
        try:
            memory = await self.client.approve(cand.id, edit)
        except ClientError as err:
            return " ".join(str(err).split())
        finally:
            self.acting.discard(cand.id)
        self._drop(cand.id)
        self.notify(f"approved: {clip(memory.content, 60)}")
        return None

    async def reject(self, cand: Candidate, reason: str) -> str | None:
        """Reject with `reason`; None when done, else what went wrong."""
        if cand.id in self.acting:
            return "this candidate is already being approved or rejected"
        self.acting.add(cand.id)
        try:
            await self.client.reject(cand.id, reason or None)
        except ClientError as err:
            return " ".join(str(err).split())
        finally:
            self.acting.discard(cand.id)
        self._drop(cand.id)
        self.notify(f"rejected: {clip(cand.content, 60)}")
        return None

    def action_edit(self) -> None:
        if (cand := self.selected) is not None:
            self.app.push_screen(EditScreen(cand, lambda edit: self.approve(cand, edit)))

    def action_reject(self) -> None:
        if (cand := self.selected) is not None:
            self.app.push_screen(RejectScreen(cand, lambda why: self.reject(cand, why)))

    def action_filter(self) -> None:
        self.app.push_screen(FilterScreen(self.filters), self._filtered)

    def _filtered(self, chosen: object) -> None:
        if not isinstance(chosen, Filters):
            return
        server_side = (chosen.namespace, chosen.kind) != (self.filters.namespace,
                                                          self.filters.kind)
        self.filters = chosen
        if server_side:
            self.load()
        else:
            self.render_rows(self.selected.id if self.selected else None)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    @work(exclusive=True, group="turn")
    async def action_turn(self) -> None:
        cand = self.selected
        if cand is None:
            return
        try:
            detail = self.details.get(cand.id) or await self.client.detail(cand.id)
            if detail.turn_ref is None:
                self.notify(f"no stored turn: this candidate was {cand.source}, not "
                            "extracted from a conversation", severity="warning")
                return
            turn = await self.client.turn(detail.turn_ref)
        except ClientError as err:
            self.notify_error(err)
            return
        if self.torn_down():
            return
        self.app.push_screen(TurnScreen(turn, detail.excerpts))

    def action_quit(self) -> None:
        self.app.exit(0)


class ReviewApp(App[int]):
    """`memvet review`: the pending queue of the server `client` talks to."""

    TITLE = "memvet review"

    def __init__(self, client: ReviewClient, *, viewer: Viewer, namespace: str | None = None,
                 kind: str | None = None) -> None:
        super().__init__()
        self.queue = QueueScreen(client, viewer, Filters(namespace=namespace, kind=kind))

    def get_default_screen(self) -> QueueScreen:
        return self.queue
