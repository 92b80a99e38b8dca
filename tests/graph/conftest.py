"""Fixtures for the GraphQL tests: one real server (uvicorn on loopback) per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.graph.support import Server, run_server, settings_for


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server on a fresh SQLite data dir with the fake embedder and tokens for every role."""
    with run_server(settings_for(tmp_path_factory.mktemp("graph"))) as running:
        yield running
