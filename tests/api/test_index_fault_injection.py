"""The database is the source of truth: a process killed (SIGKILL) between the database commit
and the index write loses nothing, and never exposes what is not approved."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from memvet.api.settings import Settings
from memvet.api.wiring import build_runtime
from memvet.memory.access import Principal
from memvet.memory.records import CandidateInput, Source

ROOT = Path(__file__).resolve().parents[2]

# Runs in a child process: approve (or delete) through the real service with an index whose
# write kills the process — after the transaction has committed, before the index has it.
CHILD = textwrap.dedent("""
    import os, signal, sys
    from memvet.api.settings import Settings
    from memvet.api.wiring import build_runtime, make_embedder, make_index
    from memvet.memory.access import Principal

    data_dir, action, target = sys.argv[1:4]
    settings = Settings(data_dir=data_dir, embedder="fake", extractor="heuristic")
    real = make_index(settings, make_embedder(settings))

    class DiesOnWrite:
        def __getattr__(self, name):
            return getattr(real, name)
        def upsert(self, memories):
            os.kill(os.getpid(), signal.SIGKILL)
        def remove(self, namespace, ids):
            os.kill(os.getpid(), signal.SIGKILL)

    rt = build_runtime(settings, index=DiesOnWrite(), with_extractor=False)
    who = Principal.system()
    if action == "approve":
        rt.service.approve(target, who)
    else:
        rt.service.delete_memory(target, who)
    print("survived")
""")


def kill_during(data_dir: Path, action: str, target: str) -> None:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(data_dir), action, target],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr[-2000:]
    assert "survived" not in proc.stdout


def open_runtime(data_dir: Path, *, start: bool):
    rt = build_runtime(Settings(data_dir=data_dir, embedder="fake", extractor="heuristic"),
                       with_extractor=False)
    if start:
        rt.service.start()
    return rt


def recalled(rt, query: str) -> list[str]:
    return [h.memory.content for h in rt.service.recall(query, Principal.system(), limit=10)]


def test_kill_between_commit_and_index_write(tmp_path: Path) -> None:
    who = Principal.system()
    rt = open_runtime(tmp_path, start=True)
    keep = rt.service.submit(CandidateInput(
        "The orders service listens on port 5433", "fact", "workspace:shop", Source.EXPLICIT,
        0.9), who).candidate
    pending = rt.service.submit(CandidateInput(
        "The orders service is written in Rust", "fact", "workspace:shop", Source.EXPLICIT,
        0.9), who).candidate
    rejected = rt.service.submit(CandidateInput(
        "The orders service uses MongoDB", "fact", "workspace:shop", Source.EXPLICIT,
        0.9), who).candidate
    rt.service.reject(rejected.id, who)
    doomed = rt.service.approve(rt.service.submit(CandidateInput(
        "The orders service caches in Redis", "fact", "workspace:shop", Source.EXPLICIT,
        0.9), who).candidate.id, who)
    assert "The orders service caches in Redis" in recalled(rt, "orders service redis cache")
    rt.close()

    # 1. Approve commits, the process dies before the index write.
    kill_during(tmp_path, "approve", keep.id)
    rt = open_runtime(tmp_path, start=False)
    # Before reconciliation nothing unapproved shows up either.
    before = recalled(rt, "orders service")
    assert "The orders service is written in Rust" not in before
    assert "The orders service uses MongoDB" not in before
    rt.service.start()  # start-up reconciliation
    after = recalled(rt, "orders service port")
    assert "The orders service listens on port 5433" in after
    assert all(c not in after for c in ("The orders service is written in Rust",
                                        "The orders service uses MongoDB"))
    rt.close()

    # 2. Delete commits, the process dies before the index removal: the deleted memory is
    # never served, not even before reconciliation, and is gone from the index after it.
    kill_during(tmp_path, "delete", doomed.id)
    rt = open_runtime(tmp_path, start=False)
    assert "The orders service caches in Redis" not in recalled(rt, "orders service redis cache")
    report = rt.service.start()
    assert report is not None and report.removed == 1
    assert doomed.id not in rt.service.index.snapshot().get("workspace:shop", {})
    assert pending.id  # still pending, never indexed
    rt.close()
