"""Helpers for the GraphQL tests: the app in process (starlette's TestClient, no socket) for
plain query and mutation behaviour, a real uvicorn server in a thread for what is about the
transport, a graphql-transport-ws client, and tokens for every role."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import httpx2
import uvicorn
from starlette.testclient import TestClient
from websockets.asyncio.client import ClientConnection, connect

from memvet.api.app import create_app
from memvet.api.settings import Settings
from memvet.api.wiring import build_runtime
from memvet.memory.access import Principal, Role
from memvet.memory.ports import MemoryIndex
from tests.fixtures.net import free_port, wait_http

WS_PROTOCOL = "graphql-transport-ws"
# What `post` answers: httpx's over a socket, httpx2's (starlette's TestClient) in process.
Response = httpx.Response | httpx2.Response


def _request(query: str, variables: dict[str, Any] | None, token: str | None
             ) -> tuple[dict[str, Any], dict[str, str]]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body: dict[str, Any] = {"query": query}
    if variables is not None:
        body["variables"] = variables
    return body, headers


class GraphQLCalls:
    """`gql` and `ok` over a subclass's `post`: one API for the in-process app and the server."""

    tokens: dict[str, str]

    def post(self, query: str, variables: dict[str, Any] | None = None, *,
             token: str | None = None, as_: str | None = None,
             timeout: float = 30.0) -> Response:
        raise NotImplementedError

    def gql(self, query: str, variables: dict[str, Any] | None = None, *,
            as_: str = "admin", token: str | None = None) -> dict[str, Any]:
        """POST and return the JSON body; asserts the HTTP status is 200."""
        response = self.post(query, variables, token=token or self.tokens[as_])
        assert response.status_code == 200, response.text
        data: dict[str, Any] = response.json()
        return data

    def ok(self, query: str, variables: dict[str, Any] | None = None, *,
           as_: str = "admin") -> dict[str, Any]:
        """POST and return `data`, asserting there were no errors."""
        body = self.gql(query, variables, as_=as_)
        assert "errors" not in body, body
        data: dict[str, Any] = body["data"]
        return data


@dataclass
class Server(GraphQLCalls):
    """A real server on a loopback port (run_server): for WebSocket, streaming, concurrency,
    other processes and the HTTP edge."""

    url: str
    tokens: dict[str, str] = field(default_factory=dict)
    settings: Settings | None = None  # the data dir it serves, for operator-side calls

    @property
    def graphql_url(self) -> str:
        return f"{self.url}/graphql"

    @property
    def ws_url(self) -> str:
        return self.graphql_url.replace("http://", "ws://", 1)

    def post(self, query: str, variables: dict[str, Any] | None = None, *,
             token: str | None = None, as_: str | None = None,
             timeout: float = 30.0) -> httpx.Response:
        token = self.tokens[as_] if as_ is not None else token
        body, headers = _request(query, variables, token)
        with httpx.Client(trust_env=False, timeout=timeout) as client:
            return client.post(self.graphql_url, json=body, headers=headers)


@dataclass
class AppClient(GraphQLCalls):
    """create_app(settings) in process through starlette's TestClient (app_client): the
    lifespan runs, requests go straight to the ASGI app, no socket and no server thread.

    `client` is the TestClient for requests of a test's own (paths like "/graphql")."""

    client: TestClient
    tokens: dict[str, str] = field(default_factory=dict)
    settings: Settings | None = None

    graphql_url = "/graphql"

    def post(self, query: str, variables: dict[str, Any] | None = None, *,
             token: str | None = None, as_: str | None = None,
             timeout: float = 30.0) -> Response:
        """As Server.post (`timeout` is Server's; nothing waits on a socket here)."""
        token = self.tokens[as_] if as_ is not None else token
        body, headers = _request(query, variables, token)
        return self.client.post(self.graphql_url, json=body, headers=headers)


def make_tokens(settings: Settings, scopes: dict[str, tuple[Role, list[str] | None]]
                ) -> dict[str, str]:
    """Create tokens in the data dir before the server starts (the CLI's way)."""
    runtime = build_runtime(settings, with_index=False, with_extractor=False, lock=False)
    try:
        out = {}
        for label, (role, namespaces) in scopes.items():
            _, plaintext = runtime.service.create_token(
                role, Principal.system(), namespaces=namespaces, name=label)
            out[label] = plaintext
        return out
    finally:
        runtime.close()


DEFAULT_TOKENS: dict[str, tuple[Role, list[str] | None]] = {
    "admin": (Role.ADMIN, None),
    "reviewer": (Role.REVIEWER, None),
    "agent": (Role.AGENT, None),
    "agent2": (Role.AGENT, None),
    "scoped_reviewer": (Role.REVIEWER, ["workspace:mine"]),
    "scoped_agent": (Role.AGENT, ["workspace:mine"]),
}


@contextlib.contextmanager
def run_server(settings: Settings, *, index: MemoryIndex | None = None,
               tokens: dict[str, tuple[Role, list[str] | None]] | None = None,
               ) -> Iterator[Server]:
    """create_app(settings) served by uvicorn on a free loopback port, in a thread."""
    made = make_tokens(settings, DEFAULT_TOKENS if tokens is None else tokens)
    port = free_port()
    app = create_app(settings, index=index, bootstrap_admin=False)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                            lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the test server failed to start (see the log above)")
            if time.monotonic() > deadline:
                raise TimeoutError("the test server did not start within 60 s")
            time.sleep(0.05)
        wait_http(f"{url}/healthz", timeout=30)
        yield Server(url=url, tokens=made, settings=settings)
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@contextlib.contextmanager
def run_app(settings: Settings, *, index: MemoryIndex | None = None,
            tokens: dict[str, tuple[Role, list[str] | None]] | None = None,
            ) -> Iterator[AppClient]:
    """create_app(settings) in process, its lifespan running, and tokens for every role.

    The base URL's host is loopback, which the app's Host guard lets in."""
    made = make_tokens(settings, DEFAULT_TOKENS if tokens is None else tokens)
    app = create_app(settings, index=index, bootstrap_admin=False)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield AppClient(client=client, tokens=made, settings=settings)


def settings_for(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"data_dir": tmp_path, "embedder": "fake", "extractor": "heuristic",
                              "sweep_interval_s": 3600.0, "outbox_interval_s": 1.0}
    values.update(overrides)
    return Settings(**values)


# ---------------------------------------------------------------------------- WebSocket client
class WsClient:
    """A minimal graphql-transport-ws client."""

    def __init__(self, conn: ClientConnection) -> None:
        self.conn = conn
        self._next_id = 0

    async def subscribe(self, query: str, variables: dict[str, Any] | None = None) -> str:
        self._next_id += 1
        op_id = str(self._next_id)
        payload: dict[str, Any] = {"query": query}
        if variables:
            payload["variables"] = variables
        await self.conn.send(json.dumps({"id": op_id, "type": "subscribe", "payload": payload}))
        return op_id

    async def receive(self, timeout: float = 10.0) -> dict[str, Any]:
        """The next non-ping message."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no message from the server")
            raw = await asyncio.wait_for(self.conn.recv(), left)
            message: dict[str, Any] = json.loads(raw)
            if message.get("type") == "ping":
                await self.conn.send(json.dumps({"type": "pong"}))
                continue
            if message.get("type") == "pong":
                continue
            return message

    async def message_for(self, op_id: str, timeout: float = 10.0) -> dict[str, Any]:
        """The next message about operation `op_id` (others are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            message = await self.receive(max(0.01, deadline - time.monotonic()))
            if message.get("id") == op_id:
                return message

    async def next_event(self, timeout: float = 10.0) -> dict[str, Any]:
        """The data of the next `next` message (fails on `error`/`complete`)."""
        message = await self.receive(timeout)
        assert message["type"] == "next", message
        assert "errors" not in message["payload"], message
        data: dict[str, Any] = message["payload"]["data"]
        return data

    async def next_in(self, namespace: str, timeout: float = 10.0) -> dict[str, Any]:
        """The next review event in `namespace` (skipping probes and other namespaces)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no event in {namespace}")
            event: dict[str, Any] = (await self.next_event(left))["reviewEvents"]
            if event["namespace"] == namespace:
                return event


@contextlib.asynccontextmanager
async def ws_client(server: Server, token: str | None, *,
                    init_payload: dict[str, Any] | None = None) -> Any:
    """Connect and acknowledge; the token goes in the connection_init payload."""
    async with connect(server.ws_url, subprotocols=[WS_PROTOCOL],  # type: ignore[list-item]
                       open_timeout=10) as conn:
        payload = init_payload if init_payload is not None else (
            {"Authorization": f"Bearer {token}"} if token else {})
        await conn.send(json.dumps({"type": "connection_init", "payload": payload}))
        client = WsClient(conn)
        ack = await client.receive(10)
        assert ack["type"] == "connection_ack", ack
        yield client


EVENTS = """
subscription Events($namespace: String) {
  reviewEvents(namespace: $namespace) {
    action namespace actor at candidateId memoryId outcome
    candidate { id content status kind namespace observations origins { source } }
    memory { id content namespace }
    deletedMemory { id content kind namespace supersededBy }
  }
}
"""

REMEMBER = """
mutation Remember($content: String!, $kind: MemoryKind!, $namespace: String,
                  $confidence: Float) {
  remember(content: $content, kind: $kind, namespace: $namespace, confidence: $confidence) {
    __typename
    ... on Candidate { id content status observations namespace kind source }
    ... on UserError { code message }
  }
}
"""


async def wait_subscribed(server: Server, client: WsClient, namespace: str = "workspace:probe",
                          *, as_: str = "agent", timeout: float = 15.0) -> None:
    """Send probe candidates until the subscription delivers one: it is live from then on.

    (graphql-transport-ws has no 'subscribed' acknowledgement.)
    """
    deadline = time.monotonic() + timeout
    n = 0
    while time.monotonic() < deadline:
        n += 1
        await asyncio.to_thread(server.ok, REMEMBER, {
            "content": f"probe {n} {time.monotonic()}", "kind": "EVENT",
            "namespace": namespace}, as_=as_)
        try:
            while True:
                data = await client.next_event(timeout=0.5)
                if data["reviewEvents"]["namespace"] == namespace:
                    return
        except TimeoutError:
            continue
    raise TimeoutError("the subscription never went live")
