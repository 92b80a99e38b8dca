"""The MCP door at /mcp: tools `remember` and `recall` over streamable HTTP, bearer-token auth.

Stateless JSON mode: every POST carries its own bearer token and needs no server-side session,
so several API workers can serve MCP without sticky routing. Tools are as thin as resolvers:
parse, call one MemoryService method in a worker thread, format the result for a model.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, TextContent
from pydantic import Field
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from memvet.api.security import loopback_mcp_lists
from memvet.api.settings import Settings
from memvet.api.wiring import Runtime
from memvet.memory.access import Principal, bearer_token
from memvet.memory.errors import MemvetError
from memvet.memory.kinds import KIND_DESCRIPTIONS
from memvet.memory.records import CandidateInput, Outcome, RecallHit, Source, SubmitResult
from memvet.memory.service import MemoryService

log = logging.getLogger(__name__)

PRINCIPAL_KEY = "memvet.principal"  # where the auth gate leaves the caller in the ASGI scope

_KINDS = "\n".join(f"  - {k.value}: {d}" for k, d in KIND_DESCRIPTIONS.items())
_NAMESPACES = (
    "Namespaces: 'persona:<name>' for the user's preferences about how agents should work "
    "(follows them across projects); 'workspace:<name>' for one project's facts, decisions, "
    "patterns, postmortems and events. Names are lowercase slugs (letters, digits, - _ . /)."
)

INSTRUCTIONS = (
    "memvet is long-term memory that a human vets. Call `recall` before relying on what you "
    "think you know about this project or this user; call `remember` when you learn something "
    "durable. What you remember is a candidate: a person reviews it before anyone can recall "
    "it.\n" + _NAMESPACES
)

REMEMBER_DESCRIPTION = (
    "Propose a durable memory. It becomes a pending candidate that a human reviews; it is not "
    "recallable until approved. Equivalent proposals merge (the reply says so). Save one clear, "
    "self-contained statement, not a chat excerpt.\nKinds (exactly these six):\n"
    f"{_KINDS}\n{_NAMESPACES} Without a namespace it goes to the active persona."
)

RECALL_DESCRIPTION = (
    "Search approved memories (only what a human approved). Returns one memory per line: "
    "kind, namespace, content. Narrow with `namespace` (e.g. 'workspace:shop-api') so another "
    "project's memories do not surface, and with `kinds` (preference, fact, decision, pattern, "
    "postmortem, event)."
)

_OUTCOME_TEXT = {
    Outcome.CREATED: "new candidate",
    Outcome.MERGED: "merged into an equivalent pending candidate (observation counted)",
    Outcome.REINFORCED: "matches an already reviewed memory; counted there, not re-queued",
    Outcome.REVIVED: "revived an archived candidate",
    Outcome.DUPLICATE: "already counted from this turn",
}


class McpEndpoint:
    """The MCP server, its ASGI app (`.app`) and the lifespan the host app must run."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._runtime: Runtime | None = None
        self._manager: StreamableHTTPSessionManager | None = None
        self.server: MCPServer[Any] = MCPServer(
            name="memvet", version=importlib.metadata.version("memvet"),
            instructions=INSTRUCTIONS, log_level="WARNING"
        )
        self.server.add_tool(self._remember, name="remember", title="Remember (pending review)",
                             description=REMEMBER_DESCRIPTION, structured_output=False)
        self.server.add_tool(self._recall, name="recall", title="Recall approved memories",
                             description=RECALL_DESCRIPTION, structured_output=False)
        self.app: ASGIApp = _Asgi(self._asgi)

    def bind(self, runtime: Runtime) -> None:
        """Attach the running `Runtime` (its `.service`), once the host lifespan built it."""
        self._runtime = runtime

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Run the MCP session manager for as long as the host app serves."""
        manager = StreamableHTTPSessionManager(
            app=self.server._lowlevel_server,  # the SDK's documented way to mount by hand
            json_response=True,
            stateless=True,
            security_settings=self._security(),
        )
        async with manager.run():
            self._manager = manager
            try:
                yield
            finally:
                self._manager = None

    def _security(self) -> TransportSecuritySettings:
        """The SDK's DNS-rebinding guard, fed the same host names as /graphql's."""
        lists = loopback_mcp_lists(self.settings.allowed_host_names)
        if lists is None:
            return TransportSecuritySettings(enable_dns_rebinding_protection=False)
        hosts, origins = lists
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        )

    # ------------------------------------------------------------------ ASGI: auth gate
    async def _asgi(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        manager, runtime = self._manager, self._runtime
        if manager is None or runtime is None:
            await JSONResponse({"error": "memvet is starting"}, status_code=503)(
                scope, receive, send)
            return
        header = _authorization(scope)
        token = bearer_token(header)
        principal = None
        if token:
            principal = await anyio.to_thread.run_sync(runtime.service.authenticate, token)
        if principal is None:
            message = ("invalid or revoked token" if header is not None else
                       "missing token: send 'Authorization: Bearer <token>' (MEMVET_TOKEN)")
            await JSONResponse(
                {"error": message, "code": "UNAUTHENTICATED"}, status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="memvet"'},
            )(scope, receive, send)
            return
        scope = {**scope, PRINCIPAL_KEY: principal}
        await manager.handle_request(scope, receive, send)

    # ------------------------------------------------------------------ tools
    async def _remember(
        self,
        content: Annotated[str, Field(description="the memory, one self-contained statement")],
        kind: Annotated[str, Field(description="preference | fact | decision | pattern | "
                                               "postmortem | event")],
        ctx: Context,
        namespace: Annotated[str | None, Field(
            description="'workspace:<project>' or 'persona:<name>'; default: the active "
                        "persona")] = None,
    ) -> CallToolResult:
        who = _principal(ctx)
        item = CandidateInput(content=content, kind=kind, namespace=namespace,
                              source=Source.EXPLICIT, confidence=1.0)
        return await self._run(lambda: format_submit(self._service.submit(item, who)))

    async def _recall(
        self,
        query: Annotated[str, Field(description="what you want to know, in plain words")],
        ctx: Context,
        namespace: Annotated[str | None, Field(
            description="only this namespace, e.g. 'workspace:shop-api'")] = None,
        kinds: Annotated[list[str] | None, Field(
            description="only these kinds, e.g. ['decision', 'postmortem']")] = None,
        limit: Annotated[int, Field(description="at most this many memories (1-100)")] = 10,
    ) -> CallToolResult:
        who = _principal(ctx)
        spaces = [namespace] if namespace else None
        return await self._run(lambda: format_hits(self._service.recall(
            query, who, namespaces=spaces, kinds=kinds or None, limit=limit)))

    @property
    def _service(self) -> MemoryService:
        if self._runtime is None:  # the gate answers 503 until the host lifespan binds one
            raise ToolError("memvet is starting")
        return self._runtime.service

    async def _run(self, fn: Callable[[], str]) -> CallToolResult:
        """Run `fn` in a worker thread; expected failures become tool errors, message intact."""
        try:
            text, failed = await anyio.to_thread.run_sync(fn), False
        except MemvetError as err:
            text, failed = f"{err.message} ({err.code})", True
        except Exception:
            log.exception("MCP tool failed")
            text, failed = "memvet hit an internal error; the server log has details", True
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=failed)


class _Asgi:
    """An ASGI callable that Starlette's `Route` mounts as an app, not as a request handler."""

    def __init__(self, handler: ASGIApp) -> None:
        self.handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.handler(scope, receive, send)


def _authorization(scope: Scope) -> bytes | None:
    for key, value in scope.get("headers") or ():
        if key == b"authorization":
            return bytes(value)
    return None


def _principal(ctx: Context) -> Principal:
    request = ctx.request_context.request
    principal = getattr(request, "scope", {}).get(PRINCIPAL_KEY)
    if not isinstance(principal, Principal):  # only reachable if the gate was bypassed
        raise ToolError("not authenticated")
    return principal


def format_submit(result: SubmitResult) -> str:
    """The tool's reply, from the caller's receipt: what it sent, the outcome and the status."""
    r = result.receipt
    if r.auto_approved:
        state = "approved by the auto-approve policy; it is recallable now"
    elif r.status.value == "pending":
        state = "pending: it awaits human review and is not recallable until approved"
    elif r.status.value == "rejected":
        state = "a reviewer rejected an equivalent candidate, so it is not queued again"
    else:
        state = f"status {r.status.value}"
    return (f"Candidate {r.candidate_id} ({r.kind.value}, {r.namespace}): "
            f"{_OUTCOME_TEXT.get(r.outcome, r.outcome.value)}; "
            f"merged: {'yes' if r.outcome is not Outcome.CREATED else 'no'}; "
            f"you have proposed it {_times(r.observations)}; {state}.")


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def format_hits(hits: list[RecallHit]) -> str:
    if not hits:
        return "No approved memories match."
    lines = [f"{len(hits)} approved memor{'y' if len(hits) == 1 else 'ies'}:"]
    for hit in hits:
        mem = hit.memory
        text = " ".join(mem.content.split())
        lines.append(f"- [{mem.kind.value}] {mem.namespace}: {text}")
    return "\n".join(lines)
