"""Workers sharing one Chroma: what one writes, another re-reads with `refresh`."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from memvet.embeddings.chroma import collection_name, make_chroma_client
from memvet.embeddings.fake import FakeEmbedder
from memvet.embeddings.index import ChromaMemoryIndex
from memvet.memory.kinds import Kind
from memvet.memory.ports import IndexedMemory


def ids(index: ChromaMemoryIndex, query: str) -> list[str]:
    return [h.memory_id for h in index.search(query, ["workspace:shared"], limit=10)]


def test_refresh_picks_up_another_writers_changes(tmp_path: Path) -> None:
    client = make_chroma_client(path=tmp_path / "chroma")
    emb = FakeEmbedder()
    writer, reader = ChromaMemoryIndex(client, emb), ChromaMemoryIndex(client, emb)
    writer.upsert([IndexedMemory("m1", "workspace:shared", Kind.FACT, "deploys use blue green")])
    # The reader has never seen the namespace: refresh opens the partition another made.
    assert ids(reader, "blue green deploys") == []
    reader.refresh("workspace:shared", ["m1"])
    assert ids(reader, "blue green deploys") == ["m1"]
    # Its partition is loaded now: a later write and a delete reach it only through refresh.
    writer.upsert([IndexedMemory("m2", "workspace:shared", Kind.DECISION,
                                 "we chose canary releases for the api")])
    assert "m2" not in ids(reader, "canary releases api")
    reader.refresh("workspace:shared", ["m2"])
    assert ids(reader, "canary releases api")[0] == "m2"
    writer.remove("workspace:shared", ["m1"])
    reader.refresh("workspace:shared", ["m1"])
    assert "m1" not in ids(reader, "blue green deploys")
    assert set(reader.snapshot()["workspace:shared"]) == {"m2"}


def test_a_stored_kind_that_is_not_a_kind_is_skipped_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Chroma's metadata comes from outside the process: a bad kind skips that row, no crash."""
    client = make_chroma_client(path=tmp_path / "chroma")
    emb = FakeEmbedder()
    writer = ChromaMemoryIndex(client, emb)
    writer.upsert([IndexedMemory(f"m{i}", "workspace:shared", Kind.FACT, f"note {i} on deploys")
                   for i in range(3)])
    collection = client.get_collection(collection_name("workspace:shared", emb.model_id))
    collection.update(ids=["m1"], metadatas=[{"kind": "opinion", "content_hash": "x"}])
    with caplog.at_level(logging.WARNING, logger="memvet.embeddings.partitions"):
        reopened = ChromaMemoryIndex(client, emb)
    assert set(reopened.snapshot()["workspace:shared"]) == {"m0", "m2"}
    assert "m1" not in ids(reopened, "note 1 on deploys")
    assert "'opinion' is not a memory kind" in caplog.text
    writer.upsert([IndexedMemory("m1", "workspace:shared", Kind.FACT, "note 1 on deploys, fixed")])
    reopened.refresh("workspace:shared", ["m1"])  # the row is good again: it comes back
    assert ids(reopened, "note 1 on deploys fixed")[0] == "m1"
    collection.update(ids=["m2"], metadatas=[{"kind": 7, "content_hash": "x"}])
    reopened.refresh("workspace:shared", ["m2"])  # read back bad: dropped, to be reindexed
    assert set(reopened.snapshot()["workspace:shared"]) == {"m0", "m1"}
