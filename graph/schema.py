"""The schema, composed from small root types; `print_sdl()` is what graph/schema.graphql holds."""

from __future__ import annotations

from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry.extensions import MaskErrors
from strawberry.schema.config import StrawberryConfig
from strawberry.tools import merge_types
from strawberry.types import ExecutionContext

from memvet.graph.errors import (
    ERROR_TYPES,
    UNEXPECTED,
    ErrorCodes,
    add_code,
    log_errors,
    should_mask,
)
from memvet.graph.limits import Limits, limit_extensions
from memvet.graph.mutations import AdminMutation, IntakeMutation, ReviewMutation
from memvet.graph.queries import RecallQuery, ReviewQuery, SettingsQuery
from memvet.graph.subscriptions import ReviewSubscription

Query = merge_types("Query", (ReviewQuery, RecallQuery, SettingsQuery))
Mutation = merge_types("Mutation", (IntakeMutation, ReviewMutation, AdminMutation))
Subscription = merge_types("Subscription", (ReviewSubscription,))


class MemvetSchema(strawberry.Schema):
    """Logs unexpected errors with their traceback before MaskErrors hides them, and gives
    every error a code (this also covers paths that bypass extensions, such as a subscription
    that fails validation)."""

    def process_errors(self, errors: list[GraphQLError],
                       execution_context: ExecutionContext | None = None) -> None:
        log_errors(errors)
        for error in errors:
            add_code(error)


def build_schema(limits: Limits | None = None, *, extra: list[Any] | None = None,
                 ) -> strawberry.Schema:
    """The whole schema with its limits, error masking and error codes (plus `extra`
    extensions, such as the app's per-operation re-authentication of WebSockets)."""
    limits = limits or Limits()
    extensions: list[Any] = [
        ErrorCodes,  # listed first so it sees errors after MaskErrors rewrote them
        lambda: MaskErrors(should_mask_error=should_mask, error_message=UNEXPECTED),
        *limit_extensions(limits),
        *(extra or []),
    ]
    return MemvetSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        types=list(ERROR_TYPES.values()),
        extensions=extensions,
        config=StrawberryConfig(batching_config={"max_operations": limits.max_batch}),
    )


def print_sdl() -> str:
    """The schema as SDL, ending in a newline (what `memvet schema` prints)."""
    return build_schema().as_str().rstrip("\n") + "\n"
