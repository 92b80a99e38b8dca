"""Intake throughput: 10,000 submissions, 30 % of them equivalents of earlier ones.

Runs the same workload through `MemoryService.submit` on SQLite (a temp data dir) and on
PostgreSQL (a private cluster started like the test suite's, from Debian's `postgresql`
package), and prints a markdown table: submissions/s, p50/p95 ms per submission. The table
also goes to bench/results/intake.md.

    python -m bench.intake [--n 10000] [--equivalent 0.3] [--only sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from memvet.memory.access import Principal, Role
from memvet.memory.records import CandidateInput, OriginInput, Outcome, Source
from memvet.memory.service import MemoryService
from memvet.memory.store import migrate
from memvet.memory.store.engine import make_engine

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"

AGENT = Principal(id="bench-agent", name="bench", role=Role.AGENT)
KINDS = ["fact", "decision", "preference", "pattern", "postmortem", "event"]
NAMESPACES = ["workspace:shop-api", "workspace:web", "workspace:infra", "persona:alex"]
SUBJECTS = ["the shop API", "the web app", "CI", "the deploy script", "the test suite",
            "the billing service", "the mobile client", "the docs site"]
VERBS = ["uses", "prefers", "must not use", "switched to", "pins", "dropped", "needs"]
OBJECTS = ["pnpm", "tabs", "PostgreSQL 16", "Tauri", "ruff", "uv", "Redis", "feature flags",
           "trunk-based development", "squash merges", "Python 3.12", "OpenTelemetry"]


@dataclass(frozen=True)
class Item:
    content: str
    kind: str
    namespace: str
    confidence: float
    equivalent: bool


def workload(n: int, equivalent_share: float, seed: int = 7) -> list[Item]:
    """`n` submissions; a share of them re-submit an earlier text in another dress."""
    rng = random.Random(seed)
    items: list[Item] = []
    originals: list[Item] = []
    for i in range(n):
        if originals and rng.random() < equivalent_share:
            base = rng.choice(originals)
            text = base.content
            text = rng.choice([text.upper(), text.lower(), text.title(), text])
            text = rng.choice(["", " ", "\""]) + text.replace(" ", rng.choice([" ", "  "]))
            text += rng.choice(["", ".", "!", " ", "?"])
            items.append(Item(text, base.kind.upper() if rng.random() < 0.2 else base.kind,
                              base.namespace, round(rng.uniform(0.3, 1.0), 2), True))
        else:
            text = (f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
                    f"(note {i})")
            item = Item(text, rng.choice(KINDS), rng.choice(NAMESPACES),
                        round(rng.uniform(0.3, 1.0), 2), False)
            originals.append(item)
            items.append(item)
    return items


@dataclass(frozen=True)
class Result:
    store: str
    n: int
    seconds: float
    p50_ms: float
    p95_ms: float
    created: int
    merged: int
    cpu_ms: float  # this process's CPU time per submission (the machine may be shared)

    @property
    def per_second(self) -> float:
        return self.n / self.seconds


def run(url: str, label: str, items: list[Item]) -> Result:
    engine = make_engine(url)
    migrate.upgrade(engine)
    svc = MemoryService(engine=engine)
    # warm-up outside the timing: imports, statement caches, the first connection
    for i in range(50):
        svc.submit(CandidateInput(f"warm-up {i}", "fact", "workspace:warmup"), AGENT)
    latencies: list[float] = []
    outcomes: dict[Outcome, int] = {}
    started, cpu_started = time.perf_counter(), time.process_time()
    for i, item in enumerate(items):
        t0 = time.perf_counter()
        r = svc.submit(
            CandidateInput(item.content, item.kind, item.namespace, Source.TURN,
                           item.confidence, OriginInput(f"conv-{i // 20}", f"turn-{i}")),
            AGENT,
        )
        latencies.append(time.perf_counter() - t0)
        outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    svc.close()
    engine.dispose()
    cuts = statistics.quantiles(latencies, n=100)
    return Result(label, len(items), seconds, cuts[49] * 1000, cuts[94] * 1000,
                  outcomes.get(Outcome.CREATED, 0), outcomes.get(Outcome.MERGED, 0),
                  cpu / len(items) * 1000)


@contextmanager
def sqlite_url() -> Iterator[str]:
    data = Path(tempfile.mkdtemp(prefix="memvet-bench-"))
    try:
        yield f"sqlite:///{data / 'memvet.db'}"
    finally:
        shutil.rmtree(data, ignore_errors=True)


@contextmanager
def postgres_url() -> Iterator[str]:
    """A private PostgreSQL cluster, the same one the test suite starts (tests/fixtures)."""
    from tests.fixtures.postgres import start_postgres

    server = start_postgres()
    try:
        yield server.create_database("memvet_bench")
    finally:
        server.stop()
        shutil.rmtree(server.basedir, ignore_errors=True)


def table(results: list[Result], n: int, share: float) -> str:
    lines = [
        f"Intake: {n:,} submissions through `MemoryService.submit`, {share:.0%} of them "
        "equivalents of earlier ones (case, spacing, edge punctuation varied); no recall "
        "index or semantic matcher; one client thread. Wall-clock figures depend on what else "
        "the machine runs (load average at the start: "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs).",
        "",
        "| store | submissions/s | p50 ms | p95 ms | client CPU ms/submission | created | merged |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r.store} | {r.per_second:,.0f} | {r.p50_ms:.2f} | {r.p95_ms:.2f} | {r.cpu_ms:.2f} | "
        f"{r.created:,} | {r.merged:,} |"
        for r in results
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--equivalent", type=float, default=0.3)
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    items = workload(args.n, args.equivalent)
    results: list[Result] = []
    if args.only in (None, "sqlite"):
        with sqlite_url() as url:
            results.append(run(url, "SQLite (WAL, temp data dir)", items))
    if args.only in (None, "postgresql"):
        with postgres_url() as url:
            results.append(run(url, "PostgreSQL (private local cluster)", items))
    text = table(results, args.n, args.equivalent)
    print(text)
    if not args.no_write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "intake.md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
