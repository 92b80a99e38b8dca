"""Review: the human gate. Approve (with edits, optionally retiring the memory it supersedes),
reject, edit in the queue, edit or delete approved memories, the archive sweep, and the bulk
forms. Every method checks the caller's role, and finds records outside its scope as not found.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from memvet.memory.access import Permission, Principal
from memvet.memory.errors import MemvetError, ValidationError
from memvet.memory.limits import MAX_ARCHIVE_DAYS, MAX_BULK
from memvet.memory.proposals import clean_reason
from memvet.memory.records import Candidate, CandidateEdit, Memory
from memvet.memory.service.context import ServiceContext
from memvet.memory.store import candidates, review
from memvet.memory.text import check_id

T = TypeVar("T")


class Review:
    """What reviewers (and admins) do to candidates and memories."""

    def __init__(self, ctx: ServiceContext) -> None:
        self._ctx = ctx

    def approve(self, candidate_id: str, who: Principal, *, edit: CandidateEdit | None = None,
                supersede: str | None = None, reason: str | None = None) -> Memory:
        """Approve a pending candidate (with the reviewer's edits); optionally retire the
        memory it supersedes in the same transaction."""
        who.require(Permission.REVIEW)
        ctx = self._ctx
        candidate_id = check_id(candidate_id, "candidate id")
        supersede = check_id(supersede, "supersede") if supersede is not None else None
        reason = clean_reason(reason)
        with ctx.write() as tx:
            row = review.get_candidate_row(tx.conn, candidate_id)
            who.require_visible(row["namespace"], f"no candidate with id {candidate_id!r}")
            memory = review.approve(tx.conn, row, edit, actor=who.actor, now=ctx.clock(),
                                    check_namespace=who.require_namespace)
            tx.touched_index = True
            if memory.content != row["content"] or memory.namespace != row["namespace"]:
                tx.matcher_drop.append(candidate_id)
                tx.matcher_add.append(candidates.get_candidate(tx.conn, candidate_id))  # type: ignore[arg-type]  # exists: just updated
            ctx.event(tx, "approved", memory.namespace, who.actor, candidate_id=candidate_id,
                      memory_id=memory.id)
            if supersede:
                old = review.get_memory_row(tx.conn, supersede)
                who.require_visible(old["namespace"], f"no memory with id {supersede!r}")
                gone = review.delete_memory(
                    tx.conn, old, reason or f"superseded by memory {memory.id}",
                    actor=who.actor, now=ctx.clock())
                ctx.event(tx, "memory_deleted", gone.namespace, who.actor,
                          candidate_id=gone.candidate_id, memory_id=gone.id,
                          superseded_by=memory.id, content=gone.content[:2000],
                          kind=gone.kind.value)
        return memory

    def reject(self, candidate_id: str, who: Principal, reason: str | None = None) -> Candidate:
        """Reject a pending candidate; equivalents are counted on it from now on."""
        who.require(Permission.REVIEW)
        ctx = self._ctx
        candidate_id = check_id(candidate_id, "candidate id")
        reason = clean_reason(reason)
        with ctx.write() as tx:
            row = review.get_candidate_row(tx.conn, candidate_id)
            who.require_visible(row["namespace"], f"no candidate with id {candidate_id!r}")
            cand = review.reject(tx.conn, row, reason, actor=who.actor, now=ctx.clock())
            ctx.event(tx, "rejected", cand.namespace, who.actor, candidate_id=cand.id)
        return cand

    def approve_many(self, candidate_ids: list[str], who: Principal
                     ) -> list[tuple[str, Memory | MemvetError]]:
        """Approve each of at most MAX_BULK candidates on its own: one outcome per id. The
        recall index takes them in one batch at the end."""
        ids = _bulk_ids(candidate_ids)
        with self._ctx.index_once():
            return [(cid, _attempt(self.approve, cid, who)) for cid in ids]

    def reject_many(self, candidate_ids: list[str], who: Principal, reason: str | None = None
                    ) -> list[tuple[str, Candidate | MemvetError]]:
        """Reject each of at most MAX_BULK candidates on its own: one outcome per id."""
        return [(cid, _attempt(self.reject, cid, who, reason))
                for cid in _bulk_ids(candidate_ids)]

    def edit_candidate(self, candidate_id: str, edit: CandidateEdit, who: Principal
                       ) -> Candidate:
        """Correct a pending candidate's content, kind or namespace in the queue."""
        who.require(Permission.REVIEW)
        ctx = self._ctx
        if edit.is_empty():
            raise ValidationError("an edit must change content, kind or namespace")
        candidate_id = check_id(candidate_id, "candidate id")
        with ctx.write() as tx:
            row = review.get_candidate_row(tx.conn, candidate_id)
            who.require_visible(row["namespace"], f"no candidate with id {candidate_id!r}")
            cand = review.edit_candidate(tx.conn, row, edit, actor=who.actor, now=ctx.clock(),
                                         check_namespace=who.require_namespace)
            tx.matcher_drop.append(cand.id)
            tx.matcher_add.append(cand)
            ctx.event(tx, "edited", cand.namespace, who.actor, candidate_id=cand.id)
        return cand

    def update_memory(self, memory_id: str, edit: CandidateEdit, who: Principal) -> Memory:
        """Edit an approved memory; the index re-embeds it."""
        who.require(Permission.REVIEW)
        ctx = self._ctx
        if edit.is_empty():
            raise ValidationError("an edit must change content, kind or namespace")
        memory_id = check_id(memory_id, "memory id")
        with ctx.write() as tx:
            mem = review.get_memory_row(tx.conn, memory_id)
            who.require_visible(mem["namespace"], f"no memory with id {memory_id!r}")
            memory = review.update_memory(tx.conn, mem, edit, actor=who.actor, now=ctx.clock(),
                                          check_namespace=who.require_namespace)
            tx.touched_index = True
            cand = candidates.get_candidate(tx.conn, memory.candidate_id)
            if cand is not None:  # its candidate follows the edit: so does the matcher
                tx.matcher_drop.append(cand.id)
                tx.matcher_add.append(cand)
            ctx.event(tx, "memory_updated", memory.namespace, who.actor,
                      candidate_id=memory.candidate_id, memory_id=memory.id)
        return memory

    def delete_memory(self, memory_id: str, who: Principal, reason: str | None = None
                      ) -> Memory:
        """Delete an approved memory: recall stops returning it, its candidate is rejected."""
        who.require(Permission.REVIEW)
        ctx = self._ctx
        memory_id = check_id(memory_id, "memory id")
        reason = clean_reason(reason)
        with ctx.write() as tx:
            mem = review.get_memory_row(tx.conn, memory_id)
            who.require_visible(mem["namespace"], f"no memory with id {memory_id!r}")
            gone = review.delete_memory(tx.conn, mem, reason, actor=who.actor, now=ctx.clock())
            tx.touched_index = True
            ctx.event(tx, "memory_deleted", gone.namespace, who.actor,
                      candidate_id=gone.candidate_id, memory_id=gone.id,
                      content=gone.content[:2000], kind=gone.kind.value)
        return gone

    def archive_stale(self, who: Principal, older_than_days: int | None = None
                      ) -> list[Candidate]:
        """Archive pending candidates untouched for the archive window (or `older_than_days`).

        A scoped reviewer archives only inside its namespaces."""
        who.require(Permission.REVIEW)
        ctx = self._ctx
        days = ctx.settings.archive_days() if older_than_days is None else older_than_days
        if not isinstance(days, int) or days < 0 or days > MAX_ARCHIVE_DAYS:
            raise ValidationError(f"older_than_days must be between 0 and {MAX_ARCHIVE_DAYS}")
        with ctx.write() as tx:
            archived = review.archive_stale(tx.conn, older_than=timedelta(days=days),
                                            actor=who.actor, now=ctx.clock(),
                                            only=who.namespaces)
            tx.matcher_drop.extend(c.id for c in archived)
            for c in archived:
                ctx.event(tx, "archived", c.namespace, who.actor, candidate_id=c.id)
        return archived


def _bulk_ids(ids: list[str]) -> list[str]:
    if len(ids) > MAX_BULK:
        raise ValidationError(f"at most {MAX_BULK} ids per call")
    return list(dict.fromkeys(ids))


def _attempt(call: Callable[..., T], *args: Any) -> T | MemvetError:
    try:
        return call(*args)
    except MemvetError as exc:
        return exc
