"""Pure units of the core: kinds, namespaces, normalisation, the policy, roles."""

from __future__ import annotations

import math

import pytest

from memvet.memory.access import Permission, Principal, Role
from memvet.memory.errors import (
    Forbidden,
    InvalidKind,
    InvalidNamespace,
    MemvetError,
    ValidationError,
)
from memvet.memory.kinds import DEFAULT_KIND_WEIGHTS, Kind, parse_kind
from memvet.memory.limits import MAX_CONTENT_BYTES
from memvet.memory.namespaces import Namespace, resolve_namespace, slugify, validate_slug
from memvet.memory.policy import AutoApprovePolicy, Threshold
from memvet.memory.proposals import clean_confidence, clean_content, content_key, normalize

# --------------------------------------------------------------------------- kinds


def test_exactly_six_kinds() -> None:
    assert [k.value for k in Kind] == [
        "preference", "fact", "decision", "pattern", "postmortem", "event"
    ]
    assert set(DEFAULT_KIND_WEIGHTS) == set(Kind)
    assert DEFAULT_KIND_WEIGHTS[Kind.DECISION] > DEFAULT_KIND_WEIGHTS[Kind.FACT]
    assert DEFAULT_KIND_WEIGHTS[Kind.POSTMORTEM] > DEFAULT_KIND_WEIGHTS[Kind.FACT]


@pytest.mark.parametrize("text", ["fact", "FACT", " Fact ", "fAcT\n"])
def test_parse_kind_is_case_insensitive(text: str) -> None:
    assert parse_kind(text) is Kind.FACT


@pytest.mark.parametrize("ghost", ["insight", "note", "", "facts", "todo", None, 3, "fact!"])
def test_ghost_kind_refused(ghost: object) -> None:
    with pytest.raises(InvalidKind) as err:
        parse_kind(ghost)
    assert err.value.code == "INVALID_KIND"
    assert "preference" in err.value.message  # the message lists the six


def test_error_codes_are_stable() -> None:
    from memvet.memory import errors

    codes = {cls.__name__: cls.code for cls in vars(errors).values()
             if isinstance(cls, type) and issubclass(cls, MemvetError)}
    assert codes == {
        "MemvetError": "ERROR", "NotFound": "NOT_FOUND", "Forbidden": "FORBIDDEN",
        "InvalidKind": "INVALID_KIND", "InvalidNamespace": "INVALID_NAMESPACE",
        "InvalidTransition": "INVALID_TRANSITION", "ValidationError": "VALIDATION",
        "Unauthenticated": "UNAUTHENTICATED", "DataDirLocked": "DATA_DIR_LOCKED",
        "ConfigurationError": "CONFIGURATION",
    }


# --------------------------------------------------------------------------- namespaces


@pytest.mark.parametrize(
    "text",
    ["persona:alex", "workspace:shop-api", "workspace:a", "workspace:org/repo.v2_x",
     "persona:" + "a" * 128, " workspace:shop "],
)
def test_namespace_accepts(text: str) -> None:
    ns = Namespace.parse(text)
    assert str(ns) == text.strip()
    assert Namespace.parse(ns) is ns


@pytest.mark.parametrize(
    "text",
    [
        "team:x", "Workspace:shop", "workspace", "shop", ":shop", "",
        "workspace:", "persona:" + "a" * 129, "workspace:Shop", "workspace:shop api",
        "workspace:a:b", "workspace:shop\napi", "workspace:caf\u00e9", "workspace:shop!",
        "persona:\u0430lex",
    ],
)
def test_namespace_refuses(text: str) -> None:
    with pytest.raises(InvalidNamespace) as err:
        Namespace.parse(text)
    assert err.value.code == "INVALID_NAMESPACE"


@pytest.mark.parametrize("bad", [None, 7, b"workspace:x"])
def test_namespace_refuses_non_text(bad: object) -> None:
    with pytest.raises(InvalidNamespace):
        Namespace.parse(bad)


@pytest.mark.parametrize("slug", ["shop\n", "a" * 128 + "\n", "x\n"])
def test_slug_with_trailing_newline_refused(slug: str) -> None:
    """`$` in a regex matches before a final newline; a slug must not sneak one in."""
    with pytest.raises(InvalidNamespace):
        validate_slug(slug)
    with pytest.raises(InvalidNamespace):
        Namespace.workspace(slug)
    with pytest.raises(InvalidNamespace):
        Namespace.persona(slug)


def test_slug_length_bounds() -> None:
    assert validate_slug("a" * 128) == "a" * 128
    with pytest.raises(InvalidNamespace):
        validate_slug("a" * 129)
    with pytest.raises(InvalidNamespace):
        validate_slug("")


def test_active_persona_is_the_default() -> None:
    assert resolve_namespace(None, "alex") == "persona:alex"
    assert resolve_namespace("  ", "alex") == "persona:alex"
    assert resolve_namespace("workspace:shop", "alex") == "workspace:shop"
    with pytest.raises(InvalidNamespace):
        resolve_namespace("shop", "alex")


def test_slugify() -> None:
    assert slugify("My Project!") == "my-project"
    assert slugify("!!!") == "default"
    assert len(slugify("x" * 300)) == 128
    validate_slug(slugify("Ünïcödé Näme / v2"))


# --------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    "variant",
    ["Use pnpm, not npm", "use PNPM, not NPM.", "  use   pnpm,\tnot npm!!", "\"Use pnpm, not npm\"",
     "Use pnpm, not npm?", "ｕｓｅ pnpm, not npm"],
)
def test_equivalent_texts_share_a_key(variant: str) -> None:
    assert content_key(variant) == content_key("use pnpm, not npm")
    assert normalize(variant) == "use pnpm, not npm"


def test_different_texts_differ() -> None:
    assert content_key("use pnpm") != content_key("use npm")
    assert content_key("use pnpm, not npm") != content_key("use pnpm not npm")


def test_clean_content_bounds() -> None:
    assert clean_content("  x  ") == "x"
    assert clean_content("a" * MAX_CONTENT_BYTES) == "a" * MAX_CONTENT_BYTES
    for bad in ["", "   ", "\x00", None, 5]:
        with pytest.raises(ValidationError):
            clean_content(bad)
    with pytest.raises(ValidationError):
        clean_content("a" * (MAX_CONTENT_BYTES + 1))
    with pytest.raises(ValidationError):  # bytes, not characters, count
        clean_content("é" * (MAX_CONTENT_BYTES // 2 + 1))


def test_clean_confidence_bounds() -> None:
    assert clean_confidence(0) == 0.0
    assert clean_confidence(1) == 1.0
    assert clean_confidence("0.5") == 0.5
    for bad in [-0.01, 1.01, math.nan, math.inf, -math.inf, "high", None]:
        with pytest.raises(ValidationError):
            clean_confidence(bad)


# --------------------------------------------------------------------------- policy


def test_policy_off_by_default() -> None:
    policy = AutoApprovePolicy()
    assert policy.enabled is False
    assert not policy.qualifies(Kind.FACT, "workspace:x", 100, 1.0)
    assert "off" in policy.describe()


def test_policy_thresholds_and_overrides() -> None:
    policy = AutoApprovePolicy(
        enabled=True, min_observations=3, min_confidence=0.8,
        per_kind={Kind.DECISION: Threshold(5, 0.95)},
        per_namespace={"workspace:trusted": Threshold(1, 0.5)},
        excluded_kinds=frozenset({Kind.POSTMORTEM}),
        excluded_namespaces=frozenset({"workspace:never"}),
    )
    assert policy.qualifies(Kind.FACT, "workspace:x", 3, 0.8)
    assert not policy.qualifies(Kind.FACT, "workspace:x", 2, 1.0)
    assert not policy.qualifies(Kind.FACT, "workspace:x", 9, 0.79)
    assert not policy.qualifies(Kind.DECISION, "workspace:x", 4, 1.0)
    assert policy.qualifies(Kind.DECISION, "workspace:x", 5, 0.95)
    # the namespace override wins over the kind override
    assert policy.qualifies(Kind.DECISION, "workspace:trusted", 1, 0.5)
    assert not policy.qualifies(Kind.POSTMORTEM, "workspace:trusted", 100, 1.0)
    assert not policy.qualifies(Kind.FACT, "workspace:never", 100, 1.0)
    text = policy.describe()
    assert "decision" in text and "workspace:trusted" in text and "never" in text


def test_policy_json_round_trip() -> None:
    policy = AutoApprovePolicy(
        enabled=True, min_observations=2, min_confidence=0.7,
        per_kind={Kind.FACT: Threshold(4, 0.9)},
        per_namespace={"persona:alex": Threshold(1, 0.1)},
        excluded_kinds=frozenset({Kind.EVENT}),
        excluded_namespaces=frozenset({"workspace:x"}),
    )
    assert AutoApprovePolicy.from_json(policy.to_json()) == policy
    assert AutoApprovePolicy.from_json({}) == AutoApprovePolicy()


@pytest.mark.parametrize(
    "data",
    [
        {"min_observations": 0},
        {"min_confidence": 1.5},
        {"min_confidence": "nan"},
        {"per_kind": {"ghost": {"min_observations": 1, "min_confidence": 0.5}}},
        {"per_kind": {"fact": {"min_observations": 1}}},
        {"per_namespace": {"team:x": {"min_observations": 1, "min_confidence": 0.5}}},
        {"excluded_kinds": ["insight"]},
        {"min_observations": "many"},
    ],
)
def test_policy_bad_json(data: dict[str, object]) -> None:
    with pytest.raises(MemvetError):
        AutoApprovePolicy.from_json(data)


# --------------------------------------------------------------------------- roles


def test_roles() -> None:
    agent = Principal("a", "a", Role.AGENT)
    reviewer = Principal("r", "r", Role.REVIEWER)
    admin = Principal.system()
    assert agent.can(Permission.SUBMIT) and agent.can(Permission.RECALL)
    assert not agent.can(Permission.REVIEW) and not agent.can(Permission.ADMIN)
    assert reviewer.can(Permission.REVIEW) and not reviewer.can(Permission.ADMIN)
    assert all(admin.can(p) for p in Permission)
    with pytest.raises(Forbidden):
        agent.require(Permission.REVIEW)
    scoped = Principal("s", "s", Role.REVIEWER, frozenset({"workspace:a"}))
    assert scoped.sees("workspace:a") and not scoped.sees("workspace:b")
    assert scoped.visible(None) == ["workspace:a"]
    with pytest.raises(Forbidden):
        scoped.visible(["workspace:b"])
    assert admin.actor == "admin:system"
