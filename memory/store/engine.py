"""The engine: SQLite (WAL) by default, PostgreSQL by URL, and the few statements that are
about the connection rather than a table."""

from __future__ import annotations

from typing import Any

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Connection, Engine


def make_engine(url: str, *, echo: bool = False) -> Engine:
    """An engine for `url`. SQLite gets WAL, a busy timeout and foreign keys on."""
    if url.startswith("sqlite"):
        # Pooled, not NullPool: closing the last connection to a WAL database checkpoints it
        # and deletes the WAL, so a connection per transaction paid a checkpoint, a WAL
        # re-creation and their syncs on every write (~30 submissions/s instead of >500).
        engine = create_engine(
            url,
            echo=echo,
            connect_args={"check_same_thread": False, "timeout": 30},
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return create_engine(url, echo=echo, pool_pre_ping=True, pool_size=5, max_overflow=10)


def ping(engine: Engine) -> str:
    """Run `SELECT 1`; returns the dialect's name (the health check)."""
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))
    return engine.dialect.name


def lock_key(conn: Connection, key: str) -> None:
    """PostgreSQL: hold a transaction-scoped advisory lock on `key`, so workers serialise work
    on the same thing (SQLite has one writer anyway)."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": key})
