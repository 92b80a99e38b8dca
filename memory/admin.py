"""Administration: the recall index, settings (policy, persona, archive window), tokens,
export and import."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence

from sqlalchemy import select

from memvet.memory import queries, review, store, transfer
from memvet.memory import tokens as token_store
from memvet.memory.access import Permission, Principal, Role
from memvet.memory.core import ServiceCore
from memvet.memory.errors import ValidationError
from memvet.memory.kinds import Kind
from memvet.memory.namespaces import validate_slug
from memvet.memory.policy import POLICY_ACTOR, AutoApprovePolicy
from memvet.memory.ports import EventAction
from memvet.memory.records import (
    Status,
)
from memvet.memory.text import check_id

log = logging.getLogger(__name__)


class Administration(ServiceCore):
    """What operators and admins do; every method checks the caller is allowed."""

    # ------------------------------------------------------------------ settings
    def policy(self, who: Principal) -> AutoApprovePolicy:
        """The auto-approve policy, with only the namespace overrides the caller may see."""
        who.require(Permission.REVIEW)
        with self.engine.connect() as conn:
            return self.runtime.policy(conn).seen_by(who.sees)

    def set_policy(self, policy: AutoApprovePolicy, who: Principal) -> AutoApprovePolicy:
        """Change the auto-approve policy; pending candidates that now qualify are promoted.

        A scoped admin's policy keeps the overrides of namespaces it cannot see."""
        who.require(Permission.ADMIN)
        for ns in [*policy.per_namespace, *policy.excluded_namespaces]:
            who.require_namespace(ns)
        with self._write() as tx:
            stored = policy.keeping_hidden(self.runtime.policy(tx.conn), who.sees)
            self.runtime.set(tx.conn, "auto_approve_policy", stored.to_json(), who.actor,
                             self.clock())
            self._event(tx, "policy_changed", "", who.actor, enabled=policy.enabled)
        if policy.enabled:
            self._promote_qualifying()
        return stored.seen_by(who.sees)

    def _promote_qualifying(self) -> None:
        with self._write() as tx:
            policy = self.runtime.policy(tx.conn)
            rows = tx.conn.execute(select(store.candidates).where(
                store.candidates.c.status == Status.PENDING.value)).mappings().all()
            for row in rows:
                if policy.qualifies(Kind(row["kind"]), row["namespace"],
                                    row["independent_observations"], float(row["confidence"])):
                    memory = review.approve(tx.conn, dict(row), None, actor=POLICY_ACTOR,
                                            now=self.clock(), check_namespace=lambda ns: None)
                    tx.touched_index = True
                    self._event(tx, "approved", memory.namespace, POLICY_ACTOR,
                                candidate_id=row["id"], memory_id=memory.id)

    def active_persona(self, who: Principal) -> str:
        who.require(Permission.READ_OWN)
        return self.runtime.active_persona()

    def set_active_persona(self, name: str, who: Principal) -> str:
        who.require(Permission.ADMIN)
        name = validate_slug(str(name).strip(), what="persona name")
        with self._write() as tx:
            self.runtime.set(tx.conn, "active_persona", name, who.actor, self.clock())
        return name

    def archive_days(self, who: Principal) -> int:
        who.require(Permission.REVIEW)
        return self.runtime.archive_days()

    def set_archive_days(self, days: int, who: Principal) -> int:
        who.require(Permission.ADMIN)
        if not isinstance(days, int) or not 1 <= days <= 3650:
            raise ValidationError("the archive window must be between 1 and 3650 days")
        with self._write() as tx:
            self.runtime.set(tx.conn, "archive_days", days, who.actor, self.clock())
        return days

    # ------------------------------------------------------------------ tokens
    def create_token(self, role: Role | str, who: Principal, *,
                     namespaces: Sequence[str] | None = None,
                     name: str | None = None) -> tuple[token_store.TokenInfo, str]:
        who.require(Permission.ADMIN)
        if name is not None:
            name = check_id(name, "token name")
        with self._write() as tx:
            return token_store.create(tx.conn, role=token_store.parse_role(str(role)),
                                      namespaces=namespaces, name=name, now=self.clock())

    def list_tokens(self, who: Principal) -> list[token_store.TokenInfo]:
        who.require(Permission.ADMIN)
        with self.engine.connect() as conn:
            return token_store.list_tokens(conn)

    def revoke_token(self, token_id: str, who: Principal) -> token_store.TokenInfo:
        """Revoke a token: it stops authenticating, and its open subscriptions end at once."""
        who.require(Permission.ADMIN)
        token_id = check_id(token_id, "token id")
        with self._write() as tx:
            info = token_store.revoke(tx.conn, token_id, self.clock())
            self._event(tx, EventAction.TOKEN_REVOKED, "", who.actor, token_id=info.id)
        return info

    def authenticate(self, plaintext: str) -> Principal | None:
        with self.engine.connect() as conn:
            return token_store.authenticate(conn, plaintext)

    def has_tokens(self) -> bool:
        with self.engine.connect() as conn:
            return token_store.count_active(conn) > 0

    # ------------------------------------------------------------------ export / import
    def export_lines(self, who: Principal) -> Iterator[str]:
        """Everything as JSON Lines (see memory/transfer.py). Admin only."""
        who.require(Permission.ADMIN)
        with self.engine.connect() as conn:
            yield from transfer.export_lines(conn)

    def import_lines(self, lines: Iterable[str], who: Principal) -> transfer.ImportReport:
        """Import JSON Lines, all or nothing; imported memories become recallable."""
        who.require(Permission.ADMIN)
        with self._write() as tx:
            report = transfer.import_lines(tx.conn, lines, now=self.clock())
            tx.touched_index = bool(report.memory_ids)
        if self.matcher is not None:
            with self.engine.connect() as conn:
                self.matcher.reset(queries.matcher_items(conn))
        return report


