"""create_app(settings) -> Starlette: /graphql (HTTP + WebSocket), /mcp, /healthz, the dashboard.

Resources are opened in the lifespan and exposed as typed state (`request.state.runtime`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypedDict

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from memvet.api.security import HostGuard, SecurityHeaders, install_log_redaction
from memvet.api.settings import Settings
from memvet.api.wiring import Runtime, build_runtime
from memvet.memory.access import Principal, Role
from memvet.memory.ports import Embedder, MemoryIndex

log = logging.getLogger(__name__)
# resolve(): in a strict editable install this file is a link into the source tree, and
# StaticFiles refuses to serve files through links.
DASHBOARD = Path(__file__).resolve().with_name("dashboard")
SWEEP_ACTOR = Principal.system("archive-sweep")


class State(TypedDict):
    runtime: Runtime


class BodyLimit:
    """Refuse request bodies over `limit` bytes with 413 before anything reads them."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _too_large(scope, receive, send, self.limit)
            return
        seen = 0

        async def limited() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _BodyTooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _BodyTooLarge:
            await _too_large(scope, receive, send, self.limit)


class _BodyTooLarge(Exception):
    pass


async def _too_large(scope: Scope, receive: Receive, send: Send, limit: int) -> None:
    response = JSONResponse(
        {"errors": [{"message": f"request body is over {limit} bytes",
                     "extensions": {"code": "VALIDATION"}}]},
        status_code=413,
    )
    await response(scope, receive, send)


async def healthz(request: Request) -> JSONResponse:
    runtime: Runtime = request.state.runtime
    try:
        return JSONResponse(await anyio.to_thread.run_sync(runtime.service.health))
    except Exception:
        log.exception("health check failed")
        return JSONResponse({"status": "error"}, status_code=503)


async def _every(seconds: float, job: Callable[[], Any], name: str) -> None:
    while True:
        await asyncio.sleep(seconds)
        try:
            await anyio.to_thread.run_sync(job)
        except Exception:
            log.exception("periodic %s failed", name)


def _bootstrap_admin(runtime: Runtime) -> None:
    """First start with no tokens: create an admin token and print the dashboard URL."""
    service = runtime.service
    if service.has_tokens():
        return
    info, token = service.create_token(Role.ADMIN, Principal.system(), name="first-admin")
    # A fragment never reaches the server, so the token stays out of every access log.
    url = f"{runtime.settings.base_url}/#token={token}"
    print(
        "\nmemvet: created the first admin token (shown once; keep it safe):\n"
        f"  {token}\n"
        f"Open the review dashboard: {url}\n",
        file=sys.stderr, flush=True,
    )


def create_app(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    index: MemoryIndex | None = None,
    bootstrap_admin: bool = True,
    lock: bool = True,
) -> Starlette:
    """The whole server for `settings`. Pass `embedder`/`index` to swap adapters in tests."""
    from memvet.api.mcp_server import McpEndpoint
    from memvet.graph.app import make_graphql_app
    from memvet.graph.limits import Limits

    mcp = McpEndpoint(settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[State]:
        install_log_redaction()  # again: the server may have configured logging since
        runtime = await anyio.to_thread.run_sync(
            lambda: build_runtime(settings, embedder=embedder, index=index, lock=lock))
        try:
            await anyio.to_thread.run_sync(runtime.service.start)
            await anyio.to_thread.run_sync(runtime.bus.start)
            if bootstrap_admin:
                await anyio.to_thread.run_sync(_bootstrap_admin, runtime)
            mcp.bind(runtime)
            tasks = [
                asyncio.create_task(_every(
                    settings.sweep_interval_s,
                    lambda: runtime.service.archive_stale(SWEEP_ACTOR), "archive sweep")),
                asyncio.create_task(_every(
                    settings.outbox_interval_s, runtime.service.drain_index_outbox,
                    "index outbox drain")),
            ]
            async with mcp.lifespan():
                yield {"runtime": runtime}
            for task in tasks:
                task.cancel()
        finally:
            await anyio.to_thread.run_sync(runtime.close)

    graphql = make_graphql_app(Limits(
        max_depth=settings.max_query_depth, max_tokens=settings.max_query_tokens,
        max_aliases=settings.max_query_aliases, max_batch=settings.max_batch_operations,
    ), graphiql=settings.graphiql)
    guarded = HostGuard(graphql.view, settings.allowed_host_names)
    routes: list[BaseRoute] = [
        Route("/healthz", healthz),
        Route(graphql.path, guarded, methods=["GET", "POST"]),
        WebSocketRoute(graphql.path, guarded),
        Route("/mcp", endpoint=mcp.app),  # the bare path too: the dashboard's "/" mount
        Mount("/mcp", app=mcp.app),       # would otherwise answer it with 405
    ]
    if DASHBOARD.is_dir():
        routes.append(Mount("/", app=StaticFiles(directory=DASHBOARD, html=True)))
    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.add_middleware(SecurityHeaders)
    install_log_redaction()
    return app
