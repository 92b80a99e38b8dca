"""Limits and bad input: clear errors with codes, never a 500.

The limits on queries, variables and batches are checked against an app of each test's own, in
process (`app_client`); the request body limit and malformed HTTP requests against the real
server (`server`), as they are about what reaches it over the wire."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import httpx

from tests.graph.support import REMEMBER, AppClient, Response, Server


@contextlib.contextmanager
def _http(api: AppClient | Server) -> Iterator[Any]:
    """The in-process app's TestClient, or an HTTP client for the real server."""
    if isinstance(api, AppClient):
        yield api.client
        return
    with httpx.Client(trust_env=False, timeout=30) as client:
        yield client


def raw(api: AppClient | Server, body: Any, *, token: str | None = None,
        content: bytes | None = None, method: str = "POST",
        params: dict[str, str] | None = None) -> Response:
    headers = {"Authorization": f"Bearer {token or api.tokens['admin']}",
               "Content-Type": "application/json"}
    with _http(api) as client:
        response: Response
        if method == "GET":
            response = client.get(api.graphql_url, params=params, headers=headers)
        else:
            data = content if content is not None else json.dumps(body).encode()
            response = client.post(api.graphql_url, content=data, headers=headers)
        return response


def codes(response: Response) -> list[str]:
    assert response.status_code < 500, response.text
    body = response.json()
    items = body if isinstance(body, list) else [body]
    return [e["extensions"]["code"] for item in items for e in item.get("errors") or []]


def test_malformed_queries_and_unknown_fields(app_client: AppClient) -> None:
    r = raw(app_client, {"query": "{ viewer { name "})
    assert r.status_code == 200 and codes(r) == ["GRAPHQL_PARSE_FAILED"]
    r = raw(app_client, {"query": "{ viewer { password } }"})
    assert codes(r) == ["GRAPHQL_VALIDATION_FAILED"]
    assert "password" in r.json()["errors"][0]["message"]


def test_unknown_enum_values_are_validation_errors(app_client: AppClient) -> None:
    r = raw(app_client,
            {"query": 'mutation { remember(content: "x", kind: SEVENTH) { __typename } }'})
    assert r.status_code == 200 and codes(r) == ["GRAPHQL_VALIDATION_FAILED"]
    for kind in ("SEVENTH", "fact", "", 3):
        r = raw(app_client, {"query": REMEMBER, "variables": {"content": "x", "kind": kind}})
        assert r.status_code == 200 and codes(r) == ["BAD_USER_INPUT"], kind
        assert r.json()["data"] is None
    r = raw(app_client, {"query": '{ candidates(status: MAYBE) { totalCount } }'})
    assert codes(r) == ["GRAPHQL_VALIDATION_FAILED"]


def test_wrong_variable_types(app_client: AppClient) -> None:
    query = "query($first: Int!) { candidates(first: $first) { totalCount } }"
    for value in ("ten", 1.5, None, [1], {"a": 1}, 2**40):
        r = raw(app_client, {"query": query, "variables": {"first": value}})
        assert r.status_code == 200 and codes(r) == ["BAD_USER_INPUT"], value
    r = raw(app_client, {"query": query})
    assert codes(r) == ["BAD_USER_INPUT"]
    r = raw(app_client, {"query": "query($id: ID!) { candidate(id: $id) { id } }",
                         "variables": {"id": {"$gt": ""}}})
    assert codes(r) == ["BAD_USER_INPUT"]


def test_deep_nesting_is_refused(app_client: AppClient) -> None:
    inner = "id"
    for _ in range(10):
        inner = f"memory {{ candidate {{ {inner} }} }}"
    r = raw(app_client, {"query": f"{{ candidates {{ nodes {{ {inner} }} }} }}"})
    assert r.status_code == 200 and codes(r) == ["GRAPHQL_VALIDATION_FAILED"]
    assert "depth" in r.json()["errors"][0]["message"]
    # Fragments don't get around it.
    r = raw(app_client, {"query": "query { candidates { nodes { ...A } } } fragment A on Candidate "
                                  f"{{ {inner} }}"})
    assert codes(r) == ["GRAPHQL_VALIDATION_FAILED"]


def test_document_size_and_alias_limits(app_client: AppClient) -> None:
    many = " ".join(f"a{i}: viewer {{ name }}" for i in range(40))
    r = raw(app_client, {"query": f"{{ {many} }}"})
    assert codes(r) == ["GRAPHQL_VALIDATION_FAILED"] * len(r.json()["errors"])
    assert "aliases" in r.json()["errors"][0]["message"]
    fields = " ".join(["name"] * 3000)
    r = raw(app_client, {"query": f"{{ viewer {{ {fields} }} }}"})
    assert r.status_code == 200 and codes(r) == ["GRAPHQL_PARSE_FAILED"]
    assert "token" in r.json()["errors"][0]["message"].lower()


def test_huge_strings_and_out_of_range_numbers(app_client: AppClient) -> None:
    big = "x" * 20_000
    r = raw(app_client, {"query": f'mutation {{ remember(content: "{big}", kind: FACT) '
                                  "{ __typename ... on UserError { code message } } }"})
    result = r.json()["data"]["remember"]
    assert result["__typename"] == "ValidationError" and "KB" in result["message"]
    for variables in ({"q": "q" * 5000}, {"q": "pnpm", "limit": 0}, {"q": "pnpm", "limit": 1000},
                      {"q": "   "}):
        r = raw(app_client, {"query": "query($q: String!, $limit: Int) { recall(query: $q, "
                                      "limit: $limit) { score } }", "variables": variables})
        assert codes(r) == ["VALIDATION"], variables
    r = raw(app_client, {"query": "mutation { approveCandidate(id: \"x\", reason: \"%s\") "
                                  "{ __typename } }" % ("r" * 3000)})
    assert r.json()["data"]["approveCandidate"]["__typename"] in {"ValidationError",
                                                                  "NotFoundError"}
    r = raw(app_client, {"query": "mutation { rejectCandidate(id: \"x\", reason: \"%s\") "
                                  "{ __typename } }" % ("r" * 3000)})
    assert r.json()["data"]["rejectCandidate"]["__typename"] == "ValidationError"
    r = raw(app_client, {"query": "mutation { archiveStale(olderThanDays: -1) { __typename } }"})
    assert r.json()["data"]["archiveStale"]["__typename"] == "ValidationError"


def test_request_body_limit(server: Server) -> None:
    body = json.dumps({"query": "{ viewer { name } }", "variables": {"pad": "x" * 3_000_000}})
    r = raw(server, None, content=body.encode())
    assert r.status_code == 413
    assert r.json()["errors"][0]["extensions"]["code"] == "VALIDATION"


def test_transport_errors_are_json_4xx(server: Server) -> None:
    r = raw(server, None, content=b"{not json")
    assert r.status_code == 400 and codes(r) == ["BAD_REQUEST"]
    r = raw(server, {"variables": {}})
    assert r.status_code == 400 and codes(r) == ["BAD_REQUEST"]
    r = raw(server, {"query": "{ viewer { name } }", "variables": "nope"})
    assert r.status_code == 400 and codes(r) == ["BAD_REQUEST"]
    r = raw(server, None, method="GET",
            params={"query": 'mutation { setArchiveDays(days: 30) { __typename } }'})
    assert r.status_code in {400, 405} and codes(r) == ["BAD_REQUEST"]
    r = raw(server, None, method="GET", params={"query": "{ viewer { role } }"})
    assert r.status_code == 200 and r.json()["data"]["viewer"]["role"] == "ADMIN"


def test_batching_is_bounded(app_client: AppClient) -> None:
    ops = [{"query": "{ viewer { name } }"}, {"query": "{ archiveDays }"},
           {"query": "{ nope }"}]
    r = raw(app_client, ops)
    assert r.status_code == 200
    body = r.json()
    assert body[0]["data"]["viewer"]["name"] == "admin"
    assert isinstance(body[1]["data"]["archiveDays"], int)
    assert body[2]["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    r = raw(app_client, [{"query": "{ viewer { name } }"}] * 11)
    assert r.status_code == 400 and codes(r) == ["BAD_REQUEST"]
    r = raw(app_client, [])
    assert r.status_code < 500
