"""The HTTP edge (red-team regressions): bad bodies are 400s, bad strings are VALIDATION, the
security headers are on every response, and /graphql refuses foreign Host and Origin names."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.graph.support import Server, run_server, settings_for

U = "__typename ... on UserError { code message }"


def _raw(server: Server, body: bytes, **headers: str) -> httpx.Response:
    with httpx.Client(trust_env=False, timeout=30) as client:
        return client.post(server.graphql_url, content=body, headers={
            "Authorization": f"Bearer {server.tokens['admin']}",
            "Content-Type": "application/json", **headers})


@pytest.mark.parametrize("body", [
    b"42", b"null", b'"s"', b"[1]", b"[[]]", b"[]", b"true", b"{", b"\xff\xfe{}",
    b'{"query": "\xc3("}', b"[" * 100_000 + b"]" * 100_000,
    b'{"query": "{ viewer { name } }", "variables": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
], ids=["number", "null", "string", "list", "nested-list", "empty-list", "bool", "truncated",
        "utf16-bom", "invalid-utf8", "deep", "deep-variables"])
def test_a_body_that_is_not_a_json_object_is_a_400(server: Server, body: bytes) -> None:
    response = _raw(server, body)
    assert response.status_code == 400, response.text
    error = response.json()["errors"][0]
    assert error["extensions"]["code"] == "BAD_REQUEST" and error["message"]


def _gql(server: Server, query: str, variables: dict[str, Any] | None = None,
         as_: str = "admin") -> dict[str, Any]:
    """POST with the JSON escaped to ASCII, as a client sends a lone surrogate (`\\ud800`)."""
    body = json.dumps({"query": query, "variables": variables or {}}, ensure_ascii=True)
    response = _raw(server, body.encode(), Authorization=f"Bearer {server.tokens[as_]}")
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def _codes(body: dict[str, Any]) -> list[str]:
    found = [e["extensions"]["code"] for e in body.get("errors") or []]
    for value in (body.get("data") or {}).values():
        if isinstance(value, dict) and "code" in value:
            found.append(value["code"])
    return found


SURROGATE = "\ud800"
# Free text: a lone surrogate is refused; a NUL byte is dropped (the text is still usable).
FREE_TEXT = [
    ('mutation($s: String!) { remember(content: $s, kind: FACT) { %s } }', {}),
    ('mutation($s: String!) { addCandidate(content: $s, kind: FACT) { %s } }', {}),
]
# Ids and names: either is refused.
IDS_AND_NAMES = [
    ('mutation($s: String!) { remember(content: "x", kind: FACT, namespace: $s) { %s } }', {}),
    ('mutation($s: ID!) { approveCandidate(id: $s) { %s } }', {}),
    ('mutation($s: ID!) { rejectCandidate(id: $s, reason: "no") { %s } }', {}),
    ('mutation($s: ID!) { editCandidate(id: $s, edit: {content: "x"}) { %s } }', {}),
    ('mutation($s: ID!) { updateMemory(id: $s, edit: {content: "x"}) { %s } }', {}),
    ('mutation($s: ID!) { deleteMemory(id: $s) { %s } }', {}),
    ('mutation($s: String!) { createToken(role: AGENT, name: $s) { %s } }', {}),
    ('mutation($s: ID!) { revokeToken(id: $s) { %s } }', {}),
    ('mutation($s: String!) { setActivePersona(name: $s) { %s } }', {}),
    ('mutation($s: String!) { submitTurn(input: {conversationId: $s, turnId: "1", '
     'messages: [{role: "user", content: "hi there friend"}]}) { %s } }', {}),
    ('mutation($s: String!) { submitTurn(input: {conversationId: "c", turnId: $s, '
     'messages: [{role: "user", content: "hi there friend"}]}) { %s } }', {}),
]
QUERY_ARGS = [
    '{ candidate(id: $s) { id } }',
    '{ memory(id: $s) { id } }',
    '{ turn(id: $s) { id } }',
    '{ transitions(candidateId: $s) { id } }',
    '{ candidates(namespace: $s) { totalCount } }',
    '{ candidates(after: $s) { totalCount } }',
]
REFUSED = {"VALIDATION", "INVALID_NAMESPACE"}


def _refused(server: Server, query: str, variables: dict[str, Any]) -> None:
    body = _gql(server, query, variables)
    codes = _codes(body)
    assert codes and set(codes) <= REFUSED, (query, body)


def test_a_lone_surrogate_is_a_validation_error_in_every_string(server: Server) -> None:
    bad = f"x{SURROGATE}y"
    for template, extra in FREE_TEXT + IDS_AND_NAMES:
        _refused(server, template % U, {"s": bad, **extra})
    _refused(server, 'mutation($s: String!, $id: ID!) { rejectCandidate(id: $id, reason: $s) '
                     '{ ' + U + ' } }', {"s": bad, "id": "0" * 32})
    for query in [*QUERY_ARGS, '{ recall(query: $s) { score } }']:
        kind = "ID!" if "id:" in query or "Id:" in query else "String!"
        _refused(server, f"query($s: {kind}) {query}", {"s": bad})
    # A conversation's messages are repaired instead (U+FFFD), as undecodable bytes are.
    turn = _gql(server, 'mutation($s: String!) { submitTurn(input: {conversationId: "c-free", '
                        'turnId: "1", messages: [{role: "user", content: $s}]}) { ' + U +
                        ' ... on TurnResult { turn { messages { content } } } } }',
                {"s": bad})["data"]["submitTurn"]
    assert turn["turn"]["messages"][0]["content"] == "x\ufffdy"


def test_a_nul_byte_is_refused_in_ids_and_names_and_dropped_from_text(server: Server) -> None:
    bad = "x\x00y"
    for template, extra in IDS_AND_NAMES:
        _refused(server, template % U, {"s": bad, **extra})
    for query in QUERY_ARGS:
        kind = "ID!" if "id:" in query or "Id:" in query else "String!"
        _refused(server, f"query($s: {kind}) {query}", {"s": bad})
    body = _gql(server, FREE_TEXT[0][0] % (U + " ... on Candidate { content }"), {"s": bad})
    assert body["data"]["remember"]["content"] == "xy"


def test_a_lone_surrogate_in_a_query_literal_is_a_parse_error(server: Server) -> None:
    body = _gql(server, 'mutation { remember(content: "bad \\ud800 text", kind: FACT) '
                        '{ ' + U + ' } }', as_="agent")
    assert body["data"] is None
    assert _codes(body) == ["GRAPHQL_PARSE_FAILED"], body


def test_an_overflowing_cursor_is_a_validation_error(server: Server) -> None:
    for offset in ("9223372036854775807", "9" * 30, "1000000001"):
        cursor = base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode()
        for field in ("candidates", "memories"):
            body = server.gql(f'query($a: String) {{ {field}(after: $a) {{ totalCount }} }}',
                              {"a": cursor})
            assert _codes(body) == ["VALIDATION"], body


@pytest.mark.parametrize("slug", ["a/../b", "..", "./x", "/lead", "trail/", "a//b", "x/."])
def test_slugs_refuse_path_tricks(server: Server, slug: str) -> None:
    body = server.gql('mutation($ns: String) { remember(content: "x", kind: FACT, '
                      'namespace: $ns) { ' + U + ' } }', {"ns": f"workspace:{slug}"})
    assert body["data"]["remember"]["code"] == "INVALID_NAMESPACE"
    body = server.gql('mutation($n: String!) { setActivePersona(name: $n) { ' + U + ' } }',
                      {"n": slug})
    assert body["data"]["setActivePersona"]["code"] == "INVALID_NAMESPACE"


def test_security_headers_on_every_response(server: Server) -> None:
    with httpx.Client(trust_env=False) as client:
        for response in (client.get(f"{server.url}/"), client.get(f"{server.url}/app.js"),
                         client.get(f"{server.url}/healthz"),
                         client.post(server.graphql_url, json={"query": "{ viewer { name } }"},
                                     headers={"Authorization": f"Bearer {server.tokens['agent']}"}),
                         client.post(server.graphql_url, json={"query": "{ x }"})):
            h = response.headers
            assert "frame-ancestors 'none'" in h["content-security-policy"], response.url
            assert h["x-frame-options"] == "DENY"
            assert h["x-content-type-options"] == "nosniff"
            assert h["referrer-policy"] == "no-referrer"


def test_graphiql_is_off_unless_asked_for(server: Server) -> None:
    with httpx.Client(trust_env=False) as client:
        page = client.get(server.graphql_url, headers={"Accept": "text/html"})
    assert "graphiql" not in page.text.lower()
    assert "unpkg" not in page.text and "jsdelivr" not in page.text


def test_graphql_refuses_foreign_host_and_origin_names(server: Server) -> None:
    query = {"query": "{ viewer { name } }"}
    auth = {"Authorization": f"Bearer {server.tokens['agent']}"}
    with httpx.Client(trust_env=False) as client:
        for host in ("localhost", "127.0.0.1", f"127.0.0.1:{server.url.rsplit(':', 1)[1]}"):
            ok = client.post(server.graphql_url, json=query, headers={**auth, "Host": host})
            assert ok.status_code == 200, host
        rebound = client.post(server.graphql_url, json=query,
                              headers={**auth, "Host": "attacker.example"})
        assert rebound.status_code == 421
        assert rebound.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
        cross = client.post(server.graphql_url, json=query,
                            headers={**auth, "Origin": "http://attacker.example"})
        assert cross.status_code == 403
        same = client.post(server.graphql_url, json=query,
                           headers={**auth, "Origin": server.url})
        assert same.status_code == 200

    async def ws() -> None:
        with pytest.raises((InvalidStatus, ConnectionClosed)):
            async with connect(server.graphql_url.replace("http", "ws", 1),
                               subprotocols=["graphql-transport-ws"],  # type: ignore[list-item]
                               origin="http://attacker.example") as conn:  # type: ignore[arg-type]
                await conn.send(json.dumps({"type": "connection_init", "payload": {
                    "Authorization": f"Bearer {server.tokens['reviewer']}"}}))
                await asyncio.wait_for(conn.recv(), 5)

    asyncio.run(ws())


def test_allowed_hosts_lets_a_proxy_name_in(tmp_path: Any) -> None:
    settings = settings_for(tmp_path, allowed_hosts="memvet.internal, other.internal")
    with run_server(settings) as server, httpx.Client(trust_env=False) as client:
        auth = {"Authorization": f"Bearer {server.tokens['agent']}"}
        for host, status in (("memvet.internal", 200), ("other.internal:8443", 200),
                             ("localhost", 200), ("attacker.example", 421)):
            r = client.post(server.graphql_url, json={"query": "{ viewer { name } }"},
                            headers={**auth, "Host": host})
            assert r.status_code == status, host
