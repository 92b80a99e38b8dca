"""The review queue's calls to a running memvet: GraphQL over HTTP (httpx) and the live
`reviewEvents` subscription over WebSocket (graphql-transport-ws), answering with the small
dataclasses of api/review/models.py.

Failures raise the tree of `api.client`, so every client command words them alike:

    ClientError               anything that stops a call; `str()` is for a person
     ├── ServerUnavailable    nothing answers at MEMVET_URL (or it timed out)
     ├── Unauthenticated      missing, invalid or revoked token
     └── ApiError             the API refused: a UserError or a GraphQL error, with `.code`

The server decides everything (who may review, what a transition allows); this module only
asks and reports.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException
from websockets.typing import Subprotocol

from memvet.api.client import (
    DEFAULT_URL,
    ApiError,
    ClientError,
    ServerUnavailable,
    Unauthenticated,
    result_of,
)
from memvet.api.review.models import (
    Approved,
    Candidate,
    Detail,
    Edit,
    Event,
    LiveStatus,
    Message,
    Origin,
    Page,
    Related,
    Turn,
    Viewer,
    lower,
)

CANDIDATE_FIELDS = ("id content kind namespace source confidence observations status "
                    "createdAt lastObservedAt")
ORIGIN_FIELDS = "id source conversationId turnId turnRef excerpt confidence createdAt"
USER_ERROR = "... on UserError { code message }"

VIEWER = "query Viewer { viewer { name role namespaces } }"

PENDING = f"""
query Pending($namespace: String, $kind: MemoryKind, $first: Int!, $after: String) {{
  candidates(status: PENDING, namespace: $namespace, kind: $kind, first: $first,
             after: $after) {{
    totalCount
    pageInfo {{ hasNextPage endCursor }}
    nodes {{ {CANDIDATE_FIELDS} }}
  }}
}}"""

DETAIL = f"""
query Detail($id: ID!) {{
  candidate(id: $id) {{
    {CANDIDATE_FIELDS}
    origin {{ {ORIGIN_FIELDS} }}
    origins {{ {ORIGIN_FIELDS} }}
    related(limit: 5) {{ score memory {{ id content kind namespace }} }}
  }}
}}"""

TURN = """
query Turn($id: ID!) {
  turn(id: $id) {
    id conversationId turnId trigger workspace persona createdAt
    messages { role content }
  }
}"""

APPROVE = f"""
mutation Approve($id: ID!, $edit: CandidateEdit, $supersede: ID) {{
  approveCandidate(id: $id, edit: $edit, supersede: $supersede) {{
    __typename
    ... on Memory {{ id candidateId content kind namespace }}
    {USER_ERROR}
  }}
}}"""

REJECT = f"""
mutation Reject($id: ID!, $reason: String) {{
  rejectCandidate(id: $id, reason: $reason) {{
    __typename
    ... on Candidate {{ {CANDIDATE_FIELDS} }}
    {USER_ERROR}
  }}
}}"""

EVENTS = f"""
subscription Events {{
  reviewEvents {{
    action namespace actor candidateId memoryId
    candidate {{ {CANDIDATE_FIELDS} }}
  }}
}}"""

WS_PROTOCOL = Subprotocol("graphql-transport-ws")
PAGE = 500  # the API's largest page


def backoff(attempt: int) -> float:
    """Seconds before reconnect attempt `attempt` (1, 2, ...): doubling to 15 s, jittered."""
    base = min(15.0, 0.5 * 2.0 ** max(0, attempt - 1))
    return base / 2 + random.random() * base / 2


@dataclass(kw_only=True)
class ReviewClient:
    """The review calls against MEMVET_URL with MEMVET_TOKEN (keyword-only overrides).

    It keeps one HTTP connection pool (each key in the queue is a request, and a new TLS
    handshake per request would show), so use it within one event loop and `aclose()` it.
    """

    url: str = field(default_factory=lambda: os.environ.get("MEMVET_URL") or DEFAULT_URL)
    token: str | None = field(default_factory=lambda: os.environ.get("MEMVET_TOKEN") or None)
    timeout: float = 10.0
    transport: httpx.AsyncBaseTransport | None = None
    delay: Callable[[int], float] = backoff
    _http: httpx.AsyncClient | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.url = self.url.rstrip("/")

    async def aclose(self) -> None:
        """Close the connection pool."""
        if self._http is not None:
            http, self._http = self._http, None
            await http.aclose()

    def _pool(self) -> httpx.AsyncClient:
        if self._http is None:
            # trust_env=False: like api.client, a proxy from the environment must not carry
            # the token off to somewhere else (and loopback servers are the common case).
            self._http = httpx.AsyncClient(transport=self.transport, timeout=self.timeout,
                                           trust_env=False)
        return self._http

    @property
    def ws_url(self) -> str:
        scheme, sep, rest = self.url.partition("://")
        return f"{'wss' if scheme.lower() == 'https' else 'ws'}{sep}{rest}/graphql"

    # ------------------------------------------------------------------ HTTP
    async def execute(self, query: str, variables: Mapping[str, Any] | None = None
                      ) -> dict[str, Any]:
        """Run one operation; return `data`, or raise a ClientError saying why not."""
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            response = await self._pool().post(f"{self.url}/graphql", headers=headers, json={
                "query": query, "variables": dict(variables or {})})
        except httpx.HTTPError as err:  # refused, reset, timed out
            reason = str(err) or type(err).__name__
            raise ServerUnavailable(
                f"cannot reach memvet at {self.url} ({reason}); is `memvet serve` "
                "running, and is MEMVET_URL right?") from None
        payload = _json(response, self.url)
        errors = payload.get("errors") or []
        code = _code(errors[0]) if errors else ""
        if response.status_code == 401 or code == "UNAUTHENTICATED":
            raise Unauthenticated(self._auth_hint())
        if errors:
            raise ApiError(_message(errors[0]), code or "ERROR")
        if response.status_code >= 400:
            raise ApiError(f"the server at {self.url} answered HTTP {response.status_code}",
                           f"HTTP_{response.status_code}")
        data = payload.get("data")
        if not isinstance(data, dict):
            raise ApiError(f"the server at {self.url} answered without data", "BAD_RESPONSE")
        return data

    def _auth_hint(self) -> str:
        if not self.token:
            return ("no token: set MEMVET_TOKEN to a reviewer or admin token "
                    "(`memvet token create --role reviewer`, or the dashboard)")
        # The server's words for a bad bearer token are generic; say what to do instead.
        return (f"the server at {self.url} refused MEMVET_TOKEN (unknown or revoked); use a "
                "reviewer or admin token")

    async def viewer(self) -> Viewer:
        """Who the token is."""
        v = (await self.execute(VIEWER))["viewer"]
        scope = v.get("namespaces")
        return Viewer(name=str(v["name"]), role=lower(v["role"]),
                      namespaces=tuple(scope) if scope is not None else None)

    async def pending(self, *, namespace: str | None = None, kind: str | None = None,
                      limit: int | None = None) -> Page:
        """Pending candidates, newest first, every page (or the first `limit`)."""
        found: dict[str, Candidate] = {}
        after: str | None = None
        total = 0
        while True:
            want = PAGE if limit is None else max(1, min(PAGE, limit - len(found)))
            conn = (await self.execute(PENDING, {
                "namespace": namespace or None, "kind": kind.upper() if kind else None,
                "first": want, "after": after}))["candidates"]
            total = int(conn["totalCount"])
            # Cursors are positions: a candidate arriving meanwhile shifts the next page by
            # one, so the same candidate can come twice. Keep the first.
            for node in conn["nodes"]:
                found.setdefault(str(node["id"]), Candidate.of(node))
            info = conn["pageInfo"]
            if not info["hasNextPage"] or (limit is not None and len(found) >= limit):
                return Page(candidates=tuple(found.values()), total=total)
            after = info["endCursor"]

    async def detail(self, candidate_id: str) -> Detail:
        """A candidate with its origins (and their excerpts) and related approved memories."""
        c = (await self.execute(DETAIL, {"id": candidate_id}))["candidate"]
        if c is None:
            raise ApiError(f"no candidate {candidate_id}", "NOT_FOUND")
        origin = Origin.of(c["origin"]) if c.get("origin") else None
        related = tuple(
            Related(score=float(h["score"]), memory_id=str(h["memory"]["id"]),
                    content=str(h["memory"]["content"]), kind=lower(h["memory"]["kind"]),
                    namespace=str(h["memory"]["namespace"]))
            for h in c.get("related") or [])
        return Detail(candidate=Candidate.of(c), origin=origin,
                      origins=tuple(Origin.of(o) for o in c.get("origins") or []),
                      related=related)

    async def turn(self, turn_id: str) -> Turn:
        """The stored exchange behind an origin (its turnRef)."""
        t = (await self.execute(TURN, {"id": turn_id}))["turn"]
        if t is None:
            raise ApiError(f"no stored turn {turn_id}", "NOT_FOUND")
        return Turn(id=str(t["id"]), conversation_id=str(t["conversationId"]),
                    turn_id=str(t["turnId"]), trigger=str(t["trigger"]),
                    workspace=t.get("workspace"), persona=t.get("persona"),
                    created_at=str(t["createdAt"]),
                    messages=tuple(Message(role=str(m["role"]), content=str(m["content"]))
                                   for m in t["messages"]))

    async def approve(self, candidate_id: str, edit: Edit | None = None, *,
                      supersede: str | None = None) -> Approved:
        """Approve (after `edit`, retiring `supersede`); the memory it became."""
        m = result_of(await self.execute(APPROVE, {
            "id": candidate_id, "edit": edit.as_input() if edit else None,
            "supersede": supersede}), "approveCandidate")
        return Approved(id=str(m["id"]), candidate_id=str(m["candidateId"]),
                        content=str(m["content"]), kind=lower(m["kind"]),
                        namespace=str(m["namespace"]))

    async def reject(self, candidate_id: str, reason: str | None = None) -> Candidate:
        """Reject with an optional reason; the candidate as it now is."""
        return Candidate.of(result_of(await self.execute(REJECT, {
            "id": candidate_id, "reason": reason or None}), "rejectCandidate"))

    # ------------------------------------------------------------------ WebSocket
    async def events(self, on_status: Callable[[LiveStatus], None]
                     ) -> AsyncIterator[Event]:
        """Review events, forever: reconnects with backoff, reporting each state change."""
        attempt = 0
        connected_before = False
        while True:
            on_status(LiveStatus("connecting" if not connected_before else "reconnecting",
                                 attempt=attempt))
            try:
                async for item in self._one_connection():
                    if isinstance(item, LiveStatus):
                        attempt = 0
                        on_status(LiveStatus("live", reconnected=connected_before))
                        connected_before = True
                    else:
                        yield item
                reason = "the server closed the connection"
                denied = False
            except _Denied as err:
                reason, denied = str(err), True
            except (OSError, TimeoutError, WebSocketException, ValueError) as err:
                reason, denied = _ws_reason(err), False
            attempt += 1
            # A refused token will not fix itself soon: still retry, but slowly.
            wait = max(self.delay(attempt), 15.0 if denied else 0.0)
            on_status(LiveStatus("denied" if denied else "retrying", detail=reason,
                                 retry_in=wait, attempt=attempt))
            await asyncio.sleep(wait)

    async def _one_connection(self) -> AsyncIterator[Event | LiveStatus]:
        async with connect(self.ws_url, subprotocols=[WS_PROTOCOL], proxy=None,
                           open_timeout=self.timeout) as ws:
            auth = {"Authorization": f"Bearer {self.token}"} if self.token else {}
            await ws.send(json.dumps({"type": "connection_init", "payload": auth}))
            subscribed = False
            try:
                async for raw in ws:
                    msg = json.loads(raw)
                    kind = msg.get("type")
                    if kind == "ping":
                        await ws.send(json.dumps({"type": "pong"}))
                    elif kind == "connection_ack" and not subscribed:
                        await ws.send(json.dumps({"id": "events", "type": "subscribe",
                                                  "payload": {"query": EVENTS}}))
                        subscribed = True
                        yield LiveStatus("live")
                    elif kind == "next" and msg.get("id") == "events":
                        data = (msg.get("payload") or {}).get("data") or {}
                        if data.get("reviewEvents"):
                            yield Event.of(data["reviewEvents"])
                    elif kind == "error":
                        raise _Denied(_message((msg.get("payload") or [{}])[0]))
                    elif kind == "complete":
                        return
            except ConnectionClosed as closed:
                if closed.rcvd is not None and closed.rcvd.code in (4401, 4403):
                    raise _Denied(self._auth_hint()) from None
                raise


class _Denied(ClientError):
    """The server refused the subscription (token or role)."""


def _ws_reason(err: BaseException) -> str:
    if isinstance(err, InvalidStatus):
        return f"HTTP {err.response.status_code}"
    if isinstance(err, ConnectionClosed):
        return "the connection dropped"
    return str(err) or type(err).__name__


def _json(response: httpx.Response, url: str) -> dict[str, Any]:
    try:
        payload = response.json()
    except ValueError:
        if response.status_code == 401:
            return {}
        raise ApiError(f"the server at {url} answered HTTP {response.status_code}, "
                       "not JSON", f"HTTP_{response.status_code}") from None
    if not isinstance(payload, dict):
        raise ApiError(f"the server at {url} answered unexpectedly", "BAD_RESPONSE")
    return payload


def _code(error: object) -> str:
    ext = error.get("extensions") if isinstance(error, dict) else None
    return str((ext or {}).get("code") or "")


def _message(error: object) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or "the API refused the request")
    return "the API refused the request"

