"""The GraphQL endpoint: `/graphql` over HTTP and WebSocket (graphql-transport-ws), GraphiQL.

Authentication:
- HTTP: `Authorization: Bearer <token>`. A missing or unknown token gets HTTP 401 with a
  GraphQL-shaped body `{"errors": [{"message": ..., "extensions": {"code":
  "UNAUTHENTICATED"}}]}` and `WWW-Authenticate: Bearer`, before anything executes. The GraphiQL
  page itself (a browser GET with no query) needs no token; GraphiQL sends it as a header.
- WebSocket: `connection_init` payload `{"Authorization": "Bearer <token>"}` (or the header on
  the upgrade request). Without a valid token the connection is closed with 4403 Forbidden.
Transport-level mistakes (bad JSON, no query, a mutation over GET, too many batched
operations) get 4xx with the same JSON shape and code BAD_REQUEST.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from cross_web import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.exceptions import ConnectionRejectionError
from strawberry.extensions import SchemaExtension

from memvet.graph.context import Context, authenticate
from memvet.graph.limits import Limits
from memvet.graph.schema import build_schema

PATH = "/graphql"


class _Unauthenticated(Exception):
    pass


class Reauthenticate(SchemaExtension):
    """Check a WebSocket's token again before each operation on it.

    A socket is authenticated once, at connection_init; without this a token revoked while
    the socket stays open would keep working for queries and mutations sent over it.
    """

    async def on_execute(self) -> AsyncIterator[None]:
        context = self.execution_context.context
        if isinstance(context, Context) and isinstance(context.request, WebSocket):
            context.principal = await authenticate(context.service, context.credential)
        yield


def _error_response(status: int, message: str, code: str,
                    headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"errors": [{"message": message, "extensions": {"code": code}}]},
                        status_code=status, headers=headers)


class MemvetGraphQL(GraphQL[Context, None]):
    """Strawberry's ASGI view with bearer-token auth and JSON error bodies."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        request = Request(scope=scope, receive=receive)
        response: Response
        try:
            response = await self.run(request)
        except _Unauthenticated:
            response = _error_response(
                401, "a valid bearer token is required (Authorization: Bearer <token>)",
                "UNAUTHENTICATED", {"WWW-Authenticate": "Bearer"})
        except HTTPException as exc:
            response = _error_response(exc.status_code, exc.reason, "BAD_REQUEST")
        await response(scope, receive, send)

    def parse_json(self, data: str | bytes) -> Any:
        """A request body (or GET `variables`) as a JSON object, or a 400 that says why.

        Strawberry's own parser would hand a bare number, null, a string or a list on to code
        that expects an object (a 500), and lets invalid UTF-8 and very deep nesting escape."""
        try:
            value = self.decode_json(data)
        except UnicodeDecodeError:
            raise HTTPException(400, "the request body is not valid UTF-8") from None
        except RecursionError:
            raise HTTPException(400, "the request body is nested too deeply") from None
        except ValueError:
            raise HTTPException(400, "the request body is not valid JSON") from None
        batch = isinstance(value, list) and value and all(isinstance(v, dict) for v in value)
        if not isinstance(value, dict) and not batch:
            raise HTTPException(
                400, "the request body must be a JSON object, {\"query\": \"...\", "
                     "\"variables\": {...}}, or a non-empty list of them (a batch)")
        return value

    async def get_context(self, request: Request | WebSocket, response: Any) -> Context:
        runtime = request.state.runtime
        header = request.headers.get("authorization")
        principal = await authenticate(runtime.service, header)
        return Context(runtime=runtime, principal=principal, request=request, response=response,
                       credential=header if principal is not None else None)

    async def execute_operation(self, *args: Any, **kwargs: Any) -> Any:
        context: Context = kwargs["context"] if "context" in kwargs else args[3]
        if context.principal is None:
            raise _Unauthenticated
        return await super().execute_operation(*args, **kwargs)

    async def on_ws_connect(self, context: Context) -> Any:
        params = context.connection_params or {}
        header = params.get("Authorization", params.get("authorization"))
        if header is not None:
            context.principal = await authenticate(context.service, header)
            context.credential = header if context.principal is not None else None
        if context.principal is None:
            raise ConnectionRejectionError(
                {"code": "UNAUTHENTICATED", "message": "a valid bearer token is required"})
        return None


class GraphQLApp:
    """What api.app mounts at `path` (HTTP and WebSocket): the view, with its limits."""

    path = PATH

    def __init__(self, limits: Limits, *, graphiql: bool = False) -> None:
        self.schema = build_schema(limits, extra=[Reauthenticate])
        self.view = MemvetGraphQL(
            self.schema,
            graphql_ide="graphiql" if graphiql else None,
            keep_alive=True,
            keep_alive_interval=15,
        )
        self.routes: list[BaseRoute] = [
            Route(PATH, self.view, methods=["GET", "POST"]),
            WebSocketRoute(PATH, self.view),
        ]


def make_graphql_app(limits: Limits, *, graphiql: bool = False) -> GraphQLApp:
    """The GraphQL view and routes, with these limits (and GraphiQL when asked for)."""
    return GraphQLApp(limits, graphiql=graphiql)
