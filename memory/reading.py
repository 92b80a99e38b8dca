"""The read side of the facade: the queue, memories, turns, stats, recall and briefings."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlalchemy import select

from memvet.memory import queries, store
from memvet.memory.access import Permission, Principal
from memvet.memory.core import (
    MAX_PAGE,
    MAX_QUERY_CHARS,
    MAX_RECALL_LIMIT,
    ServiceCore,
    can_read,
    check_page,
)
from memvet.memory.errors import NotFound, ValidationError
from memvet.memory.kinds import Kind, parse_kind
from memvet.memory.namespaces import Namespace
from memvet.memory.records import (
    Candidate,
    Memory,
    Origin,
    Page,
    QueueStats,
    RecallHit,
    Source,
    Status,
    Transition,
    Turn,
)
from memvet.memory.text import check_id, check_text

log = logging.getLogger(__name__)


class Reading(ServiceCore):
    """Everything a caller may look at, filtered by its role and namespace scope."""

    # ------------------------------------------------------------------ reading
    def list_candidates(
        self, who: Principal, *, statuses: Sequence[Status] | None = None,
        namespaces: Sequence[str] | None = None, kinds: Sequence[Kind] | None = None,
        sources: Sequence[Source] | None = None, order: str = "newest",
        offset: int = 0, limit: int = 50,
    ) -> Page[Candidate]:
        """The queue. Agents see only what they proposed; scoped tokens only their namespaces."""
        who.require(Permission.READ_OWN)
        visible = who.visible([str(Namespace.parse(n)) for n in namespaces]
                              if namespaces is not None else None)
        created_by = None if who.can(Permission.REVIEW) else who.id
        offset, limit = check_page(offset, limit)
        if order not in queries.CANDIDATE_ORDERS:
            raise ValidationError(
                f"order must be one of {', '.join(queries.CANDIDATE_ORDERS)}")
        f = queries.CandidateFilter(statuses=statuses, namespaces=visible, kinds=kinds,
                                    sources=sources, created_by=created_by, order=order)
        with self.engine.connect() as conn:
            return queries.list_candidates(conn, f, offset=offset, limit=limit)

    def get_candidate(self, candidate_id: str, who: Principal) -> Candidate:
        who.require(Permission.READ_OWN)
        candidate_id = check_id(candidate_id, "candidate id")
        with self.engine.connect() as conn:
            cand = queries.get_candidate(conn, candidate_id)
        if cand is None or not can_read(cand, who):
            raise NotFound(f"no candidate with id {candidate_id!r}")
        return cand

    def origins(self, candidate_id: str, who: Principal) -> list[Origin]:
        """Where a candidate was observed. A reviewer sees every observation; an agent only
        its own (others' excerpts come from conversations it has no part in)."""
        who.require(Permission.READ_OWN)
        candidate_id = check_id(candidate_id, "candidate id")
        with self.engine.connect() as conn:
            cand = queries.get_candidate(conn, candidate_id)
            if cand is None or not who.sees(cand.namespace):
                raise NotFound(f"no candidate with id {candidate_id!r}")
            found = queries.origins(conn, candidate_id)
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
        with self.engine.connect() as conn:
            found = queries.origins(conn, candidate_id)
        return [o for o in found if o.created_by == who.id and who.sees(o.namespace or "")]

    def transitions(self, candidate_id: str, who: Principal) -> list[Transition]:
        self.get_candidate(candidate_id, who)
        with self.engine.connect() as conn:
            return queries.transitions(conn, candidate_id)

    def turn(self, turn_ref: str, who: Principal) -> Turn:
        """The stored exchange behind an origin (for 'jump to the original turn')."""
        who.require(Permission.READ_OWN)
        turn_ref = check_id(turn_ref, "turn id")
        with self.engine.connect() as conn:
            turn = queries.get_turn(conn, turn_ref)
            if turn is None:
                raise NotFound(f"no turn with id {turn_ref!r}")
            if not who.can(Permission.REVIEW) and turn.created_by != who.id:
                raise NotFound(f"no turn with id {turn_ref!r}")
            if who.namespaces is not None:
                linked = queries.candidates_of_turn(conn, turn.id)
                spaces = {c.namespace for c in linked}
                if turn.workspace:
                    spaces.add(f"workspace:{turn.workspace}")
                if not spaces or not all(who.sees(ns) for ns in spaces):
                    raise NotFound(f"no turn with id {turn_ref!r}")
        return turn

    def memory_of(self, candidate_id: str, who: Principal) -> Memory | None:
        cand = self.get_candidate(candidate_id, who)
        with self.engine.connect() as conn:
            return queries.memory_for_candidate(conn, cand.id)

    def get_memory(self, memory_id: str, who: Principal) -> Memory:
        who.require(Permission.REVIEW)
        memory_id = check_id(memory_id, "memory id")
        with self.engine.connect() as conn:
            mem = queries.get_memory(conn, memory_id)
        if mem is None or not who.sees(mem.namespace):
            raise NotFound(f"no memory with id {memory_id!r}")
        return mem

    def list_memories(self, who: Principal, *, namespaces: Sequence[str] | None = None,
                      kinds: Sequence[Kind] | None = None, offset: int = 0,
                      limit: int = 50) -> Page[Memory]:
        who.require(Permission.REVIEW)
        visible = who.visible([str(Namespace.parse(n)) for n in namespaces]
                              if namespaces is not None else None)
        offset, limit = check_page(offset, limit)
        with self.engine.connect() as conn:
            return queries.list_memories(conn, namespaces=visible, kinds=kinds,
                                         offset=offset, limit=limit)

    def memory_groups(self, who: Principal, *, per_group: int = 200) -> dict[str, list[Memory]]:
        """Approved memories grouped by namespace (the dashboard's approved view)."""
        who.require(Permission.REVIEW)
        groups: dict[str, list[Memory]] = {}
        with self.engine.connect() as conn:
            for ns in queries.memory_namespaces(conn):
                if who.sees(ns):
                    groups[ns] = queries.list_memories(
                        conn, namespaces=[ns], kinds=None, offset=0, limit=per_group).items
        return groups

    def queue_stats(self, who: Principal) -> QueueStats:
        who.require(Permission.REVIEW)
        scope = sorted(who.namespaces) if who.namespaces is not None else None
        with self.engine.connect() as conn:
            counts = queries.status_counts(conn, scope)
            mems = queries.memory_counts(conn)
            by_ns = queries.pending_by_namespace(conn, scope)
        return QueueStats(
            pending=counts.get("pending", 0), approved=counts.get("approved", 0),
            rejected=counts.get("rejected", 0), archived=counts.get("archived", 0),
            memories=sum(n for ns, n in mems.items() if who.sees(ns)),
            pending_by_namespace=by_ns, extraction_backlog=self._backlog,
        )

    def namespaces(self, who: Principal) -> list[str]:
        """Every namespace that has candidates or memories and that the caller may see."""
        who.require(Permission.READ_OWN)
        with self.engine.connect() as conn:
            c = store.candidates.c
            found = {r[0] for r in conn.execute(select(c.namespace).distinct())}
            found.update(queries.memory_namespaces(conn))
        return sorted(ns for ns in found if who.sees(ns))

    # ------------------------------------------------------------------ recall
    def recall(self, query: str, who: Principal, *, namespaces: Sequence[str] | None = None,
               kinds: Sequence[Kind | str] | None = None, limit: int = 10) -> list[RecallHit]:
        """Semantic + lexical search over approved memories the caller may read."""
        who.require(Permission.RECALL)
        if not check_text(query, "query").strip():
            raise ValidationError("query must not be empty")
        if len(query) > MAX_QUERY_CHARS:
            raise ValidationError(f"query is over {MAX_QUERY_CHARS} characters")
        if not 1 <= limit <= MAX_RECALL_LIMIT:
            raise ValidationError(f"limit must be between 1 and {MAX_RECALL_LIMIT}")
        kind_list = [parse_kind(k) for k in kinds] if kinds else None
        wanted = who.visible([str(Namespace.parse(n)) for n in namespaces]
                             if namespaces else None)
        with self.engine.connect() as conn:
            spaces = wanted if wanted is not None else [
                ns for ns in queries.memory_namespaces(conn) if who.sees(ns)]
        if not spaces or self.index is None:
            return []
        hits = self.index.search(query.strip(), spaces, kinds=kind_list, limit=limit,
                                 kind_weights=self.kind_weights)
        with self.engine.connect() as conn:
            # The database decides: a hit the index still holds but the store no longer
            # does (a crash mid-delete) is never served.
            found = queries.get_memories(conn, [h.memory_id for h in hits])
        result = []
        for h in hits:
            mem = found.get(h.memory_id)
            if mem is None or mem.namespace not in spaces:
                continue
            result.append(RecallHit(memory=mem, score=h.score, dense=h.dense,
                                    lexical=h.lexical, fused=h.fused, kind_weight=h.kind_weight))
        return result

    def briefing(self, who: Principal, *, workspace: str | None = None,
                 persona: str | None = None, limit: int = 100) -> list[Memory]:
        """What an agent should know at session start in `workspace:<workspace>` and
        `persona:<persona>` (default: the active persona), as far as it may read them:
        decisions and postmortems first, then the most observed, then the newest."""
        who.require(Permission.RECALL)
        if not 1 <= limit <= MAX_PAGE:
            raise ValidationError(f"limit must be between 1 and {MAX_PAGE}")
        wanted = [str(Namespace.persona(persona or self.runtime.active_persona()))]
        if workspace:
            wanted.insert(0, str(Namespace.workspace(workspace)))
        spaces = [ns for ns in wanted if who.sees(ns)]
        if not spaces:
            return []
        with self.engine.connect() as conn:
            return queries.briefing(conn, spaces, limit)

    def related(self, candidate_id: str, who: Principal, limit: int = 5) -> list[RecallHit]:
        """The approved memories closest to a candidate, in its namespace (before approving)."""
        cand = self.get_candidate(candidate_id, who)
        if not who.can(Permission.RECALL):
            return []
        hits = self.recall(cand.content[:MAX_QUERY_CHARS], who, namespaces=[cand.namespace],
                           limit=limit)
        return [h for h in hits if h.memory.candidate_id != cand.id]

