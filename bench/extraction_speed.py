"""Heuristic extraction speed: p50 / p95 milliseconds per turn over the dev set.

    .venv/bin/python bench/extraction_speed.py [--cases FILE] [--repeat 20]

Prints a small markdown table (for BENCHMARKS.md). The budget is p95 <= 5 ms per turn.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from memvet.extraction.heuristic import HeuristicExtractor  # noqa: E402
from memvet.memory.ports import ExtractionContext, Message  # noqa: E402

DEFAULT_CASES = ROOT.parent / "shared" / "eval" / "extraction-dev.jsonl"
BUDGET_P95_MS = 5.0


def load_cases(path: Path) -> list[tuple[list[Message], ExtractionContext]]:
    cases = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            case = json.loads(line)
            messages = [Message(m["role"], m["content"]) for m in case["messages"]]
            context = ExtractionContext(
                workspace=case.get("workspace"),
                persona=case.get("persona") or "default",
                trigger=case.get("trigger") or "turn",
            )
            cases.append((messages, context))
    return cases


def percentile(sorted_values: Sequence[float], q: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


def measure(cases: list[tuple[list[Message], ExtractionContext]], repeat: int) -> dict[str, float]:
    """Milliseconds per extract() call, over `repeat` passes of every case."""
    extractor = HeuristicExtractor()
    for messages, context in cases:  # warm up regex caches
        extractor.extract(messages, context)
    timings: list[float] = []
    for _ in range(repeat):
        for messages, context in cases:
            start = time.perf_counter()
            extractor.extract(messages, context)
            timings.append((time.perf_counter() - start) * 1000)
    timings.sort()
    return {
        "calls": len(timings),
        "p50": percentile(timings, 0.50),
        "p95": percentile(timings, 0.95),
        "max": timings[-1],
        "mean": statistics.fmean(timings),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the table; 1 when p95 is over budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    cases = load_cases(args.cases)
    r = measure(cases, max(1, args.repeat))
    text = (
        f"Heuristic extraction, {len(cases)} cases x {args.repeat} ({int(r['calls'])} calls)\n\n"
        "| extractor | p50 ms/turn | p95 ms/turn | max ms | budget p95 |\n"
        "|---|---|---|---|---|\n"
        f"| heuristic | {r['p50']:.2f} | {r['p95']:.2f} | {r['max']:.2f} | "
        f"{BUDGET_P95_MS:.0f} ms {'ok' if r['p95'] <= BUDGET_P95_MS else 'OVER'} |\n"
    )
    print(text)
    results = Path(__file__).resolve().parent / "results"
    results.mkdir(exist_ok=True)
    (results / "extraction_speed.md").write_text(text, encoding="utf-8")
    return 0 if r["p95"] <= BUDGET_P95_MS else 1


if __name__ == "__main__":
    sys.exit(main())
