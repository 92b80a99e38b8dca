"""Cold start of `memvet hook claude-code` (SessionStart), as Claude Code runs it: a new
process per event. Repeated subprocess runs, hyperfine-style, against a dead server and a
live one (`memvet serve` with the fake embedder and a few approved memories), with
`python -c pass` as the floor. Prints p50/p95 and writes bench/results/hook_cold_start.md.

    python bench/hook_cold_start.py [--runs 40] [--embedder fake]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fixtures.net import free_port, http_process  # noqa: E402  (after the path tweak)

RESULTS = ROOT / "bench" / "results" / "hook_cold_start.md"


def memvet_exe() -> str:
    found = shutil.which("memvet", path=str(Path(sys.executable).parent)) or shutil.which(
        "memvet")
    if not found:
        raise SystemExit("memvet is not installed in this environment")
    return found


def measure(cmd: Sequence[str], stdin: bytes, env: dict[str, str], runs: int) -> list[float]:
    subprocess.run(cmd, input=stdin, env=env, capture_output=True, check=False)  # warm the disk
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, input=stdin, env=env, capture_output=True, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return times


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def graphql(url: str, token: str, query: str, variables: dict[str, object]) -> dict[str, object]:
    import httpx

    r = httpx.post(f"{url}/graphql", json={"query": query, "variables": variables},
                   headers={"Authorization": f"Bearer {token}"}, timeout=30, trust_env=False)
    r.raise_for_status()
    return dict(r.json()["data"])


def seed(url: str, admin: str, workspace: str, n: int) -> None:
    add = ("mutation($c: String!, $k: MemoryKind!, $n: String) { addCandidate(content: $c, "
           "kind: $k, namespace: $n) { ... on Candidate { id } } }")
    approve = "mutation($id: ID!) { approveCandidate(id: $id) { __typename } }"
    kinds = ["DECISION", "POSTMORTEM", "FACT", "PATTERN", "PREFERENCE", "EVENT"]
    for i in range(n):
        kind = kinds[i % len(kinds)]
        data = graphql(url, admin, add, {"c": f"Memory number {i}: the {kind.lower()} about "
                                              f"component {i} of the shop.", "k": kind,
                                         "n": f"workspace:{workspace}"})
        cid = data["addCandidate"]["id"]  # type: ignore[index]
        graphql(url, admin, approve, {"id": cid})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--memories", type=int, default=60, help="approved memories to seed")
    ap.add_argument("--embedder", default="fake")
    args = ap.parse_args()

    exe = memvet_exe()
    hook = [exe, "hook", "claude-code"]
    rows: list[tuple[str, list[float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "shop-api"
        (repo / ".git").mkdir(parents=True)
        payload = json.dumps({"hook_event_name": "SessionStart", "session_id": "bench",
                              "cwd": str(repo), "source": "startup"}).encode()
        base = {**os.environ, "PYTHONPATH": str(ROOT), "MEMVET_HOOK_LOG": f"{tmp}/hook.log"}
        rows.append(("python -c pass (floor)",
                     measure([sys.executable, "-c", "pass"], b"", base, args.runs)))
        dead = {**base, "MEMVET_URL": f"http://127.0.0.1:{free_port()}", "MEMVET_TOKEN": "x"}
        rows.append(("hook, server down", measure(hook, payload, dead, args.runs)))

        port = free_port()
        url = f"http://127.0.0.1:{port}"
        data_dir = Path(tmp) / "data"
        env = {**base, "MEMVET_DATA_DIR": str(data_dir), "MEMVET_EMBEDDER": args.embedder,
               "MEMVET_PORT": str(port), "MEMVET_EXTRACTOR": "heuristic"}
        log = Path(tmp) / "serve.log"
        with http_process([exe, "serve"], f"{url}/healthz", log=log, env=env, timeout=180):
            admin = ""
            for line in log.read_text().splitlines():
                if line.strip().startswith("mvt_"):
                    admin = line.strip()
            if not admin:
                raise SystemExit("no admin token in the server log")
            created = graphql(url, admin, "mutation { createToken(role: AGENT, name: \"bench\")"
                                          " { ... on CreatedToken { token } } }", {})
            agent = created["createToken"]["token"]  # type: ignore[index]
            seed(url, admin, "shop-api", args.memories)
            live = {**base, "MEMVET_URL": url, "MEMVET_TOKEN": str(agent)}
            out = subprocess.run(hook, input=payload, env=live, capture_output=True, check=True)
            context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
            rows.append((f"hook, live server ({args.memories} memories, {len(context)} chars "
                         "out)", measure(hook, payload, live, args.runs)))

    lines = [
        "# `memvet hook claude-code` cold start (SessionStart)",
        "",
        f"{args.runs} runs each, a new process per run as Claude Code does; wall time of the "
        "whole subprocess. Target: ≤ 150 ms.",
        f"Machine: {platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs; embedder `{args.embedder}` on the live server.",
        "",
        "| case | p50 ms | p95 ms | min ms |",
        "|---|---:|---:|---:|",
    ]
    for name, times in rows:
        lines.append(f"| {name} | {statistics.median(times):.0f} | {pct(times, 0.95):.0f} | "
                     f"{min(times):.0f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
