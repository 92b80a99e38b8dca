"""How the review queue shows things in a terminal: ages, clipped text, the `--list` table.

Plain functions over plain values, shared by the scriptable forms and the Textual app.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Protocol


class Row(Protocol):
    """What the table needs of a candidate (api.review.client.Candidate has it)."""

    @property
    def id(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def confidence(self) -> float: ...
    @property
    def observations(self) -> int: ...
    @property
    def created_at(self) -> str: ...


COLUMNS = ("ID", "KIND", "NAMESPACE", "SOURCE", "CONF", "SEEN", "AGE", "CONTENT")


def parse_time(value: str) -> datetime | None:
    """An ISO timestamp from the API (naive ones are UTC), or None if unreadable."""
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def age(created_at: str, now: datetime | None = None) -> str:
    """`45s`, `12m`, `3h`, `9d`, `14w`: how long ago, in one short token."""
    when = parse_time(created_at)
    if when is None:
        return "?"
    seconds = max(0, int(((now or datetime.now(UTC)) - when).total_seconds()))
    for unit, size in (("w", 7 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size * (2 if unit == "w" else 1):
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def one_line(text: str) -> str:
    """Whitespace (newlines included) collapsed to single spaces."""
    return " ".join(text.split())


def clip(text: str, width: int) -> str:
    """`text` on one line, cut to `width` characters with an ellipsis."""
    flat = one_line(text)
    if width <= 0:
        return ""
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


def cells(row: Row, now: datetime | None = None) -> tuple[str, ...]:
    """The table's cells for one candidate, content left whole (callers clip it)."""
    return (row.id, row.kind, row.namespace, row.source, f"{row.confidence:.2f}",
            str(row.observations), age(row.created_at, now), one_line(row.content))


def table(rows: Iterable[Row], *, width: int | None = None, now: datetime | None = None
          ) -> str:
    """The readable `--list` table: aligned columns; with a `width`, content is clipped to
    what is left of it (None: content whole, for pipes)."""
    body = [cells(r, now) for r in rows]
    widths = [max([len(COLUMNS[i])] + [len(c[i]) for c in body]) for i in range(len(COLUMNS))]
    room = None if width is None else max(20, width - sum(widths[:-1]) - 2 * (len(COLUMNS) - 1))
    lines = [_line(COLUMNS, widths)]
    lines.extend(_line((*c[:-1], c[-1] if room is None else clip(c[-1], room)), widths)
                 for c in body)
    return "\n".join(lines)


def _line(values: Sequence[str], widths: Sequence[int]) -> str:
    head = [v.ljust(w) for v, w in zip(values[:-1], widths[:-1], strict=True)]
    return "  ".join([*head, values[-1]]).rstrip()
