"""Fixtures for the embeddings tests: embedded Chroma clients and embedders (the Chroma server
fixture, `chroma_server_url`, is shared from tests/fixtures/chroma.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memvet.embeddings.chroma import make_chroma_client
from memvet.embeddings.fake import FakeEmbedder


@pytest.fixture
def client(tmp_path: Path) -> Any:
    """A fresh embedded Chroma under the test's own temp dir."""
    return make_chroma_client(path=tmp_path / "chroma")


@pytest.fixture
def fake() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture(scope="session")
def onnx_embedder(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The packaged model on onnxruntime (exported once per test session)."""
    from memvet.embeddings.onnx import OnnxEmbedder

    embedder = OnnxEmbedder(cache_dir=tmp_path_factory.mktemp("onnx"))
    embedder.load()
    return embedder
