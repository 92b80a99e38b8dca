"""Who may do what: roles, principals and the checks the service makes on every call."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from memvet.memory.errors import Forbidden, NotFound


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

    def require_visible(self, namespace: str, missing: str) -> None:
        """For a record the caller found by id: outside its scope the record does not exist
        for it (NOT_FOUND with `missing` as the message), and no namespace is named."""
        if not self.sees(namespace):
            raise NotFound(missing)

    def visible(self, namespaces: Iterable[str] | None) -> list[str] | None:
        """Narrow a namespace list to what this principal sees (None = everything it sees)."""
        if namespaces is None:
            return None if self.namespaces is None else sorted(self.namespaces)
        wanted = list(dict.fromkeys(namespaces))
        for ns in wanted:
            self.require_namespace(ns)
        return wanted
