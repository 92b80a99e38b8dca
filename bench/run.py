"""Run every benchmark in one go and write BENCHMARKS.md with the machine they ran on.

Each benchmark is a module with `main()` that prints markdown and writes
`bench/results/<name>.md`; this script runs them one after another (each in its own process,
so one model load or one crash does not skew the next) and stitches the results together.

    python -m bench.run [--only intake,locomo_recall] [--quick]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.common import machine

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"

# (module, title, extra args in quick mode)
BENCHES: list[tuple[str, str, list[str]]] = [
    ("extraction_quality", "Extraction quality (the learned extractor)", []),
    ("extraction_speed", "Extraction speed", []),
    ("intake", "Intake throughput", []),
    ("locomo_recall", "Recall quality on LoCoMo", []),
    ("recall_latency", "Recall latency and HNSW recall", ["--quick"]),
    ("import_speed", "Import throughput against a bare sentence-transformers encode", []),
    ("server_start", "Server start with a big review queue", []),
    ("mem0_compare", "Side by side with mem0", []),
    ("api_latency", "API latency", []),
    ("hook_cold_start", "Claude Code hook cold start", []),
    ("robustness", "Robustness: concurrent writers and a GraphQL fuzz", []),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", help="comma-separated benchmark modules")
    parser.add_argument("--quick", action="store_true", help="smaller corpora where supported")
    args = parser.parse_args(argv)
    wanted = set(args.only.split(",")) if args.only else None
    RESULTS.mkdir(parents=True, exist_ok=True)
    failures = []
    for module, _title, quick_args in BENCHES:
        if wanted and module not in wanted:
            continue
        if not (ROOT / "bench" / f"{module}.py").exists():
            print(f"bench: {module} not found, skipping", file=sys.stderr)
            continue
        cmd = [sys.executable, "-m", f"bench.{module}", *(quick_args if args.quick else [])]
        print(f"bench: running {module} ...", file=sys.stderr, flush=True)
        started = time.monotonic()
        proc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        if proc.returncode != 0:
            failures.append(module)
        print(f"bench: {module} took {time.monotonic() - started:.0f} s", file=sys.stderr)
    write_report()
    if failures:
        print(f"bench: failed: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


def write_report() -> None:
    parts = [
        "# Benchmarks\n",
        "Written by `make bench` (`python -m bench.run`); each section is the latest result of",
        "one benchmark in `bench/`, with the date and the machine it ran on.\n",
        f"Machine of the latest run: {machine()}\n",
    ]
    for module, title, _ in BENCHES:
        path = RESULTS / f"{module}.md"
        if path.exists():  # its first line says when and on what machine (common.write_result)
            parts.append(f"## {title}\n")
            parts.append(path.read_text(encoding="utf-8").strip() + "\n")
    (ROOT / "BENCHMARKS.md").write_text("\n".join(parts), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
