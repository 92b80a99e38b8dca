"""Fixtures for the memory-core tests: a store on SQLite and on PostgreSQL, a service."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from memvet.memory.service import MemoryService
from memvet.memory.store import migrate
from memvet.memory.store.engine import make_engine
from tests.memory.support import FakeClock, FakeIndex


@pytest.fixture(
    params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
)
def engine_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database: a SQLite file, or a PostgreSQL database of the test cluster."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'memvet.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def engine(engine_url: str) -> Iterator[Engine]:
    eng = make_engine(engine_url)
    migrate.upgrade(eng)
    try:
        yield eng
    finally:
        eng.dispose()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(engine: Engine, clock: FakeClock) -> Iterator[MemoryService]:
    svc = MemoryService(engine=engine, clock=clock)
    try:
        yield svc
    finally:
        svc.close()


@pytest.fixture
def index() -> FakeIndex:
    return FakeIndex()


@pytest.fixture
def indexed_service(engine: Engine, clock: FakeClock, index: FakeIndex) -> Iterator[MemoryService]:
    svc = MemoryService(engine=engine, clock=clock, index=index)
    try:
        yield svc
    finally:
        svc.close()
