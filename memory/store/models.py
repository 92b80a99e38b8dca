"""Which embedding model the recall index serves, and which one a reindex is building.

At most one model is `active`: the server embeds queries and memories with it and reads only
its collections. `memvet reindex` to another model marks that one `building` while it fills
collections of its own beside the active ones, then `activate` switches in one transaction.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection

from memvet.memory.ports import EmbeddingModel
from memvet.memory.store import tables

ACTIVE = "active"
BUILDING = "building"


def _model(row: object) -> EmbeddingModel:
    return EmbeddingModel(model_id=row.model_id, dimension=int(row.dimension),  # type: ignore[attr-defined]
                          path=row.path)  # type: ignore[attr-defined]


def active(conn: Connection) -> EmbeddingModel | None:
    """The model the recall index serves, if one was recorded."""
    t = tables.index_models.c
    row = conn.execute(select(tables.index_models).where(t.status == ACTIVE)).first()
    return _model(row) if row is not None else None


def building(conn: Connection) -> EmbeddingModel | None:
    """The model a reindex is building (or was, when it was interrupted), if any."""
    t = tables.index_models.c
    row = conn.execute(select(tables.index_models).where(t.status == BUILDING)
                       .order_by(t.updated_at.desc())).first()
    return _model(row) if row is not None else None


def _put(conn: Connection, model: EmbeddingModel, status: str, now: datetime) -> None:
    t = tables.index_models
    values = {"dimension": model.dimension, "path": model.path, "status": status,
              "updated_at": now}
    done = conn.execute(update(t).where(t.c.model_id == model.model_id).values(**values))
    if not done.rowcount:
        conn.execute(insert(t).values(model_id=model.model_id, **values))


def mark_building(conn: Connection, model: EmbeddingModel, now: datetime) -> None:
    """Record that `model`'s collections are being built (it does not serve yet)."""
    _put(conn, model, BUILDING, now)


def activate(conn: Connection, model: EmbeddingModel, now: datetime) -> EmbeddingModel | None:
    """Make `model` the one the recall index serves; returns the one it replaces, if any."""
    before = active(conn)
    t = tables.index_models
    conn.execute(delete(t).where(t.c.status == ACTIVE, t.c.model_id != model.model_id))
    _put(conn, model, ACTIVE, now)
    return before if before is not None and before.model_id != model.model_id else None
