"""The candidate vectors a model made, and the record of which model the recall index serves."""

from __future__ import annotations

import numpy as np
from sqlalchemy.engine import Engine

from memvet.memory.ports import EmbeddingModel, VectorStore, text_hash
from memvet.memory.records import CandidateInput, Source
from memvet.memory.service import MemoryService
from memvet.memory.store import models, vectors
from tests.memory.support import AGENT, REVIEWER, FakeClock


def vec(*values: float) -> bytes:
    return np.asarray(values, dtype="<f4").tobytes()


def test_vectors_round_trip_per_model_and_keep_the_first(engine: Engine) -> None:
    store = vectors.CandidateVectors(engine)
    assert isinstance(store, VectorStore)
    assert store.load("m", ["a"]) == {}
    store.save("m", {"a": vec(1, 0), "b": vec(0, 1)})
    store.save("m", {"a": vec(9, 9), "c": vec(1, 1)})  # a is there already: kept as it was
    store.save("other", {"a": vec(5, 5)})
    assert store.load("m", ["a", "b", "c", "zz"]) == {"a": vec(1, 0), "b": vec(0, 1),
                                                     "c": vec(1, 1)}
    assert store.load("other", ["a", "b"]) == {"a": vec(5, 5)}
    many = {f"h{i}": vec(i, i) for i in range(1200)}  # more than one IN (...) chunk
    store.save("m", many)
    assert store.load("m", list(many)) == many


def test_prune_keeps_this_models_vectors_of_held_texts(engine: Engine, clock: FakeClock) -> None:
    svc = MemoryService(engine=engine, clock=clock)
    kept = svc.submit(CandidateInput("we use pnpm", "fact", "workspace:shop", Source.EXPLICIT,
                                     0.5), AGENT).candidate
    svc.approve(kept.id, REVIEWER)
    store = vectors.CandidateVectors(engine)
    store.save("m", {text_hash("we use pnpm"): vec(1), text_hash("gone text"): vec(2)})
    store.save("old", {text_hash("we use pnpm"): vec(3)})
    assert svc.prune_vectors("m") == 2
    assert store.load("m", [text_hash("we use pnpm"), text_hash("gone text")]) == {
        text_hash("we use pnpm"): vec(1)}
    assert store.load("old", [text_hash("we use pnpm")]) == {}
    svc.close()


def test_the_served_model_switches_in_one_step(engine: Engine, clock: FakeClock) -> None:
    svc = MemoryService(engine=engine, clock=clock)
    first = EmbeddingModel("minilm", 384)
    second = EmbeddingModel("multilingual@abc", 768, "/models/multi")
    assert svc.index_model() is None
    svc.record_index_model(first)
    svc.record_index_model(second)  # only where none is recorded
    assert svc.index_model() == first
    with engine.begin() as conn:
        models.mark_building(conn, second, clock())
    assert svc.index_model() == first
    with engine.connect() as conn:
        assert models.building(conn) == second
    with engine.begin() as conn:
        assert models.activate(conn, second, clock()) == first
    assert svc.index_model() == second
    with engine.connect() as conn:
        assert models.building(conn) is None
    svc.close()
