"""The auto-approve policy (SPEC §5): opt-in, off by default, thresholds per kind/namespace."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from memvet.memory.errors import ValidationError
from memvet.memory.kinds import Kind, parse_kind
from memvet.memory.namespaces import Namespace

POLICY_ACTOR = "policy:auto-approve"


@dataclass(frozen=True)
class Threshold:
    min_observations: int
    min_confidence: float

    def __post_init__(self) -> None:
        if not isinstance(self.min_observations, int) or self.min_observations < 1:
            raise ValidationError("min_observations must be an integer of at least 1")
        if not 0.0 <= float(self.min_confidence) <= 1.0:
            raise ValidationError("min_confidence must be between 0 and 1")

    def met(self, observations: int, confidence: float) -> bool:
        return observations >= self.min_observations and confidence >= self.min_confidence


@dataclass(frozen=True)
class AutoApprovePolicy:
    """Promote a pending candidate once it is seen often enough with enough confidence.

    "Often enough" counts independent observations: distinct conversations, and outside any
    conversation one per token, so an agent repeating itself never approves its own proposal.

    Overrides are looked up namespace first, then kind; an override of None for a kind
    or namespace in `excluded_kinds` / `excluded_namespaces` means never auto-approve it.
    """

    enabled: bool = False
    min_observations: int = 3
    min_confidence: float = 0.9
    per_kind: dict[Kind, Threshold] = field(default_factory=dict)
    per_namespace: dict[str, Threshold] = field(default_factory=dict)
    excluded_kinds: frozenset[Kind] = frozenset()
    excluded_namespaces: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        Threshold(self.min_observations, self.min_confidence)  # validates

    def threshold_for(self, kind: Kind, namespace: str) -> Threshold | None:
        if kind in self.excluded_kinds or namespace in self.excluded_namespaces:
            return None
        if namespace in self.per_namespace:
            return self.per_namespace[namespace]
        if kind in self.per_kind:
            return self.per_kind[kind]
        return Threshold(self.min_observations, self.min_confidence)

    def qualifies(self, kind: Kind, namespace: str, observations: int, confidence: float) -> bool:
        if not self.enabled:
            return False
        threshold = self.threshold_for(kind, namespace)
        return threshold is not None and threshold.met(observations, confidence)

    def seen_by(self, sees: Callable[[str], bool]) -> AutoApprovePolicy:
        """The policy as a scoped caller may see it: overrides of other namespaces left out."""
        return replace(
            self,
            per_namespace={ns: t for ns, t in self.per_namespace.items() if sees(ns)},
            excluded_namespaces=frozenset(ns for ns in self.excluded_namespaces if sees(ns)),
        )

    def keeping_hidden(self, current: AutoApprovePolicy,
                       sees: Callable[[str], bool]) -> AutoApprovePolicy:
        """This policy, set by a scoped caller, with `current`'s overrides of the namespaces
        it cannot see kept as they are (it cannot see them, so it cannot have meant them)."""
        return replace(
            self,
            per_namespace={**{ns: t for ns, t in current.per_namespace.items() if not sees(ns)},
                           **{ns: t for ns, t in self.per_namespace.items() if sees(ns)}},
            excluded_namespaces=frozenset(
                {ns for ns in current.excluded_namespaces if not sees(ns)}
                | {ns for ns in self.excluded_namespaces if sees(ns)}),
        )

    def describe(self) -> str:
        """A plain sentence of what the policy will do."""
        if not self.enabled:
            return "Auto-approve is off: every candidate waits for a person."
        text = (
            f"Promote candidates seen in ≥ {self.min_observations} separate conversations "
            f"with confidence ≥ {self.min_confidence:g}"
        )
        extras = [
            f"{k.value}: ≥ {t.min_observations} conversations, ≥ {t.min_confidence:g}"
            for k, t in sorted(self.per_kind.items())
        ] + [
            f"{ns}: ≥ {t.min_observations} conversations, ≥ {t.min_confidence:g}"
            for ns, t in sorted(self.per_namespace.items())
        ]
        if extras:
            text += " (" + "; ".join(extras) + ")"
        never = sorted(k.value for k in self.excluded_kinds) + sorted(self.excluded_namespaces)
        if never:
            text += "; never " + ", ".join(never)
        return text + "."

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "min_observations": self.min_observations,
            "min_confidence": self.min_confidence,
            "per_kind": {k.value: asdict(t) for k, t in sorted(self.per_kind.items())},
            "per_namespace": {ns: asdict(t) for ns, t in sorted(self.per_namespace.items())},
            "excluded_kinds": sorted(k.value for k in self.excluded_kinds),
            "excluded_namespaces": sorted(self.excluded_namespaces),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AutoApprovePolicy:
        try:
            return cls(
                enabled=bool(data.get("enabled", False)),
                min_observations=int(data.get("min_observations", 3)),
                min_confidence=float(data.get("min_confidence", 0.9)),
                per_kind={
                    parse_kind(k): Threshold(int(v["min_observations"]), float(v["min_confidence"]))
                    for k, v in (data.get("per_kind") or {}).items()
                },
                per_namespace={
                    str(Namespace.parse(ns)): Threshold(
                        int(v["min_observations"]), float(v["min_confidence"])
                    )
                    for ns, v in (data.get("per_namespace") or {}).items()
                },
                excluded_kinds=frozenset(parse_kind(k) for k in data.get("excluded_kinds") or []),
                excluded_namespaces=frozenset(
                    str(Namespace.parse(ns)) for ns in data.get("excluded_namespaces") or []
                ),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValidationError(f"invalid auto-approve policy: {exc}") from exc
