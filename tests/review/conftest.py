"""Fixtures for `memvet review`: one real server (uvicorn on loopback, fake embedder, tokens for
every role) per test module, from the GraphQL tests' helpers (tests/graph/support.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.graph.support import Server, run_server, settings_for


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server on a fresh SQLite data dir; each test works in namespaces of its own."""
    with run_server(settings_for(tmp_path_factory.mktemp("review"))) as running:
        yield running
