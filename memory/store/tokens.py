"""API tokens: created once, shown once, stored as SHA-256 hashes (their format and the
`Authorization` header parser are memory/access.py's)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, insert, select, update
from sqlalchemy.engine import Connection

from memvet.memory.access import TOKEN_PREFIX, Principal, Role, is_token
from memvet.memory.errors import NotFound, ValidationError
from memvet.memory.namespaces import Namespace
from memvet.memory.store import tables
from memvet.memory.store.tables import new_id


@dataclass(frozen=True)
class TokenInfo:
    id: str
    name: str
    role: Role
    namespaces: tuple[str, ...] | None
    created_at: datetime
    revoked_at: datetime | None


def hash_token(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode("utf-8")).hexdigest()


def parse_role(value: str) -> Role:
    try:
        return Role(str(value).strip().lower())
    except ValueError as exc:
        raise ValidationError("role must be one of: agent, reviewer, admin") from exc


def create(
    conn: Connection,
    *,
    role: Role,
    namespaces: Iterable[str] | None,
    name: str | None,
    now: datetime,
) -> tuple[TokenInfo, str]:
    """Store a new token; returns its info and the plaintext (the only time it exists)."""
    scope = None
    if namespaces:
        scope = tuple(sorted({str(Namespace.parse(ns)) for ns in namespaces}))
    label = (name or f"{role.value}-token").strip()[:128] or f"{role.value}-token"
    plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
    info = TokenInfo(new_id(), label, role, scope, now, None)
    conn.execute(
        insert(tables.tokens).values(
            id=info.id,
            name=info.name,
            role=role.value,
            namespaces=list(scope) if scope else None,
            token_hash=hash_token(plaintext),
            created_at=now,
            revoked_at=None,
        )
    )
    return info, plaintext


def authenticate(conn: Connection, plaintext: str) -> Principal | None:
    if not is_token(plaintext):
        return None
    t = tables.tokens.c
    row = conn.execute(
        select(tables.tokens).where(
            and_(t.token_hash == hash_token(plaintext), t.revoked_at.is_(None))
        )
    ).mappings().first()
    if row is None:
        return None
    scope = frozenset(row["namespaces"]) if row["namespaces"] else None
    return Principal(id=row["id"], name=row["name"], role=Role(row["role"]), namespaces=scope)


def _info(row: dict[str, object]) -> TokenInfo:
    ns = row["namespaces"]
    return TokenInfo(
        id=str(row["id"]),
        name=str(row["name"]),
        role=Role(str(row["role"])),
        namespaces=tuple(ns) if isinstance(ns, list) and ns else None,
        created_at=row["created_at"],  # type: ignore[arg-type]  # a UTCDateTime column
        revoked_at=row["revoked_at"],  # type: ignore[arg-type]
    )


def list_tokens(conn: Connection) -> list[TokenInfo]:
    rows = conn.execute(select(tables.tokens).order_by(tables.tokens.c.created_at)).mappings()
    return [_info(dict(r)) for r in rows]


def revoke(conn: Connection, token_id: str, now: datetime) -> TokenInfo:
    t = tables.tokens.c
    row = conn.execute(select(tables.tokens).where(t.id == token_id)).mappings().first()
    if row is None:
        raise NotFound(f"no token with id {token_id!r}")
    conn.execute(update(tables.tokens).where(t.id == token_id).values(revoked_at=now))
    return _info({**dict(row), "revoked_at": now})


def count_active(conn: Connection) -> int:
    t = tables.tokens.c
    return len(conn.execute(select(t.id).where(t.revoked_at.is_(None))).all())


def is_revoked(conn: Connection, token_id: str) -> bool:
    """True once the token with this id is revoked (the operator's own principal never is)."""
    t = tables.tokens.c
    row = conn.execute(select(t.revoked_at).where(t.id == token_id)).first()
    return row is not None and row[0] is not None
