"""A property-based fuzz of the GraphQL API, generated from its own schema.

For every role (and a scoped reviewer and agent), hypothesis-graphql writes queries and
one-field mutations with arbitrary arguments, NUL bytes included, against a seeded app of each
test's own, in process (its whole HTTP stack, through starlette's TestClient; no socket).
Whatever it sends: no 5xx, no INTERNAL_SERVER_ERROR, and a refused mutation (a UserError
member, or a top-level error) leaves every table exactly as it was.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

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
from tests.graph.support import AppClient

SCHEMA = build_schema((Path(__file__).parents[2] / "graph" / "schema.graphql").read_text())
MUTATIONS = sorted(SCHEMA.mutation_type.fields) if SCHEMA.mutation_type else []
QUERIES = sorted(SCHEMA.query_type.fields) if SCHEMA.query_type else []
ROLES = ["admin", "reviewer", "agent", "scoped_reviewer", "scoped_agent"]
QUERY_EXAMPLES = 40  # per role
MUTATION_EXAMPLES = 8  # per role and mutation field
FUZZ_SETTINGS = settings(deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(HealthCheck))


@pytest.fixture
def fuzzed(app_client: AppClient) -> Iterator[tuple[AppClient, Engine]]:
    """An app with a little of everything in it, and an engine on its database."""
    assert app_client.settings is not None
    for i, ns in enumerate(["workspace:mine", "workspace:other", "persona:default"]):
        made = app_client.ok('mutation($c: String!, $ns: String) { remember(content: $c, '
                             'kind: FACT, namespace: $ns) { ... on Candidate { id } } }',
                             {"c": f"seeded fact {i} uses pnpm", "ns": ns})["remember"]
        if i != 1:
            app_client.ok('mutation($id: ID!) { approveCandidate(id: $id) { __typename } }',
                          {"id": made["id"]}, as_="reviewer")
    engine = make_engine(f"sqlite:///{app_client.settings.data_dir / 'memvet.db'}")
    try:
        yield app_client, engine
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


def _post(api: AppClient, role: str, query: str) -> dict[str, Any]:
    response = api.post(query, as_=role)
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
def test_queries_never_fail_unexpectedly(fuzzed: tuple[AppClient, Engine], role: str) -> None:
    app_client, engine = fuzzed

    @settings(FUZZ_SETTINGS, max_examples=QUERY_EXAMPLES)
    @given(gql_st.queries(SCHEMA, fields=QUERIES))
    def run(query: str) -> None:
        _post(app_client, role, query)

    run()


@pytest.mark.parametrize("role", ROLES)
def test_refused_mutations_write_nothing(fuzzed: tuple[AppClient, Engine], role: str) -> None:
    app_client, engine = fuzzed
    refused = {"count": 0}

    @settings(FUZZ_SETTINGS, max_examples=MUTATION_EXAMPLES * len(MUTATIONS))
    @given(st.data())
    def run(data: st.DataObject) -> None:
        field = data.draw(st.sampled_from(MUTATIONS))
        query = data.draw(gql_st.mutations(SCHEMA, fields=[field], print_ast=_with_typename))
        before = _dump(engine)
        body = _post(app_client, role, str(query))
        if _refused(body, field):
            refused["count"] += 1
            assert _dump(engine) == before, (field, query, body)

    run()
    assert refused["count"] > 0  # the fuzz reached the refusal paths it is checking
