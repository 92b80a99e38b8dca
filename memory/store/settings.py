"""Settings a person changes while memvet runs (policy, active persona, archive window).

They live in the database so every worker sees the same values.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.engine import Connection, Engine

from memvet.memory.clock import utcnow
from memvet.memory.policy import AutoApprovePolicy
from memvet.memory.store import tables

# Read on every submission (the policy): one prepared statement.
_GET = select(tables.settings_table.c.value).where(tables.settings_table.c.key == bindparam("key"))


class RuntimeSettings:
    def __init__(self, engine: Engine, *, default_archive_days: int, default_persona: str):
        self._engine = engine
        self._defaults: dict[str, Any] = {
            "auto_approve_policy": AutoApprovePolicy().to_json(),
            "active_persona": default_persona,
            "archive_days": default_archive_days,
        }

    def get(self, conn: Connection, key: str) -> Any:
        row = conn.execute(_GET, {"key": key}).first()
        return row[0] if row is not None else self._defaults.get(key)

    def _get(self, key: str) -> Any:
        with self._engine.connect() as conn:
            return self.get(conn, key)

    def set(self, conn: Connection, key: str, value: Any, actor: str | None,
            now: datetime | None = None) -> None:
        t = tables.settings_table
        exists = conn.execute(select(t.c.key).where(t.c.key == key)).first() is not None
        values = {"value": value, "updated_at": now or utcnow(), "updated_by": actor}
        if exists:
            conn.execute(update(t).where(t.c.key == key).values(**values))
        else:
            conn.execute(insert(t).values(key=key, **values))

    def policy(self, conn: Connection) -> AutoApprovePolicy:
        return AutoApprovePolicy.from_json(self.get(conn, "auto_approve_policy") or {})

    def active_persona(self) -> str:
        return str(self._get("active_persona"))

    def archive_days(self) -> int:
        return int(self._get("archive_days"))
