"""The event bus: worker threads publish, asyncio subscribers receive; NOTIFY across buses."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from sqlalchemy.engine import Engine

from memvet.memory.events import LocalEventBus, PostgresEventBus, decode_event, encode_event
from memvet.memory.ports import ReviewEvent
from memvet.memory.records import CandidateInput, Source
from memvet.memory.service import MemoryService
from tests.memory.support import AGENT, REVIEWER, FakeClock


def event(n: int, **extra: object) -> ReviewEvent:
    return ReviewEvent(action="created", namespace="workspace:shop", candidate_id=f"c{n}",
                       memory_id=None, actor="agent:x", at="2026-01-01T00:00:00.000000Z",
                       extra=dict(extra))


def test_encode_decode_round_trip() -> None:
    e = event(1, outcome="merged", count=3)
    assert decode_event(encode_event(e)) == e


async def _collect(queue: asyncio.Queue[ReviewEvent], n: int) -> list[ReviewEvent]:
    return [await asyncio.wait_for(queue.get(), timeout=10) for _ in range(n)]


def test_local_bus_delivers_from_worker_threads() -> None:
    bus = LocalEventBus()

    async def main() -> list[ReviewEvent]:
        async with bus.subscribe() as q1, bus.subscribe() as q2:
            threads = [threading.Thread(target=lambda i=i: [bus.publish(event(i * 10 + j))
                                                            for j in range(5)])
                       for i in range(4)]
            for t in threads:
                t.start()
            got = await _collect(q1, 20)
            got2 = await _collect(q2, 20)
            for t in threads:
                t.join()
            assert sorted(e.candidate_id or "" for e in got2) == sorted(
                e.candidate_id or "" for e in got)
            return got

    got = asyncio.run(main())
    assert len({e.candidate_id for e in got}) == 20
    # a closed subscription receives nothing and publishing still works
    bus.publish(event(99))
    bus.close()


def test_service_publishes_after_commit(engine: Engine, clock: FakeClock) -> None:
    bus = LocalEventBus()
    svc = MemoryService(engine=engine, clock=clock, bus=bus)

    async def main() -> list[ReviewEvent]:
        async with bus.subscribe() as queue:
            def work() -> None:
                c = svc.submit(CandidateInput("use pnpm", "fact", "workspace:shop",
                                              Source.EXPLICIT, 0.5), AGENT).candidate
                svc.submit(CandidateInput("Use pnpm!", "fact", "workspace:shop",
                                          Source.EXPLICIT, 0.5), AGENT)
                svc.approve(c.id, REVIEWER)
            await asyncio.to_thread(work)
            return await _collect(queue, 3)

    got = asyncio.run(main())
    assert [e.action for e in got] == ["created", "merged", "approved"]
    assert got[2].memory_id and got[2].actor == REVIEWER.actor
    assert all(e.namespace == "workspace:shop" for e in got)
    svc.close()


@pytest.mark.postgres
def test_postgres_bus_delivers_across_instances(postgres_url: str) -> None:
    conninfo = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    listener = PostgresEventBus(conninfo)
    publisher = PostgresEventBus(conninfo)
    listener.start()
    try:
        async def main() -> list[ReviewEvent]:
            async with listener.subscribe() as queue:
                def send() -> None:
                    for i in range(3):
                        publisher.publish(event(i, note="x" * (10_000 if i == 2 else 1)))
                t = threading.Thread(target=send)
                t.start()
                got = await _collect(queue, 3)
                t.join()
                return got

        got = asyncio.run(main())
        assert [e.candidate_id for e in got] == ["c0", "c1", "c2"]
        assert got[0] == event(0, note="x")
        assert got[2].extra == {"truncated": True}  # over NOTIFY's payload limit
    finally:
        listener.close()
        publisher.close()
    time.sleep(0)  # nothing left running: close joined the listener thread
    assert listener._thread is not None and not listener._thread.is_alive()
