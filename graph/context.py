"""The per-request context and the two ways resolvers call the (synchronous) service.

`call` runs a service method in a worker thread and turns expected failures into GraphQL
errors with a code (queries, subscriptions); `attempt` turns them into union members
(mutations). Either way the event loop never waits on the database, Chroma or the model.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import anyio.to_thread

from memvet.graph.errors import AnyUserError, graphql_error, user_error
from memvet.memory.access import Principal, bearer_token
from memvet.memory.errors import MemvetError, Unauthenticated
from memvet.memory.service import MemoryService

T = TypeVar("T")
R = TypeVar("R")


class RuntimeLike(Protocol):
    """What graph/ needs from the running app (api.wiring.Runtime has it)."""

    service: MemoryService
    bus: Any


@dataclass
class Context:
    """Built once per HTTP request, once per WebSocket connection."""

    runtime: RuntimeLike
    principal: Principal | None = None
    request: Any = None
    response: Any = None
    connection_params: dict[str, Any] | None = None
    credential: str | None = None  # the Authorization value, to re-check long-lived sockets

    @property
    def service(self) -> MemoryService:
        return self.runtime.service

    @property
    def who(self) -> Principal:
        if self.principal is None:
            raise Unauthenticated("a valid bearer token is required")
        return self.principal


async def run(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run a synchronous call in a worker thread."""
    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))


async def call(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run a service call in a worker thread; expected failures become GraphQL errors."""
    try:
        return await run(fn, *args, **kwargs)
    except MemvetError as exc:
        raise graphql_error(exc) from exc


async def attempt(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T | AnyUserError:
    """Run a service call in a worker thread; expected failures become union members."""
    try:
        return await run(fn, *args, **kwargs)
    except MemvetError as exc:
        return user_error(exc)


def mapped(result: T | AnyUserError, convert: Callable[[T], R]) -> R | AnyUserError:
    """Apply `convert` to a success, pass an error member through."""
    return result if isinstance(result, AnyUserError) else convert(result)


def outcome(result: T | MemvetError, convert: Callable[[T], R]) -> R | AnyUserError:
    """One outcome of a bulk call: `convert` a success, or its error's union member."""
    return user_error(result) if isinstance(result, MemvetError) else convert(result)


async def authenticate(service: MemoryService, header: object) -> Principal | None:
    """The caller behind an `Authorization` value (HTTP header or connection_init payload)."""
    token = bearer_token(header)
    if token is None:
        return None
    return await run(service.authenticate, token)
