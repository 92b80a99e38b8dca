"""ChromaMemoryIndex with the fake embedder on an embedded Chroma per test."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvet.embeddings.chroma import (
    EmbeddingModelMismatch,
    ExplicitEmbeddingFunction,
    collection_name,
    drop_other_models,
    make_chroma_client,
    namespace_of,
    parse_collection_name,
    stored_models,
)
from memvet.embeddings.fake import FakeEmbedder
from memvet.embeddings.index import ChromaMemoryIndex
from memvet.embeddings.search import RankingSettings
from memvet.memory.errors import InvalidNamespace
from memvet.memory.kinds import DEFAULT_KIND_WEIGHTS, Kind
from memvet.memory.ports import IndexedMemory, MemoryIndex, index_hash

SHOP = "workspace:shop-api"
OTHER = "workspace:other"


def mem(mid: str, content: str, kind: Kind = Kind.FACT, ns: str = SHOP) -> IndexedMemory:
    return IndexedMemory(id=mid, namespace=ns, kind=kind, content=content)


@pytest.fixture(params=[20_000, 0], ids=["in-memory", "hnsw"])
def index(request: pytest.FixtureRequest, client: Any, fake: FakeEmbedder) -> Any:
    """Both dense paths: exact scan of in-memory vectors, and Chroma's HNSW."""
    ix = ChromaMemoryIndex(client, fake, ranking=RankingSettings(mirror_max=request.param))
    yield ix
    ix.close()


def test_implements_the_port(index: ChromaMemoryIndex) -> None:
    assert isinstance(index, MemoryIndex)


SEGMENT = st.from_regex(r"[a-z0-9_.-]{1,40}", fullmatch=True).filter(lambda s: s not in (".", ".."))
SLUG = st.lists(SEGMENT, min_size=1, max_size=4).map("/".join).filter(lambda s: len(s) <= 128)


@given(SLUG, st.sampled_from(["persona", "workspace"]))
def test_collection_names_are_valid_and_reversible(name: str, scope: str) -> None:
    ns = f"{scope}:{name}"
    col = collection_name(ns)
    assert namespace_of(col) == ns
    assert col[0].isalnum() and col[-1].isalnum() and ".." not in col
    assert 3 <= len(col) <= 512 and ":" not in col


def test_bad_namespace_is_refused(index: ChromaMemoryIndex) -> None:
    with pytest.raises(InvalidNamespace):
        index.upsert([mem("m1", "x", ns="project:foo")])
    assert namespace_of("some-other-collection") is None


def test_only_upserted_memories_are_found_and_remove_works(index: ChromaMemoryIndex) -> None:
    assert index.search("pnpm", [SHOP]) == []
    index.upsert([mem("m1", "The project uses pnpm, not npm"), mem("m2", "Deploy on Fridays")])
    hits = index.search("pnpm", [SHOP])
    assert {h.memory_id for h in hits} == {"m1", "m2"}
    assert hits[0].memory_id == "m1"
    index.remove(SHOP, ["m1", "unknown"])
    assert [h.memory_id for h in index.search("pnpm", [SHOP])] == ["m2"]
    assert index.snapshot() == {SHOP: {"m2": index_hash(Kind.FACT, "Deploy on Fridays")}}
    index.remove("workspace:never-seen", ["m2"])  # no partition: nothing to do


def test_namespaces_partition_recall(index: ChromaMemoryIndex) -> None:
    index.upsert([mem("a", "Uses pnpm"), mem("b", "Uses pnpm too", ns=OTHER)])
    assert [h.namespace for h in index.search("pnpm", [SHOP])] == [SHOP]
    both = index.search("pnpm", [SHOP, OTHER, "workspace:empty"])
    assert {(h.namespace, h.memory_id) for h in both} == {(SHOP, "a"), (OTHER, "b")}
    assert index.search("pnpm", []) == []


def test_exact_name_hit_and_score_parts(index: ChromaMemoryIndex) -> None:
    filler = [mem(f"f{i}", f"Note {i} about the checkout flow and payments") for i in range(30)]
    index.upsert([*filler, mem("p", "Always use pnpm install --frozen-lockfile in CI")])
    top = index.search("pnpm", [SHOP], limit=3)[0]
    assert top.memory_id == "p"
    assert top.content.startswith("Always use pnpm")
    assert top.kind is Kind.FACT and top.namespace == SHOP
    assert top.lexical is not None and top.lexical > 0
    assert top.dense is not None
    assert top.kind_weight == DEFAULT_KIND_WEIGHTS[Kind.FACT]
    assert top.score == pytest.approx(top.fused * top.kind_weight)
    assert 0.0 <= top.fused <= 1.0


def test_kind_weights_reorder(index: ChromaMemoryIndex) -> None:
    index.upsert(
        [
            mem("f", "bundle size matters for the desktop app", Kind.FACT),
            mem("d", "bundle size matters for the desktop app", Kind.DECISION),
        ]
    )
    hits = index.search("desktop bundle size", [SHOP])
    assert hits[0].memory_id == "d" and hits[0].kind_weight == DEFAULT_KIND_WEIGHTS[Kind.DECISION]
    hits = index.search("desktop bundle size", [SHOP], kind_weights={Kind.FACT: 3.0})
    assert hits[0].memory_id == "f" and hits[0].kind_weight == 3.0


@pytest.mark.parametrize(
    ("mirror_max", "exact_max"), [(0, 0), (0, 10_000), (20_000, 0)], ids=["hnsw", "scan", "mem"]
)
def test_kinds_filter_without_where(
    client: Any, fake: FakeEmbedder, mirror_max: int, exact_max: int
) -> None:
    """HNSW over-fetch + post-filter, the exact kind scan, and the in-memory vectors."""
    ranking = RankingSettings(
        mirror_max=mirror_max, exact_kind_max=exact_max, exact_kind_fraction=0.0
    )
    index = ChromaMemoryIndex(client, fake, ranking=ranking)
    kinds = list(Kind)
    index.upsert([mem(f"m{i}", f"release note {i} pnpm", kinds[i % 6]) for i in range(60)])
    hits = index.search("release note pnpm", [SHOP], kinds=[Kind.DECISION, "postmortem"], limit=50)  # type: ignore[list-item]
    assert len(hits) == 20
    assert {h.kind for h in hits} == {Kind.DECISION, Kind.POSTMORTEM}
    index.upsert([mem("m2", "now a fact", Kind.FACT)])  # m2 was a decision; the cache must follow
    ids = {h.memory_id for h in index.search("release", [SHOP], kinds=[Kind.DECISION], limit=50)}
    assert "m2" not in ids and len(ids) == 9
    assert index.search("release", [SHOP], kinds=[Kind.EVENT], limit=0) == []
    index.close()


def test_reopen_rebuilds_lexical_and_snapshot(tmp_path: Any, fake: FakeEmbedder) -> None:
    first = ChromaMemoryIndex(make_chroma_client(path=tmp_path / "c"), fake)
    first.upsert([mem("m1", "Use orders.int.spec.ts for the orders API", Kind.PATTERN)])
    first.close()
    again = ChromaMemoryIndex(make_chroma_client(path=tmp_path / "c"), fake)
    assert again.snapshot() == {
        SHOP: {"m1": index_hash(Kind.PATTERN, "Use orders.int.spec.ts for the orders API")}
    }
    hit = again.search("orders.int.spec.ts", [SHOP])[0]
    assert hit.memory_id == "m1" and hit.lexical and hit.kind is Kind.PATTERN
    again.close()


def test_unchanged_memory_is_not_reembedded(index: ChromaMemoryIndex, fake: FakeEmbedder) -> None:
    index.upsert([mem("m1", "a"), mem("m2", "b")])
    calls = fake.calls
    index.upsert([mem("m1", "a")])
    assert fake.calls == calls
    index.upsert([mem("m1", "a changed")])
    assert fake.calls == calls + 1
    assert index.search("changed", [SHOP])[0].content == "a changed"


def test_models_never_mix(tmp_path: Any) -> None:
    """Each model has collections of its own: another model reads none of the first one's
    vectors (it is built beside them), and the first one's stay as they were."""
    path = tmp_path / "c"
    ix = ChromaMemoryIndex(make_chroma_client(path=path), FakeEmbedder(384))
    ix.upsert([mem("m1", "pnpm")])
    ix.close()
    other = ChromaMemoryIndex(make_chroma_client(path=path), FakeEmbedder(256, model_id="other"))
    assert other.snapshot() == {} and other.search("pnpm", [SHOP]) == []
    other.upsert([mem("m1", "pnpm")])
    assert other.search("pnpm", [SHOP])[0].memory_id == "m1"
    other.close()
    first = ChromaMemoryIndex(make_chroma_client(path=path), FakeEmbedder(384))
    assert first.snapshot() == {SHOP: {"m1": index_hash(Kind.FACT, "pnpm")}}
    first.close()
    client = make_chroma_client(path=path)
    assert stored_models(client) == {"memvet-fake-bow-384": 1, "other": 1}
    assert drop_other_models(client, "other") == 1
    assert stored_models(client) == {"other": 1}


def test_a_collection_holding_another_models_vectors_is_refused(tmp_path: Any) -> None:
    path = tmp_path / "c"
    client = make_chroma_client(path=path)
    fake = FakeEmbedder(384)
    # under this model's name, stamped with another model (copied in by hand, say)
    client.create_collection(collection_name(SHOP, fake.model_id),
                             metadata={"memvet_model_id": "other", "memvet_dimension": 384},
                             embedding_function=ExplicitEmbeddingFunction(fake))
    with pytest.raises(EmbeddingModelMismatch, match="other"):
        ChromaMemoryIndex(make_chroma_client(path=path), fake)
    rebuilt = ChromaMemoryIndex(make_chroma_client(path=path), fake, on_model_mismatch="rebuild")
    assert rebuilt.snapshot() == {}
    rebuilt.upsert([mem("m1", "pnpm")])
    assert rebuilt.search("pnpm", [SHOP])[0].memory_id == "m1"


def test_collection_names_carry_the_model() -> None:
    from memvet.embeddings.model import MODEL_ID

    assert collection_name(SHOP) == collection_name(SHOP, MODEL_ID) == "mv-w-shop-api-ns"
    tagged = collection_name(SHOP, "multilingual@0123456789ab")
    assert tagged.startswith("mv-w-shop-api-ns-") and len(tagged) == len("mv-w-shop-api-ns") + 9
    assert parse_collection_name(tagged) == (SHOP, tagged[-8:])
    assert parse_collection_name("mv-w-shop-api-ns") == (SHOP, None)
    # a namespace whose name looks like a tag stays itself
    odd = "workspace:a-ns-deadbeef"
    assert parse_collection_name(collection_name(odd)) == (odd, None)
    assert parse_collection_name(collection_name(odd, "x"))[0] == odd  # type: ignore[index]


def test_drop_namespace_and_query_cache(index: ChromaMemoryIndex, fake: FakeEmbedder) -> None:
    index.upsert([mem("m1", "pnpm")])
    index.search("pnpm", [SHOP])
    calls = fake.calls
    index.search("pnpm", [SHOP])
    assert fake.calls == calls  # the query vector came from the LRU cache
    index.drop_namespace(SHOP)
    assert index.search("pnpm", [SHOP]) == [] and index.snapshot() == {}


def test_namespace_outgrowing_memory_moves_to_hnsw(client: Any, fake: FakeEmbedder) -> None:
    index = ChromaMemoryIndex(client, fake, ranking=RankingSettings(mirror_max=5))
    index.upsert([mem(f"m{i}", f"note {i} about pnpm") for i in range(4)])
    assert index.search("note 2", [SHOP])[0].memory_id == "m2"
    index.upsert([mem(f"m{i}", f"note {i} about pnpm") for i in range(4, 12)])
    assert index.search("note 9", [SHOP])[0].memory_id == "m9"
    index.remove(SHOP, ["m9"])
    assert "m9" not in {h.memory_id for h in index.search("note 9", [SHOP])}
    index.close()


def test_concurrent_search_and_upsert(index: ChromaMemoryIndex) -> None:
    from concurrent.futures import ThreadPoolExecutor

    index.upsert([mem(f"s{i}", f"seed {i} pnpm") for i in range(20)])

    def write(n: int) -> None:
        index.upsert([mem(f"w{n}-{i}", f"written {n} {i} pnpm") for i in range(10)])

    def read(_: int) -> int:
        return len(index.search("pnpm written", [SHOP], limit=5))

    with ThreadPoolExecutor(max_workers=4) as pool:
        writes = [pool.submit(write, n) for n in range(5)]
        reads = [pool.submit(read, n) for n in range(20)]
        assert all(f.result() == 5 for f in reads)
        for f in writes:
            f.result()
    assert len(index.snapshot()[SHOP]) == 70
