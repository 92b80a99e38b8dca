"""The review queue's panes: the candidate detail, the live-connection status line, and the
stored turn with its excerpt highlighted. Each keeps the Rich text it shows in `.text`.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from memvet.api.review.format import age, one_line
from memvet.api.review.models import Candidate, Detail, LiveStatus, Turn

# Decisions and postmortems do the most harm when stale (SPEC §7): the pane says so.
STRICT_KINDS = ("decision", "postmortem")
MAX_ORIGINS = 5  # a candidate seen 40 times would push the related memories off the pane


class TextPane(Static):
    """A Static that remembers what it shows, so tests and callers can read it back."""

    def __init__(self, text: Text | str = "", *, id: str | None = None) -> None:
        self.text = text if isinstance(text, Text) else Text(text)
        super().__init__(self.text, id=id)

    def show(self, text: Text | str) -> None:
        """Replace what the pane shows."""
        self.text = text if isinstance(text, Text) else Text(text)
        self.update(self.text)


def detail_text(detail: Detail) -> Text:
    """The detail pane for one candidate: content, facts, excerpts, related memories."""
    c = detail.candidate
    out = Text()
    out.append(c.content, style="bold")
    out.append("\n\n")
    out.append_text(facts(c))
    if c.kind in STRICT_KINDS:
        out.append(f"\nReview strictly: a stale {c.kind} misleads every time it is recalled.",
                   style="yellow")
    origins = detail.origins or ((detail.origin,) if detail.origin else ())
    out.append(f"\n\nOrigins ({len(origins)})" if len(origins) > 1 else "\n\nOrigin",
               style="bold underline")
    if not origins:
        out.append("\n  (none recorded)", style="dim")
    for origin in origins[:MAX_ORIGINS]:
        where = " · ".join(part for part in (
            origin.source,
            f"conversation {origin.conversation_id}" if origin.conversation_id else "",
            f"turn {origin.turn_id}" if origin.turn_id else "",
            f"{age(origin.created_at)} ago") if part)
        out.append(f"\n  {where}", style="dim")
        if origin.excerpt:
            out.append("\n    “")
            out.append(one_line(origin.excerpt), style="italic")
            out.append("”")
    if len(origins) > MAX_ORIGINS:
        out.append(f"\n  … and {len(origins) - MAX_ORIGINS} more", style="dim")
    if detail.turn_ref:
        out.append("\n  t shows the turn it came from", style="dim")
    out.append("\n\nClosest approved memories", style="bold underline")
    if not detail.related:
        out.append("\n  none in this namespace", style="dim")
    for hit in detail.related:
        out.append(f"\n  {hit.score:.2f} ", style="cyan")
        out.append(f"[{hit.kind}] ", style="magenta")
        out.append(one_line(hit.content))
        out.append(f"  ({hit.memory_id})", style="dim")
    return out


def facts(c: Candidate) -> Text:
    """kind · namespace · source · confidence · seen · age, on one line."""
    out = Text()
    out.append(c.kind, style="magenta bold")
    out.append(f"  {c.namespace}", style="green")
    out.append(f"  {c.source}  confidence {c.confidence:.2f}  seen {c.observations}×  "
               f"{age(c.created_at)} old  id {c.id}", style="dim")
    return out


def status_text(status: LiveStatus) -> Text:
    """What the status line says about the live connection."""
    if status.state == "live":
        return Text("● live", style="green")
    if status.state == "connecting":
        return Text("○ connecting to live updates…", style="yellow")
    if status.state == "reconnecting":
        return Text(f"○ reconnecting (attempt {status.attempt})…", style="yellow")
    wait = f"; retrying in {status.retry_in:.0f}s" if status.retry_in is not None else ""
    if status.state == "denied":
        return Text(f"✕ live updates refused: {status.detail}{wait}", style="red")
    return Text(f"✕ server unreachable ({status.detail}); live updates paused{wait}",
                style="red")


def find_excerpt(content: str, excerpt: str) -> tuple[int, int] | None:
    """Where `excerpt` lies in `content` (exactly, else ignoring case), or None."""
    needle = excerpt.strip()
    if not needle:
        return None
    at = content.find(needle)
    if at < 0:
        at = content.lower().find(needle.lower())
    return (at, at + len(needle)) if at >= 0 else None


def turn_text(turn: Turn, excerpts: tuple[str, ...]) -> tuple[Text, int]:
    """The stored exchange, each message under its role, excerpts highlighted; and how many
    passages were highlighted."""
    out = Text()
    where = ", ".join(part for part in (
        f"workspace:{turn.workspace}" if turn.workspace else "",
        f"persona:{turn.persona}" if turn.persona else "") if part)
    out.append(f"{turn.trigger} {turn.turn_id} of conversation {turn.conversation_id}",
               style="bold")
    out.append(f"  {where}  {age(turn.created_at)} ago\n", style="dim")
    marked = 0
    for message in turn.messages:
        out.append(f"\n{message.role}\n", style="bold cyan")
        body = Text(message.content)
        for excerpt in excerpts:
            span = find_excerpt(message.content, excerpt)
            if span is not None:
                body.stylize("black on yellow", *span)
                marked += 1
        out.append_text(body)
        out.append("\n")
    return out, marked
