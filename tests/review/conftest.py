"""Fixtures for `memvet review`: one real server (uvicorn on loopback, fake embedder, tokens for
every role) per test module, from the GraphQL tests' helpers."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# graph_support lives beside the GraphQL tests; reuse it rather than copy it.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "graph"))

from graph_support import Server, run_server, settings_for  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server on a fresh SQLite data dir; each test works in namespaces of its own."""
    with run_server(settings_for(tmp_path_factory.mktemp("review"))) as running:
        yield running
