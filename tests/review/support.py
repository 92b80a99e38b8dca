"""Helpers for the `memvet review` tests: candidates made and checked through the real API,
polling with deadlines, and a TCP relay that can drop and restore the way to the server."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable
from typing import Any

from tests.graph.support import REMEMBER, Server

CANDIDATE = """
query($id: ID!) {
  candidate(id: $id) {
    id content kind namespace status observations reviewReason
    memory { id content kind namespace }
  }
}"""

MEMORY = "query($id: ID!) { memory(id: $id) { id } }"

SUBMIT_TURN = """
mutation($input: TurnInput!) {
  submitTurn(input: $input) {
    __typename
    ... on TurnResult { turnId candidates { id content source namespace } }
    ... on UserError { code message }
  }
}"""

APPROVE = """
mutation($id: ID!) {
  approveCandidate(id: $id) { __typename ... on Memory { id } ... on UserError { code } }
}"""


def space(prefix: str) -> str:
    """A workspace namespace of this test's own."""
    return f"workspace:{prefix}-{uuid.uuid4().hex[:8]}"


def remember(server: Server, content: str, namespace: str, kind: str = "FACT", *,
             confidence: float = 0.8, as_: str = "agent") -> dict[str, Any]:
    """Propose a candidate as an agent would; the Candidate."""
    out: dict[str, Any] = server.ok(REMEMBER, {
        "content": content, "kind": kind, "namespace": namespace, "confidence": confidence},
        as_=as_)["remember"]
    assert out["__typename"] == "Candidate", out
    return out


def candidate(server: Server, candidate_id: str) -> dict[str, Any]:
    """The candidate as the server has it now (asked as the admin)."""
    found: dict[str, Any] = server.ok(CANDIDATE, {"id": candidate_id})["candidate"]
    return found


def approve(server: Server, candidate_id: str) -> str:
    """Approve as the admin; the memory's id."""
    out = server.ok(APPROVE, {"id": candidate_id})["approveCandidate"]
    assert out["__typename"] == "Memory", out
    return str(out["id"])


def memory_exists(server: Server, memory_id: str) -> bool:
    body = server.gql(MEMORY, {"id": memory_id})
    return bool((body.get("data") or {}).get("memory"))


def submit_turn(server: Server, conversation: str, messages: list[dict[str, str]],
                workspace: str) -> dict[str, Any]:
    """Hand in an exchange as the agent hook does; the TurnResult."""
    out: dict[str, Any] = server.ok(SUBMIT_TURN, {"input": {
        "conversationId": conversation, "turnId": "t1", "messages": messages,
        "workspace": workspace}}, as_="agent")["submitTurn"]
    assert out["__typename"] == "TurnResult", out
    return out


def wait_for(check: Callable[[], Any], what: str, timeout: float = 60.0,
             every: float = 0.2) -> Any:
    """Poll `check` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(every)


class Relay:
    """A TCP relay on a fixed loopback port to `target`: `drop()` cuts every connection and
    stops listening (the server 'goes away'); `restore()` listens again on the same port."""

    def __init__(self, target_port: int, port: int) -> None:
        self.target_port = target_port
        self.port = port
        self.server: asyncio.Server | None = None
        self.pipes: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def restore(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", self.port,
                                                 reuse_address=True)

    async def drop(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None
        for writer in list(self.pipes):
            writer.close()
        self.pipes.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        self.pipes.update((writer, up_writer))
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()
        self.pipes.discard(writer)
