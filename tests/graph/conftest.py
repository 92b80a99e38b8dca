"""Fixtures for the GraphQL tests: a small in-process app per test (`app_client`) for plain
query and mutation behaviour, and one real server (uvicorn on loopback) per test module
(`server`) for what is about the transport: WebSocket, concurrency, the HTTP edge."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.graph.support import AppClient, Server, run_app, run_server, settings_for


@pytest.fixture
def app_client(tmp_path: Path) -> Iterator[AppClient]:
    """create_app on the test's own SQLite data dir, fake embedder, heuristic extractor, tokens
    for every role; in process through starlette's TestClient, its lifespan running."""
    with run_app(settings_for(tmp_path)) as client:
        yield client


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server on a fresh SQLite data dir with the fake embedder and tokens for every role."""
    with run_server(settings_for(tmp_path_factory.mktemp("graph"))) as running:
        yield running
