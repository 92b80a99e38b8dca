"""Server start with a big review queue: 6,000 pending candidates against an empty data dir.

Both data dirs are made the same way (migrated, an admin token, so neither start prints one);
one then gets 6,000 pending candidates through `MemoryService.submit` with the real embedder
(so their vectors are stored, as intake stores them). Side by side, alternating, `--rounds`
times each: `memvet serve` is started and timed until `/healthz` answers, then stopped. The
median of each is reported with the ratio (target ≤ 1.5×). Then, in process, the first
submission after a start: it reads its (namespace, kind) group's vectors back from the
database (the matcher loads lazily), and the same with the stored vectors deleted (a data dir
from before they were stored: that group is embedded then, once).

Run: `python -m bench.server_start [--n 6000] [--rounds 3]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import table, write_result
from bench.recall_latency import corpus
from memvet.api.settings import Settings
from memvet.api.wiring import build_runtime
from memvet.memory.access import Principal, Role
from memvet.memory.records import CandidateInput, OriginInput, Source
from tests.fixtures.net import free_port, stop_process, wait_http

ROOT = Path(__file__).resolve().parent.parent

AGENT = Principal(id="bench-agent", name="bench", role=Role.AGENT)
KINDS = ["fact", "event", "preference", "pattern", "decision", "postmortem"]
CACHE = ROOT / "bench" / ".cache" / "import-cache"  # the ONNX export, shared with import_speed


def settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir, cache_dir=CACHE, extractor="heuristic")


def prepare(data_dir: Path, n: int) -> float:
    """A data dir with an admin token and `n` pending candidates; returns seconds taken."""
    t = time.perf_counter()
    rt = build_runtime(settings(data_dir), with_extractor=False)
    try:
        service = rt.service
        service.start()
        service.create_token("admin", Principal.system("bench"), name="bench")
        texts = corpus(n)
        matcher = service._ctx.adapters.matcher  # noqa: SLF001 - embed the batch at once
        if texts and matcher is not None:
            matcher.prepare(texts)
        for i, text in enumerate(texts):
            service.submit(CandidateInput(text, KINDS[i % len(KINDS)],
                                          f"workspace:project-{i % 10}", Source.TURN, 0.6,
                                          OriginInput(f"conv-{i // 10}", f"turn-{i}")), AGENT)
    finally:
        rt.close()
    return time.perf_counter() - t


def start_seconds(data_dir: Path) -> float:
    """`memvet serve` from launch until /healthz answers."""
    port = free_port()
    env = {**os.environ, "MEMVET_DATA_DIR": str(data_dir), "MEMVET_CACHE_DIR": str(CACHE),
           "MEMVET_PORT": str(port), "HF_HUB_OFFLINE": "1", "MEMVET_EXTRACTOR": "heuristic"}
    log = data_dir.parent / f"{data_dir.name}-serve.log"
    with log.open("ab") as out:
        t = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "memvet.api.cli", "serve"], env=env,
                                stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            wait_http(f"http://127.0.0.1:{port}/healthz", 300, proc=proc, log=log)
            return time.perf_counter() - t
        finally:
            stop_process(proc)


def first_submit_ms(data_dir: Path, text: str) -> tuple[float, float]:
    """(start-up s, first submission ms) in process, into a (namespace, kind) group."""
    t = time.perf_counter()
    rt = build_runtime(settings(data_dir), with_extractor=False)
    try:
        rt.service.start()
        started = time.perf_counter() - t
        t = time.perf_counter()
        rt.service.submit(CandidateInput(text, "fact",
                                         "workspace:project-0", Source.TURN, 0.6), AGENT)
        return started, (time.perf_counter() - t) * 1000
    finally:
        rt.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memvet-start-") as tmp:
        empty, full = Path(tmp) / "empty", Path(tmp) / "queue"
        prepare(empty, 0)
        made = prepare(full, args.n)
        print(f"  {args.n} pending candidates submitted in {made:.0f} s", flush=True)
        times: dict[str, list[float]] = {"empty": [], "queue": []}
        for r in range(args.rounds):
            for label, data_dir in (("empty", empty), ("queue", full)):
                seconds = start_seconds(data_dir)
                times[label].append(seconds)
                print(f"  round {r + 1}: {label}: {seconds:.2f} s", flush=True)
        first_submit_ms(empty, "a warm-up note")  # imports, the ONNX session's first run
        stored_start, stored_first = first_submit_ms(full, "a new note about the release train")
        import sqlite3

        with sqlite3.connect(full / "memvet.db") as db:  # as if from before vectors were kept
            db.execute("DELETE FROM candidate_vectors")
        bare_start, bare_first = first_submit_ms(full, "another note about the nightly build")
    e, q = statistics.median(times["empty"]), statistics.median(times["queue"])
    text = "\n\n".join([
        f"`memvet serve` (SQLite, embedded Chroma, ONNX embedder, the heuristic extractor) "
        "from launch until `/healthz` "
        f"answers; median of {args.rounds} alternating starts each. Load average at the end: "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.",
        table(["data dir", "start s (median)", "starts"], [
            ["empty", f"{e:.2f}", ", ".join(f"{s:.2f}" for s in times["empty"])],
            [f"{args.n:,} pending candidates", f"{q:.2f}",
             ", ".join(f"{s:.2f}" for s in times["queue"])],
        ]),
        f"Start with {args.n:,} pending candidates is **{q / e:.2f}×** an empty one "
        "(target ≤ 1.5×): the matcher lists the queue at start and reads a (namespace, kind) "
        "group's stored vectors when it is first searched.",
        "The first submission after a start (in process, into a group of "
        f"{args.n // 60:,} candidates):",
        table(["stored candidate vectors", "in-process start s", "first submission ms"], [
            ["kept (this version)", f"{stored_start:.2f}", f"{stored_first:.0f}"],
            ["deleted (a data dir from before)", f"{bare_start:.2f}", f"{bare_first:.0f}"],
        ]),
    ])
    write_result("server_start", text)


if __name__ == "__main__":
    main()
