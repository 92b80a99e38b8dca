"""The data-dir commands, run as a user would: `memvet ...` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.fixtures.net import free_port, wait_http

ROOT = Path(__file__).resolve().parents[2]
MEMVET = [sys.executable, "-m", "memvet.api.cli"]


def run(*args: str, data_dir: Path, stdin: str | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "MEMVET_DATA_DIR": str(data_dir), "MEMVET_EMBEDDER": "fake",
                "MEMVET_EXTRACTOR": "heuristic",
                **(env or {})}
    return subprocess.run([*MEMVET, *args], cwd=ROOT, capture_output=True, text=True,
                          input=stdin, env=full_env, timeout=120)


def seed(data_dir: Path) -> None:
    """Some of everything: candidates of each status, origins, a turn, an edit, a setting."""
    from memvet.api.settings import Settings
    from memvet.api.wiring import build_runtime
    from memvet.memory.access import Principal
    from memvet.memory.ports import Message
    from memvet.memory.records import (
        CandidateEdit,
        CandidateInput,
        OriginInput,
        Source,
        TurnSubmission,
    )

    rt = build_runtime(Settings(data_dir=data_dir, embedder="fake", extractor="heuristic"),
                       with_index=False, lock=False)
    s, who = rt.service, Principal.system()
    a = s.submit(CandidateInput("We use pnpm here, not npm — naïve “quotes”", "fact",
                                "workspace:shop-api", Source.EXPLICIT, 0.8,
                                OriginInput("c1", "t1", "we use pnpm")), who)
    s.submit(CandidateInput("we use pnpm here, not npm — naïve “quotes”", "fact",
                            "workspace:shop-api", Source.TURN, 0.9, OriginInput("c1", "t2")), who)
    b = s.submit(CandidateInput("Tauri over Electron for bundle size", "decision",
                                "workspace:desk", Source.TURN, 0.7), who)
    c = s.submit(CandidateInput("prefers tabs", "preference", None, Source.MANUAL, 1.0), who)
    s.approve(a.candidate.id, who, edit=CandidateEdit(content="shop-api uses pnpm, not npm"))
    s.edit_candidate(b.candidate.id, CandidateEdit(kind="pattern"), who)
    s.reject(c.candidate.id, who, reason="not true")
    s.submit_turn(TurnSubmission("c2", "1", [Message("user", "from now on keep answers short"),
                                             Message("assistant", "OK.")], "shop-api"), who)
    s.set_active_persona("alice", who)
    rt.close()


def test_help_lists_the_commands(tmp_path: Path) -> None:
    out = run("--help", data_dir=tmp_path).stdout
    for command in ("serve", "token", "export", "import", "archive", "reindex", "ingest",
                    "extract", "schema"):
        assert command in out


def test_export_import_round_trips_byte_for_byte(tmp_path: Path) -> None:
    seed(tmp_path / "a")
    first = tmp_path / "one.jsonl"
    assert run("export", "--output", str(first), data_dir=tmp_path / "a").returncode == 0
    records = [json.loads(line) for line in first.read_text().splitlines()]
    assert {r["record"] for r in records} >= {"candidate", "memory", "transition", "origin",
                                               "setting", "turn"}
    imported = run("import", str(first), data_dir=tmp_path / "b")
    assert imported.returncode == 0, imported.stderr
    second = run("export", data_dir=tmp_path / "b")
    assert second.returncode == 0
    assert second.stdout.encode() == first.read_bytes()


def test_import_refuses_bad_lines_by_number_and_writes_nothing(tmp_path: Path) -> None:
    lines = [
        {"record": "memory", "content": "ok line", "kind": "fact", "namespace": "workspace:a"},
        {"record": "memory", "content": "ghost", "kind": "opinion", "namespace": "workspace:a"},
        {"record": "memory", "content": "bad ns", "kind": "fact", "namespace": "project:a"},
        {"record": "memory", "content": "", "kind": "fact", "namespace": "workspace:a"},
        {"record": "widget", "content": "x"},
    ]
    text = "\n".join(json.dumps(x) for x in lines) + "\nnot json\n"
    result = run("import", "-", data_dir=tmp_path, stdin=text)
    assert result.returncode == 1
    for number in (2, 3, 4, 5, 6):
        assert f"-:{number}:" in result.stderr
    assert "-:1:" not in result.stderr
    assert "nothing was written" in result.stderr
    exported = run("export", data_dir=tmp_path).stdout
    assert exported == ""


def test_minimal_memory_lines_arrive_approved(tmp_path: Path) -> None:
    text = json.dumps({"record": "memory", "content": "Deploys go through the staging slot",
                       "kind": "pattern", "namespace": "workspace:shop-api"}) + "\n"
    assert run("import", "-", data_dir=tmp_path, stdin=text).returncode == 0
    records = [json.loads(x) for x in run("export", data_dir=tmp_path).stdout.splitlines()]
    memory = next(r for r in records if r["record"] == "memory")
    candidate = next(r for r in records if r["record"] == "candidate")
    assert memory["content"] == "Deploys go through the staging slot"
    assert candidate["status"] == "approved"
    # Importing the same bare memory again is a duplicate, not a second memory.
    assert run("import", "-", data_dir=tmp_path, stdin=text).returncode == 0
    again = [json.loads(x) for x in run("export", data_dir=tmp_path).stdout.splitlines()]
    assert sum(r["record"] == "memory" for r in again) == 1


def test_token_create_prints_the_token_once_and_stores_a_hash(tmp_path: Path) -> None:
    result = run("token", "create", "--role", "agent", "--namespace", "workspace:shop-api",
                 "--name", "ci-bot", data_dir=tmp_path)
    assert result.returncode == 0, result.stderr
    token = result.stdout.strip()
    assert token.startswith("mvt_")
    assert token.encode() not in (tmp_path / "memvet.db").read_bytes()
    listed = run("token", "list", data_dir=tmp_path).stdout
    assert "ci-bot" in listed and "workspace:shop-api" in listed and token not in listed
    several = run("token", "create", "--role", "reviewer", "--namespace", "workspace:a",
                  "workspace:b", "--namespace", "persona:c", data_dir=tmp_path)
    assert several.returncode == 0
    assert "persona:c,workspace:a,workspace:b" in run("token", "list", data_dir=tmp_path).stdout
    bad = run("token", "create", "--role", "agent", "--namespace", "nope:x", data_dir=tmp_path)
    assert bad.returncode == 2 and "invalid_namespace" in bad.stderr


def test_archive_command_archives_stale_pending(tmp_path: Path) -> None:
    seed(tmp_path)
    result = run("archive", "--days", "0", data_dir=tmp_path)
    assert result.returncode == 0
    assert "archived 2 pending" in result.stderr  # the edited pattern + the turn's candidate
    records = [json.loads(x) for x in run("export", data_dir=tmp_path).stdout.splitlines()]
    statuses = {r["status"] for r in records if r["record"] == "candidate"}
    assert "pending" not in statuses


def test_ingest_stores_the_turn_and_extracts(tmp_path: Path) -> None:
    payload = {"conversation_id": "conv-9", "turn_id": "4", "workspace": "shop-api",
               "messages": [{"role": "user", "content": "We use pnpm here, not npm. Never "
                             "generate a package-lock.json."},
                            {"role": "assistant", "content": "Got it, pnpm only."}]}
    first = run("ingest", "-", data_dir=tmp_path, stdin=json.dumps(payload))
    assert first.returncode == 0, first.stderr
    found = [json.loads(x) for x in first.stdout.splitlines()]
    assert any("pnpm" in c["content"] and c["namespace"] == "workspace:shop-api" for c in found)
    again = run("ingest", "-", data_dir=tmp_path, stdin=json.dumps(payload))
    assert "already ingested" in again.stderr
    bad = run("ingest", "-", data_dir=tmp_path, stdin=json.dumps({**payload, "messages": []}))
    assert bad.returncode == 2 and "no messages" in bad.stderr


def test_second_server_on_the_same_data_dir_refuses(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "MEMVET_DATA_DIR": str(tmp_path), "MEMVET_EMBEDDER": "fake",
           "MEMVET_EXTRACTOR": "heuristic"}
    first = subprocess.Popen([*MEMVET, "serve", "--port", str(port)], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", timeout=90, proc=first)
        second = subprocess.run([*MEMVET, "serve", "--port", str(free_port())], cwd=ROOT,
                                env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        assert "already using" in second.stderr
        assert httpx.get(f"http://127.0.0.1:{port}/healthz").json()["status"] == "ok"
        # The legacy sign-in link still works, and its token never reaches the access log.
        legacy = httpx.get(f"http://127.0.0.1:{port}/?token=mvt_legacy-secret-123")
        assert legacy.status_code == 200
    finally:
        first.terminate()
        out, err = first.communicate(timeout=30)
    # The first start with no tokens printed an admin token and the dashboard URL, which
    # signs in by fragment (a fragment never reaches the server).
    assert f"http://127.0.0.1:{port}/#token=mvt_" in err
    assert "GET /?token=[redacted]" in out + err
    assert "legacy-secret-123" not in out + err
    time.sleep(0.1)
