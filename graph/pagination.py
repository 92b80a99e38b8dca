"""Relay-style connections over the service's offset pages.

A cursor is an opaque base64 string (it encodes an offset); clients pass `endCursor` back as
`after` to get the next page. `first` is bounded to 1..MAX_FIRST.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Generic, TypeVar

import strawberry

from memvet.memory.errors import ValidationError
from memvet.memory.limits import MAX_PAGE
from memvet.memory.records import Page

MAX_FIRST = MAX_PAGE
DEFAULT_FIRST = 50
_PREFIX = "offset:"

N = TypeVar("N")
R = TypeVar("R")


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_PREFIX}{offset}".encode()).decode()


def decode_cursor(cursor: str) -> int:
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
    except (binascii.Error, UnicodeError, ValueError):
        raise ValidationError("`after` is not a cursor this API gave out") from None
    if not text.startswith(_PREFIX) or not text[len(_PREFIX):].isdigit():
        raise ValidationError("`after` is not a cursor this API gave out")
    return int(text[len(_PREFIX):])


def window(first: int | None, after: str | None) -> tuple[int, int]:
    """(offset, limit) for `first`/`after`; raises ValidationError when out of bounds."""
    limit = DEFAULT_FIRST if first is None else first
    if not 1 <= limit <= MAX_FIRST:
        raise ValidationError(f"`first` must be between 1 and {MAX_FIRST}")
    if after is not None and len(after) > 64:
        raise ValidationError("`after` is not a cursor this API gave out")
    offset = 0 if after is None else decode_cursor(after) + 1
    return offset, limit


@strawberry.type(description="Where a page sits in the whole list.")
class PageInfo:
    has_next_page: bool = strawberry.field(description="More items follow this page.")
    has_previous_page: bool = strawberry.field(description="Items precede this page.")
    start_cursor: str | None = strawberry.field(description="Cursor of the first item.")
    end_cursor: str | None = strawberry.field(
        description="Cursor of the last item: pass it as `after` for the next page.")


@strawberry.type(description="One item of a page and its cursor.")
class Edge(Generic[N]):
    cursor: str = strawberry.field(description="Opaque position of this item.")
    node: N = strawberry.field(description="The item.")


@strawberry.type(description="A page of items with the total count.")
class Connection(Generic[N]):
    edges: list[Edge[N]] = strawberry.field(description="The items with their cursors.")
    nodes: list[N] = strawberry.field(description="The items alone (shortcut for edges.node).")
    page_info: PageInfo = strawberry.field(description="Paging state.")
    total_count: int = strawberry.field(description="How many items match, over all pages.")


def connection(page: Page[R], convert: Callable[[R], N]) -> Connection[N]:
    nodes = [convert(item) for item in page.items]
    edges = [Edge(cursor=encode_cursor(page.offset + i), node=n) for i, n in enumerate(nodes)]
    return Connection(
        edges=edges,
        nodes=nodes,
        page_info=PageInfo(
            has_next_page=page.has_next,
            has_previous_page=page.offset > 0,
            start_cursor=edges[0].cursor if edges else None,
            end_cursor=edges[-1].cursor if edges else None,
        ),
        total_count=page.total,
    )
