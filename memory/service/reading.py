"""The read side: the queue, one candidate and its history, turns, memories, stats.

Everything is filtered by the caller's role and namespace scope: an agent reads the candidates
it proposed (and of those, its own observations), a scoped token only its namespaces, and a
record outside them is not found.
"""

from __future__ import annotations

from collections.abc import Sequence

from memvet.memory.access import Permission, Principal
from memvet.memory.errors import NotFound, ValidationError
from memvet.memory.kinds import Kind
from memvet.memory.limits import MAX_OFFSET, MAX_PAGE
from memvet.memory.records import (
    Candidate,
    Memory,
    Origin,
    Page,
    QueueStats,
    Source,
    Status,
    Transition,
    Turn,
)
from memvet.memory.service.context import Backlog, ServiceContext
from memvet.memory.store import audit, candidates, memories, turns
from memvet.memory.text import check_id


def check_page(offset: int, limit: int) -> tuple[int, int]:
    if offset < 0:
        raise ValidationError("offset must not be negative")
    if offset > MAX_OFFSET:
        raise ValidationError("offset is out of range")
    if not 1 <= limit <= MAX_PAGE:
        raise ValidationError(f"page size must be between 1 and {MAX_PAGE}")
    return offset, limit


class Reading:
    """Everything a caller may look at."""

    def __init__(self, ctx: ServiceContext, backlog: Backlog) -> None:
        self._ctx = ctx
        self._backlog = backlog

    def list_candidates(
        self, who: Principal, *, statuses: Sequence[Status] | None = None,
        namespaces: Sequence[str] | None = None, kinds: Sequence[Kind] | None = None,
        sources: Sequence[Source] | None = None, order: str = "newest",
        offset: int = 0, limit: int = 50,
    ) -> Page[Candidate]:
        """The queue. Agents see only what they proposed; scoped tokens only their namespaces."""
        who.require(Permission.READ_OWN)
        visible = who.visible(namespaces)
        created_by = None if who.can(Permission.REVIEW) else who.id
        offset, limit = check_page(offset, limit)
        if order not in candidates.CANDIDATE_ORDERS:
            raise ValidationError(
                f"order must be one of {', '.join(candidates.CANDIDATE_ORDERS)}")
        f = candidates.CandidateFilter(statuses=statuses, namespaces=visible, kinds=kinds,
                                       sources=sources, created_by=created_by, order=order)
        with self._ctx.engine.connect() as conn:
            return candidates.list_candidates(conn, f, offset=offset, limit=limit)

    def get_candidate(self, candidate_id: str, who: Principal) -> Candidate:
        who.require(Permission.READ_OWN)
        candidate_id = check_id(candidate_id, "candidate id")
        with self._ctx.engine.connect() as conn:
            cand = candidates.get_candidate(conn, candidate_id)
        if cand is None or not who.may_read(cand.namespace, cand.created_by):
            raise NotFound(f"no candidate with id {candidate_id!r}")
        return cand

    def origins(self, candidate_id: str, who: Principal) -> list[Origin]:
        """Where a candidate was observed. A reviewer sees every observation; an agent only
        its own (others' excerpts come from conversations it has no part in)."""
        who.require(Permission.READ_OWN)
        candidate_id = check_id(candidate_id, "candidate id")
        with self._ctx.engine.connect() as conn:
            cand = candidates.get_candidate(conn, candidate_id)
            if cand is None or not who.sees(cand.namespace):
                raise NotFound(f"no candidate with id {candidate_id!r}")
            found = candidates.origins(conn, candidate_id)
        if who.can(Permission.REVIEW):
            return found
        mine = [o for o in found if o.created_by == who.id]
        if not mine and cand.created_by != who.id:
            raise NotFound(f"no candidate with id {candidate_id!r}")
        return mine

    def own_origins(self, candidate_id: str, who: Principal) -> list[Origin]:
        """The observations the caller itself made of a candidate (for the reply to a write:
        empty when it has none, so the answer tells nothing about others' candidates)."""
        who.require(Permission.READ_OWN)
        candidate_id = check_id(candidate_id, "candidate id")
        with self._ctx.engine.connect() as conn:
            found = candidates.origins(conn, candidate_id)
        return [o for o in found if o.created_by == who.id and who.sees(o.namespace or "")]

    def transitions(self, candidate_id: str, who: Principal) -> list[Transition]:
        self.get_candidate(candidate_id, who)
        with self._ctx.engine.connect() as conn:
            return audit.transitions(conn, candidate_id)

    def turn(self, turn_ref: str, who: Principal) -> Turn:
        """The stored exchange behind an origin (for 'jump to the original turn')."""
        who.require(Permission.READ_OWN)
        turn_ref = check_id(turn_ref, "turn id")
        missing = NotFound(f"no turn with id {turn_ref!r}")
        with self._ctx.engine.connect() as conn:
            turn = turns.get_turn(conn, turn_ref)
            if turn is None:
                raise missing
            if not who.can(Permission.REVIEW) and turn.created_by != who.id:
                raise missing
            if who.namespaces is not None:
                spaces = {c.namespace for c in turns.candidates_of_turn(conn, turn.id)}
                if turn.workspace:
                    spaces.add(f"workspace:{turn.workspace}")
                if not spaces or not all(who.sees(ns) for ns in spaces):
                    raise missing
        return turn

    def memory_of(self, candidate_id: str, who: Principal) -> Memory | None:
        cand = self.get_candidate(candidate_id, who)
        with self._ctx.engine.connect() as conn:
            return memories.memory_for_candidate(conn, cand.id)

    def get_memory(self, memory_id: str, who: Principal) -> Memory:
        who.require(Permission.REVIEW)
        memory_id = check_id(memory_id, "memory id")
        with self._ctx.engine.connect() as conn:
            mem = memories.get_memory(conn, memory_id)
        if mem is None or not who.sees(mem.namespace):
            raise NotFound(f"no memory with id {memory_id!r}")
        return mem

    def list_memories(self, who: Principal, *, namespaces: Sequence[str] | None = None,
                      kinds: Sequence[Kind] | None = None, offset: int = 0,
                      limit: int = 50) -> Page[Memory]:
        who.require(Permission.REVIEW)
        visible = who.visible(namespaces)
        offset, limit = check_page(offset, limit)
        with self._ctx.engine.connect() as conn:
            return memories.list_memories(conn, namespaces=visible, kinds=kinds,
                                          offset=offset, limit=limit)

    def memory_groups(self, who: Principal, *, per_group: int = 200) -> dict[str, list[Memory]]:
        """Approved memories grouped by namespace (the dashboard's approved view)."""
        who.require(Permission.REVIEW)
        groups: dict[str, list[Memory]] = {}
        with self._ctx.engine.connect() as conn:
            for ns in memories.memory_namespaces(conn):
                if who.sees(ns):
                    groups[ns] = memories.list_memories(
                        conn, namespaces=[ns], kinds=None, offset=0, limit=per_group).items
        return groups

    def queue_stats(self, who: Principal) -> QueueStats:
        who.require(Permission.REVIEW)
        scope = sorted(who.namespaces) if who.namespaces is not None else None
        with self._ctx.engine.connect() as conn:
            counts = candidates.status_counts(conn, scope)
            mems = memories.memory_counts(conn)
            by_ns = candidates.pending_by_namespace(conn, scope)
        return QueueStats(
            pending=counts.get("pending", 0), approved=counts.get("approved", 0),
            rejected=counts.get("rejected", 0), archived=counts.get("archived", 0),
            memories=sum(n for ns, n in mems.items() if who.sees(ns)),
            pending_by_namespace=by_ns, extraction_backlog=self._backlog(),
        )

    def namespaces(self, who: Principal) -> list[str]:
        """Every namespace that has candidates or memories and that the caller may see."""
        who.require(Permission.READ_OWN)
        with self._ctx.engine.connect() as conn:
            found = candidates.namespaces(conn) | set(memories.memory_namespaces(conn))
        return sorted(ns for ns in found if who.sees(ns))
