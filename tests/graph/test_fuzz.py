"""A property-based fuzz of the GraphQL API, generated from its own schema.

For every role (and a scoped reviewer and agent), hypothesis-graphql writes queries and
one-field mutations with arbitrary arguments, NUL bytes included, against a real server over
HTTP. Whatever it sends: no 5xx, no INTERNAL_SERVER_ERROR, and a refused mutation (a UserError
member, or a top-level error) leaves every table exactly as it was.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import (
    DocumentNode,
    FieldNode,
    NameNode,
    OperationDefinitionNode,
    SelectionSetNode,
    build_schema,
    print_ast,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_graphql import strategies as gql_st
from sqlalchemy import select
from sqlalchemy.engine import Engine

from memvet.memory.store import tables
from memvet.memory.store.engine import make_engine
from tests.graph.support import Server, run_server, settings_for

SCHEMA = build_schema((Path(__file__).parents[2] / "graph" / "schema.graphql").read_text())
MUTATIONS = sorted(SCHEMA.mutation_type.fields) if SCHEMA.mutation_type else []
QUERIES = sorted(SCHEMA.query_type.fields) if SCHEMA.query_type else []
ROLES = ["admin", "reviewer", "agent", "scoped_reviewer", "scoped_agent"]
QUERY_EXAMPLES = 40  # per role
MUTATION_EXAMPLES = 8  # per role and mutation field
FUZZ_SETTINGS = settings(deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Engine]]:
    """A server with a little of everything in it, and an engine on its database."""
    data = tmp_path_factory.mktemp("fuzz")
    with run_server(settings_for(data)) as server:
        for i, ns in enumerate(["workspace:mine", "workspace:other", "persona:default"]):
            made = server.ok('mutation($c: String!, $ns: String) { remember(content: $c, '
                             'kind: FACT, namespace: $ns) { ... on Candidate { id } } }',
                             {"c": f"seeded fact {i} uses pnpm", "ns": ns})["remember"]
            if i != 1:
                server.ok('mutation($id: ID!) { approveCandidate(id: $id) { __typename } }',
                          {"id": made["id"]}, as_="reviewer")
        engine = make_engine(f"sqlite:///{data / 'memvet.db'}")
        try:
            yield server, engine
        finally:
            engine.dispose()


def _dump(engine: Engine) -> str:
    out = {}
    with engine.connect() as conn:
        for table in tables.metadata.sorted_tables:
            out[table.name] = sorted(repr(tuple(r)) for r in conn.execute(select(table)))
    return json.dumps(out)


def _with_typename(document: DocumentNode) -> str:
    """Select `__typename` on the root field too, so a refusal is recognisable."""
    op = document.definitions[0]
    assert isinstance(op, OperationDefinitionNode)
    root = op.selection_set.selections[0]
    if not isinstance(root, FieldNode) or root.selection_set is None:
        return print_ast(document)
    typename = FieldNode(name=NameNode(value="__typename"), arguments=(), directives=())
    root = replace(root, selection_set=SelectionSetNode(
        selections=(*root.selection_set.selections, typename)))
    op = replace(op, selection_set=SelectionSetNode(selections=(root,)))
    return print_ast(DocumentNode(definitions=(op,)))


def _post(server: Server, role: str, query: str) -> dict[str, Any]:
    with httpx.Client(trust_env=False, timeout=60) as client:
        response = client.post(server.graphql_url, json={"query": query},
                               headers={"Authorization": f"Bearer {server.tokens[role]}"})
    assert response.status_code < 500, (query, response.text)
    body: dict[str, Any] = response.json()
    codes = [e.get("extensions", {}).get("code") for e in body.get("errors") or []]
    assert "INTERNAL_SERVER_ERROR" not in codes, (query, body)
    assert "Unexpected error." not in json.dumps(body), (query, body)
    return body


def _refused(body: dict[str, Any], field: str) -> bool:
    data = body.get("data")
    if data is None or data.get(field) is None:
        return bool(body.get("errors"))
    value = data[field]
    return isinstance(value, dict) and str(value.get("__typename", "")).endswith("Error")


@pytest.mark.parametrize("role", ROLES)
def test_queries_never_fail_unexpectedly(fuzzed: tuple[Server, Engine], role: str) -> None:
    server, engine = fuzzed

    @settings(FUZZ_SETTINGS, max_examples=QUERY_EXAMPLES)
    @given(gql_st.queries(SCHEMA, fields=QUERIES))
    def run(query: str) -> None:
        _post(server, role, query)

    run()


@pytest.mark.parametrize("role", ROLES)
def test_refused_mutations_write_nothing(fuzzed: tuple[Server, Engine], role: str) -> None:
    server, engine = fuzzed
    refused = {"count": 0}

    @settings(FUZZ_SETTINGS, max_examples=MUTATION_EXAMPLES * len(MUTATIONS))
    @given(st.data())
    def run(data: st.DataObject) -> None:
        field = data.draw(st.sampled_from(MUTATIONS))
        query = data.draw(gql_st.mutations(SCHEMA, fields=[field], print_ast=_with_typename))
        before = _dump(engine)
        body = _post(server, role, str(query))
        if _refused(body, field):
            refused["count"] += 1
            assert _dump(engine) == before, (field, query, body)

    run()
    assert refused["count"] > 0  # the fuzz reached the refusal paths it is checking
