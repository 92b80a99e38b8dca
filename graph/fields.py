"""Typed decorators for fields that have a resolver: `field`, `mutation`, `subscription`.

`@strawberry.field(description=...)` (likewise `mutation`, `subscription`), called with keyword
arguments only, matches the overload meant for data fields (`x: int = strawberry.field(...)`),
which returns `Any`; so mypy --strict calls every method it decorates untyped. Handed the
resolver itself, Strawberry's overloads return a typed `StrawberryField`. These wrappers make
exactly that call: the same field, the same schema, and a description on every field.
"""

from __future__ import annotations

from collections.abc import Callable

import strawberry
from strawberry.permission import BasePermission
from strawberry.types.field import StrawberryField

Resolver = Callable[..., object]
Decorator = Callable[[Resolver], StrawberryField]


def field(*, description: str,
          permission_classes: list[type[BasePermission]] | None = None) -> Decorator:
    """`@strawberry.field(description=...)` for a resolver, typed."""

    def decorate(resolver: Resolver) -> StrawberryField:
        return strawberry.field(resolver, description=description,
                                permission_classes=permission_classes)

    return decorate


def mutation(*, description: str) -> Decorator:
    """`@strawberry.mutation(description=...)`, typed."""

    def decorate(resolver: Resolver) -> StrawberryField:
        return strawberry.mutation(resolver, description=description)

    return decorate


def subscription(*, description: str,
                 permission_classes: list[type[BasePermission]] | None = None) -> Decorator:
    """`@strawberry.subscription(description=...)` for an async generator, typed."""

    def decorate(resolver: Resolver) -> StrawberryField:
        return strawberry.subscription(resolver, description=description,
                                       permission_classes=permission_classes)

    return decorate
