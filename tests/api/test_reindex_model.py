"""Bring your own embedding model: `memvet reindex` builds the new model's collections beside the
old ones, switches in one recorded step, and until then (interrupted or not yet run) recall
answers from the old collections.

The second model is built here, offline: the packaged MiniLM's transformer with mean pooling
and a seeded random 384 -> 128 projection, saved with sentence-transformers to a temp dir. A
different dimension makes any mixing of the two models' vectors fail loudly.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from memvet.api import commands, wiring
from memvet.api.settings import Settings
from memvet.embeddings.chroma import parse_collection_name, stored_models
from memvet.embeddings.model import MODEL_ID, local_model_id
from memvet.memory.access import Principal, Role
from memvet.memory.ports import IndexedMemory
from memvet.memory.records import CandidateInput, Outcome, Source
from memvet.memory.store import models, vectors

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
OPERATOR = Principal.system("test")
AGENT = Principal(id="agent-1", name="claude", role=Role.AGENT)
TOPICS = ["the deploy script", "the shop API", "CI", "the docs site", "the billing service",
          "the mobile client", "the test suite", "the release train"]
FACTS = ["uses pnpm, not npm", "pins Python 3.12", "runs on PostgreSQL 16", "ships on Tuesdays",
         "is linted with ruff", "needs two approvals", "uses feature flags",
         "is deployed with blue-green releases"]
N = 64


@pytest.fixture(scope="module")
def second_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from sentence_transformers import SentenceTransformer

    try:
        from sentence_transformers.sentence_transformer import modules as st_models
    except ImportError:  # sentence-transformers before 6
        from sentence_transformers import models as st_models  # type: ignore[no-redef]

    from memvet.embeddings.model import packaged_model_path

    torch.manual_seed(7)
    base = st_models.Transformer(str(packaged_model_path()), max_seq_length=128)
    pooling = st_models.Pooling(384, pooling_mode="mean")
    dense = st_models.Dense(384, 128, activation_function=torch.nn.Identity())
    model = SentenceTransformer(modules=[base, pooling, dense, st_models.Normalize()],
                                device="cpu")
    path = tmp_path_factory.mktemp("models") / "minilm-128"
    model.save(str(path))
    return path


def memory_lines() -> list[str]:
    return [json.dumps({"record": "memory", "content": f"{TOPICS[i % 8]} {FACTS[(i // 8) % 8]}",
                        "kind": "fact", "namespace": f"workspace:p{i % 4}"})
            for i in range(N)]


def settings(data_dir: Path, model: Path | None = None) -> Settings:
    return Settings(data_dir=data_dir, embedder="torch", extractor="heuristic",
                    embedding_model=str(model) if model else None)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """N approved memories and a few pending candidates, made with the packaged model."""
    rt = wiring.build_runtime(settings(tmp_path), with_extractor=False, lock=False)
    try:
        rt.service.start()
        rt.service.import_lines(memory_lines(), OPERATOR)
        for i in range(3):
            rt.service.submit(CandidateInput(f"the wiki page {i} lists the on-call rota", "fact",
                                             "workspace:p0", Source.EXPLICIT, 0.6), AGENT)
    finally:
        rt.close()
    return tmp_path


@pytest.fixture
def runtime() -> Iterator[Any]:
    opened: list[Any] = []

    def open_(s: Settings) -> Any:
        rt = wiring.build_runtime(s, with_extractor=False, lock=False)
        rt.service.start()
        opened.append(rt)
        return rt

    yield open_
    for rt in opened:
        rt.close()


def recalled(rt: Any, query: str, namespace: str = "workspace:p1") -> list[str]:
    principal = Principal(id="r", name="r", role=Role.REVIEWER)
    return [h.memory.content for h in rt.service.recall(query, principal, namespaces=[namespace])]


def reindex(data_dir: Path, model: Path | None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMVET_DATA_DIR": str(data_dir), "MEMVET_EMBEDDER": "torch",
           "MEMVET_EXTRACTOR": "heuristic"}
    env.pop("MEMVET_EMBEDDING_MODEL", None)
    if model is not None:
        env["MEMVET_EMBEDDING_MODEL"] = str(model)
    return subprocess.run([sys.executable, "-m", "memvet.api.cli", "reindex"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)


class Interrupted:
    """A target index that takes part of the first batch, then is stopped (as Ctrl-C would)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def upsert(self, memories: Sequence[IndexedMemory]) -> None:
        self.inner.upsert(memories[: len(memories) // 2])
        raise KeyboardInterrupt

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_switching_models_builds_beside_and_never_serves_half(
        data_dir: Path, second_model: Path, runtime: Any) -> None:
    new_id = local_model_id(second_model)
    assert new_id.startswith("minilm-128@")
    old = runtime(settings(data_dir))
    assert "the shop API uses pnpm, not npm" in recalled(old, "does the shop api use pnpm")
    old.close()

    # The setting alone changes nothing: the recorded model keeps serving until a reindex.
    waiting = runtime(settings(data_dir, second_model))
    assert waiting.service.index.model_id == MODEL_ID
    assert waiting.service.index_model().model_id == MODEL_ID
    assert "the shop API uses pnpm, not npm" in recalled(waiting, "does the shop api use pnpm")
    waiting.close()

    # A reindex stopped half-way through its first batch.
    base = wiring.build_runtime(settings(data_dir, second_model), with_index=False,
                                with_extractor=False, lock=False)
    embedder = wiring.make_embedder(settings(data_dir, second_model))
    assert embedder.model_id == new_id and embedder.dimension == 128
    shared = wiring.make_vectors(embedder, base.service.engine)
    target = wiring.make_index(settings(data_dir), shared)
    with pytest.raises(KeyboardInterrupt):
        base.service.build_index(Interrupted(target),
                                 wiring.model_record(embedder, settings(data_dir, second_model)))
    partial = sum(len(ids) for ids in target.snapshot().values())
    assert 0 < partial < N
    with base.service.engine.connect() as conn:
        assert models.active(conn).model_id == MODEL_ID  # type: ignore[union-attr]
        assert models.building(conn).model_id == new_id  # type: ignore[union-attr]
    target.close()
    base.close()

    # Nothing lost: the old collections answer, whole.
    after = runtime(settings(data_dir, second_model))
    assert after.service.index.model_id == MODEL_ID
    assert sum(len(ids) for ids in after.service.index.snapshot().values()) == N
    for topic in range(4):
        assert len(recalled(after, "who uses pnpm", f"workspace:p{topic}")) > 0
    after.close()

    # Resumed: the run carries on from what the new collections hold, and switches.
    done = reindex(data_dir, second_model)
    assert done.returncode == 0, done.stderr
    assert f"switched the recall index to {new_id}: {N - partial} memories embedded" in done.stderr
    assert "it/s" not in done.stderr and "memory/s" not in done.stderr  # piped: no bar

    new = runtime(settings(data_dir, second_model))
    assert new.service.index.model_id == new_id and new.service.index.embedder.dimension == 128
    assert "the shop API uses pnpm, not npm" in recalled(new, "does the shop api use pnpm")
    client = new.service.index.client
    assert stored_models(client) == {new_id: 4}  # the old model's collections are gone
    assert all(parse_collection_name(c.name)[1] for c in client.list_collections())
    with new.service.engine.connect() as conn:
        # every candidate's text has the new model's vector; the old model's were pruned
        assert vectors.count(conn, new_id) == N + 3
        assert vectors.count(conn, MODEL_ID) == 0
    # the matcher runs on the new model, from stored vectors: an equivalent merges
    merged = new.service.submit(CandidateInput("The wiki page 1 lists the on-call rota.", "fact",
                                               "workspace:p0", Source.EXPLICIT, 0.7), AGENT)
    assert merged.outcome is Outcome.MERGED
    new.close()

    # And back to the packaged model, the same way.
    back = reindex(data_dir, None)
    assert back.returncode == 0, back.stderr
    assert f"switched the recall index to {MODEL_ID}" in back.stderr
    again = runtime(settings(data_dir))
    assert again.service.index.model_id == MODEL_ID
    assert stored_models(again.service.index.client) == {MODEL_ID: 4}
    assert "the shop API uses pnpm, not npm" in recalled(again, "does the shop api use pnpm")


def test_a_killed_reindex_leaves_the_old_model_serving(
        data_dir: Path, second_model: Path, runtime: Any) -> None:
    """`kill` (SIGTERM) mid-way through the CLI: the switch is not recorded, the old model's
    collections serve, and running it again finishes the job."""
    rt = wiring.build_runtime(settings(data_dir), with_extractor=False, lock=False)
    more = [json.dumps({"record": "memory", "content": f"note {i}: {TOPICS[i % 8]} and "
                        f"{FACTS[i % 8]}, number {i * 7919 % 10007}", "kind": "event",
                        "namespace": f"workspace:p{i % 4}"}) for i in range(600)]
    rt.service.import_lines(more, OPERATOR)
    rt.close()
    env = {**os.environ, "MEMVET_DATA_DIR": str(data_dir), "MEMVET_EMBEDDER": "torch",
           "MEMVET_EXTRACTOR": "heuristic", "MEMVET_EMBEDDING_MODEL": str(second_model)}
    proc = subprocess.Popen([sys.executable, "-m", "memvet.api.cli", "reindex"], cwd=ROOT,
                            env=env, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:  # stop it once the build has begun
        seen.append(line)
        if "building the recall index for" in line:
            break
    assert seen and "building the recall index for" in seen[-1], "".join(seen)
    proc.terminate()
    rest = proc.stderr.read()
    assert proc.wait(timeout=120) == 130, rest
    assert "interrupted; recall keeps serving" in rest
    served = runtime(settings(data_dir, second_model))
    assert served.service.index.model_id == MODEL_ID
    assert sum(len(ids) for ids in served.service.index.snapshot().values()) == N + 600
    served.close()
    done = reindex(data_dir, second_model)
    assert done.returncode == 0, done.stderr
    new = runtime(settings(data_dir, second_model))
    assert new.service.index.model_id == local_model_id(second_model)
    assert sum(len(ids) for ids in new.service.index.snapshot().values()) == N + 600


def test_progress_shows_a_rate_on_a_terminal_and_nothing_when_piped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for stream, shown in ((Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stderr", stream)
        bar = commands._Progress("reindex", "memory")
        bar(0, 200)
        bar(100, 200)
        bar(200, 200)
        bar.close()
        text = stream.getvalue()
        assert ("200/200" in text and "memory/s" in text) is shown, text
