"""Fixtures for the agent-integration tests: one `memvet serve` (fake embedder) per module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.support import Server, run_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A real server on a fresh data dir, fake embedder, heuristic extractor; three tokens."""
    with run_server(tmp_path_factory.mktemp("agents") / "data") as running:
        yield running


@pytest.fixture
def hook_log(tmp_path: Path) -> Path:
    """Where the hook under test logs (MEMVET_HOOK_LOG)."""
    return tmp_path / "hook.log"
