"""Property-based: random sequences of intake and review keep the core's invariants.

After every step: observations ≥ 1; approved candidates and memories pair up one to one
(with the same observation count); the audit trail replays to the current state; and after
a sweep no pending candidate is older than the archive window. Illegal steps must fail with
their typed error and leave the store exactly as it was.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import delete, select
from sqlalchemy.engine import Engine

from memvet.memory.errors import InvalidKind, InvalidTransition
from memvet.memory.kinds import Kind
from memvet.memory.policy import AutoApprovePolicy, Threshold
from memvet.memory.records import CandidateEdit, CandidateInput, OriginInput, Source, Status
from memvet.memory.service import MemoryService
from memvet.memory.store import audit, candidates, migrate, tables
from memvet.memory.store.engine import make_engine
from tests.memory.support import ADMIN, AGENT, REVIEWER, FakeClock, dump

WORDS = ["use pnpm", "tabs not spaces", "deploy on friday", "tauri over electron", "ci is slow"]
NAMESPACES = ["workspace:shop", "persona:alex"]
KINDS = [Kind.FACT, Kind.DECISION]


@st.composite
def variants(draw: st.DrawFn) -> str:
    """A vocabulary word in a random but equivalent dress: case, spacing, edge punctuation."""
    text = draw(st.sampled_from(WORDS))
    text = draw(st.sampled_from([text, text.upper(), text.title(), text.capitalize()]))
    if draw(st.booleans()):
        text = text.replace(" ", draw(st.sampled_from(["  ", "\t", " \n "])))
    return draw(st.sampled_from(["", " ", "\""])) + text + draw(st.sampled_from(
        ["", ".", "!", "?!", " ", "\""]))


_ENGINES: dict[str, Engine] = {}


def engine_for(url: str) -> Engine:
    """One migrated database per URL; each machine run starts by emptying it."""
    if url not in _ENGINES:
        engine = make_engine(url)
        migrate.upgrade(engine)
        _ENGINES[url] = engine
    engine = _ENGINES[url]
    with engine.begin() as conn:
        for table in reversed(tables.metadata.sorted_tables):
            conn.execute(delete(table))
    return engine


class CoreMachine(RuleBasedStateMachine):
    url: ClassVar[str] = ""

    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock()
        self.engine = engine_for(self.url)
        self.svc = MemoryService(engine=self.engine, clock=self.clock)
        self.swept = False

    def teardown(self) -> None:
        self.svc.close()

    # ------------------------------------------------------------------ helpers
    def _ids(self, status: Status | None = None) -> list[str]:
        c = tables.candidates.c
        query = select(c.id).order_by(c.id)
        if status is not None:
            query = query.where(c.status == status.value)
        with self.engine.connect() as conn:
            return [r[0] for r in conn.execute(query)]

    def _memory_ids(self) -> list[str]:
        m = tables.memories.c
        with self.engine.connect() as conn:
            return [r[0] for r in conn.execute(select(m.id).order_by(m.id))]

    def _pick(self, ids: list[str], n: int) -> str | None:
        return ids[n % len(ids)] if ids else None

    def _status(self, cid: str) -> Status:
        return self.svc.get_candidate(cid, REVIEWER).status

    def _refused(self, error: type[Exception], call: Any) -> None:
        before = dump(self.engine)
        with pytest.raises(error):
            call()
        assert dump(self.engine) == before

    # ------------------------------------------------------------------ rules
    @initialize()
    def start(self) -> None:
        self.swept = False

    @rule(text=variants(), kind=st.sampled_from(KINDS), ns=st.sampled_from(NAMESPACES),
          confidence=st.sampled_from([0.1, 0.5, 0.8, 0.95, 1.0]),
          turn=st.none() | st.sampled_from(["t1", "t2", "t3"]))
    def submit(self, text: str, kind: Kind, ns: str, confidence: float, turn: str | None) -> None:
        origin = OriginInput("conv", turn, text[:20]) if turn else None
        r = self.svc.submit(CandidateInput(text, kind, ns, Source.TURN, confidence, origin),
                            AGENT)
        assert r.candidate.observations >= 1
        self.swept = False

    @rule(texts=st.lists(variants(), min_size=1, max_size=4),
          kind=st.sampled_from(KINDS), ns=st.sampled_from(NAMESPACES))
    def submit_batch(self, texts: list[str], kind: Kind, ns: str) -> None:
        for text in texts:
            self.svc.submit(CandidateInput(text, kind, ns, Source.EXPLICIT, 0.5), AGENT)
        self.swept = False

    @rule(n=st.integers(0, 100), edit=st.none() | variants(),
          kind=st.none() | st.sampled_from(KINDS), ns=st.none() | st.sampled_from(NAMESPACES))
    def approve(self, n: int, edit: str | None, kind: Kind | None, ns: str | None) -> None:
        cid = self._pick(self._ids(), n)
        if cid is None:
            return
        change = CandidateEdit(content=edit, kind=kind, namespace=ns)
        if self._status(cid) is not Status.PENDING:
            self._refused(InvalidTransition, lambda: self.svc.approve(cid, REVIEWER, edit=change))
            return
        mem = self.svc.approve(cid, REVIEWER, edit=None if change.is_empty() else change)
        if edit is not None:
            assert mem.content == edit.strip()
        if kind is not None:
            assert mem.kind is kind

    @rule(n=st.integers(0, 100))
    def approve_with_ghost_kind(self, n: int) -> None:
        cid = self._pick(self._ids(Status.PENDING), n)
        if cid is not None:
            self._refused(InvalidKind, lambda: self.svc.approve(
                cid, REVIEWER, edit=CandidateEdit(kind="insight")))

    @rule(n=st.integers(0, 100))
    def reject(self, n: int) -> None:
        cid = self._pick(self._ids(), n)
        if cid is None:
            return
        if self._status(cid) is not Status.PENDING:
            self._refused(InvalidTransition, lambda: self.svc.reject(cid, REVIEWER))
            return
        assert self.svc.reject(cid, REVIEWER, reason="no").status is Status.REJECTED

    @rule(n=st.integers(0, 100), text=variants(), kind=st.none() | st.sampled_from(KINDS))
    def edit(self, n: int, text: str, kind: Kind | None) -> None:
        cid = self._pick(self._ids(Status.PENDING), n)
        if cid is None:
            return
        before = self.svc.get_candidate(cid, REVIEWER)
        cand = self.svc.edit_candidate(cid, CandidateEdit(content=text, kind=kind), REVIEWER)
        changed = (cand.content, cand.kind) != (before.content, before.kind)
        # A no-op edit writes nothing, so the archive clock keeps running.
        assert cand.touched_at == (self.clock.now if changed else before.touched_at)
        self.swept = False

    @rule(n=st.integers(0, 100), text=variants(), ns=st.none() | st.sampled_from(NAMESPACES))
    def update_memory(self, n: int, text: str, ns: str | None) -> None:
        mid = self._pick(self._memory_ids(), n)
        if mid is not None:
            mem = self.svc.update_memory(mid, CandidateEdit(content=text, namespace=ns),
                                         REVIEWER)
            assert mem.content == text.strip()

    @rule(n=st.integers(0, 100))
    def delete_memory(self, n: int) -> None:
        mid = self._pick(self._memory_ids(), n)
        if mid is not None:
            gone = self.svc.delete_memory(mid, REVIEWER)
            assert self._status(gone.candidate_id) is Status.REJECTED

    # Sampled, not drawn from a range: hypothesis favours small numbers, and the archive
    # window (1-30 days) must actually be crossed, and sometimes only just.
    @rule(days=st.sampled_from([0, 1, 6, 7, 29, 30, 31, 45]), hours=st.sampled_from([0, 1, 23]))
    def advance(self, days: int, hours: int) -> None:
        self.clock.advance(days=days, hours=hours)
        self.swept = False

    @rule(days=st.none() | st.sampled_from([0, 1, 7, 30, 40]))
    def archive(self, days: int | None) -> None:
        self.svc.archive_stale(ADMIN, older_than_days=days)
        window = self.svc.archive_days(REVIEWER) if days is None else days
        cutoff = self.clock.now - timedelta(days=window)
        for cid in self._ids(Status.PENDING):
            assert self.svc.get_candidate(cid, REVIEWER).touched_at >= cutoff
        self.swept = days is None

    @rule(extra_hours=st.sampled_from([-1, 1, 30]))
    def age_and_sweep(self, extra_hours: int) -> None:
        """Move the clock to just before / just past the window, then sweep."""
        window = self.svc.archive_days(REVIEWER)
        self.clock.advance(days=window, hours=extra_hours)
        self.archive(None)

    @rule(days=st.sampled_from([1, 7, 30]))
    def set_archive_days(self, days: int) -> None:
        self.svc.set_archive_days(days, ADMIN)
        self.swept = False

    @rule(enabled=st.booleans(), min_obs=st.integers(1, 4),
          min_conf=st.sampled_from([0.0, 0.5, 0.9]),
          decision=st.none() | st.tuples(st.integers(1, 5), st.sampled_from([0.5, 0.95])),
          exclude_persona=st.booleans())
    def set_policy(self, enabled: bool, min_obs: int, min_conf: float,
                   decision: tuple[int, float] | None, exclude_persona: bool) -> None:
        policy = AutoApprovePolicy(
            enabled=enabled, min_observations=min_obs, min_confidence=min_conf,
            per_kind={Kind.DECISION: Threshold(*decision)} if decision else {},
            excluded_namespaces=frozenset({"persona:alex"}) if exclude_persona else frozenset(),
        )
        self.svc.set_policy(policy, ADMIN)
        # with the policy on, nothing pending may still qualify
        with self.engine.connect() as conn:
            for cid in self._ids(Status.PENDING):
                c = candidates.get_candidate(conn, cid)
                assert c is not None
                assert not policy.qualifies(c.kind, c.namespace, c.independent_observations,
                                          c.confidence)

    # ------------------------------------------------------------------ invariants
    @invariant()
    def consistent(self) -> None:
        with self.engine.connect() as conn:
            cands = {r["id"]: dict(r) for r in conn.execute(select(tables.candidates)).mappings()}
            mems = {r["id"]: dict(r) for r in conn.execute(select(tables.memories)).mappings()}
            trail = audit.transitions(conn)
        # observations ≥ 1
        assert all(c["observations"] >= 1 for c in cands.values())
        # approved candidates and memories pair up one to one
        approved = {cid for cid, c in cands.items() if c["status"] == Status.APPROVED.value}
        by_candidate = {m["candidate_id"]: m for m in mems.values()}
        assert len(by_candidate) == len(mems)
        assert set(by_candidate) == approved
        for cid, m in by_candidate.items():
            assert m["observations"] == cands[cid]["observations"]
        # the audit trail replays to the current state
        replayed = audit.replay(trail)
        assert set(replayed) == set(cands)
        for cid, c in cands.items():
            r = replayed[cid]
            assert r.status is not None and r.status.value == c["status"], cid
            assert r.observations == c["observations"], cid
            for key in ("content", "kind", "namespace"):
                assert r.fields[key] == c[key], (cid, key)
            mem = by_candidate.get(cid)
            if mem is None:
                assert r.memory_id is None
            else:
                assert r.memory_id == mem["id"]
                for key in ("content", "kind", "namespace"):
                    assert r.memory_fields[key] == mem[key], (cid, key)
        # after a sweep, nothing pending is older than the window
        if self.swept:
            window = timedelta(days=self.svc.archive_days(REVIEWER))
            for c in cands.values():
                if c["status"] == Status.PENDING.value:
                    assert c["touched_at"] >= self.clock.now - window


def _run(url: str, examples: int, steps: int) -> None:
    CoreMachine.url = url
    try:
        run_state_machine_as_test(
            CoreMachine,
            settings=settings(max_examples=examples, stateful_step_count=steps, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow,
                                                     HealthCheck.filter_too_much],
                              print_blob=True),
        )
    finally:
        engine = _ENGINES.pop(url, None)
        if engine is not None:
            engine.dispose()


def test_core_invariants_sqlite(tmp_path: Path) -> None:
    _run(f"sqlite:///{tmp_path / 'stateful.db'}", examples=50, steps=30)


@pytest.mark.postgres
def test_core_invariants_postgresql(postgres_url: str) -> None:
    _run(postgres_url, examples=15, steps=25)
