"""Review events over WebSocket (graphql-transport-ws): every transition arrives, filtered to
what the token sees; agents may not subscribe; a slow recall never stalls delivery; unexpected
errors are masked and logged."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from memvet.api.wiring import build_runtime, make_embedder, make_index
from memvet.memory.access import Principal
from tests.graph.support import (
    EVENTS,
    REMEMBER,
    Server,
    WsClient,
    run_server,
    settings_for,
    wait_subscribed,
    ws_client,
)

SLOW_S = 2.0


class SlowIndex:
    """The real (Chroma) index, except that queries starting with `slow` take SLOW_S seconds
    and queries starting with `boom` raise an unexpected error."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def search(self, query: str, *args: Any, **kwargs: Any) -> Any:
        if query.startswith("slow"):
            time.sleep(SLOW_S)
        if query.startswith("boom"):
            raise RuntimeError("index exploded: secret-internal-detail")
        return self.inner.search(query, *args, **kwargs)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    settings = settings_for(tmp_path_factory.mktemp("graph-sub"))
    index = SlowIndex(make_index(settings, make_embedder(settings)))
    with run_server(settings, index=index) as running:
        # Recall only reaches the index when some memory is visible: give it one.
        cid = _remember(running, "seeded pnpm memory", "workspace:seed")
        running.ok('mutation($id: ID!) { approveCandidate(id: $id) { __typename } }',
                   {"id": cid}, as_="reviewer")
        yield running


def _ns() -> str:
    return f"workspace:s-{uuid.uuid4().hex[:8]}"


def _remember(server: Server, content: str, namespace: str, as_: str = "agent") -> str:
    data = server.ok(REMEMBER, {"content": content, "kind": "FACT", "namespace": namespace},
                     as_=as_)
    cid: str = data["remember"]["id"]
    return cid


async def _do(server: Server, query: str, variables: dict[str, Any] | None = None,
              as_: str = "reviewer") -> dict[str, Any]:
    return await asyncio.to_thread(server.ok, query, variables, as_=as_)


def test_every_transition_arrives_with_what_it_changed(server: Server) -> None:
    space = _ns()

    async def scenario() -> None:
        async with ws_client(server, server.tokens["reviewer"]) as ws:
            await ws.subscribe(EVENTS)
            await wait_subscribed(server, ws)

            cid = await asyncio.to_thread(_remember, server, "Events: we use pnpm", space)
            ev = await ws.next_in(space)
            assert ev["action"] == "CREATED" and ev["candidateId"] == cid
            assert ev["actor"] == "agent:agent" and ev["candidate"]["status"] == "PENDING"

            await asyncio.to_thread(_remember, server, "Events: we use pnpm", space, "agent2")
            ev = await ws.next_in(space)
            assert ev["action"] == "MERGED" and ev["outcome"] == "merged"
            assert ev["candidate"]["observations"] == 2
            # Loaded fresh for each event, not remembered from the CREATED one.
            assert len(ev["candidate"]["origins"]) == 2

            await _do(server, 'mutation($id: ID!) { editCandidate(id: $id, edit: {content: '
                              '"Events: we use pnpm, never npm"}) { __typename } }', {"id": cid})
            ev = await ws.next_in(space)
            assert ev["action"] == "EDITED"
            assert ev["candidate"]["content"] == "Events: we use pnpm, never npm"

            out = await _do(server, 'mutation($id: ID!) { approveCandidate(id: $id) '
                                    '{ ... on Memory { id } } }', {"id": cid})
            mid = out["approveCandidate"]["id"]
            ev = await ws.next_in(space)
            assert ev["action"] == "APPROVED" and ev["memoryId"] == mid
            assert ev["memory"]["id"] == mid and ev["candidate"]["status"] == "APPROVED"

            await _do(server, 'mutation($id: ID!) { updateMemory(id: $id, edit: {content: '
                              '"Events: pnpm only"}) { __typename } }', {"id": mid})
            ev = await ws.next_in(space)
            assert ev["action"] == "MEMORY_UPDATED"
            assert ev["memory"]["content"] == "Events: pnpm only"

            other = await asyncio.to_thread(
                _remember, server, "Events: the monorepo builds with pnpm workspaces", space)
            await ws.next_in(space)  # created
            await _do(server, 'mutation($id: ID!, $old: ID) { approveCandidate(id: $id, '
                              'supersede: $old) { __typename } }', {"id": other, "old": mid})
            approved, deleted = await ws.next_in(space), await ws.next_in(space)
            assert approved["action"] == "APPROVED"
            assert deleted["action"] == "MEMORY_DELETED" and deleted["memory"] is None
            snap = deleted["deletedMemory"]
            assert snap["id"] == mid and snap["content"] == "Events: pnpm only"
            assert snap["kind"] == "FACT" and snap["supersededBy"] == approved["memoryId"]

            await _do(server, 'mutation($id: ID!) { deleteMemory(id: $id) { __typename } }',
                      {"id": approved["memoryId"]})
            ev = await ws.next_in(space)
            assert ev["action"] == "MEMORY_DELETED"
            assert ev["deletedMemory"]["content"] == (
                "Events: the monorepo builds with pnpm workspaces")

            rid = await asyncio.to_thread(_remember, server, "Events: to reject", space)
            await ws.next_in(space)
            await _do(server, 'mutation($id: ID!) { rejectCandidate(id: $id) { __typename } }',
                      {"id": rid})
            ev = await ws.next_in(space)
            assert ev["action"] == "REJECTED" and ev["candidate"]["status"] == "REJECTED"

            aid = await asyncio.to_thread(_remember, server, "Events: to archive", space)
            await ws.next_in(space)
            await _do(server, "mutation { archiveStale(olderThanDays: 0) { __typename } }")
            archived = set()
            while aid not in archived:
                ev = await ws.next_in(space)
                assert ev["action"] == "ARCHIVED"
                archived.add(ev["candidateId"])

            await _do(server, "mutation { setAutoApprovePolicy(input: {enabled: false}) "
                              "{ __typename } }", as_="admin")
            ev = await ws.next_in("")
            assert ev["action"] == "POLICY_CHANGED" and ev["actor"] == "admin:admin"

    asyncio.run(scenario())


def test_namespace_argument_filters(server: Server) -> None:
    wanted, other = _ns(), _ns()

    async def scenario() -> None:
        async with ws_client(server, server.tokens["admin"]) as ws:
            await ws.subscribe(EVENTS, {"namespace": wanted})
            await wait_subscribed(server, ws, namespace=wanted)
            await asyncio.to_thread(_remember, server, "filtered out", other)
            await asyncio.to_thread(_remember, server, "filtered in", wanted)
            while True:
                ev = (await ws.next_event())["reviewEvents"]
                assert ev["namespace"] == wanted
                if ev["candidate"]["content"] == "filtered in":
                    break

    asyncio.run(scenario())


def test_scoped_subscribers_never_get_foreign_events(server: Server) -> None:
    mine = "workspace:mine"
    foreign = _ns()

    async def scenario() -> None:
        async with ws_client(server, server.tokens["scoped_reviewer"]) as ws:
            await ws.subscribe(EVENTS)
            await wait_subscribed(server, ws, namespace=mine, as_="scoped_agent")
            for i in range(3):
                await asyncio.to_thread(_remember, server, f"foreign secret {i}", foreign)
            await _do(server, "mutation { setAutoApprovePolicy(input: {enabled: false}) "
                              "{ __typename } }", as_="admin")
            marker = await asyncio.to_thread(_remember, server, "mine marker", mine,
                                             "scoped_agent")
            while True:
                ev = (await ws.next_event())["reviewEvents"]
                assert ev["namespace"] == mine, ev
                if ev["candidateId"] == marker:
                    break
            # Asking for a foreign namespace outright is refused.
            op = await ws.subscribe(EVENTS, {"namespace": foreign})
            assert _error_codes(await ws.message_for(op)) == ["FORBIDDEN"]

    asyncio.run(scenario())


def _error_codes(message: dict[str, Any]) -> list[str]:
    if message["type"] == "error":
        errors = message["payload"]
    else:
        assert message["type"] == "next", message
        errors = message["payload"]["errors"]
    return [e["extensions"]["code"] for e in errors]


def test_agents_may_not_subscribe_and_bad_namespaces_are_refused(server: Server) -> None:
    async def scenario() -> None:
        async with ws_client(server, server.tokens["agent"]) as ws:
            await ws.subscribe(EVENTS)
            assert _error_codes(await ws.receive()) == ["FORBIDDEN"]
        async with ws_client(server, server.tokens["reviewer"]) as ws:
            op = await ws.subscribe(EVENTS, {"namespace": "project:nope"})
            assert _error_codes(await ws.message_for(op)) == ["INVALID_NAMESPACE"]
            assert (await ws.message_for(op))["type"] == "complete"
            op = await ws.subscribe("subscription { reviewEvents { nope } }")
            assert _error_codes(await ws.message_for(op)) == ["GRAPHQL_VALIDATION_FAILED"]

    asyncio.run(scenario())


@pytest.mark.parametrize("payload", [{}, {"Authorization": "Bearer mvt_wrong"},
                                     {"Authorization": "mvt_no_scheme"}])
def test_websocket_without_a_valid_token_is_rejected(server: Server,
                                                     payload: dict[str, Any]) -> None:
    async def scenario() -> None:
        async with connect(server.ws_url, subprotocols=["graphql-transport-ws"],  # type: ignore[list-item]
                           open_timeout=10) as conn:
            await conn.send(json.dumps({"type": "connection_init", "payload": payload}))
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(conn.recv(), 10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4403

    asyncio.run(scenario())


def test_token_in_the_upgrade_header_also_works(server: Server) -> None:
    async def scenario() -> None:
        headers = {"Authorization": f"Bearer {server.tokens['reviewer']}"}
        async with connect(server.ws_url, subprotocols=["graphql-transport-ws"],  # type: ignore[list-item]
                           additional_headers=headers, open_timeout=10) as conn:
            await conn.send(json.dumps({"type": "connection_init", "payload": {}}))
            ws = WsClient(conn)
            assert (await ws.receive())["type"] == "connection_ack"

    asyncio.run(scenario())


def test_a_slow_recall_does_not_stall_subscriptions(server: Server) -> None:
    space = _ns()

    async def scenario() -> None:
        async with ws_client(server, server.tokens["reviewer"]) as ws:
            await ws.subscribe(EVENTS)
            await wait_subscribed(server, ws)
            started = time.monotonic()
            recall = asyncio.create_task(asyncio.to_thread(
                server.ok, '{ recall(query: "slow pnpm") { score } }', None, as_="agent"))
            await asyncio.sleep(0.3)  # the recall is now sleeping inside the index
            assert not recall.done()
            sent = time.monotonic()
            await asyncio.to_thread(_remember, server, "arrives during a slow recall", space)
            ev = await ws.next_in(space, timeout=SLOW_S)
            arrived = time.monotonic()
            assert ev["candidate"]["content"] == "arrives during a slow recall"
            assert arrived - sent < 0.5, f"event took {arrived - sent:.2f}s"
            assert not recall.done(), "the recall should still be in flight"
            await recall
            assert time.monotonic() - started >= SLOW_S

    asyncio.run(scenario())


def test_unexpected_errors_are_masked_and_logged(server: Server,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="memvet.graph"):
        body = server.gql('{ recall(query: "boom now") { score } }', as_="agent")
    error = body["errors"][0]
    assert error["message"] == "Unexpected error."
    assert error["extensions"]["code"] == "INTERNAL_SERVER_ERROR"
    assert "secret-internal-detail" not in json.dumps(body)
    logged = [r for r in caplog.records if r.exc_info and "secret-internal-detail" in str(
        r.exc_info[1])]
    assert logged, "the unexpected error was not logged with its traceback"


def test_a_revoked_token_stops_working_on_an_open_socket(server: Server) -> None:
    made = server.ok('mutation { createToken(role: REVIEWER, name: "short-lived") { '
                     '... on CreatedToken { token info { id } } } }')["createToken"]

    async def scenario() -> None:
        async with ws_client(server, made["token"]) as ws:
            events = await ws.subscribe(EVENTS)
            await wait_subscribed(server, ws)
            op = await ws.subscribe("{ viewer { name } }")
            answer = await ws.message_for(op)
            assert answer["payload"]["data"]["viewer"]["name"] == "short-lived"
            await _do(server, 'mutation($id: ID!) { revokeToken(id: $id) { __typename } }',
                      {"id": made["info"]["id"]}, as_="admin")
            revoked = time.monotonic()
            # The live subscription ends at once, before any later event reaches it.
            await _do(server, 'mutation { remember(content: "after the revoke", kind: FACT, '
                              'namespace: "workspace:mine") { __typename } }', as_="agent")
            message = await ws.message_for(events, timeout=5)
            assert time.monotonic() - revoked <= 1.0
            assert _error_codes(message) == ["UNAUTHENTICATED"], message
            op = await ws.subscribe("{ viewer { name } }")
            assert _error_codes(await ws.message_for(op)) == ["UNAUTHENTICATED"]
            op = await ws.subscribe('mutation { remember(content: "x", kind: FACT) '
                                    '{ __typename } }')
            assert _error_codes(await ws.message_for(op)) == ["UNAUTHENTICATED"]

    asyncio.run(scenario())


def test_a_token_revoked_from_another_process_ends_its_stream_within_a_second(
        server: Server) -> None:
    """`memvet token revoke` on the data dir reaches no bus of the server's: the feed's own
    re-check ends the stream."""
    made = server.ok('mutation { createToken(role: REVIEWER, name: "cli-revoked") { '
                     '... on CreatedToken { token info { id } } } }')["createToken"]

    async def scenario() -> None:
        async with ws_client(server, made["token"]) as ws:
            events = await ws.subscribe(EVENTS)
            await wait_subscribed(server, ws)
            assert server.settings is not None
            operator = build_runtime(server.settings, with_index=False, with_extractor=False,
                                     lock=False)
            try:
                await asyncio.to_thread(operator.service.revoke_token, made["info"]["id"],
                                        Principal.system("cli"))
            finally:
                operator.close()
            revoked = time.monotonic()
            message = await ws.message_for(events, timeout=5)
            assert _error_codes(message) == ["UNAUTHENTICATED"], message
            assert time.monotonic() - revoked <= 1.5

    asyncio.run(scenario())
