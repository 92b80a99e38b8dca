"""The review client's pieces that need no server: its GraphQL documents against the committed
schema, the terminal formatting, the reconnect backoff, the queue's filters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from graphql import build_schema, parse, validate

from memvet.api.review import client
from memvet.api.review.format import age, clip, table
from memvet.api.review.models import Candidate, Edit
from memvet.api.review.screens import Filters

SCHEMA = Path(__file__).resolve().parents[2] / "graph" / "schema.graphql"
NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def cand(**overrides: Any) -> Candidate:
    values: dict[str, Any] = {
        "id": "c1", "content": "shop-api uses pnpm,\nnot npm", "kind": "fact",
        "namespace": "workspace:shop-api", "source": "turn", "confidence": 0.5,
        "observations": 3, "status": "pending", "created_at": "2026-05-01T09:00:00+00:00",
        "last_observed_at": "2026-05-01T09:00:00+00:00"}
    values.update(overrides)
    return Candidate(**values)


@pytest.mark.parametrize("name", ["VIEWER", "PENDING", "DETAIL", "TURN", "APPROVE", "REJECT",
                                  "EVENTS"])
def test_every_document_is_valid_against_the_committed_schema(name: str) -> None:
    schema = build_schema(SCHEMA.read_text())
    assert validate(schema, parse(getattr(client, name))) == []


def test_ages_and_clipping() -> None:
    assert age("2026-05-01T11:59:15+00:00", NOW) == "45s"
    assert age("2026-05-01T11:48:00", NOW) == "12m"  # naive means UTC
    assert age("2026-04-28T12:00:00+00:00", NOW) == "3d"
    assert age((NOW - timedelta(days=30)).isoformat(), NOW) == "4w"
    assert age("yesterday", NOW) == "?"
    assert clip("a  b\nc", 10) == "a b c"
    assert clip("abcdefghij", 5) == "abcd…"


def test_the_table_clips_content_only_for_a_terminal() -> None:
    rows = [cand(), cand(id="c2", content="x" * 300, kind="decision")]
    whole = table(rows, now=NOW).splitlines()
    assert whole[1].split()[:7] == ["c1", "fact", "workspace:shop-api", "turn", "0.50", "3",
                                    "3h"]
    assert whole[1].endswith("shop-api uses pnpm, not npm") and whole[2].endswith("x" * 300)
    narrow = table(rows, width=100, now=NOW).splitlines()
    assert all(len(line) <= 100 for line in narrow) and narrow[2].endswith("…")


def test_reconnect_backoff_doubles_to_fifteen_seconds_with_jitter() -> None:
    assert 0.25 <= client.backoff(1) <= 0.5
    assert 2.0 <= client.backoff(4) <= 4.0
    assert all(7.5 <= client.backoff(n) <= 15.0 for n in (6, 10, 50))


def test_edit_sends_only_what_changed_and_kinds_as_enums() -> None:
    assert Edit().as_input() is None
    assert Edit(kind="decision", content="x").as_input() == {"kind": "DECISION", "content": "x"}


def test_filters_match_namespace_kind_and_text() -> None:
    c = cand()
    assert Filters().shows(c) and Filters().describe() == "all pending"
    assert Filters(namespace="workspace:shop-api", kind="fact", text="PNPM").shows(c)
    assert not Filters(namespace="workspace:other").shows(c)
    assert not Filters(kind="decision").shows(c)
    assert not Filters(text="yarn").shows(c)
    assert Filters(text="shop-api").describe() == '"shop-api"'
