"""`uvicorn api.asgi:app --factory`: the app built from the environment (several workers)."""

from __future__ import annotations

from starlette.applications import Starlette

from memvet.api.app import create_app
from memvet.api.settings import Settings


def app() -> Starlette:
    return create_app(Settings(), bootstrap_admin=False)
