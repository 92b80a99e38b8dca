"""The review queue's dialogs: edit-then-approve, reject with a reason, filters, the stored
turn, and help. Each is a modal screen; escape closes it without doing anything.

Dialogs that act (edit, reject) are handed an async `submit` that calls the server and returns
an error message or None: on an error the dialog stays open with what was typed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, TextArea

from memvet.api.client_cli import KINDS
from memvet.api.review.models import Candidate, Edit, Turn
from memvet.api.review.widgets import TextPane, turn_text

KEYS = (
    ("j / ↓", "next candidate"),
    ("k / ↑", "previous candidate"),
    ("a", "approve the selected candidate as it is"),
    ("e", "edit content, kind and namespace, then approve (ctrl+s)"),
    ("r", "reject (asks a reason; it may be empty)"),
    ("t", "show the turn the candidate came from, excerpt highlighted"),
    ("/", "filter by namespace, kind and text"),
    ("?", "this help"),
    ("q", "quit"),
)


@dataclass(frozen=True)
class Filters:
    """What the queue shows: namespace and kind (asked of the server), text (matched here)."""

    namespace: str | None = None
    kind: str | None = None
    text: str = ""

    def describe(self) -> str:
        """`workspace:x · fact · "pnpm"`, or `all pending` when nothing is set."""
        parts = [p for p in (self.namespace, self.kind) if p]
        if self.text:
            parts.append(f'"{self.text}"')
        return " · ".join(parts) or "all pending"

    def shows(self, c: Candidate) -> bool:
        """Whether a pending candidate belongs in the list under these filters."""
        if self.namespace and c.namespace != self.namespace:
            return False
        if self.kind and c.kind != self.kind:
            return False
        text = self.text.strip().lower()
        return not text or text in f"{c.content}\n{c.namespace}\n{c.kind}".lower()


class Dialog(ModalScreen[object]):
    """A modal screen that escape closes."""

    BINDINGS = [Binding("escape", "close", "close")]
    DEFAULT_CSS = """
    Dialog { align: center middle; }
    Dialog > Vertical { width: 90; max-width: 95%; height: auto; max-height: 90%;
                        border: thick $accent; background: $panel; padding: 1 2; }
    Dialog Label.error { color: $error; }
    Dialog Horizontal { height: auto; margin-top: 1; }
    Dialog Button { margin-right: 2; }
    """

    def action_close(self) -> None:
        self.dismiss(None)


class HelpScreen(Dialog):
    """Every key of the queue."""

    BINDINGS = [Binding("question_mark,q", "close", "close")]

    def compose(self) -> ComposeResult:
        text = Text("Keys\n\n", style="bold")
        for key, what in KEYS:
            text.append(f"  {key:<8}", style="bold cyan")
            text.append(f"{what}\n")
        text.append("\nNew and merged candidates appear as they arrive. esc closes.",
                    style="dim")
        with Vertical():
            yield TextPane(text, id="help")


class TurnScreen(Dialog):
    """The stored exchange a candidate came from, its excerpts highlighted."""

    BINDINGS = [Binding("q,t", "close", "close")]
    DEFAULT_CSS = "TurnScreen > Vertical { width: 110; }"

    def __init__(self, turn: Turn, excerpts: tuple[str, ...]) -> None:
        super().__init__()
        self.turn = turn
        self.text, self.marked = turn_text(turn, excerpts)

    def compose(self) -> ComposeResult:
        with Vertical():
            with VerticalScroll():
                yield TextPane(self.text, id="turn")
            if not self.marked:
                yield Label("The excerpt was not found verbatim in the stored messages.",
                            classes="error")


class RejectScreen(Dialog):
    """Ask why (optional), then reject."""

    def __init__(self, candidate: Candidate,
                 submit: Callable[[str], Awaitable[str | None]]) -> None:
        super().__init__()
        self.candidate = candidate
        self.submit = submit

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text.assemble(("Reject: ", "bold"), self.candidate.content))
            yield Input(placeholder="why? (optional; enter to reject, esc to cancel)",
                        id="reason", max_length=500)
            yield Label("", id="error", classes="error")

    @on(Input.Submitted, "#reason")
    def _reason_given(self, event: Input.Submitted) -> None:
        self._send(event.value.strip())

    @work(exclusive=True, group="submit")
    async def _send(self, reason: str) -> None:
        error = await self.submit(reason)
        if error is None:
            self.dismiss(reason)
        else:
            self.query_one("#error", Label).update(error)


class EditScreen(Dialog):
    """Correct content, kind and namespace; ctrl+s (or the button) approves what is shown."""

    BINDINGS = [Binding("ctrl+s", "approve", "approve", priority=True)]

    def __init__(self, candidate: Candidate,
                 submit: Callable[[Edit], Awaitable[str | None]]) -> None:
        super().__init__()
        self.candidate = candidate
        self.submit = submit

    def compose(self) -> ComposeResult:
        c = self.candidate
        with Vertical():
            yield Label("Edit, then approve (ctrl+s) · esc cancels", classes="title")
            yield TextArea(c.content, id="content", soft_wrap=True)
            yield Select([(k, k) for k in KINDS], value=c.kind, allow_blank=False, id="kind")
            yield Input(c.namespace, placeholder="workspace:<name> or persona:<name>",
                        id="namespace")
            yield Label("", id="error", classes="error")
            with Horizontal():
                yield Button("Approve", variant="success", id="approve")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#content", TextArea).styles.height = 6

    def edit(self) -> Edit:
        """What changed; untouched fields stay as they are on the server."""
        c = self.candidate
        content = self.query_one("#content", TextArea).text.strip()
        kind = str(self.query_one("#kind", Select).value)
        namespace = self.query_one("#namespace", Input).value.strip()
        return Edit(content=content if content != c.content else None,
                    kind=kind if kind != c.kind else None,
                    namespace=namespace if namespace != c.namespace else None)

    def action_approve(self) -> None:
        self._send(self.edit())

    @on(Button.Pressed, "#approve")
    def _approve_pressed(self) -> None:
        self.action_approve()

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.dismiss(None)

    @work(exclusive=True, group="submit")
    async def _send(self, edit: Edit) -> None:
        error = await self.submit(edit)
        if error is None:
            self.dismiss(edit)
        else:
            self.query_one("#error", Label).update(error)


class FilterScreen(Dialog):
    """Namespace, kind and free text; enter applies, the Clear button shows everything."""

    def __init__(self, filters: Filters) -> None:
        super().__init__()
        self.filters = filters

    def compose(self) -> ComposeResult:
        f = self.filters
        with Vertical():
            yield Label("Filter the queue · enter applies · esc cancels", classes="title")
            yield Input(f.text, placeholder="text in content, namespace or kind", id="text")
            yield Input(f.namespace or "", placeholder="namespace (workspace:… or persona:…)",
                        id="namespace")
            yield Select([(k, k) for k in KINDS], value=f.kind or Select.NULL,
                         prompt="any kind", id="kind")
            with Horizontal():
                yield Button("Apply", variant="primary", id="apply")
                yield Button("Clear", id="clear")

    def chosen(self) -> Filters:
        """The filters as the dialog now shows them."""
        kind = self.query_one("#kind", Select).value
        return Filters(namespace=self.query_one("#namespace", Input).value.strip() or None,
                       kind=str(kind) if isinstance(kind, str) else None,
                       text=self.query_one("#text", Input).value.strip())

    @on(Input.Submitted)
    @on(Button.Pressed, "#apply")
    def _apply(self) -> None:
        self.dismiss(self.chosen())

    @on(Button.Pressed, "#clear")
    def _clear(self) -> None:
        self.dismiss(Filters())
