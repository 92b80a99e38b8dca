"""Live review events for one subscriber: only what it may see, and only while its token holds.

A revoked token's streams end at once: `revoke_token` publishes a `token_revoked` event that
every feed of that token (in this worker or, over NOTIFY, in another) turns into an
`Unauthenticated` error before any later event. A revocation made where no event reaches this
process (`memvet token revoke` on the data dir while the server runs) is caught by a re-check of
the token every RECHECK_S: one primary-key lookup per open stream per second.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

from memvet.memory.access import Permission, Principal
from memvet.memory.errors import Unauthenticated, ValidationError
from memvet.memory.namespaces import Namespace
from memvet.memory.ports import PUBLIC_ACTIONS, EventAction, ReviewEvent
from memvet.memory.service.context import ServiceContext
from memvet.memory.store import tokens

RECHECK_S = 1.0


class ReviewFeed:
    """review_events: what the subscription door streams."""

    def __init__(self, ctx: ServiceContext) -> None:
        self._ctx = ctx

    async def review_events(self, who: Principal, *, namespace: str | None = None
                            ) -> AsyncIterator[ReviewEvent]:
        """Every public review event in the namespaces `who` sees (or in `namespace` alone),
        until its token is revoked (then `Unauthenticated`)."""
        who.require(Permission.REVIEW)
        wanted = None
        if namespace is not None:
            wanted = str(Namespace.parse(namespace))
            who.require_namespace(wanted)
        bus = self._ctx.adapters.bus
        if bus is None:
            raise ValidationError("this server has no event bus")
        async with bus.subscribe() as queue:
            checked = time.monotonic()
            while True:
                event: ReviewEvent | None
                try:
                    event = await asyncio.wait_for(queue.get(), RECHECK_S)
                except TimeoutError:
                    event = None
                if event is not None and event.action == EventAction.TOKEN_REVOKED:
                    if event.extra.get("token_id") == who.id:
                        raise Unauthenticated("the token was revoked; reconnect with a valid one")
                    continue
                if time.monotonic() - checked >= RECHECK_S:
                    if await asyncio.to_thread(self._revoked, who):
                        raise Unauthenticated("the token was revoked; reconnect with a valid one")
                    checked = time.monotonic()
                if event is None or event.action not in PUBLIC_ACTIONS:
                    continue
                if not who.sees(event.namespace):
                    continue
                if wanted is not None and event.namespace != wanted:
                    continue
                yield event

    def _revoked(self, who: Principal) -> bool:
        with self._ctx.engine.connect() as conn:
            return tokens.is_revoked(conn, who.id)
