"""Who may do what: roles, principals and the checks the service makes on every call."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from memvet.memory.errors import Forbidden, NotFound
from memvet.memory.namespaces import Namespace

TOKEN_PREFIX = "mvt_"
MAX_TOKEN_CHARS = 200
# What memory/store/tokens.py hands out: the prefix and url-safe base64. Anything else is no
# token of ours, and is turned away before it is hashed or looked up.
_TOKEN_RE = re.compile(r"mvt_[A-Za-z0-9_-]{1,196}")


def is_token(value: object) -> bool:
    """Shaped like a memvet token (says nothing of whether it is valid)."""
    return isinstance(value, str) and _TOKEN_RE.fullmatch(value) is not None


def bearer_token(header: object) -> str | None:
    """The token in an `Authorization: Bearer <token>` value, or None.

    The one parser for every door: HTTP and WebSocket GraphQL, and MCP. Accepts the header as
    text or as the raw bytes of an ASGI scope; anything longer than a token could be, or not
    shaped like one, is None."""
    if isinstance(header, (bytes, bytearray)):
        header = bytes(header).decode("latin-1")
    if not isinstance(header, str) or len(header) > MAX_TOKEN_CHARS + 16:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not is_token(token):
        return None
    return token


class Role(StrEnum):
    AGENT = "agent"
    REVIEWER = "reviewer"
    ADMIN = "admin"


class Permission(StrEnum):
    SUBMIT = "submit"  # remember, submit turns and compactions
    RECALL = "recall"
    READ_OWN = "read_own"  # an agent reads the candidates it proposed
    REVIEW = "review"  # read the queue and memories, approve, reject, edit, delete, archive
    ADMIN = "admin"  # tokens, policy, persona, settings


ROLE_PERMISSIONS: dict[Role, frozenset[Permission]] = {
    Role.AGENT: frozenset({Permission.SUBMIT, Permission.RECALL, Permission.READ_OWN}),
    Role.REVIEWER: frozenset(
        {Permission.SUBMIT, Permission.RECALL, Permission.READ_OWN, Permission.REVIEW}
    ),
    Role.ADMIN: frozenset(Permission),
}


@dataclass(frozen=True)
class Principal:
    """The caller. `namespaces` None means every namespace; otherwise only those."""

    id: str
    name: str
    role: Role
    namespaces: frozenset[str] | None = None

    @classmethod
    def system(cls, name: str = "system") -> Principal:
        """The local operator (CLI on the data dir): admin everywhere."""
        return cls(id=name, name=name, role=Role.ADMIN, namespaces=None)

    @property
    def actor(self) -> str:
        """How this principal appears in the audit trail."""
        return f"{self.role.value}:{self.name}"

    def can(self, permission: Permission) -> bool:
        return permission in ROLE_PERMISSIONS[self.role]

    def require(self, permission: Permission) -> None:
        if not self.can(permission):
            article = "an" if self.role.value[0] in "aeiou" else "a"
            raise Forbidden(
                f"{article} {self.role.value} token may not do this "
                f"(it needs {permission.value} rights)"
            )

    def sees(self, namespace: str) -> bool:
        return self.namespaces is None or namespace in self.namespaces

    def require_namespace(self, namespace: str) -> None:
        """For a namespace the caller named itself: refuse it by name."""
        if not self.sees(namespace):
            raise Forbidden(f"this token is not allowed in namespace {namespace!r}")

    def may_read(self, namespace: str, created_by: str | None) -> bool:
        """A candidate: a reviewer reads every one in its namespaces, an agent those it
        proposed."""
        return self.sees(namespace) and (self.can(Permission.REVIEW) or created_by == self.id)

    def require_visible(self, namespace: str, missing: str) -> None:
        """For a record the caller found by id: outside its scope the record does not exist
        for it (NOT_FOUND with `missing` as the message), and no namespace is named."""
        if not self.sees(namespace):
            raise NotFound(missing)

    def visible(self, namespaces: Iterable[str] | None) -> list[str] | None:
        """The canonical namespaces a caller asked for, each one it may see; or, when it asked
        for none (None or an empty list: no narrowing, the same everywhere), every namespace it
        sees (None = all). A namespace it may not see is refused by name: it named it."""
        wanted = list(dict.fromkeys(str(Namespace.parse(n)) for n in namespaces or ()))
        if not wanted:
            return None if self.namespaces is None else sorted(self.namespaces)
        for ns in wanted:
            self.require_namespace(ns)
        return wanted
