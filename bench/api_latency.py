"""API latency: recall over HTTP (GraphQL, a real `memvet serve`) against in-process recall.

A store of 10k approved memories (LoCoMo sentences, the recall_latency corpus, imported through
`MemoryService.import_lines`) is built once. Then the same LoCoMo questions are recalled
(a) in-process through `MemoryService.recall` and (b) through `POST /graphql` on a `memvet serve`
child process with an agent token: p50/p95 of single requests, then throughput with 8
concurrent clients. Every question is asked once per phase, so the index's query cache never
hits; both paths use the same embedder (the packaged MiniLM on ONNX by default) and the same
data dir, one after the other.

Run: `.venv/bin/python -m bench.api_latency [--size 10000] [--embedder onnx|fake]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from bench.common import (
    CACHE,
    CachedEmbedder,
    load_locomo,
    percentile,
    table,
    write_result,
)
from memvet.api.settings import Settings
from memvet.api.wiring import build_runtime, make_embedder
from memvet.memory.access import Principal, Role

ROOT = Path(__file__).resolve().parent.parent
NAMESPACE = "workspace:bench"
KINDS = ["fact"] * 8 + ["event"] * 4 + ["preference"] * 3 + ["pattern"] * 3
KINDS += ["decision", "postmortem"]
RECALL = """query Recall($q: String!, $ns: String) {
  recall(query: $q, namespace: $ns, limit: 10) {
    score memory { id content kind namespace approvedAt approvedBy }
  }
}"""


def questions() -> list[str]:
    """Distinct LoCoMo questions, in file order."""
    return list(dict.fromkeys(q.question for q in load_locomo().queries))


def seed_models(data_dir: Path) -> None:
    """Reuse the ONNX export the other benches made (bench/.cache/onnx) instead of exporting."""
    src = CACHE / "onnx"
    if src.is_dir():
        dst = data_dir / "models"
        dst.mkdir(parents=True, exist_ok=True)
        for f in src.glob("*.onnx"):
            target = dst / f.name
            if not target.exists():
                os.symlink(f, target)


def build_store(settings: Settings, size: int) -> tuple[float, int]:
    """Import `size` texts (vectors from the bench cache); returns seconds, memories."""
    from bench.recall_latency import corpus

    texts = corpus(size)
    embedder = make_embedder(settings)
    if settings.embedder != "fake":
        embedder = CachedEmbedder(embedder, "latency-fp32")  # type: ignore[assignment]
    t0 = time.perf_counter()
    runtime = build_runtime(settings, embedder=embedder, with_extractor=False)
    try:
        runtime.service.start()
        lines = [json.dumps({"record": "memory", "content": text, "kind": KINDS[i % len(KINDS)],
                             "namespace": NAMESPACE}) for i, text in enumerate(texts)]
        report = runtime.service.import_lines(lines, Principal.system())
        runtime.service.drain_index_outbox()
    finally:
        runtime.close()
    if isinstance(embedder, CachedEmbedder):
        embedder.save()
    # a few corpus texts normalise to the same content: import skips exact duplicates
    return time.perf_counter() - t0, len(report.memory_ids)


def latency(fn: Callable[[str], object], queries: Sequence[str]) -> tuple[float, float]:
    """p50 and p95 in ms, one call at a time."""
    times = []
    for q in queries:
        t = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t) * 1000)
    return percentile(times, 50), percentile(times, 95)


def throughput(make_fn: Callable[[], Callable[[str], object]], queries: Sequence[str],
               clients: int) -> float:
    """Requests per second with `clients` concurrent callers sharing the query list."""
    chunks = [list(queries[i::clients]) for i in range(clients)]

    def run(chunk: list[str]) -> int:
        fn = make_fn()
        for q in chunk:
            fn(q)
        return len(chunk)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        done = sum(pool.map(run, chunks))
    return done / (time.perf_counter() - t0)


def in_process(settings: Settings, lat_q: list[str], tput_q: list[str], clients: int,
               ) -> tuple[tuple[float, float], float, str, str]:
    runtime = build_runtime(settings, with_extractor=False)
    try:
        runtime.service.start()
        service = runtime.service
        _, token = service.create_token(Role.AGENT, Principal.system(), name="bench-agent")
        who = service.authenticate(token)
        assert who is not None

        def recall(q: str) -> object:
            hits = service.recall(q, who, namespaces=[NAMESPACE], limit=10)
            assert hits
            return hits

        for q in ["warm up the model", "and the index"]:
            recall(q)
        lat = latency(recall, lat_q)
        tput = throughput(lambda: recall, tput_q, clients)
        model = service.index.embedder.model_id  # type: ignore[union-attr]
    finally:
        runtime.close()
    return lat, tput, token, model


def over_http(data_dir: Path, embedder: str, token: str, lat_q: list[str], tput_q: list[str],
              clients: int) -> tuple[tuple[float, float], float, tuple[float, float]]:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/graphql"
    env = {**os.environ, "MEMVET_DATA_DIR": str(data_dir),
           "MEMVET_EMBEDDER": embedder, "MEMVET_LOG_LEVEL": "WARNING",
           "MEMVET_SEMANTIC_EQUIVALENCE": "false", "HF_HUB_OFFLINE": "1",
           "ANONYMIZED_TELEMETRY": "False"}
    log = data_dir / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "memvet.api.cli", "serve", "--port",
                                 str(port)], cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        _wait(f"http://127.0.0.1:{port}/healthz", proc, log)
        headers = {"Authorization": f"Bearer {token}"}

        def client() -> Callable[[str], object]:
            c = httpx.Client(trust_env=False, timeout=60, headers=headers)

            def recall(q: str) -> object:
                r = c.post(url, json={"query": RECALL, "variables": {"q": q, "ns": NAMESPACE}})
                body = r.json()
                assert r.status_code == 200 and "errors" not in body and body["data"]["recall"]
                return body

            return recall

        def viewer_client() -> Callable[[str], object]:
            c = httpx.Client(trust_env=False, timeout=60, headers=headers)
            return lambda q: c.post(url, json={"query": "{ viewer { name } }"}).json()

        one = client()
        for q in ["warm up the model", "and the index"]:
            one(q)
        lat = latency(one, lat_q)
        floor = latency(viewer_client(), lat_q[:100])
        tput = throughput(client, tput_q, clients)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
    return lat, tput, floor


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"memvet serve exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(url, timeout=2, trust_env=False).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"memvet serve did not come up:\n{log.read_text()[-3000:]}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10_000, help="memories in the store")
    parser.add_argument("--embedder", default="onnx", choices=["onnx", "torch", "fake"])
    parser.add_argument("--queries", type=int, default=200, help="latency questions")
    parser.add_argument("--throughput-queries", type=int, default=800)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args(argv)

    load_before = os.getloadavg()[0]
    qs = questions()
    lat_q = qs[: args.queries]
    tput_q = qs[args.queries: args.queries + args.throughput_queries]
    data_dir = Path(tempfile.mkdtemp(prefix="memvet-api-bench-"))
    try:
        seed_models(data_dir)
        settings = Settings(data_dir=data_dir, embedder=args.embedder,
                            semantic_equivalence=False, log_level="WARNING")
        build_s, n_memories = build_store(settings, args.size)
        (ip_lat, ip_tput, token, model) = in_process(settings, lat_q, tput_q, args.clients)
        http_lat, http_tput, floor = over_http(data_dir, args.embedder, token, lat_q, tput_q,
                                               args.clients)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)

    rows = [
        ["in-process `MemoryService.recall`", ip_lat[0], ip_lat[1], ip_tput],
        ["HTTP `POST /graphql` recall", http_lat[0], http_lat[1], http_tput],
        ["HTTP overhead (p50 difference)", http_lat[0] - ip_lat[0], "", ""],
        ["HTTP `{ viewer { name } }` (floor)", floor[0], floor[1], ""],
    ]
    text = "\n\n".join([
        "# API latency: recall over HTTP vs in-process",
        f"{n_memories} approved memories in one namespace (SQLite + embedded Chroma, imported in "
        f"{build_s:.0f} s with cached corpus vectors); embedder `{args.embedder}` "
        f"(model `{model}`, every query embedded live, query cache never hit); limit 10. "
        f"Latency: {len(lat_q)} distinct LoCoMo questions one at a time. Throughput: "
        f"{len(tput_q)} other questions spread over {args.clients} concurrent clients "
        "(threads; HTTP clients each keep one connection to one `memvet serve` worker). "
        f"The machine is shared ({os.cpu_count()} CPUs; 1-minute load average "
        f"{load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end), so treat "
        "the numbers as indicative.",
        table(["path", "p50 ms", "p95 ms", f"req/s ({args.clients} clients)"], rows),
    ])
    write_result("api_latency", text)


if __name__ == "__main__":
    main()
