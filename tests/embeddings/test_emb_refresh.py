"""Workers sharing one Chroma: what one writes, another re-reads with `refresh`."""

from __future__ import annotations

from pathlib import Path

from memvet.embeddings.chroma import make_chroma_client
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
