"""Fixtures for the embeddings tests: Chroma clients (embedded and a real server), embedders."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.net import free_port, http_process

from embeddings.chroma import make_chroma_client
from embeddings.fake import FakeEmbedder


@pytest.fixture(scope="session")
def chroma_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A `chroma run` server from the installed package on a free loopback port."""
    chroma = Path(sys.executable).with_name("chroma")
    data = tmp_path_factory.mktemp("chroma-server")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [str(chroma), "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)]
    with http_process(
        cmd,
        f"{url}/api/v2/heartbeat",
        log=data / "server.log",
        env={"ANONYMIZED_TELEMETRY": "False"},
    ):
        yield url


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
    from embeddings.onnx import OnnxEmbedder

    embedder = OnnxEmbedder(cache_dir=tmp_path_factory.mktemp("onnx"))
    embedder.load()
    return embedder
