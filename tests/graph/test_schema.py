"""The schema as an artifact: committed SDL, enums in step with the core, documented fields."""

from __future__ import annotations

from pathlib import Path

from graphql import GraphQLEnumType, GraphQLInputObjectType, GraphQLInterfaceType, GraphQLObjectType

from memvet.graph.enums import MIRRORS
from memvet.graph.schema import build_schema, print_sdl

COMMITTED = Path(__file__).resolve().parents[2] / "graph" / "schema.graphql"


def test_committed_schema_matches_the_code() -> None:
    assert COMMITTED.read_text() == print_sdl(), (
        "graph/schema.graphql is stale: regenerate it with `memvet schema > graph/schema.graphql`"
    )


def test_enums_mirror_the_core_value_for_value() -> None:
    for ours, core in MIRRORS:
        assert {m.value for m in ours} == {m.value for m in core}, ours.__name__
        assert {m.name for m in ours} == {m.name for m in core}, ours.__name__


def test_contract_names_exist() -> None:
    schema = build_schema()._schema
    query = schema.query_type
    mutation = schema.mutation_type
    subscription = schema.subscription_type
    assert query and mutation and subscription
    for name in ["candidates", "memories", "candidate", "memory", "memoryGroups", "recall",
                 "turn", "policy", "activePersona", "queueStats", "transitions", "namespaces",
                 "archiveDays", "related", "tokens", "viewer"]:
        assert name in query.fields, name
    for name in ["remember", "addCandidate", "approveCandidate", "rejectCandidate",
                 "editCandidate", "updateMemory", "deleteMemory", "setAutoApprovePolicy",
                 "setActivePersona", "archiveStale", "submitTurn", "submitCompaction",
                 "setArchiveDays", "approveCandidates", "rejectCandidates", "createToken",
                 "revokeToken"]:
        assert name in mutation.fields, name
    assert "reviewEvents" in subscription.fields
    assert set(query.fields["candidates"].args) >= {
        "status", "namespace", "kind", "source", "first", "after"}
    assert set(query.fields["memories"].args) >= {"namespace", "kind", "first", "after"}
    assert set(query.fields["recall"].args) >= {"query", "namespace", "namespaces", "kinds",
                                                "limit"}
    assert set(mutation.fields["remember"].args) >= {"content", "kind", "namespace",
                                                     "confidence"}
    assert set(mutation.fields["approveCandidate"].args) >= {"id", "edit", "supersede"}
    kinds = schema.type_map["MemoryKind"]
    assert isinstance(kinds, GraphQLEnumType)
    assert set(kinds.values) == {"PREFERENCE", "FACT", "DECISION", "PATTERN", "POSTMORTEM",
                                 "EVENT"}
    user_error = schema.type_map["UserError"]
    assert isinstance(user_error, GraphQLInterfaceType)
    for name in ["NotFoundError", "ForbiddenError", "InvalidKindError", "InvalidNamespaceError",
                 "InvalidTransitionError", "ValidationError"]:
        t = schema.type_map[name]
        assert isinstance(t, GraphQLObjectType) and user_error in t.interfaces
    candidate = schema.type_map["Candidate"]
    assert isinstance(candidate, GraphQLObjectType)
    assert set(candidate.fields) >= {
        "id", "content", "kind", "namespace", "source", "confidence", "observations", "status",
        "createdAt", "lastObservedAt", "origin", "transitions", "origins", "memory", "related"}
    memory = schema.type_map["Memory"]
    assert isinstance(memory, GraphQLObjectType)
    assert set(memory.fields) >= {"id", "content", "kind", "namespace", "observations",
                                  "approvedAt", "approvedBy", "candidate"}
    hit = schema.type_map["RecallHit"]
    assert isinstance(hit, GraphQLObjectType)
    assert set(hit.fields) >= {"memory", "score", "dense", "lexical", "fused", "kindWeight"}
    edit = schema.type_map["CandidateEdit"]
    assert isinstance(edit, GraphQLInputObjectType)
    assert set(edit.fields) == {"content", "kind", "namespace"}


def test_every_public_field_and_type_has_a_description() -> None:
    schema = build_schema()._schema
    missing = []
    for name, t in schema.type_map.items():
        if name.startswith("__") or name in {"String", "Int", "Float", "Boolean", "ID"}:
            continue
        if isinstance(t, (GraphQLObjectType, GraphQLInterfaceType, GraphQLInputObjectType)):
            if name not in {"Query", "Mutation", "Subscription"} and not t.description:
                missing.append(name)
            for fname, f in t.fields.items():
                if not f.description:
                    missing.append(f"{name}.{fname}")
                for aname, arg in getattr(f, "args", {}).items():
                    if not arg.description:
                        missing.append(f"{name}.{fname}({aname})")
        elif isinstance(t, GraphQLEnumType):
            if not t.description:
                missing.append(name)
            missing.extend(f"{name}.{v}" for v, ev in t.values.items() if not ev.description)
    assert not missing, missing


def test_memvet_schema_command_prints_the_sdl(capsys: object) -> None:
    from memvet.api.cli import main

    assert main(["schema"]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert out == print_sdl()
