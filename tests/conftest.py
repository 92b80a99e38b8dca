"""Suite-wide set-up: offline model loading, quiet libraries, shared fixtures."""

from __future__ import annotations

import os

import pytest

# Before anything imports transformers, sentence-transformers or chromadb: the embedding model
# comes from its pip package and nothing may reach for a hub or send telemetry.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from tests.fixtures.chroma import chroma_server_url  # noqa: E402, F401  (fixture)
from tests.fixtures.postgres import postgres_server, postgres_url  # noqa: E402, F401  (fixtures)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses the PostgreSQL server, so `-m postgres` selects them."""
    for item in items:
        if "postgres_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)
