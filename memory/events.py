"""The bus that feeds subscriptions.

`LocalEventBus` fans events out to subscribers in this process. `PostgresEventBus` publishes
with NOTIFY and delivers what LISTEN hears, so several workers sharing one database see each
other's events. Publishing is thread-safe (the service runs in worker threads); subscribers
are asyncio queues on the loop that created them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict
from typing import Any

from memvet.memory.ports import ReviewEvent

log = logging.getLogger(__name__)

CHANNEL = "memvet_review_events"
INDEX_CHANNEL = "memvet_index_changes"
QUEUE_LIMIT = 1000


class LocalEventBus:
    """In-process fan-out. Slow subscribers lose the oldest events rather than block anyone."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: list[tuple[asyncio.AbstractEventLoop, asyncio.Queue[ReviewEvent]]] = []

    def publish(self, event: ReviewEvent) -> None:
        self._deliver(event)

    def _deliver(self, event: ReviewEvent) -> None:
        with self._lock:
            targets = list(self._subscribers)
        for loop, queue in targets:
            try:
                loop.call_soon_threadsafe(_put_dropping_oldest, queue, event)
            except RuntimeError:  # that loop is closed: the subscriber is gone
                self._remove(queue)

    def _remove(self, queue: asyncio.Queue[ReviewEvent]) -> None:
        with self._lock:
            self._subscribers = [(lp, q) for lp, q in self._subscribers if q is not queue]

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[asyncio.Queue[ReviewEvent]]:
        """Yield a queue that receives every event published while the context is open."""
        queue: asyncio.Queue[ReviewEvent] = asyncio.Queue(maxsize=QUEUE_LIMIT)
        with self._lock:
            self._subscribers.append((asyncio.get_running_loop(), queue))
        try:
            yield queue
        finally:
            self._remove(queue)

    def start(self) -> None:
        """Nothing to start in-process."""

    def close(self) -> None:
        with self._lock:
            self._subscribers.clear()


def _put_dropping_oldest(queue: asyncio.Queue[ReviewEvent], event: ReviewEvent) -> None:
    if queue.full():
        try:
            queue.get_nowait()
        except asyncio.QueueEmpty:
            pass
    queue.put_nowait(event)


def encode_event(event: ReviewEvent) -> str:
    return json.dumps(asdict(event), separators=(",", ":"), default=str)


def decode_event(payload: str) -> ReviewEvent:
    data: dict[str, Any] = json.loads(payload)
    return ReviewEvent(**data)


class PostgresEventBus(LocalEventBus):
    """NOTIFY on publish; a listener thread turns LISTEN notifications into local deliveries."""

    def __init__(self, conninfo: str, *, connect: Callable[[str], Any] | None = None) -> None:
        super().__init__()
        self._conninfo = conninfo
        self._connect = connect
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._publish_conn: Any = None
        self._publish_lock = threading.Lock()
        self._index_listeners: list[Callable[[str, list[str]], None]] = []
        self.source = uuid.uuid4().hex  # tells this worker's own notifications apart

    def _open(self) -> Any:
        import psycopg  # the store's driver; only needed when PostgreSQL is configured

        if self._connect is not None:
            return self._connect(self._conninfo)
        return psycopg.connect(self._conninfo, autocommit=True)

    def publish(self, event: ReviewEvent) -> None:
        payload = encode_event(event)
        if len(payload.encode()) > 7900:  # NOTIFY payloads are limited to 8000 bytes
            trimmed = dict(asdict(event))
            trimmed["extra"] = {"truncated": True}
            payload = json.dumps(trimmed, separators=(",", ":"), default=str)
        with self._publish_lock:
            try:
                if self._publish_conn is None or self._publish_conn.closed:
                    self._publish_conn = self._open()
                self._publish_conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))
            except Exception:
                log.exception("could not publish a review event with NOTIFY")
                self._publish_conn = None

    def announce_index(self, changed: dict[str, list[str]]) -> None:
        """Tell the other workers which memories this one wrote to the shared index."""
        for namespace, ids in changed.items():
            for start in range(0, len(ids), 100):  # stays well under NOTIFY's 8000 bytes
                payload = json.dumps({"source": self.source, "namespace": namespace,
                                      "ids": ids[start:start + 100]})
                with self._publish_lock:
                    try:
                        if self._publish_conn is None or self._publish_conn.closed:
                            self._publish_conn = self._open()
                        self._publish_conn.execute("SELECT pg_notify(%s, %s)",
                                                   (INDEX_CHANNEL, payload))
                    except Exception:
                        log.exception("could not announce index changes with NOTIFY")
                        self._publish_conn = None

    def on_index_change(self, callback: Callable[[str, list[str]], None]) -> None:
        """`callback(namespace, ids)` for index changes other workers made (from a thread)."""
        self._index_listeners.append(callback)

    def _index_changed(self, payload: str) -> None:
        data = json.loads(payload)
        if data.get("source") == self.source:
            return
        for callback in self._index_listeners:
            try:
                callback(str(data["namespace"]), [str(i) for i in data["ids"]])
            except Exception:
                log.exception("refreshing the index after another worker's change failed")

    def start(self) -> None:
        self._thread = threading.Thread(target=self._listen, name="memvet-listen", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=10)

    def _listen(self) -> None:
        while not self._stop.is_set():
            try:
                conn = self._open()
                conn.execute(f"LISTEN {CHANNEL}")
                conn.execute(f"LISTEN {INDEX_CHANNEL}")
                self._ready.set()
                while not self._stop.is_set():
                    for note in conn.notifies(timeout=0.5):
                        try:
                            if note.channel == INDEX_CHANNEL:
                                self._index_changed(note.payload)
                            else:
                                self._deliver(decode_event(note.payload))
                        except Exception:
                            log.exception("bad payload from NOTIFY on %s", note.channel)
                conn.close()
            except Exception:
                log.exception("LISTEN connection lost; reconnecting")
                self._stop.wait(1.0)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._publish_conn is not None:
            try:
                self._publish_conn.close()
            except Exception:  # closing a broken connection; nothing to do
                pass
        super().close()
