"""The test infrastructure itself: the PostgreSQL fixture, the net helpers, CI wiring."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.fixtures.net import free_port, http_process, wait_http
from tests.fixtures.postgres import PostgresServer

ROOT = Path(__file__).resolve().parent.parent


def test_postgres_select_one(postgres_url: str) -> None:
    engine = sa.create_engine(postgres_url)
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text("select 1")).scalar_one() == 1
            assert engine.dialect.name == "postgresql"
            assert engine.dialect.driver == "psycopg"
    finally:
        engine.dispose()


def test_postgres_create_table_roundtrip(postgres_url: str) -> None:
    engine = sa.create_engine(postgres_url)
    meta = sa.MetaData()
    notes = sa.Table(
        "notes",
        meta,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("body", sa.Text, nullable=False),
    )
    try:
        meta.create_all(engine)
        with engine.begin() as conn:
            conn.execute(notes.insert(), [{"body": "ünïcode"}, {"body": "two"}])
        with engine.connect() as conn:
            rows = conn.execute(sa.select(notes.c.body).order_by(notes.c.id)).scalars().all()
        assert rows == ["ünïcode", "two"]
    finally:
        engine.dispose()


def test_postgres_url_is_a_fresh_database(postgres_url: str) -> None:
    engine = sa.create_engine(postgres_url)
    try:
        assert sa.inspect(engine).get_table_names() == []
        assert postgres_url.rsplit("/", 1)[1].startswith("test_")
    finally:
        engine.dispose()


def test_postgres_databases_are_isolated(postgres_server: PostgresServer) -> None:
    url_a = postgres_server.create_database("infra_a")
    url_b = postgres_server.create_database("infra_b")
    engine_a, engine_b = sa.create_engine(url_a), sa.create_engine(url_b)
    try:
        with engine_a.begin() as conn:
            conn.execute(sa.text("create table only_in_a (x int)"))
        assert sa.inspect(engine_a).get_table_names() == ["only_in_a"]
        assert sa.inspect(engine_b).get_table_names() == []
    finally:
        engine_a.dispose()
        engine_b.dispose()
        postgres_server.drop_database("infra_a")
        postgres_server.drop_database("infra_b")


def test_postgres_server_listens_on_loopback(postgres_server: PostgresServer) -> None:
    assert postgres_server.url("x") == (
        f"postgresql+psycopg://{postgres_server.user}@127.0.0.1:{postgres_server.port}/x"
    )
    assert postgres_server.socket_dir.is_relative_to(postgres_server.basedir)


def test_free_port_and_wait_http(tmp_path: Path) -> None:
    port = free_port()
    cmd = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    url = f"http://127.0.0.1:{port}/"
    with http_process(cmd, url, log=tmp_path / "http.log", cwd=tmp_path, timeout=30) as proc:
        assert proc.poll() is None
        assert wait_http(url, 5).status_code == 200
    assert proc.poll() is not None


def test_wait_http_reports_an_early_exit(tmp_path: Path) -> None:
    log = tmp_path / "dead.log"
    cmd = [sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"]
    with pytest.raises(RuntimeError, match="exited with 3"):
        with http_process(cmd, f"http://127.0.0.1:{free_port()}/", log=log, timeout=10):
            pass


def test_ci_run_calls_make_test_and_lint_without_masking() -> None:
    script = ROOT / ".ci" / "run"
    text = script.read_text()
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    assert os.access(script, os.X_OK)
    commands = [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert commands[-2:] == ["make test", "make lint"]
    assert not re.search(r"\|\|\s*(true|:)|\|\s*tee\b|set \+e", text)


def test_make_test_runs_pytest_offline_with_args() -> None:
    out = subprocess.run(
        ["make", "-n", "test", "PYTEST_ARGS=-k smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pytest_line = next(line for line in out.splitlines() if ".venv/bin/pytest" in line)
    assert "HF_HUB_OFFLINE=1" in pytest_line
    assert "TRANSFORMERS_OFFLINE=1" in pytest_line
    assert pytest_line.endswith("-k smoke")
    assert "|| true" not in out
