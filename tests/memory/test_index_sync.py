"""The recall index follows the database: outbox drained after commit, reconcile repairs."""

from __future__ import annotations

from sqlalchemy import func, select

from memvet.memory.kinds import Kind
from memvet.memory.ports import IndexedMemory
from memvet.memory.records import CandidateEdit, CandidateInput, Source
from memvet.memory.service import MemoryService
from memvet.memory.store import tables
from tests.memory.support import AGENT, REVIEWER, FakeIndex

NS = "workspace:shop"


def remember(svc: MemoryService, content: str, ns: str = NS) -> str:
    return svc.submit(CandidateInput(content, "fact", ns, Source.EXPLICIT, 0.5), AGENT
                      ).candidate.id


def outbox_size(svc: MemoryService) -> int:
    with svc.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(tables.index_outbox)).scalar_one())


def db_memories(svc: MemoryService) -> dict[str, tuple[str, str, str]]:
    with svc.engine.connect() as conn:
        rows = conn.execute(select(tables.memories)).mappings().all()
    return {r["id"]: (r["namespace"], r["kind"], r["content"]) for r in rows}


def test_only_approved_reach_the_index(indexed_service: MemoryService, index: FakeIndex) -> None:
    svc = indexed_service
    pending = remember(svc, "pending pnpm")
    rejected = remember(svc, "rejected pnpm")
    svc.reject(rejected, REVIEWER)
    mem = svc.approve(remember(svc, "approved pnpm"), REVIEWER)
    assert index.contents() == {mem.id: (NS, "fact", "approved pnpm")}
    assert outbox_size(svc) == 0
    hits = svc.recall("pnpm", AGENT)
    assert [h.memory.id for h in hits] == [mem.id]
    assert pending not in {h.memory.candidate_id for h in hits}


def test_update_move_and_delete_follow(indexed_service: MemoryService, index: FakeIndex) -> None:
    svc = indexed_service
    mem = svc.approve(remember(svc, "use pnpm"), REVIEWER)
    svc.update_memory(mem.id, CandidateEdit(content="use pnpm 9", kind="decision",
                                            namespace="workspace:web"), REVIEWER)
    assert index.contents() == {mem.id: ("workspace:web", "decision", "use pnpm 9")}
    assert index.items.get(NS, {}) == {}
    svc.delete_memory(mem.id, REVIEWER)
    assert index.contents() == {}
    assert outbox_size(svc) == 0
    assert svc.recall("pnpm", AGENT) == []


def test_index_failure_stays_owed_then_reconcile_repairs(indexed_service: MemoryService,
                                                         index: FakeIndex) -> None:
    svc = indexed_service
    index.fail = True
    mem = svc.approve(remember(svc, "use pnpm"), REVIEWER)  # the commit stands
    assert svc.get_memory(mem.id, REVIEWER).content == "use pnpm"
    assert outbox_size(svc) == 1 and index.contents() == {}
    index.fail = False
    assert svc.drain_index_outbox() == 1
    assert index.contents() == {mem.id: (NS, "fact", "use pnpm")}
    assert outbox_size(svc) == 0


def test_reconcile(indexed_service: MemoryService, index: FakeIndex) -> None:
    svc = indexed_service
    keep = svc.approve(remember(svc, "keep me"), REVIEWER)
    stale = svc.approve(remember(svc, "fresh text"), REVIEWER)
    lost = svc.approve(remember(svc, "lost from index"), REVIEWER)
    # the index drifts: a memory vanished, one holds old content, one is unknown to the
    # database, one deleted memory lingers, one sits in the wrong partition
    index.items[NS].pop(lost.id)
    index.items[NS][stale.id] = IndexedMemory(stale.id, NS, Kind.FACT, "old text")
    index.items.setdefault("workspace:ghost", {})["ghost"] = IndexedMemory(
        "ghost", "workspace:ghost", Kind.FACT, "never approved")
    gone = svc.approve(remember(svc, "deleted later"), REVIEWER)
    svc.delete_memory(gone.id, REVIEWER)
    index.items[NS][gone.id] = IndexedMemory(gone.id, NS, Kind.FACT, "deleted later")
    moved = svc.approve(remember(svc, "moved"), REVIEWER)
    index.items[NS].pop(moved.id)
    index.items.setdefault("workspace:other", {})[moved.id] = IndexedMemory(
        moved.id, "workspace:other", Kind.FACT, "moved")
    index.fail = True  # an update whose re-embedding never happened stays owed
    svc.update_memory(keep.id, CandidateEdit(content="keep me, edited"), REVIEWER)
    index.fail = False
    assert outbox_size(svc) == 1

    report = svc.reconcile_index()
    assert index.contents() == db_memories(svc)
    assert set(index.contents()) == {keep.id, stale.id, lost.id, moved.id}
    assert index.contents()[stale.id][2] == "fresh text"
    assert (report.checked, report.upserted, report.removed) == (4, 4, 3)
    assert index.contents()[keep.id][2] == "keep me, edited"
    assert outbox_size(svc) == 0
    # a second pass finds nothing to do
    again = svc.reconcile_index()
    assert (again.upserted, again.removed) == (0, 0)


def test_start_reconciles_a_fresh_index(engine, clock) -> None:  # type: ignore[no-untyped-def]
    first = MemoryService(engine=engine, clock=clock)  # no index: writes leave outbox rows
    a = first.approve(remember(first, "one"), REVIEWER)
    b = first.approve(remember(first, "two"), REVIEWER)
    first.delete_memory(b.id, REVIEWER)
    first.close()
    index = FakeIndex()
    svc = MemoryService(engine=engine, clock=clock, index=index)
    progress: list[tuple[int, int]] = []
    report = svc.start(lambda done, total: progress.append((done, total)))
    assert report is not None and report.upserted == 1
    assert index.contents() == {a.id: (NS, "fact", "one")}
    assert progress[-1] == (1, 1)
    assert outbox_size(svc) == 0
    svc.close()
    assert index.closed


class AheadIndex(FakeIndex):
    """A FakeIndex that embeds ahead: records what was prepared, and when."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, int]] = []

    def embed_ahead(self, memories: list[IndexedMemory]) -> None:
        self.log.append(("ahead", len(memories)))

    def upsert(self, memories: list[IndexedMemory]) -> None:  # type: ignore[override]
        self.log.append(("upsert", len(memories)))
        super().upsert(memories)


def test_bulk_work_embeds_the_next_batch_while_writing_this_one() -> None:
    from memvet.memory.ports import EmbedsAhead
    from memvet.memory.service.indexing import BATCH, upsert_batches

    index = AheadIndex()
    assert isinstance(index, EmbedsAhead) and not isinstance(FakeIndex(), EmbedsAhead)
    items = [IndexedMemory(f"m{i}", NS, Kind.FACT, f"note {i}") for i in range(2 * BATCH + 5)]
    steps: list[int] = []
    upsert_batches(index, items, steps.append)
    assert steps == [BATCH, BATCH, 5] and len(index.contents()) == len(items)
    # each batch was embedded ahead (in a worker, while the one before was written) and
    # before it was written itself
    aheads = [i for i, (kind, _) in enumerate(index.log) if kind == "ahead"]
    upserts = [i for i, (kind, _) in enumerate(index.log) if kind == "upsert"]
    assert len(aheads) == len(upserts) == 3
    assert all(a < u for a, u in zip(aheads, upserts, strict=True))


def test_bulk_batches_hold_texts_of_about_one_length() -> None:
    from memvet.memory.service.indexing import BATCH, upsert_batches

    class Recording(FakeIndex):
        def __init__(self) -> None:
            super().__init__()
            self.batches: list[list[int]] = []

        def upsert(self, memories: list[IndexedMemory]) -> None:  # type: ignore[override]
            self.batches.append([len(m.content) for m in memories])
            super().upsert(memories)

    index = Recording()
    # long and short texts interleaved, as they arrive from an import
    items = [IndexedMemory(f"m{i}", NS, Kind.FACT, "word " * (1 + (i * 7919) % 60))
             for i in range(2 * BATCH)]
    upsert_batches(index, items, lambda n: None)
    assert len(index.batches) == 2 and len(index.contents()) == len(items)
    assert max(index.batches[0]) <= min(index.batches[1])  # shortest first, no overlap
