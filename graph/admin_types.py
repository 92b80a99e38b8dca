"""GraphQL types for settings and administration: policy, tokens, queue stats, the viewer."""

from __future__ import annotations

from datetime import datetime

import strawberry

from memvet.graph.enums import MemoryKind, TokenRole
from memvet.memory import records
from memvet.memory.access import Principal
from memvet.memory.policy import AutoApprovePolicy as CorePolicy
from memvet.memory.store.tokens import TokenInfo


@strawberry.type(description="Auto-approve thresholds for one kind.")
class KindThreshold:
    kind: MemoryKind = strawberry.field(description="The kind they apply to.")
    min_observations: int = strawberry.field(description="Observations needed (≥ 1).")
    min_confidence: float = strawberry.field(description="Confidence needed (0–1).")


@strawberry.type(description="Auto-approve thresholds for one namespace.")
class NamespaceThreshold:
    namespace: str = strawberry.field(description="The namespace they apply to.")
    min_observations: int = strawberry.field(description="Observations needed (≥ 1).")
    min_confidence: float = strawberry.field(description="Confidence needed (0–1).")


@strawberry.type(description="The auto-approve policy (SPEC §5): opt-in, off by default.")
class AutoApprovePolicy:
    enabled: bool = strawberry.field(description="Whether candidates are promoted without a click.")
    min_observations: int = strawberry.field(description="Default observations needed.")
    min_confidence: float = strawberry.field(description="Default confidence needed.")
    per_kind: list[KindThreshold] = strawberry.field(
        description="Overrides per kind (a namespace override wins over a kind override).")
    per_namespace: list[NamespaceThreshold] = strawberry.field(
        description="Overrides per namespace.")
    excluded_kinds: list[MemoryKind] = strawberry.field(
        description="Kinds that are never auto-approved.")
    excluded_namespaces: list[str] = strawberry.field(
        description="Namespaces that are never auto-approved.")
    description: str = strawberry.field(description="What the policy will do, in one sentence.")

    @classmethod
    def of(cls, p: CorePolicy) -> AutoApprovePolicy:
        return cls(
            enabled=p.enabled, min_observations=p.min_observations,
            min_confidence=p.min_confidence,
            per_kind=[KindThreshold(kind=MemoryKind(k.value), min_observations=t.min_observations,
                                    min_confidence=t.min_confidence)
                      for k, t in sorted(p.per_kind.items())],
            per_namespace=[NamespaceThreshold(namespace=ns, min_observations=t.min_observations,
                                              min_confidence=t.min_confidence)
                           for ns, t in sorted(p.per_namespace.items())],
            excluded_kinds=[MemoryKind(k.value) for k in sorted(p.excluded_kinds)],
            excluded_namespaces=sorted(p.excluded_namespaces),
            description=p.describe(),
        )


@strawberry.input(description="Auto-approve thresholds for one kind.")
class KindThresholdInput:
    kind: MemoryKind = strawberry.field(description="The kind they apply to.")
    min_observations: int = strawberry.field(description="Observations needed (≥ 1).")
    min_confidence: float = strawberry.field(description="Confidence needed (0–1).")


@strawberry.input(description="Auto-approve thresholds for one namespace.")
class NamespaceThresholdInput:
    namespace: str = strawberry.field(description="The namespace they apply to.")
    min_observations: int = strawberry.field(description="Observations needed (≥ 1).")
    min_confidence: float = strawberry.field(description="Confidence needed (0–1).")


@strawberry.input(description="A whole auto-approve policy (it replaces the current one).")
class AutoApprovePolicyInput:
    enabled: bool = strawberry.field(description="Turn auto-approve on or off.")
    min_observations: int = strawberry.field(default=3, description="Default observations needed.")
    min_confidence: float = strawberry.field(default=0.9, description="Default confidence needed.")
    per_kind: list[KindThresholdInput] | None = strawberry.field(
        default=None, description="Overrides per kind.")
    per_namespace: list[NamespaceThresholdInput] | None = strawberry.field(
        default=None, description="Overrides per namespace.")
    excluded_kinds: list[MemoryKind] | None = strawberry.field(
        default=None, description="Kinds never auto-approved.")
    excluded_namespaces: list[str] | None = strawberry.field(
        default=None, description="Namespaces never auto-approved.")

    def core(self) -> CorePolicy:
        """The core policy (raises the core's ValidationError/InvalidNamespace on bad values)."""
        return CorePolicy.from_json({
            "enabled": self.enabled,
            "min_observations": self.min_observations,
            "min_confidence": self.min_confidence,
            "per_kind": {t.kind.value: {"min_observations": t.min_observations,
                                        "min_confidence": t.min_confidence}
                         for t in self.per_kind or []},
            "per_namespace": {t.namespace: {"min_observations": t.min_observations,
                                            "min_confidence": t.min_confidence}
                              for t in self.per_namespace or []},
            "excluded_kinds": [k.value for k in self.excluded_kinds or []],
            "excluded_namespaces": list(self.excluded_namespaces or []),
        })


@strawberry.type(description="Pending candidates in one namespace.")
class NamespaceCount:
    namespace: str = strawberry.field(description="The namespace.")
    count: int = strawberry.field(description="How many are pending there.")


@strawberry.type(description="Queue counts over the namespaces the caller sees.")
class QueueStats:
    pending: int = strawberry.field(description="Candidates waiting for review.")
    approved: int = strawberry.field(description="Approved candidates.")
    rejected: int = strawberry.field(description="Rejected candidates.")
    archived: int = strawberry.field(description="Archived candidates.")
    memories: int = strawberry.field(description="Recallable memories.")
    pending_by_namespace: list[NamespaceCount] = strawberry.field(
        description="Pending candidates per namespace.")
    extraction_backlog: int = strawberry.field(
        description="Turns waiting for background extraction in this server process.")

    @classmethod
    def of(cls, s: records.QueueStats) -> QueueStats:
        return cls(
            pending=s.pending, approved=s.approved, rejected=s.rejected, archived=s.archived,
            memories=s.memories,
            pending_by_namespace=[NamespaceCount(namespace=ns, count=n)
                                  for ns, n in sorted(s.pending_by_namespace.items())],
            extraction_backlog=s.extraction_backlog,
        )


@strawberry.type(description="An API token (never its secret).")
class ApiToken:
    id: strawberry.ID = strawberry.field(description="The token's id (for revokeToken).")
    name: str = strawberry.field(description="Its label.")
    role: TokenRole = strawberry.field(description="What it may do.")
    namespaces: list[str] | None = strawberry.field(
        description="The namespaces it is limited to; null means all.")
    created_at: datetime = strawberry.field(description="When it was created.")
    revoked_at: datetime | None = strawberry.field(description="When it was revoked, if it was.")

    @classmethod
    def of(cls, t: TokenInfo) -> ApiToken:
        return cls(id=strawberry.ID(t.id), name=t.name, role=TokenRole(t.role.value),
                   namespaces=list(t.namespaces) if t.namespaces is not None else None,
                   created_at=t.created_at, revoked_at=t.revoked_at)


@strawberry.type(description="A new token. The plaintext is shown this once and never again.")
class CreatedToken:
    token: str = strawberry.field(description="The secret: send it as `Authorization: Bearer`.")
    info: ApiToken = strawberry.field(description="The stored token.")


@strawberry.type(description="Who the caller is.")
class Viewer:
    name: str = strawberry.field(description="The token's label.")
    role: TokenRole = strawberry.field(description="The token's role.")
    namespaces: list[str] | None = strawberry.field(
        description="The namespaces it is limited to; null means all.")

    @classmethod
    def of(cls, p: Principal) -> Viewer:
        return cls(name=p.name, role=TokenRole(p.role.value),
                   namespaces=sorted(p.namespaces) if p.namespaces is not None else None)

