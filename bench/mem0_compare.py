"""memvet recall vs mem0's open-source `Memory`, same corpus, same queries, interleaved.

Both get every LoCoMo dev turn as a memory (memvet: one namespace per conversation; mem0:
one user_id per conversation, `add(..., infer=False)`, its Chroma store and its HuggingFace
embedder pointed at the same packaged MiniLM). Each LoCoMo question is then asked of both,
alternating which goes first, and timed end to end (query embedding included; memvet's
query cache is off). mem0ai 2.2.1 runs offline: telemetry off, an OpenAI LLM with a dummy
key and a loopback base URL that `infer=False` never calls.

Run: `.venv/bin/python -m bench.mem0_compare [--conversations N] [--queries N]`.
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import (
    CACHE,
    CachedEmbedder,
    load_locomo,
    mean,
    percentile,
    table,
    write_result,
)
from memvet.embeddings.chroma import make_chroma_client
from memvet.embeddings.index import ChromaMemoryIndex
from memvet.embeddings.model import packaged_model_path
from memvet.embeddings.onnx import OnnxEmbedder
from memvet.memory.kinds import Kind
from memvet.memory.ports import IndexedMemory


def make_mem0(tmp: Path) -> Any:
    """mem0's Memory on Chroma + HuggingFace(packaged MiniLM), fully offline."""
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["MEM0_DIR"] = str(tmp / "mem0")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from mem0 import Memory

    config = {
        "vector_store": {
            "provider": "chroma",
            "config": {"collection_name": "mem0bench", "path": str(tmp / "mem0-chroma")},
        },
        "embedder": {
            "provider": "huggingface",
            "config": {"model": str(packaged_model_path()), "embedding_dims": 384},
        },
        "llm": {
            "provider": "openai",
            "config": {
                "model": "gpt-4o-mini",
                "api_key": "sk-dummy-never-used",
                "openai_base_url": "http://127.0.0.1:9/v1",
            },
        },
        "history_db_path": str(tmp / "mem0-history.db"),
    }
    return Memory.from_config(config)


def _user(namespace: str) -> str:
    return namespace.split(":", 1)[1]


def _mem0_ids(result: Any) -> list[str]:
    items = result.get("results", result) if isinstance(result, dict) else result
    return [str((r.get("metadata") or {}).get("turn_id", "")) for r in items]


def main(argv: Sequence[str] | None = None) -> None:
    """Load both systems, run the queries interleaved, print and write the comparison."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--conversations", type=int, default=3, help="the first N (0: all); 3 is ~1.7k turns"
    )
    parser.add_argument("--queries", type=int, default=0, help="only the first N queries")
    args = parser.parse_args(argv)
    logging.getLogger("mem0").setLevel(logging.ERROR)
    data = load_locomo()
    namespaces = sorted({t.namespace for t in data.turns})
    if args.conversations:
        namespaces = namespaces[: args.conversations]
    turns = [t for t in data.turns if t.namespace in namespaces]
    queries = [q for q in data.queries if q.namespace in namespaces]
    if args.queries:
        queries = queries[: args.queries]

    live = OnnxEmbedder(cache_dir=CACHE / "onnx")
    cached = CachedEmbedder(live, "minilm-fp32")
    with tempfile.TemporaryDirectory(dir=CACHE) as tmpdir:
        tmp = Path(tmpdir)
        client = make_chroma_client(path=tmp / "memvet")
        builder = ChromaMemoryIndex(client, cached)
        t0 = time.perf_counter()
        builder.upsert([IndexedMemory(t.memory_id, t.namespace, Kind.FACT, t.text) for t in turns])
        cached.save()
        memvet_build = time.perf_counter() - t0
        builder.close()
        memvet = ChromaMemoryIndex(client, live, query_cache_size=0)

        mem0 = make_mem0(tmp)
        t0 = time.perf_counter()
        for t in turns:
            mem0.add(
                [{"role": "user", "content": t.text}],
                user_id=_user(t.namespace),
                metadata={"turn_id": t.memory_id},
                infer=False,
            )
        mem0_build = time.perf_counter() - t0

        def ask_memvet(q: Any) -> list[str]:
            return [h.memory_id for h in memvet.search(q.question, [q.namespace], limit=10)]

        def ask_mem0(q: Any) -> list[str]:
            res = mem0.search(q.question, top_k=10, filters={"user_id": _user(q.namespace)})
            return _mem0_ids(res)

        for q in queries[:3]:  # warm both (model loads, caches)
            ask_memvet(q)
            ask_mem0(q)
        times: dict[str, list[float]] = {"memvet": [], "mem0": []}
        recall: dict[str, list[float]] = {"memvet": [], "mem0": []}
        systems = [("memvet", ask_memvet), ("mem0", ask_mem0)]
        for i, q in enumerate(queries):
            for name, ask in systems if i % 2 == 0 else systems[::-1]:
                t = time.perf_counter()
                got = ask(q)
                times[name].append((time.perf_counter() - t) * 1000)
                ev = set(q.evidence)
                recall[name].append(len(ev & set(got[:5])) / len(ev))
        memvet.close()

    rows = []
    for name in ("memvet", "mem0"):
        rows.append(
            [
                name,
                percentile(times[name], 50),
                percentile(times[name], 95),
                mean(recall[name]),
                f"{memvet_build if name == 'memvet' else mem0_build:.0f}s",
            ]
        )
    ratio = [
        "mem0 / memvet",
        percentile(times["mem0"], 50) / percentile(times["memvet"], 50),
        percentile(times["mem0"], 95) / percentile(times["memvet"], 95),
        mean(recall["memvet"]) / max(mean(recall["mem0"]), 1e-9),
        "",
    ]
    text = "\n\n".join(
        [
            f"{len(turns)} LoCoMo turns in {len(namespaces)} namespaces / user ids, "
            f"{len(queries)} questions asked of both, interleaved (alternating order), limit 10. "
            "memvet: in-process ChromaMemoryIndex, ONNX query embedding, query cache off. "
            "mem0ai 2.2.1: Memory.search with its Chroma store and HuggingFace embedder "
            "(sentence-transformers/torch) on the same packaged model. The ratio row gives "
            "mem0 / memvet for latency (how many times faster memvet is) and memvet / mem0 "
            "for recall@5. Build = adding the corpus (memvet's vectors were cached). "
            f"Load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.",
            table(
                ["system", "search p50 ms", "search p95 ms", "recall@5", "build"], [*rows, ratio]
            ),
        ]
    )
    write_result("mem0_compare", text)


if __name__ == "__main__":
    main()
