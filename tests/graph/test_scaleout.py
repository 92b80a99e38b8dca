"""Scale-out: two `memvet serve` processes on one PostgreSQL database and one Chroma server.

A mutation on one worker reaches a subscriber connected to the other (events fan out through
LISTEN/NOTIFY), and what one worker approves the other recalls.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memvet.api.settings import Settings
from tests.fixtures.net import free_port, http_process
from tests.fixtures.postgres import PostgresServer
from tests.graph.support import (
    DEFAULT_TOKENS,
    EVENTS,
    REMEMBER,
    Server,
    make_tokens,
    wait_subscribed,
    ws_client,
)

MEMVET = str(Path(sys.executable).with_name("memvet"))


@contextlib.contextmanager
def worker(name: str, tmp_path: Path, env: dict[str, str]) -> Iterator[str]:
    port = free_port()
    data = tmp_path / name
    url = f"http://127.0.0.1:{port}"
    cmd = [MEMVET, "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", str(data)]
    with http_process(cmd, f"{url}/healthz", log=tmp_path / f"{name}.log", env=env,
                      timeout=90):
        yield url


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory, postgres_server: PostgresServer,
            chroma_server_url: str) -> Iterator[tuple[Server, Server]]:
    """Two `memvet serve` processes on one fresh database and the session's Chroma server."""
    tmp_path = tmp_path_factory.mktemp("scaleout")
    name = f"scale_{uuid.uuid4().hex}"
    postgres_url = postgres_server.create_database(name)
    env = {"MEMVET_DATABASE_URL": postgres_url,
           "MEMVET_CHROMA_URL": chroma_server_url, "MEMVET_EMBEDDER": "fake",
           "MEMVET_EXTRACTOR": "heuristic",
           "MEMVET_LOG_LEVEL": "WARNING"}
    settings = Settings(data_dir=tmp_path / "cli", database_url=postgres_url,
                        chroma_url=chroma_server_url, embedder="fake",
                        extractor="heuristic")
    try:
        tokens = make_tokens(settings, DEFAULT_TOKENS)
        with worker("a", tmp_path, env) as url_a, worker("b", tmp_path, env) as url_b:
            yield Server(url_a, tokens), Server(url_b, tokens)
    finally:
        postgres_server.drop_database(name)


def test_a_mutation_on_one_worker_reaches_a_subscriber_on_the_other(
        workers: tuple[Server, Server]) -> None:
    a, b = workers
    tokens = a.tokens
    async def scenario() -> None:
        async with ws_client(b, tokens["reviewer"]) as on_b, \
                ws_client(b, tokens["scoped_reviewer"]) as scoped_on_b:
            await on_b.subscribe(EVENTS)
            await scoped_on_b.subscribe(EVENTS)
            # Probes go through worker A; seeing one on B proves the fan-out already.
            await wait_subscribed(a, on_b, timeout=30)
            await wait_subscribed(a, scoped_on_b, namespace="workspace:mine",
                                  as_="scoped_agent", timeout=30)

            space = "workspace:scale"
            made = await asyncio.to_thread(a.ok, REMEMBER, {
                "content": "Workers share one PostgreSQL and one Chroma", "kind": "FACT",
                "namespace": space}, as_="agent")
            cid = made["remember"]["id"]
            ev = await on_b.next_in(space, timeout=10)
            assert ev["action"] == "CREATED" and ev["candidateId"] == cid
            assert ev["candidate"]["content"].startswith("Workers share")

            out = await asyncio.to_thread(
                a.ok, 'mutation($id: ID!) { approveCandidate(id: $id) '
                      '{ __typename ... on Memory { id } } }', {"id": cid},
                as_="reviewer")
            mid = out["approveCandidate"]["id"]
            ev = await on_b.next_in(space, timeout=10)
            assert ev["action"] == "APPROVED" and ev["memory"]["id"] == mid

            # The scoped subscriber on B saw none of it; its own namespace still arrives.
            marker = await asyncio.to_thread(a.ok, REMEMBER, {
                "content": "scoped marker", "kind": "FACT", "namespace": "workspace:mine"},
                as_="scoped_agent")
            while True:
                seen = (await scoped_on_b.next_event(timeout=10))["reviewEvents"]
                assert seen["namespace"] == "workspace:mine", seen
                if seen["candidateId"] == marker["remember"]["id"]:
                    break

    asyncio.run(scenario())


def test_what_one_worker_approves_the_other_recalls(workers: tuple[Server, Server]) -> None:
    a, b = workers
    space = f"workspace:r-{uuid.uuid4().hex[:8]}"
    # B loads the (empty) partition first; A then approves into it.
    assert b.ok('query($ns: String) { recall(query: "warm", namespace: $ns) { score } }',
                {"ns": space}, as_="agent")["recall"] == []
    cid = a.ok(REMEMBER, {"content": "Recall crosses workers through one Chroma server",
                          "kind": "FACT", "namespace": space}, as_="agent")["remember"]["id"]
    mid = a.ok('mutation($id: ID!) { approveCandidate(id: $id) { ... on Memory { id } } }',
               {"id": cid}, as_="reviewer")["approveCandidate"]["id"]
    hits = b.ok('query($ns: String) { recall(query: "recall crosses workers", namespace: $ns) '
                '{ memory { id } } }', {"ns": space}, as_="agent")["recall"]
    assert [h["memory"]["id"] for h in hits] == [mid]
