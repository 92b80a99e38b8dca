"""Robustness against a real `memvet serve`: concurrent writers, and a GraphQL fuzz.

1. Concurrency: 8 agent tokens each send 100 `remember`s of the same fact (case, spacing and
   punctuation varied) while a reviewer approves it and two clients recall it. Afterwards the
   store must hold one candidate and one memory with all 800 observations counted (8 of them
   independent: one per token), 800 origins, and no request may have failed.
2. Fuzz: hypothesis-graphql writes queries and one-field mutations from the schema for every
   role; counts what came back and checks that no answer is a 5xx or INTERNAL_SERVER_ERROR and
   that every refused mutation left the tables unchanged.

Run: `.venv/bin/python -m bench.robustness [--embedder onnx|fake] [--fuzz-examples N]`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from bench.api_latency import _free_port, _wait, seed_models
from bench.common import percentile, table, write_result

ROOT = Path(__file__).resolve().parent.parent
NS = "workspace:bench-concurrency"
FACT = "The deploy key for the staging cluster rotates every 90 days"
WRITERS, PER_WRITER = 8, 100
REMEMBER = """mutation($c: String!, $ns: String) { remember(content: $c, kind: FACT, namespace: $ns,
  confidence: 0.9) { __typename ... on Candidate { id status } ... on UserError { code } } }"""


def _variant(rng: random.Random) -> str:
    text = FACT
    if rng.random() < 0.5:
        text = text.lower()
    if rng.random() < 0.5:
        text = text.replace(" ", "  ", 2)
    return text + rng.choice(["", ".", "!", " ."])


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "memvet.api.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=True)
    return done.stdout.strip()


class Api:
    def __init__(self, url: str) -> None:
        self.url = url
        self.local = threading.local()

    def post(self, token: str, query: str, variables: dict[str, Any] | None = None
             ) -> tuple[int, dict[str, Any], float]:
        client = getattr(self.local, "client", None)
        if client is None:
            client = self.local.client = httpx.Client(trust_env=False, timeout=120)
        started = time.perf_counter()
        r = client.post(f"{self.url}/graphql", json={"query": query, "variables": variables or {}},
                        headers={"Authorization": f"Bearer {token}"})
        elapsed = (time.perf_counter() - started) * 1000
        try:
            body = r.json()
        except ValueError:
            body = {"raw": r.text}
        return r.status_code, body, elapsed


def concurrency(api: Api, agents: list[str], reviewer: str) -> dict[str, Any]:
    errors: list[str] = []
    latencies: list[float] = []
    done = threading.Event()
    approved: list[str] = []
    recalls = Counter()

    def writer(i: int) -> None:
        rng = random.Random(i)
        for _ in range(PER_WRITER):
            status, body, ms = api.post(agents[i], REMEMBER, {"c": _variant(rng), "ns": NS})
            latencies.append(ms)
            result = (body.get("data") or {}).get("remember") or {}
            if status != 200 or "errors" in body or result.get("__typename") != "Candidate":
                errors.append(json.dumps(body)[:300])

    def approver() -> None:
        query = ('query($ns: String) { candidates(status: PENDING, namespace: $ns) '
                 '{ nodes { id } } }')
        while not done.is_set() and not approved:
            _, body, _ = api.post(reviewer, query, {"ns": NS})
            for node in ((body.get("data") or {}).get("candidates") or {}).get("nodes", []):
                _, res, _ = api.post(reviewer, 'mutation($id: ID!) { approveCandidate(id: $id) '
                                               '{ __typename } }', {"id": node["id"]})
                if res.get("data", {}).get("approveCandidate", {}).get("__typename") == "Memory":
                    approved.append(node["id"])
            time.sleep(0.05)

    def recaller() -> None:
        while not done.is_set():
            status, body, _ = api.post(agents[0], '{ recall(query: "staging deploy key '
                                                  'rotation", limit: 5) { memory { id } } }')
            if status != 200 or "errors" in body:
                errors.append(json.dumps(body)[:300])
            recalls["hits" if (body.get("data") or {}).get("recall") else "empty"] += 1

    started = time.monotonic()
    side = [threading.Thread(target=approver), threading.Thread(target=recaller),
            threading.Thread(target=recaller)]
    for t in side:
        t.start()
    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(writer, range(WRITERS)))
    wall = time.monotonic() - started
    done.set()
    for t in side:
        t.join()
    _, body, _ = api.post(reviewer, 'query($ns: String) { candidates(namespace: $ns) { '
                                    'totalCount nodes { status observations '
                                    'independentObservations origins { id } memory { '
                                    'observations } } } }', {"ns": NS})
    nodes = body["data"]["candidates"]["nodes"]
    return {
        "requests": WRITERS * PER_WRITER, "wall": wall, "errors": len(errors),
        "error_samples": errors[:3], "p50": percentile(latencies, 50),
        "p95": percentile(latencies, 95), "candidates": body["data"]["candidates"]["totalCount"],
        "status": [n["status"] for n in nodes],
        "observations": [n["observations"] for n in nodes],
        "independent": [n["independentObservations"] for n in nodes],
        "origins": [len(n["origins"]) for n in nodes],
        "memory_observations": [n["memory"]["observations"] if n["memory"] else None
                                for n in nodes],
        "recalls": dict(recalls),
    }


def fuzz(api: Api, tokens: dict[str, str], db: Path, examples: int) -> dict[str, Any]:
    from dataclasses import replace

    from graphql import (
        DocumentNode,
        FieldNode,
        NameNode,
        OperationDefinitionNode,
        SelectionSetNode,
        build_schema,
        print_ast,
    )
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from hypothesis_graphql import strategies as gql_st
    from sqlalchemy import select

    from memvet.memory.store import tables
    from memvet.memory.store.engine import make_engine

    schema = build_schema((ROOT / "graph" / "schema.graphql").read_text())
    assert schema.mutation_type is not None and schema.query_type is not None
    mutations = sorted(schema.mutation_type.fields)
    engine = make_engine(f"sqlite:///{db}")
    stats: Counter[str] = Counter()
    problems: list[str] = []

    def dump() -> str:
        with engine.connect() as conn:
            return json.dumps({t.name: sorted(repr(tuple(r)) for r in conn.execute(select(t)))
                               for t in tables.metadata.sorted_tables})

    def typed(document: DocumentNode) -> str:
        op = document.definitions[0]
        assert isinstance(op, OperationDefinitionNode)
        root = op.selection_set.selections[0]
        if isinstance(root, FieldNode) and root.selection_set is not None:
            extra = FieldNode(name=NameNode(value="__typename"), arguments=(), directives=())
            root = replace(root, selection_set=SelectionSetNode(
                selections=(*root.selection_set.selections, extra)))
            op = replace(op, selection_set=SelectionSetNode(selections=(root,)))
        return print_ast(DocumentNode(definitions=(op,)))

    def check(role: str, query: str, field: str | None) -> None:
        before = dump() if field else ""
        status, body, _ = api.post(tokens[role], query)
        stats["requests"] += 1
        stats[f"http {status}"] += 1
        codes = [e.get("extensions", {}).get("code") for e in body.get("errors") or []]
        for code in codes:
            stats[f"code {code}"] += 1
        if status >= 500 or "INTERNAL_SERVER_ERROR" in codes:
            problems.append(f"{role}: {query[:200]} -> {json.dumps(body)[:300]}")
        if field:
            value = (body.get("data") or {}).get(field)
            refused = (value is None and bool(codes)) or (
                isinstance(value, dict) and str(value.get("__typename", "")).endswith("Error"))
            if refused:
                stats["refused mutations"] += 1
                if dump() != before:
                    problems.append(f"{role}: refused {field} wrote: {query[:200]}")

    base = settings(deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))
    def run_role(role: str) -> None:
        @settings(base, max_examples=examples)
        @given(gql_st.queries(schema, fields=sorted(schema.query_type.fields)))
        def queries(query: str) -> None:
            check(role, query, None)

        @settings(base, max_examples=examples * 3)
        @given(st.data())
        def writes(data: st.DataObject) -> None:
            field = data.draw(st.sampled_from(mutations))
            check(role, str(data.draw(gql_st.mutations(schema, fields=[field],
                                                       print_ast=typed))), field)

        queries()
        writes()

    for role in tokens:
        run_role(role)
    engine.dispose()
    return {"stats": stats, "problems": problems}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--embedder", default="onnx", choices=["onnx", "fake"])
    parser.add_argument("--fuzz-examples", type=int, default=100,
                        help="queries per role (mutations: three times as many)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memvet-robust-") as tmp:
        data_dir = Path(tmp)
        seed_models(data_dir)
        env = {**os.environ, "MEMVET_DATA_DIR": str(data_dir), "MEMVET_EMBEDDER": args.embedder,
               "MEMVET_CACHE_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
        agents = [_cli(env, "token", "create", "--role", "agent", "--name", f"agent-{i}")
                  for i in range(WRITERS)]
        tokens = {"admin": _cli(env, "token", "create", "--role", "admin"),
                  "reviewer": _cli(env, "token", "create", "--role", "reviewer"),
                  "agent": agents[0],
                  "scoped_reviewer": _cli(env, "token", "create", "--role", "reviewer",
                                          "--namespace", "workspace:mine"),
                  "scoped_agent": _cli(env, "token", "create", "--role", "agent",
                                       "--namespace", "workspace:mine")}
        port = _free_port()
        log = data_dir / "serve.log"
        with log.open("wb") as out:
            proc = subprocess.Popen([sys.executable, "-m", "memvet.api.cli", "serve", "--port",
                                     str(port)], cwd=ROOT, env=env, stdout=out,
                                    stderr=subprocess.STDOUT)
        try:
            _wait(f"http://127.0.0.1:{port}/healthz", proc, log)
            api = Api(f"http://127.0.0.1:{port}")
            conc = concurrency(api, agents, tokens["reviewer"])
            fz = fuzz(api, tokens, data_dir / "memvet.db", args.fuzz_examples)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        tracebacks = log.read_text(errors="replace").count("Traceback")
    report(conc, fz, args, tracebacks)


def report(conc: dict[str, Any], fz: dict[str, Any], args: argparse.Namespace,
           tracebacks: int) -> None:
    ok = (conc["errors"] == 0 and conc["candidates"] == 1 and conc["observations"] == [800]
          and conc["independent"] == [WRITERS] and conc["origins"] == [800]
          and conc["memory_observations"] == [800] and not fz["problems"])
    lines = [
        f"A real `memvet serve` (SQLite, embedded Chroma, {args.embedder} embedder) on this "
        "machine. Verdict: " + ("**all checks hold**." if ok else "**CHECKS FAILED**."),
        "",
        f"**Concurrent writers.** {WRITERS} agent tokens × {PER_WRITER} `remember`s of one fact "
        "(case, spacing and punctuation varied), a reviewer approving it and two clients "
        "recalling alongside.",
        "",
        table(["metric", "value"], [
            ["remembers sent", conc["requests"]],
            ["failed requests", conc["errors"]],
            ["wall time", f"{conc['wall']:.1f} s"],
            ["remember p50 / p95", f"{conc['p50']:.1f} / {conc['p95']:.1f} ms"],
            ["candidates in the namespace", conc["candidates"]],
            ["its status", ", ".join(conc["status"])],
            ["observations counted (expected 800)", conc["observations"]],
            ["independent observations (expected 8: one per token)", conc["independent"]],
            ["origins stored (expected 800)", conc["origins"]],
            ["memory observations (expected 800)", conc["memory_observations"]],
            ["recalls during the run", conc["recalls"]],
            ["tracebacks in the server log", tracebacks],
        ]),
        "",
        f"**GraphQL fuzz.** hypothesis-graphql, derandomized: {args.fuzz_examples} queries and "
        f"{args.fuzz_examples * 3} one-field mutations per role (admin, reviewer, agent, scoped "
        "reviewer, scoped agent), arbitrary arguments including NUL bytes.",
        "",
        table(["outcome", "count"], sorted(fz["stats"].items())),
        "",
        f"Problems (5xx, INTERNAL_SERVER_ERROR, a refused call that wrote): "
        f"{len(fz['problems'])}",
    ]
    lines += [f"- `{p}`" for p in fz["problems"][:10]]
    text = "\n".join(lines) + "\n"
    print(text)
    write_result("robustness", text)


if __name__ == "__main__":
    main()
