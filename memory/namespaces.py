"""Namespaces: `persona:<name>` or `workspace:<name>`, nothing else."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from memvet.memory.errors import InvalidNamespace

SLUG_RE = re.compile(r"^[a-z0-9_./-]{1,128}$")


class Scope(StrEnum):
    PERSONA = "persona"
    WORKSPACE = "workspace"


@dataclass(frozen=True, order=True)
class Namespace:
    """A validated namespace; `str()` gives the canonical `prefix:name` form."""

    scope: Scope
    name: str

    def __str__(self) -> str:
        return f"{self.scope.value}:{self.name}"

    @classmethod
    def parse(cls, value: object) -> Namespace:
        """Parse `persona:<slug>` / `workspace:<slug>`, or raise InvalidNamespace."""
        if isinstance(value, Namespace):
            return value
        if not isinstance(value, str):
            raise InvalidNamespace("a namespace must be a string like 'workspace:shop-api'")
        prefix, sep, name = value.strip().partition(":")
        if not sep or prefix not in (Scope.PERSONA.value, Scope.WORKSPACE.value):
            raise InvalidNamespace(
                f"namespace {value[:60]!r} must start with 'persona:' or 'workspace:'"
            )
        validate_slug(name, what=f"namespace {value[:60]!r}")
        return cls(Scope(prefix), name)

    @classmethod
    def persona(cls, name: str) -> Namespace:
        validate_slug(name, what="persona name")
        return cls(Scope.PERSONA, name)

    @classmethod
    def workspace(cls, name: str) -> Namespace:
        validate_slug(name, what="workspace name")
        return cls(Scope.WORKSPACE, name)


def validate_slug(name: str, *, what: str = "name") -> str:
    """Check a namespace slug: lowercase letters, digits, '-', '_', '.', '/'; 1-128 chars;
    '/' only between segments, and no '.' or '..' segment (a slug is never a path trick)."""
    if not isinstance(name, str) or not SLUG_RE.fullmatch(name):
        raise InvalidNamespace(
            f"{what}: the name after the prefix must be 1-128 characters of lowercase letters, "
            "digits, '-', '_', '.' or '/'"
        )
    if any(segment in ("", ".", "..") for segment in name.split("/")):
        raise InvalidNamespace(
            f"{what}: '/' separates non-empty segments (no leading, trailing or double '/'), "
            "and no segment may be '.' or '..'"
        )
    return name


def slugify(text: str) -> str:
    """Best-effort slug for a free-form name (a folder name, say); never empty, always valid."""
    slug = re.sub(r"[^a-z0-9_./-]+", "-", text.strip().lower()).strip("-")
    segments = [s for s in slug.split("/") if s not in ("", ".", "..")]
    slug = "/".join(segments)[:128].strip("/")
    return slug or "default"


def resolve_namespace(value: str | None, active_persona: str) -> str:
    """The canonical namespace string for `value`, defaulting to the active persona."""
    if value is None or not str(value).strip():
        return str(Namespace.persona(active_persona))
    return str(Namespace.parse(value))
