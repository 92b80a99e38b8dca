"""MemoryService: the one facade every interface (GraphQL, MCP, CLI, hooks) calls.

It is handed its adapters (index, matcher, extractor, event bus) and never imports them.
Every method takes the calling `Principal` and checks role and namespace scope itself, so
the human gate holds whichever door a request comes through. Methods are synchronous;
async callers run them in worker threads.

The facade is one class composed of command groups, each in a file of its own:
`memory/core.py` (adapters, transactions, intake), `memory/passes.py` (turns and
compactions), `memory/reading.py` (queue, memories, recall), `memory/admin.py` (index,
settings, tokens, export/import), and the review commands below.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from memvet.memory import queries, review
from memvet.memory.access import Permission, Principal
from memvet.memory.admin import Administration
from memvet.memory.core import MAX_PAGE, MAX_QUERY_CHARS, MAX_RECALL_LIMIT, clean_reason
from memvet.memory.errors import ValidationError
from memvet.memory.feed import ReviewFeed
from memvet.memory.passes import ExtractionPasses, TurnResult
from memvet.memory.reading import Reading
from memvet.memory.records import (
    Candidate,
    CandidateEdit,
    Memory,
)
from memvet.memory.text import check_id

log = logging.getLogger(__name__)

__all__ = ["MAX_PAGE", "MAX_QUERY_CHARS", "MAX_RECALL_LIMIT", "MemoryService", "TurnResult"]


class MemoryService(ExtractionPasses, Reading, Administration, ReviewFeed):
    """The domain facade: intake, extraction passes, review, reading, recall, administration."""

    # ------------------------------------------------------------------ review
    def approve(self, candidate_id: str, who: Principal, *, edit: CandidateEdit | None = None,
                supersede: str | None = None, reason: str | None = None) -> Memory:
        """Approve a pending candidate (with the reviewer's edits); optionally retire the
        memory it supersedes in the same transaction."""
        who.require(Permission.REVIEW)
        candidate_id = check_id(candidate_id, "candidate id")
        supersede = check_id(supersede, "supersede") if supersede is not None else None
        reason = clean_reason(reason)
        with self._write() as tx:
            row = review.get_candidate_row(tx.conn, candidate_id)
            who.require_visible(row["namespace"], f"no candidate with id {candidate_id!r}")
            memory = review.approve(tx.conn, row, edit, actor=who.actor, now=self.clock(),
                                    check_namespace=who.require_namespace)
            tx.touched_index = True
            if memory.content != row["content"] or memory.namespace != row["namespace"]:
                tx.matcher_drop.append(candidate_id)
                tx.matcher_add.append(queries.get_candidate(tx.conn, candidate_id))  # type: ignore[arg-type]  # exists: just updated
            self._event(tx, "approved", memory.namespace, who.actor, candidate_id=candidate_id,
                        memory_id=memory.id)
            if supersede:
                old = review.get_memory_row(tx.conn, supersede)
                who.require_visible(old["namespace"], f"no memory with id {supersede!r}")
                gone = review.delete_memory(
                    tx.conn, old, reason or f"superseded by memory {memory.id}",
                    actor=who.actor, now=self.clock())
                self._event(tx, "memory_deleted", gone.namespace, who.actor,
                            candidate_id=gone.candidate_id, memory_id=gone.id,
                            superseded_by=memory.id, content=gone.content[:2000],
                            kind=gone.kind.value)
        return memory

    def reject(self, candidate_id: str, who: Principal, reason: str | None = None) -> Candidate:
        who.require(Permission.REVIEW)
        candidate_id = check_id(candidate_id, "candidate id")
        reason = clean_reason(reason)
        with self._write() as tx:
            row = review.get_candidate_row(tx.conn, candidate_id)
            who.require_visible(row["namespace"], f"no candidate with id {candidate_id!r}")
            cand = review.reject(tx.conn, row, reason, actor=who.actor, now=self.clock())
            self._event(tx, "rejected", cand.namespace, who.actor, candidate_id=cand.id)
        return cand

    def edit_candidate(self, candidate_id: str, edit: CandidateEdit, who: Principal) -> Candidate:
        who.require(Permission.REVIEW)
        if edit.is_empty():
            raise ValidationError("an edit must change content, kind or namespace")
        candidate_id = check_id(candidate_id, "candidate id")
        with self._write() as tx:
            row = review.get_candidate_row(tx.conn, candidate_id)
            who.require_visible(row["namespace"], f"no candidate with id {candidate_id!r}")
            cand = review.edit_candidate(tx.conn, row, edit, actor=who.actor, now=self.clock(),
                                         check_namespace=who.require_namespace)
            tx.matcher_drop.append(cand.id)
            tx.matcher_add.append(cand)
            self._event(tx, "edited", cand.namespace, who.actor, candidate_id=cand.id)
        return cand

    def update_memory(self, memory_id: str, edit: CandidateEdit, who: Principal) -> Memory:
        who.require(Permission.REVIEW)
        if edit.is_empty():
            raise ValidationError("an edit must change content, kind or namespace")
        memory_id = check_id(memory_id, "memory id")
        with self._write() as tx:
            mem = review.get_memory_row(tx.conn, memory_id)
            who.require_visible(mem["namespace"], f"no memory with id {memory_id!r}")
            memory = review.update_memory(tx.conn, mem, edit, actor=who.actor, now=self.clock(),
                                          check_namespace=who.require_namespace)
            tx.touched_index = True
            self._event(tx, "memory_updated", memory.namespace, who.actor,
                        candidate_id=memory.candidate_id, memory_id=memory.id)
        return memory

    def delete_memory(self, memory_id: str, who: Principal, reason: str | None = None) -> Memory:
        who.require(Permission.REVIEW)
        memory_id = check_id(memory_id, "memory id")
        reason = clean_reason(reason)
        with self._write() as tx:
            mem = review.get_memory_row(tx.conn, memory_id)
            who.require_visible(mem["namespace"], f"no memory with id {memory_id!r}")
            gone = review.delete_memory(tx.conn, mem, reason, actor=who.actor, now=self.clock())
            tx.touched_index = True
            self._event(tx, "memory_deleted", gone.namespace, who.actor,
                        candidate_id=gone.candidate_id, memory_id=gone.id,
                        content=gone.content[:2000], kind=gone.kind.value)
        return gone

    def archive_stale(self, who: Principal, older_than_days: int | None = None) -> list[Candidate]:
        """Archive pending candidates untouched for the archive window (or `older_than_days`).

        A scoped reviewer archives only inside its namespaces."""
        who.require(Permission.REVIEW)
        days = self.runtime.archive_days() if older_than_days is None else older_than_days
        if not isinstance(days, int) or days < 0 or days > 3650:
            raise ValidationError("older_than_days must be between 0 and 3650")
        with self._write() as tx:
            archived = [
                c for c in review.archive_stale(
                    tx.conn, older_than=timedelta(days=days), actor=who.actor, now=self.clock(),
                    only=who.namespaces)
            ]
            tx.matcher_drop.extend(c.id for c in archived)
            for c in archived:
                self._event(tx, "archived", c.namespace, who.actor, candidate_id=c.id)
        return archived

