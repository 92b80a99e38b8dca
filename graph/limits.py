"""Request limits: query depth, document size, aliases and batch size.

Over-limit requests get a GraphQL validation error (code GRAPHQL_VALIDATION_FAILED or
GRAPHQL_PARSE_FAILED), never a 500. Huge strings are refused by the service's own bounds,
and the app refuses request bodies over `max_body_bytes` with 413 before parsing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from strawberry.extensions import (
    MaxAliasesLimiter,
    MaxTokensLimiter,
    QueryDepthLimiter,
    SchemaExtension,
)
from strawberry.extensions.query_depth_limiter import IgnoreContext


@dataclass(frozen=True)
class Limits:
    """What api.app hands in from Settings (MEMVET_MAX_QUERY_DEPTH, _TOKENS, _ALIASES,
    MEMVET_MAX_BATCH_OPERATIONS); the defaults are the same."""

    max_depth: int = 12
    max_tokens: int = 2000
    max_aliases: int = 30
    max_batch: int = 10


def _introspection(ctx: IgnoreContext) -> bool:
    # Introspection (GraphiQL's, say) is deep but bounded by the schema itself.
    return ctx.field_name.startswith("__")


def limit_extensions(limits: Limits) -> list[Callable[[], SchemaExtension]]:
    """Extension factories: Strawberry builds fresh ones for every operation."""
    return [
        lambda: MaxTokensLimiter(max_token_count=limits.max_tokens),
        lambda: QueryDepthLimiter(max_depth=limits.max_depth, should_ignore=_introspection),
        lambda: MaxAliasesLimiter(max_alias_count=limits.max_aliases),
    ]
