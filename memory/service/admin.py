"""Administration: the settings a person changes at run time (the auto-approve policy, the
active persona, the archive window), tokens, export and import, the recall index's upkeep (and
its switch to another embedding model) and the health check. Every method checks the caller
may."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from memvet.memory.access import Permission, Principal, Role
from memvet.memory.errors import ValidationError
from memvet.memory.kinds import Kind
from memvet.memory.limits import MAX_ARCHIVE_DAYS
from memvet.memory.namespaces import validate_slug
from memvet.memory.policy import POLICY_ACTOR, AutoApprovePolicy
from memvet.memory.ports import EmbeddingModel, EventAction, MemoryIndex, ProgressCallback
from memvet.memory.service.context import Backlog, ServiceContext
from memvet.memory.service.indexing import IndexSync, ReconcileReport
from memvet.memory.store import candidates, engine, models, review, tokens, transfer, vectors
from memvet.memory.text import check_id


class Administration:
    """What operators and admins do."""

    def __init__(self, ctx: ServiceContext, backlog: Backlog,
                 matcher_reset: Callable[[], None]) -> None:
        self._ctx = ctx
        self._backlog = backlog
        self._matcher_reset = matcher_reset

    # ------------------------------------------------------------------ settings
    def policy(self, who: Principal) -> AutoApprovePolicy:
        """The auto-approve policy, with only the namespace overrides the caller may see."""
        who.require(Permission.REVIEW)
        with self._ctx.engine.connect() as conn:
            return self._ctx.settings.policy(conn).seen_by(who.sees)

    def set_policy(self, policy: AutoApprovePolicy, who: Principal) -> AutoApprovePolicy:
        """Change the auto-approve policy; pending candidates that now qualify are promoted.

        A scoped admin's policy keeps the overrides of namespaces it cannot see."""
        who.require(Permission.ADMIN)
        ctx = self._ctx
        for ns in [*policy.per_namespace, *policy.excluded_namespaces]:
            who.require_namespace(ns)
        with ctx.write() as tx:
            stored = policy.keeping_hidden(ctx.settings.policy(tx.conn), who.sees)
            ctx.settings.set(tx.conn, "auto_approve_policy", stored.to_json(), who.actor,
                             ctx.clock())
            ctx.event(tx, "policy_changed", "", who.actor, enabled=policy.enabled)
        if policy.enabled:
            self._promote_qualifying()
        return stored.seen_by(who.sees)

    def _promote_qualifying(self) -> None:
        ctx = self._ctx
        with ctx.write() as tx:
            policy = ctx.settings.policy(tx.conn)
            for row in candidates.pending_rows(tx.conn):
                if policy.qualifies(Kind(row["kind"]), row["namespace"],
                                    row["independent_observations"], float(row["confidence"])):
                    memory = review.approve(tx.conn, row, None, actor=POLICY_ACTOR,
                                            now=ctx.clock(), check_namespace=lambda ns: None)
                    tx.touched_index = True
                    ctx.event(tx, "approved", memory.namespace, POLICY_ACTOR,
                              candidate_id=row["id"], memory_id=memory.id)

    def active_persona(self, who: Principal) -> str:
        who.require(Permission.READ_OWN)
        return self._ctx.settings.active_persona()

    def set_active_persona(self, name: str, who: Principal) -> str:
        who.require(Permission.ADMIN)
        name = validate_slug(str(name).strip(), what="persona name")
        with self._ctx.write() as tx:
            self._ctx.settings.set(tx.conn, "active_persona", name, who.actor, self._ctx.clock())
        return name

    def archive_days(self, who: Principal) -> int:
        who.require(Permission.REVIEW)
        return self._ctx.settings.archive_days()

    def set_archive_days(self, days: int, who: Principal) -> int:
        who.require(Permission.ADMIN)
        if not isinstance(days, int) or not 1 <= days <= MAX_ARCHIVE_DAYS:
            raise ValidationError(
                f"the archive window must be between 1 and {MAX_ARCHIVE_DAYS} days")
        with self._ctx.write() as tx:
            self._ctx.settings.set(tx.conn, "archive_days", days, who.actor, self._ctx.clock())
        return days

    # ------------------------------------------------------------------ tokens
    def create_token(self, role: Role | str, who: Principal, *,
                     namespaces: Sequence[str] | None = None,
                     name: str | None = None) -> tuple[tokens.TokenInfo, str]:
        """A new token: its info, and its plaintext (the only time it exists)."""
        who.require(Permission.ADMIN)
        if name is not None:
            name = check_id(name, "token name")
        with self._ctx.write() as tx:
            return tokens.create(tx.conn, role=tokens.parse_role(str(role)),
                                 namespaces=namespaces, name=name, now=self._ctx.clock())

    def list_tokens(self, who: Principal) -> list[tokens.TokenInfo]:
        who.require(Permission.ADMIN)
        with self._ctx.engine.connect() as conn:
            return tokens.list_tokens(conn)

    def revoke_token(self, token_id: str, who: Principal) -> tokens.TokenInfo:
        """Revoke a token: it stops authenticating, and its open subscriptions end at once."""
        who.require(Permission.ADMIN)
        token_id = check_id(token_id, "token id")
        with self._ctx.write() as tx:
            info = tokens.revoke(tx.conn, token_id, self._ctx.clock())
            self._ctx.event(tx, EventAction.TOKEN_REVOKED, "", who.actor, token_id=info.id)
        return info

    def authenticate(self, plaintext: str) -> Principal | None:
        """The caller a token stands for, or None (unknown, revoked, or not a token)."""
        with self._ctx.engine.connect() as conn:
            return tokens.authenticate(conn, plaintext)

    def has_tokens(self) -> bool:
        with self._ctx.engine.connect() as conn:
            return tokens.count_active(conn) > 0

    # ------------------------------------------------------------------ export / import
    def export_lines(self, who: Principal) -> Iterator[str]:
        """Everything as JSON Lines (see memory/store/transfer.py). Admin only."""
        who.require(Permission.ADMIN)
        with self._ctx.engine.connect() as conn:
            yield from transfer.export_lines(conn)

    def import_lines(self, lines: Iterable[str], who: Principal,
                     progress: ProgressCallback | None = None) -> transfer.ImportReport:
        """Import JSON Lines, all or nothing; imported memories become recallable (the index
        embeds them in large batches; `progress` hears (indexed, total))."""
        who.require(Permission.ADMIN)
        ctx = self._ctx
        with ctx.write() as tx:
            report = transfer.import_lines(tx.conn, lines, now=ctx.clock())
        if report.memory_ids and ctx.sync is not None:
            ctx.sync.drain(progress)
        self._matcher_reset()  # cheap: the matcher reads the vectors the index just stored
        return report

    # ------------------------------------------------------------------ index and health
    def reconcile_index(self, progress: ProgressCallback | None = None) -> ReconcileReport:
        """Make the recall index hold exactly the approved memories (start-up, `reindex`)."""
        if self._ctx.sync is None:
            raise ValidationError("no recall index is configured")
        return self._ctx.sync.reconcile(progress)

    def index_model(self) -> EmbeddingModel | None:
        """The embedding model the recall index serves, as recorded (None: not yet)."""
        with self._ctx.engine.connect() as conn:
            return models.active(conn)

    def record_index_model(self, model: EmbeddingModel) -> None:
        """Record the model the recall index serves, where none was recorded (first start)."""
        with self._ctx.write() as tx:
            if models.active(tx.conn) is None:
                models.activate(tx.conn, model, self._ctx.clock())

    def build_index(self, target: MemoryIndex, model: EmbeddingModel,
                    progress: ProgressCallback | None = None) -> ReconcileReport:
        """Fill `target` (another model's collections, beside the serving ones) with every
        approved memory, then make `model` the one served, in one transaction.

        Interrupted, it leaves the serving index as it was and `target` part-filled: run it
        again and it carries on from there."""
        ctx = self._ctx
        with ctx.write() as tx:
            models.mark_building(tx.conn, model, ctx.clock())
        # a sync of its own: the serving index (if this process has one) is not touched
        report = IndexSync(ctx.engine, target).reconcile(progress, into=target)
        with ctx.write() as tx:
            models.activate(tx.conn, model, ctx.clock())
        return report

    def candidate_texts(self) -> list[str]:
        """The text of every candidate the equivalence matcher knows (all but archived ones):
        what a reindex embeds ahead, so the matcher never embeds at start."""
        with self._ctx.engine.connect() as conn:
            return list(dict.fromkeys(content for *_, content in candidates.matcher_items(conn)))

    def prune_vectors(self, model_id: str) -> int:
        """Delete stored vectors of other models and of texts no longer held; returns how many."""
        with self._ctx.write() as tx:
            return vectors.prune(tx.conn, model_id)

    def drain_index_outbox(self) -> int:
        """Apply what the outbox says the index owes (the server runs this periodically)."""
        return self._ctx.sync.drain() if self._ctx.sync is not None else 0

    def health(self) -> dict[str, Any]:
        """The database answers; how many turns wait for the background extractor."""
        return {"status": "ok", "database": engine.ping(self._ctx.engine),
                "extraction_backlog": self._backlog()}
