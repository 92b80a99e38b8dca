"""Integration: the real packaged model (torch and ONNX), a real Chroma server, the threshold."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memvet.embeddings import onnx
from memvet.embeddings.chroma import make_chroma_client
from memvet.embeddings.equivalence import (
    DEFAULT_EQUIVALENCE_THRESHOLD,
    EmbeddingCandidateMatcher,
    numbers_of,
)
from memvet.embeddings.index import ChromaMemoryIndex
from memvet.embeddings.model import (
    DIMENSION,
    MODEL_ID,
    SentenceTransformerEmbedder,
    model_hash,
    packaged_model_path,
)
from memvet.embeddings.onnx import OnnxEmbedder, export_onnx, plan
from memvet.memory.kinds import Kind
from memvet.memory.ports import Embedder, IndexedMemory
from tests.embeddings.equivalence_pairs import RELATED, SAME

pytestmark = pytest.mark.slow

SHOP = "workspace:shop-api"
MEMORIES = [
    IndexedMemory("pnpm", SHOP, Kind.FACT, "The project uses pnpm, not npm."),
    IndexedMemory("tauri", SHOP, Kind.DECISION, "Tauri over Electron for bundle size."),
    IndexedMemory("pg", SHOP, Kind.FACT, "Staging runs PostgreSQL 16 on a managed instance."),
    IndexedMemory(
        "oncall",
        SHOP,
        Kind.POSTMORTEM,
        "A migration locked the orders table and took checkout down; run migrations off-peak.",
    ),
    IndexedMemory("tests", SHOP, Kind.PATTERN, "Integration tests live in orders.int.spec.ts."),
    IndexedMemory("terse", "persona:dev", Kind.PREFERENCE, "The user prefers concise answers."),
]


def test_packaged_model_is_found_offline() -> None:
    path = packaged_model_path()
    assert (path / "model.safetensors").is_file()
    assert len(model_hash(path)) == 64


def test_onnx_agrees_with_sentence_transformers(onnx_embedder: OnnxEmbedder) -> None:
    texts = ["pnpm, not npm", "Why did the deploy fail last Friday? " * 20, "x"]
    torch_vecs = np.asarray(SentenceTransformerEmbedder().embed(texts))
    onnx_vecs = np.asarray(onnx_embedder.embed(texts))
    assert onnx_embedder.model_id == MODEL_ID and onnx_vecs.shape == (3, DIMENSION)
    assert np.allclose(np.linalg.norm(onnx_vecs, axis=1), 1.0, atol=1e-5)
    assert (torch_vecs * onnx_vecs).sum(axis=1).min() > 0.9999


def test_texts_packed_in_one_row_get_the_vectors_they_get_alone(
        onnx_embedder: OnnxEmbedder) -> None:
    """A turn's statements run side by side in one row; each attends only to its own tokens."""
    texts = ["no, the bucket is in eu-central-1", "ok", "We moved off Jenkins last spring "
             "because the runners kept dying.", "Thanks! Running the tests again now."]
    [[row]] = plan([len(ids) for ids in _token_ids(onnx_embedder, texts)], 32)
    assert sorted(row) == [0, 1, 2, 3]  # one run of one row
    together = onnx_embedder.embed_array(texts)
    alone = np.vstack([onnx_embedder.embed_array([t]) for t in texts])
    torch_vecs = np.asarray(SentenceTransformerEmbedder().embed(texts))
    assert (together * alone).sum(axis=1).min() > 0.99999
    assert (together * torch_vecs).sum(axis=1).min() > 0.9999


def _token_ids(embedder: OnnxEmbedder, texts: list[str]) -> list[list[int]]:
    embedder.load()
    return [e.ids for e in embedder._tokenizer.encode_batch(texts)]


def test_bulk_embedding_gives_the_same_vectors(onnx_embedder: OnnxEmbedder) -> None:
    """Large batches run on a session of their own (half the cores): same vectors."""
    texts = [f"note {i}: the deploy of service {i % 7} needs {i} approvals" for i in range(300)]
    bulk = onnx_embedder.embed_array(texts)  # over bulk_min: the bulk session
    few = np.vstack([onnx_embedder.embed_array(texts[i : i + 10]) for i in range(0, 300, 10)])
    assert bulk.dtype == np.float32 and bulk.shape == (300, DIMENSION)
    assert (bulk * few).sum(axis=1).min() > 0.99999
    assert np.allclose(np.asarray(onnx_embedder.embed(texts[:3])), few[:3], atol=1e-6)


def test_an_export_replaces_the_older_graph_in_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = model_hash(packaged_model_path())[:16]
    older = [tmp_path / f"minilm-{key}-fp32.onnx", tmp_path / f"minilm-{key}-int8.onnx"]
    other = tmp_path / "minilm-0123456789abcdef-fp32.onnx"  # another model's: kept
    for file in (*older, other):
        file.write_bytes(b"old graph")
    monkeypatch.setattr(onnx, "_export_fp32", lambda root, target: target.write_bytes(b"new"))
    path = export_onnx(tmp_path)
    assert path.name == f"minilm-{key}-packed-fp32.onnx" and path.read_bytes() == b"new"
    assert not any(file.exists() for file in older) and other.exists()


def test_int8_gets_its_own_model_id(tmp_path: Path) -> None:
    int8 = OnnxEmbedder(cache_dir=tmp_path, quantize=True)
    fp32 = OnnxEmbedder(cache_dir=tmp_path)
    assert int8.model_id != fp32.model_id
    a = np.asarray(int8.embed(["The project uses pnpm, not npm."]))
    b = np.asarray(fp32.embed(["The project uses pnpm, not npm."]))
    assert 0.9 < float((a * b).sum()) < 0.9999


def _check_recall(index: ChromaMemoryIndex) -> None:
    index.upsert(MEMORIES)
    # semantic: no shared words with the memory
    top = index.search("which package manager should I install dependencies with?", [SHOP])[0]
    assert top.memory_id == "pnpm"
    # exact name: lexical part present
    hit = index.search("orders.int.spec.ts", [SHOP], limit=3)[0]
    assert hit.memory_id == "tests" and hit.lexical and hit.dense is not None
    # kinds filter and namespace narrowing
    hits = index.search("what went wrong in production", [SHOP], kinds=[Kind.POSTMORTEM])
    assert [h.memory_id for h in hits] == ["oncall"]
    assert index.search("concise", [SHOP]) == [] or all(
        h.namespace == SHOP for h in index.search("concise", [SHOP])
    )
    assert index.search("concise answers", ["persona:dev"])[0].memory_id == "terse"
    index.remove(SHOP, ["pnpm"])
    assert "pnpm" not in {h.memory_id for h in index.search("pnpm", [SHOP])}


def test_recall_with_the_real_model_embedded(tmp_path: Path, onnx_embedder: Embedder) -> None:
    index = ChromaMemoryIndex(make_chroma_client(path=tmp_path / "c"), onnx_embedder)
    _check_recall(index)
    index.close()
    from memvet.embeddings.fake import FakeEmbedder

    # another model gets collections of its own: it reads none of the packaged model's
    other = ChromaMemoryIndex(make_chroma_client(path=tmp_path / "c"), FakeEmbedder())
    assert other.snapshot() == {}
    other.close()
    again = ChromaMemoryIndex(make_chroma_client(path=tmp_path / "c"), onnx_embedder)
    assert again.snapshot() and again.model_id == MODEL_ID
    again.close()


def test_recall_against_a_chroma_server(chroma_server_url: str, onnx_embedder: Embedder) -> None:
    client = make_chroma_client(url=chroma_server_url)
    assert client.heartbeat()
    index = ChromaMemoryIndex(client, onnx_embedder)
    _check_recall(index)
    snapshot = index.snapshot()
    index.close()
    # a second process-like opener sees the same memories (rebuilt from the server)
    again = ChromaMemoryIndex(make_chroma_client(url=chroma_server_url), onnx_embedder)
    assert again.snapshot() == snapshot
    assert again.search("orders.int.spec.ts", [SHOP])[0].memory_id == "tests"
    for ns in again.namespaces():
        again.drop_namespace(ns)
    again.close()


def test_threshold_separates_paraphrases_from_related_claims(onnx_embedder: Embedder) -> None:
    """The numbers behind DEFAULT_EQUIVALENCE_THRESHOLD (see embeddings/equivalence.py)."""

    def sims(pairs: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
        a = np.asarray(onnx_embedder.embed([x for x, _ in pairs]))
        b = np.asarray(onnx_embedder.embed([y for _, y in pairs]))
        same_numbers = np.array([numbers_of(x) == numbers_of(y) for x, y in pairs])
        return (a * b).sum(axis=1), same_numbers

    same, same_ok = sims(SAME)
    related, related_ok = sims(RELATED)
    t = DEFAULT_EQUIVALENCE_THRESHOLD
    merged_same = float(((same >= t) & same_ok).mean())
    merged_related = float(((related >= t) & related_ok).mean())
    print(
        f"threshold {t}: paraphrases merged {merged_same:.2f}, related merged {merged_related:.2f}"
    )
    assert merged_related == 0.0
    assert merged_same >= 0.7


def test_matcher_with_the_real_model(onnx_embedder: Embedder) -> None:
    matcher = EmbeddingCandidateMatcher(onnx_embedder)
    matcher.reset([("c1", SHOP, Kind.FACT, "The project uses pnpm, not npm.")])
    t = DEFAULT_EQUIVALENCE_THRESHOLD
    hit = matcher.find(SHOP, Kind.FACT, "This repo uses pnpm instead of npm.", threshold=t)
    assert hit is not None and hit.candidate_id == "c1"
    assert matcher.find(SHOP, Kind.FACT, "The project uses yarn, not npm.", threshold=t) is None
    assert matcher.find(SHOP, Kind.DECISION, "The project uses pnpm.", threshold=0.5) is None
    assert matcher.find("workspace:x", Kind.FACT, "The project uses pnpm.", threshold=0.5) is None
