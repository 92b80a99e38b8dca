"""How failures look in GraphQL.

Mutations return union results: the success type or one of the error types below, all of
which implement `UserError { code message }` (clients select `... on UserError`). Queries
and subscriptions raise GraphQL errors whose `extensions.code` is the same stable code.
Anything unexpected is logged with its traceback and answered as "Unexpected error."
(code INTERNAL_SERVER_ERROR).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TypeAlias

import strawberry
from graphql import GraphQLError, GraphQLSyntaxError
from strawberry.extensions import SchemaExtension

from memvet.memory import errors as core

log = logging.getLogger(__name__)

UNEXPECTED = "Unexpected error."


@strawberry.interface(description="An expected failure, safe to show a user.")
class UserError:
    code: str = strawberry.field(description="A stable machine-readable code, e.g. NOT_FOUND.")
    message: str = strawberry.field(description="What went wrong, in words for a person.")


@strawberry.type(description="Nothing with that id exists, or the caller may not see it.")
class NotFoundError(UserError):
    pass


@strawberry.type(description="The token's role or namespace scope does not allow this.")
class ForbiddenError(UserError):
    pass


@strawberry.type(description="Not one of the six memory kinds.")
class InvalidKindError(UserError):
    pass


@strawberry.type(description="Not a valid namespace (`persona:<slug>` or `workspace:<slug>`).")
class InvalidNamespaceError(UserError):
    pass


@strawberry.type(description="The candidate is not in a state that allows this.")
class InvalidTransitionError(UserError):
    pass


@strawberry.type(description="The input is out of bounds: empty, too long, out of range.")
class ValidationError(UserError):
    pass


# Every mutation's union carries all of them: which ones a service call can raise is the
# service's business, and clients handle them uniformly through `UserError`. A mutation's
# result is `Annotated[Success | AnyUserError, strawberry.union(name, description=...)]`.
AnyUserError: TypeAlias = (NotFoundError | ForbiddenError | InvalidKindError
                           | InvalidNamespaceError | InvalidTransitionError | ValidationError)

ERROR_TYPES: dict[str, type[AnyUserError]] = {
    core.NotFound.code: NotFoundError,
    core.Forbidden.code: ForbiddenError,
    core.InvalidKind.code: InvalidKindError,
    core.InvalidNamespace.code: InvalidNamespaceError,
    core.InvalidTransition.code: InvalidTransitionError,
    core.ValidationError.code: ValidationError,
}


def user_error(exc: core.MemvetError) -> AnyUserError:
    """The union member for an expected failure. A failure with no member of its own (say,
    UNAUTHENTICATED) is raised as a GraphQL error with its own code instead: one failure has one
    code through every door, and is never relabelled."""
    cls = ERROR_TYPES.get(exc.code)
    if cls is None:
        raise graphql_error(exc) from exc
    return cls(code=exc.code, message=exc.message)


def graphql_error(exc: core.MemvetError) -> GraphQLError:
    """A GraphQL error (for queries and subscriptions) carrying the stable code."""
    return GraphQLError(exc.message, original_error=exc, extensions={"code": exc.code})


def is_expected(error: GraphQLError) -> bool:
    """True for errors that are safe to show: ours, GraphQL's own, and validation errors."""
    original = error.original_error
    return original is None or isinstance(original, (core.MemvetError, GraphQLError))


def should_mask(error: GraphQLError) -> bool:
    return not is_expected(error)


def log_errors(errors: list[GraphQLError]) -> None:
    """Unexpected errors with their traceback; expected ones quietly."""
    for error in errors:
        original = error.original_error
        if is_expected(error):
            log.debug("GraphQL error: %s", error.message)
        else:
            assert original is not None
            log.error("unexpected error in GraphQL %s: %r", error.path, original,
                      exc_info=(type(original), original, original.__traceback__))


class ErrorCodes(SchemaExtension):
    """Give every error an `extensions.code`, so clients never need to parse messages.

    Runs outside MaskErrors (listed before it), so masked errors get INTERNAL_SERVER_ERROR.
    """

    def on_operation(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        for error in getattr(result, "errors", None) or []:
            add_code(error)


def add_code(error: GraphQLError) -> None:
    """Set `extensions.code` on `error` unless it has one."""
    extensions = dict(error.extensions or {})
    if "code" in extensions:
        return
    original = error.original_error
    if error.message.startswith("Variable '$"):
        code = "BAD_USER_INPUT"  # variable coercion: wrong type, missing, unknown enum value
    elif isinstance(error, GraphQLSyntaxError):
        code = "GRAPHQL_PARSE_FAILED"
    elif isinstance(original, core.MemvetError):
        code = original.code
    elif original is None and error.path:  # masked, or a resolver broke its own contract
        code = "INTERNAL_SERVER_ERROR"
    elif original is None or isinstance(original, GraphQLError):
        code = "GRAPHQL_VALIDATION_FAILED"
    else:
        code = "INTERNAL_SERVER_ERROR"
    extensions["code"] = code
    error.extensions = extensions
