"""The closed set of six memory kinds and their default recall weights."""

from __future__ import annotations

from enum import StrEnum

from memvet.memory.errors import InvalidKind


class Kind(StrEnum):
    """What a memory is about. Exactly six; there is no seventh."""

    PREFERENCE = "preference"
    FACT = "fact"
    DECISION = "decision"
    PATTERN = "pattern"
    POSTMORTEM = "postmortem"
    EVENT = "event"


KIND_DESCRIPTIONS: dict[Kind, str] = {
    Kind.PREFERENCE: "a confirmed user preference about how agents should work",
    Kind.FACT: "a durable, checkable fact about the project",
    Kind.DECISION: "a choice that was made, ideally with its reason",
    Kind.PATTERN: "a recurring behaviour or convention worth encoding once",
    Kind.POSTMORTEM: "what went wrong and what to do differently",
    Kind.EVENT: "something that happened, worth remembering that it happened",
}

# Decisions and postmortems weigh more at recall: they are the memories that change what an
# agent does next (and, when stale, the ones that do the most harm).
DEFAULT_KIND_WEIGHTS: dict[Kind, float] = {
    Kind.PREFERENCE: 1.0,
    Kind.FACT: 1.0,
    Kind.DECISION: 1.25,
    Kind.PATTERN: 1.0,
    Kind.POSTMORTEM: 1.25,
    Kind.EVENT: 0.9,
}


def parse_kind(value: object) -> Kind:
    """Return the Kind for `value` (case-insensitive), or raise InvalidKind."""
    if isinstance(value, Kind):
        return value
    if isinstance(value, str):
        try:
            return Kind(value.strip().lower())
        except ValueError:
            pass
    allowed = ", ".join(k.value for k in Kind)
    raise InvalidKind(f"unknown kind {str(value)[:40]!r}; a memory kind is one of: {allowed}")
