"""Recall: what agents read. Semantic + lexical search over approved memories the caller may
read (kinds and namespaces parsed here, once), the session-start briefing, and the memories
closest to a candidate under review."""

from __future__ import annotations

from collections.abc import Sequence

from memvet.memory.access import Permission, Principal
from memvet.memory.errors import ValidationError
from memvet.memory.kinds import Kind, parse_kind
from memvet.memory.limits import MAX_PAGE, MAX_QUERY_CHARS, MAX_RECALL_LIMIT
from memvet.memory.namespaces import Namespace
from memvet.memory.records import Memory, RecallHit
from memvet.memory.service.context import ServiceContext
from memvet.memory.service.reading import Reading
from memvet.memory.store import memories
from memvet.memory.text import check_text


class Recall:
    """recall, briefing and related."""

    def __init__(self, ctx: ServiceContext, reading: Reading) -> None:
        self._ctx = ctx
        self._reading = reading

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
        ctx, index = self._ctx, self._ctx.adapters.index
        wanted = who.visible(namespaces)
        with ctx.engine.connect() as conn:
            spaces = wanted if wanted is not None else [
                ns for ns in memories.memory_namespaces(conn) if who.sees(ns)]
        if not spaces or index is None:
            return []
        hits = index.search(query.strip(), spaces, kinds=kind_list, limit=limit,
                            kind_weights=ctx.kind_weights)
        with ctx.engine.connect() as conn:
            # The database decides: a hit the index still holds but the store no longer
            # does (a crash mid-delete) is never served.
            found = memories.get_memories(conn, [h.memory_id for h in hits])
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
        wanted = [str(Namespace.persona(persona or self._ctx.settings.active_persona()))]
        if workspace:
            wanted.insert(0, str(Namespace.workspace(workspace)))
        spaces = [ns for ns in wanted if who.sees(ns)]
        if not spaces:
            return []
        with self._ctx.engine.connect() as conn:
            return memories.briefing(conn, spaces, limit)

    def related(self, candidate_id: str, who: Principal, limit: int = 5) -> list[RecallHit]:
        """The approved memories closest to a candidate, in its namespace (before approving)."""
        cand = self._reading.get_candidate(candidate_id, who)
        if not who.can(Permission.RECALL):
            return []
        hits = self.recall(cand.content[:MAX_QUERY_CHARS], who, namespaces=[cand.namespace],
                           limit=limit)
        return [h for h in hits if h.memory.candidate_id != cand.id]
