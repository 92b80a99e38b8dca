"""Field permissions for queries and subscriptions that a role gates as a whole.

The service checks role and namespace scope on every call anyway; these classes make the
intent visible in the schema code and answer early with a FORBIDDEN code. Mutations don't
use them: their failures are union members (ForbiddenError) from the service's own check.
"""

from __future__ import annotations

from typing import Any

from strawberry.permission import BasePermission
from strawberry.types import Info

from memvet.graph.context import Context
from memvet.memory.access import Permission


class _Requires(BasePermission):
    permission: Permission
    message = "this token may not do this"
    error_extensions = {"code": "FORBIDDEN"}

    def has_permission(self, source: Any, info: Info[Context, Any], **kwargs: Any) -> bool:
        # Unauthenticated requests never get this far (graph.app refuses them first).
        principal = info.context.principal
        return principal is not None and principal.can(self.permission)


class CanReview(_Requires):
    """Reviewer or admin."""

    permission = Permission.REVIEW
    message = "needs a reviewer or admin token"


class IsAdmin(_Requires):
    """Admin only."""

    permission = Permission.ADMIN
    message = "needs an admin token"
