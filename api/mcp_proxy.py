"""`memvet mcp`: MCP over stdio for clients that speak nothing else, relayed to a running
server's streamable-HTTP endpoint (MEMVET_URL/mcp/, bearer MEMVET_TOKEN).

A relay of JSON-RPC messages, not a second server: the tools, their descriptions and their
errors are the server's own, so the two doors cannot drift apart.
"""

from __future__ import annotations

import logging
import os
import sys

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage

from memvet.api.client import DEFAULT_URL

log = logging.getLogger("memvet.mcp")


def endpoint(url: str | None = None) -> str:
    return f"{(url or os.environ.get('MEMVET_URL') or DEFAULT_URL).rstrip('/')}/mcp/"


async def _pump(source: ReadStream[SessionMessage | Exception],
                sink: WriteStream[SessionMessage], what: str) -> None:
    async with sink:
        async for item in source:
            if isinstance(item, Exception):
                log.warning("%s: %s", what, item)
                continue
            await sink.send(item)


async def relay(url: str, token: str | None) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    client: httpx2.AsyncClient = create_mcp_http_client(headers=headers)
    async with client, streamable_http_client(url, http_client=client) as (h_read, h_write), \
            stdio_server() as (s_read, s_write):
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
        anyio.run(relay, endpoint(), token)
    except KeyboardInterrupt:
        return 0
    return 0
