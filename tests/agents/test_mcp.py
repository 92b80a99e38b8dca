"""The MCP door at /mcp, through the MCP SDK's own client over streamable HTTP (and stdio)."""

from __future__ import annotations

import importlib.metadata
import os
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.agents.support import (
    BASE_ENV,
    INITIALIZE,
    MEMVET,
    Server,
    StdioRelay,
    mcp_session,
    text_of,
)
from tests.fixtures.net import free_port

pytestmark = pytest.mark.timeout(180)


def run(coro_fn, *args):  # type: ignore[no-untyped-def]
    return anyio.run(coro_fn, *args)


def test_tools_teach_the_kinds_and_namespaces(server: Server) -> None:
    async def body() -> None:
        async with mcp_session(server.url, server.tokens["agent"]) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == {"remember", "recall"}  # nothing that approves or edits
            desc = tools["remember"].description or ""
            for word in ("preference", "fact", "decision", "pattern", "postmortem", "event",
                         "persona:", "workspace:", "review"):
                assert word in desc
            assert "approved" in (tools["recall"].description or "")
            assert tools["remember"].input_schema["required"] == ["content", "kind"]

    run(body)


def test_the_bare_mcp_path_works_too(server: Server) -> None:
    async def body() -> None:
        async with mcp_session(server.url, server.tokens["agent"], path="/mcp") as s:
            assert {t.name for t in (await s.list_tools()).tools} == {"remember", "recall"}

    run(body)


def test_remember_makes_a_pending_explicit_candidate(server: Server) -> None:
    async def body() -> None:
        async with mcp_session(server.url, server.tokens["agent"]) as s:
            first = await s.call_tool("remember", {
                "content": "Tauri over Electron, for bundle size", "kind": "decision",
                "namespace": "workspace:desk"})
            again = await s.call_tool("remember", {
                "content": "Tauri over Electron, for bundle size", "kind": "decision",
                "namespace": "workspace:desk"})
            recalled = await s.call_tool("recall", {"query": "Tauri",
                                                    "namespace": "workspace:desk"})
        assert not first.is_error and not again.is_error
        assert "awaits human review" in text_of(first) and "merged: no" in text_of(first)
        assert "merged: yes" in text_of(again) and "you have proposed it twice" in text_of(again)
        assert text_of(recalled) == "No approved memories match."  # pending is never recalled
        [cand] = server.candidates("PENDING", "workspace:desk")
        assert cand["id"] in text_of(first)
        assert (cand["source"], cand["kind"], cand["observations"]) == ("EXPLICIT", "DECISION", 2)

    run(body)


def test_recall_returns_approved_memories_formatted_for_a_model(server: Server) -> None:
    server.add_approved("Releases are cut from the main branch on Tuesdays", "pattern",
                        "workspace:release")
    server.add_approved("Prefers answers without preamble", "preference", "persona:pat")

    async def body() -> None:
        async with mcp_session(server.url, server.tokens["agent"]) as s:
            hits = await s.call_tool("recall", {"query": "when are releases cut",
                                                "namespace": "workspace:release"})
            kinds = await s.call_tool("recall", {"query": "answers", "kinds": ["preference"],
                                                 "limit": 5})
        assert not hits.is_error
        assert ("- [pattern] workspace:release: Releases are cut from the main branch on "
                "Tuesdays") in text_of(hits)
        assert "persona:pat" not in text_of(hits)  # narrowed to the workspace
        assert "- [preference] persona:pat: Prefers answers without preamble" in text_of(kinds)
        assert "workspace:release" not in text_of(kinds)

    run(body)


@pytest.mark.parametrize("args,message", [
    ({"content": "x is y", "kind": "opinion"}, "unknown kind 'opinion'"),
    ({"content": "x is y", "kind": "fact", "namespace": "project:x"},
     "must start with 'persona:' or 'workspace:'"),
    ({"content": "   ", "kind": "fact"}, ""),
])
def test_bad_input_is_a_tool_error_with_the_api_message(server: Server, args: dict[str, str],
                                                        message: str) -> None:
    async def body() -> None:
        async with mcp_session(server.url, server.tokens["agent"]) as s:
            result = await s.call_tool("remember", args)
            bad_recall = await s.call_tool("recall", {"query": "x", "limit": 1000})
        assert result.is_error and message in text_of(result)
        assert bad_recall.is_error and "limit must be between 1 and 100" in text_of(bad_recall)

    run(body)


def test_scoped_token_cannot_write_elsewhere(server: Server) -> None:
    scoped = server.create_token("agent", ["workspace:mine"])

    async def body() -> None:
        async with mcp_session(server.url, scoped) as s:
            ok = await s.call_tool("remember", {"content": "CI runs on Buildkite",
                                                "kind": "fact", "namespace": "workspace:mine"})
            denied = await s.call_tool("remember", {"content": "CI runs on Jenkins",
                                                    "kind": "fact",
                                                    "namespace": "workspace:theirs"})
        assert not ok.is_error
        assert denied.is_error and "not allowed in namespace 'workspace:theirs'" in text_of(denied)

    run(body)


def test_missing_or_wrong_token_is_401(server: Server) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    for auth in ({}, {"Authorization": "Bearer mvt_not-a-token"}, {"Authorization": "Basic x"}):
        r = httpx.post(f"{server.url}/mcp/", json=init, headers={**headers, **auth},
                       trust_env=False, timeout=30)
        assert r.status_code == 401, r.text
        assert r.headers["www-authenticate"].startswith("Bearer")
    ok = httpx.post(f"{server.url}/mcp/", json=init, trust_env=False, timeout=30,
                    headers={**headers, "Authorization": f"Bearer {server.tokens['agent']}"})
    assert ok.status_code == 200, ok.text


def test_server_info_names_memvet_and_its_version(server: Server) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}
    r = httpx.post(f"{server.url}/mcp/", json=init, trust_env=False, timeout=30,
                   headers={"Accept": "application/json, text/event-stream",
                            "Authorization": f"Bearer {server.tokens['agent']}"})
    info = r.json()["result"]["serverInfo"]
    assert info["name"] == "memvet"
    assert info["version"] == importlib.metadata.version("memvet")


def test_agent_token_cannot_approve_through_graphql(server: Server) -> None:
    async def body() -> str:
        async with mcp_session(server.url, server.tokens["agent"]) as s:
            result = await s.call_tool("remember", {"content": "Staging is reset nightly",
                                                    "kind": "fact",
                                                    "namespace": "workspace:gate"})
        return text_of(result).split()[1]

    candidate_id = run(body)
    body = server.graphql("mutation($id: ID!) { approveCandidate(id: $id) { __typename "
                          "... on UserError { code message } } }", {"id": candidate_id},
                          as_="agent")
    result = (body.get("data") or {}).get("approveCandidate")
    codes = [e.get("extensions", {}).get("code") for e in body.get("errors") or []]
    assert (result and result.get("code") == "FORBIDDEN") or "FORBIDDEN" in codes, body
    [cand] = server.candidates("PENDING", "workspace:gate")
    assert cand["id"] == candidate_id  # still pending


def test_stdio_proxy_relays_to_the_server(server: Server) -> None:
    server.add_approved("The shop API listens on port 8080", "fact", "workspace:proxy")
    params = StdioServerParameters(command=MEMVET, args=["mcp"], env=server.env())

    async def body() -> None:
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), \
                    ClientSession(read, write) as s:
                await s.initialize()
                names = {t.name for t in (await s.list_tools()).tools}
                hits = await s.call_tool("recall", {"query": "port",
                                                    "namespace": "workspace:proxy"})
                bad = await s.call_tool("remember", {"content": "x", "kind": "ghost"})
        assert names == {"remember", "recall"}
        assert "The shop API listens on port 8080" in text_of(hits)
        assert bad.is_error and "unknown kind 'ghost'" in text_of(bad)

    run(body)


def _init_error(env: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any], int, str]:
    """Initialize through `memvet mcp`, then ask once more: both answers, exit code, stderr."""
    relay = StdioRelay(env)
    try:
        started = time.monotonic()
        relay.send(INITIALIZE)
        first = relay.reply(1, within=15)
        assert time.monotonic() - started < 10  # a few seconds, not a hang
        relay.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        second = relay.reply(2, within=15)
    finally:
        code, stderr = relay.finish()
    return first, second, code, stderr


def test_stdio_relay_names_a_refused_token(server: Server) -> None:
    first, second, code, stderr = _init_error(server.env("mvt_wrong_token"))
    for reply in (first, second):
        error = reply["error"]
        assert "the server refused MEMVET_TOKEN (invalid or revoked token)" in error["message"]
        assert error["data"] == {"code": "UNAUTHENTICATED"}
    assert code == 0 and "refused MEMVET_TOKEN" in stderr and "Traceback" not in stderr
    assert stderr.count("refused MEMVET_TOKEN") == 1  # logged once per cause


def test_stdio_relay_names_an_unreachable_server(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    env = {**os.environ, **BASE_ENV, "MEMVET_URL": url, "MEMVET_TOKEN": "mvt_x"}
    first, second, code, stderr = _init_error(env)
    for reply in (first, second):
        assert f"cannot reach memvet at {url}" in reply["error"]["message"]
        assert "memvet serve" in reply["error"]["message"]
        assert reply["error"]["data"] == {"code": "UNAVAILABLE"}
    assert code == 0 and f"cannot reach memvet at {url}" in stderr
    assert "Traceback" not in stderr and "ExceptionGroup" not in stderr


def test_stdio_relay_reports_memvets_version(server: Server) -> None:
    relay = StdioRelay(server.env())
    try:
        relay.send(INITIALIZE)
        reply = relay.reply(1, within=30)
    finally:
        code, stderr = relay.finish()
    info = reply["result"]["serverInfo"]
    assert (info["name"], info["version"]) == ("memvet", importlib.metadata.version("memvet"))
    assert code == 0, stderr
