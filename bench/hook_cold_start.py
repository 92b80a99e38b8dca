"""Cold start of `memvet hook claude-code` (SessionStart), as Claude Code runs it: a new
process per event. Repeated subprocess runs, hyperfine-style, against a dead server and a
live one (`memvet serve` with the fake embedder and a few approved memories), with
`python -c pass` as the floor. Prints p50/p95 and writes bench/results/hook_cold_start.md.

    python -m bench.hook_cold_start [--runs 40] [--embedder fake]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from tests.fixtures.net import free_port, http_process

ROOT = Path(__file__).resolve().parents[1]

RESULTS = ROOT / "bench" / "results" / "hook_cold_start.md"


def memvet_exe() -> str:
    found = shutil.which("memvet", path=str(Path(sys.executable).parent)) or shutil.which(
        "memvet")
    if not found:
        raise SystemExit("memvet is not installed in this environment")
    return found


def run_once(cmd: Sequence[str], stdin: bytes, env: dict[str, str]) -> tuple[float, float]:
    """Wall ms and CPU ms (user + sys of the child) for one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, input=stdin, env=env, capture_output=True, check=False)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def measure(cases: dict[str, tuple[Sequence[str], bytes, dict[str, str]]], runs: int
            ) -> dict[str, tuple[list[float], list[float]]]:
    """Round-robin over the cases, so that load from elsewhere hits them all alike."""
    out: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in cases}
    for cmd, stdin, env in cases.values():  # warm the disk cache
        subprocess.run(cmd, input=stdin, env=env, capture_output=True, check=False)
    for _ in range(runs):
        for name, (cmd, stdin, env) in cases.items():
            wall, cpu = run_once(cmd, stdin, env)
            out[name][0].append(wall)
            out[name][1].append(cpu)
    return out


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
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "shop-api"
        (repo / ".git").mkdir(parents=True)
        payload = json.dumps({"hook_event_name": "SessionStart", "session_id": "bench",
                              "cwd": str(repo), "source": "startup"}).encode()
        base = {**os.environ, "MEMVET_HOOK_LOG": f"{tmp}/hook.log"}
        dead = {**base, "MEMVET_URL": f"http://127.0.0.1:{free_port()}", "MEMVET_TOKEN": "x"}

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
            load = os.getloadavg()[0]
            rows = measure({
                "python -c pass (floor)": ([sys.executable, "-c", "pass"], b"", base),
                "hook, server down": (hook, payload, dead),
                f"hook, live server ({args.memories} memories, {len(context)} chars out)":
                    (hook, payload, live),
            }, args.runs)
            load = max(load, os.getloadavg()[0])

    lines = [
        "# `memvet hook claude-code` cold start (SessionStart)",
        "",
        f"{args.runs} runs per case, round-robin, a new process per run as Claude Code does. "
        "Wall: the whole subprocess; CPU: its user + system time (less sensitive to other "
        "load on the machine). Target: ≤ 150 ms.",
        f"Machine: {platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average up to {load:.1f} while measuring; embedder "
        f"`{args.embedder}` on the live server.",
        "",
        "| case | wall p50 ms | wall p95 ms | wall min ms | CPU p50 ms |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, (walls, cpus) in rows.items():
        lines.append(f"| {name} | {statistics.median(walls):.0f} | {pct(walls, 0.95):.0f} | "
                     f"{min(walls):.0f} | {statistics.median(cpus):.0f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
