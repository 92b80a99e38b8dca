"""`memvet mcp`: MCP over stdio for clients that speak nothing else, relayed to a running
server's streamable-HTTP endpoint (MEMVET_URL/mcp/, bearer MEMVET_TOKEN).

A relay of JSON-RPC messages, not a second server: the tools, their descriptions and their
errors are the server's own, so the two doors cannot drift apart. What the relay adds is the
HTTP layer's failures said in words: a request that finds no server, or that the server turns
away before MCP starts (a refused token, a refused Host), is answered with a JSON-RPC error
naming the cause, and the cause is logged to stderr. The relay itself keeps running.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage

from memvet.api.client import DEFAULT_URL, auth_hint, error_text, unreachable_hint

log = logging.getLogger("memvet.mcp")

# JSON-RPC's implementation-defined server errors; `data.code` carries memvet's stable code.
UNAVAILABLE = -32000
UNAUTHENTICATED = -32001
REFUSED = -32002
CONNECT_TIMEOUT_S = 5.0  # a host that swallows packets is reported within seconds


def base_url(url: str | None = None) -> str:
    return (url or os.environ.get("MEMVET_URL") or DEFAULT_URL).rstrip("/")


def endpoint(url: str | None = None) -> str:
    return f"{base_url(url)}/mcp/"


class ExplainingClient(httpx2.AsyncClient):
    """The relay's HTTP client: for a POST the server never answered, or answered with an HTTP
    error instead of JSON-RPC, it returns a JSON-RPC error naming the cause, which the MCP
    transport hands to the stdio client as the answer. (Raising instead would end the
    transport's task group; the SDK's stand-in says only "Server returned an error response".)
    """

    def __init__(self, *, url: str, token: str | None, **kwargs: Any) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        timeout = httpx2.Timeout(30.0, connect=CONNECT_TIMEOUT_S, read=300.0)
        super().__init__(headers=headers, timeout=timeout, **kwargs)
        self.base = base_url(url)
        self.token = token
        self._last_logged: str | None = None

    async def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        if request.method != "POST":  # the SDK's GET stream and DELETE handle their own errors
            return await super().send(request, **kwargs)
        try:
            response = await super().send(request, **kwargs)
        except httpx2.TransportError as err:
            reason = str(err) or type(err).__name__
            return self._error(request, 503, UNAVAILABLE, "UNAVAILABLE",
                               unreachable_hint(self.base, reason))
        if response.status_code < 400:
            self._last_logged = None
            return response
        raw = await response.aread()
        await response.aclose()
        if _is_jsonrpc(raw):  # the server's own JSON-RPC error: the SDK relays it as it is
            return httpx2.Response(response.status_code, headers=response.headers,
                                   content=raw, request=request)
        if response.status_code == 401:
            return self._error(request, 401, UNAUTHENTICATED, "UNAUTHENTICATED",
                               auth_hint(self.token, error_text(raw)))
        detail = error_text(raw)
        return self._error(request, response.status_code, REFUSED,
                           f"HTTP_{response.status_code}",
                           f"the server at {self.base} answered HTTP {response.status_code}"
                           + (f" ({detail})" if detail else ""))

    def _error(self, request: httpx2.Request, status: int, number: int, code: str,
               message: str) -> httpx2.Response:
        if message != self._last_logged:  # once per cause, not once per call
            log.warning("%s", message)
            self._last_logged = message
        body = {"jsonrpc": "2.0", "id": _request_id(request),
                "error": {"code": number, "message": message, "data": {"code": code}}}
        return httpx2.Response(status, json=body, request=request)


def _request_id(request: httpx2.Request) -> Any:
    try:
        message = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return None
    return message.get("id") if isinstance(message, dict) else None


def _is_jsonrpc(raw: bytes) -> bool:
    try:
        payload = json.loads(raw)
    except ValueError:
        return False
    return isinstance(payload, dict) and payload.get("jsonrpc") == "2.0"


async def _pump(source: ReadStream[SessionMessage | Exception],
                sink: WriteStream[SessionMessage], what: str) -> None:
    async with sink:
        async for item in source:
            if isinstance(item, Exception):
                log.warning("%s: %s", what, item)
                continue
            await sink.send(item)


async def relay(url: str, token: str | None) -> None:
    client = ExplainingClient(url=url, token=token)
    async with client, streamable_http_client(endpoint(url), http_client=client) as (
            h_read, h_write), stdio_server() as (s_read, s_write):
        async with anyio.create_task_group() as tg:
            async def upstream() -> None:
                await _pump(s_read, h_write, "from the client")
                tg.cancel_scope.cancel()  # stdin closed: the client is gone

            tg.start_soon(upstream)
            tg.start_soon(_pump, h_read, s_write, "from the server")


def run() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="memvet mcp: %(message)s")
    token = os.environ.get("MEMVET_TOKEN") or None
    if not token:
        log.warning("MEMVET_TOKEN is not set; the server will refuse the calls")
    try:
        anyio.run(relay, base_url(), token)
    except KeyboardInterrupt:
        return 0
    except Exception as err:  # noqa: BLE001  (one line for a person, not a traceback)
        causes = err.exceptions if isinstance(err, BaseExceptionGroup) else (err,)
        log.error("stopped: %s", "; ".join(f"{type(e).__name__}: {e}" for e in causes))
        return 1
    return 0
