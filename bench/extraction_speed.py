"""Extraction speed: the learned extractor's turn pass (embedding included) over the dev set's
turns, p50 / p95 ms, beside the heuristic one; and one 10,000-message compaction.

Targets: turn pass p95 ≤ 30 ms on this 2-core machine; a 10,000-message compaction ≤ 60 s
(it runs in the background pool, never on the event loop).

    .venv/bin/python -m bench.extraction_speed [--repeat 10]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench.common import percentile, table, write_result
from memvet.api.settings import Settings
from memvet.api.wiring import packaged_embedder
from memvet.extraction.heuristic import HeuristicExtractor
from memvet.extraction.learned import LearnedExtractor
from memvet.memory.ports import (
    Embedder,
    ExtractionContext,
    Extractor,
    Message,
    TruncatingEmbedder,
)

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT.parent / "shared" / "eval" / "extraction-dev.jsonl"
TURN_P95_MS = 30.0
COMPACTION_S = 60.0


def turns() -> list[tuple[list[Message], ExtractionContext]]:
    out = []
    for line in DEV.read_text().splitlines():
        case = json.loads(line)
        if case["trigger"] != "turn":
            continue
        out.append(([Message(m["role"], m["content"]) for m in case["messages"]],
                    ExtractionContext(case.get("workspace"), case.get("persona") or "default")))
    return out


def timed(extractor: Extractor, cases: list[tuple[list[Message], ExtractionContext]],
          repeat: int) -> list[float]:
    for messages, context in cases[:5]:  # warm up
        extractor.extract(messages, context)
    ms = []
    for _ in range(repeat):
        for messages, context in cases:
            start = time.perf_counter()
            extractor.extract(messages, context)
            ms.append((time.perf_counter() - start) * 1000)
    return ms


class Recording:
    """The embedder the extractor is handed, keeping each batch of texts it asks for."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.model_id, self.dimension = inner, inner.model_id, inner.dimension
        self.batches: list[list[str]] = []

    def truncate(self, texts: Sequence[str], max_tokens: int) -> list[str]:
        assert isinstance(self.inner, TruncatingEmbedder)
        return self.inner.truncate(texts, max_tokens)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        return self.inner.embed(texts)


def embedding_alone(embedder: Embedder, batches: list[list[str]], repeat: int) -> list[float]:
    """Milliseconds to embed each turn's texts on their own (the same batches, same model)."""
    ms = []
    for _ in range(repeat):
        for texts in batches:
            start = time.perf_counter()
            embedder.embed(texts)
            ms.append((time.perf_counter() - start) * 1000)
    return ms


def token_cost(embedder: Embedder, reps: int = 30) -> tuple[float, float]:
    """(ms a run, ms a token) of one embedding call here: the medians of one text of 8 and of
    64 tokens ("word" is one token; [CLS] and [SEP] make two more), the line through them."""
    medians = []
    for n in (8, 64):
        text = ["word " * (n - 2)]
        for _ in range(3):
            embedder.embed(text)
        ms = []
        for _ in range(reps):
            start = time.perf_counter()
            embedder.embed(text)
            ms.append((time.perf_counter() - start) * 1000)
        medians.append(statistics.median(ms))
    per_token = (medians[1] - medians[0]) / 56
    return medians[0] - 8 * per_token, per_token


def turn_tokens(batches: list[list[str]]) -> list[int]:
    """The tokens of each turn's texts (without padding), sorted."""
    from tokenizers import Tokenizer

    from memvet.embeddings.model import packaged_model_path

    tokenizer = Tokenizer.from_file(str(packaged_model_path() / "tokenizer.json"))
    tokenizer.no_padding()
    return sorted(sum(len(e.ids) for e in tokenizer.encode_batch(b)) for b in batches)


def row(name: str, ms: list[float]) -> list[object]:
    """A table row of sorted timings: count, p50, p95, mean, max."""
    return [name, len(ms), f"{percentile(ms, 50):.1f}", f"{percentile(ms, 95):.1f}",
            f"{statistics.fmean(ms):.1f}", f"{ms[-1]:.1f}"]


def long_compaction(n: int = 10_000) -> list[Message]:
    """A synthetic session: task talk, tool output and, now and then, a durable remark."""
    rng = random.Random(7)
    said = ["run the tests again", "ok, now the api module", "looks good, next file",
            "can you check why this fails", "rename that helper to parse_row",
            "the staging db is on port 6543, not 5432", "we deploy with make ship, always",
            "no, keep the old name for now", "thanks", "try with --verbose"]
    done = ["Ran `pytest -q`: 214 passed in 12.4s.", "Updated src/api/orders.py; 3 files "
            "changed.", "The failure is a missing fixture in conftest.py; added it.",
            "```\nTraceback (most recent call last):\n  File \"x.py\", line 3\n```\nFixed.",
            "Renamed it and updated the 4 call sites."]
    return [Message("user", rng.choice(said)) if i % 2 == 0 else
            Message("assistant", rng.choice(done)) for i in range(n)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args(argv)
    settings = Settings()
    embedder = packaged_embedder(settings)
    learned = LearnedExtractor(embedder)
    cases = turns()
    recording = Recording(embedder)
    for messages, context in cases:  # which texts a turn embeds, for the row below
        LearnedExtractor(recording, learned.model).extract(messages, context)
    rows = []
    results = {}
    for name, extractor in (("learned (embedding included)", learned),
                            ("heuristic", HeuristicExtractor())):
        ms = sorted(timed(extractor, cases, args.repeat))
        results[name] = ms
        rows.append(row(name, ms))
    embedded = [b for b in recording.batches if b]
    alone = sorted(embedding_alone(embedder, embedded, args.repeat))
    rows.append(row("the embedding alone (the same texts)", alone))
    run_ms, token_ms = token_cost(embedder)
    tokens = turn_tokens(embedded)
    at_p95 = tokens[min(len(tokens) - 1, int(len(tokens) * 0.95))]
    messages = long_compaction()
    start = time.perf_counter()
    found = learned.extract(messages, ExtractionContext("shop-api", "default", "compaction"))
    compaction_s = time.perf_counter() - start
    p95 = percentile(results["learned (embedding included)"], 95)
    text = "\n".join([
        f"Turn pass over the dev set's {len(cases)} turns × {args.repeat}, one thread, on this "
        f"machine. Target: learned p95 ≤ {TURN_P95_MS:.0f} ms "
        f"({'met' if p95 <= TURN_P95_MS else 'MISSED'}).",
        "",
        table(["extractor", "calls", "p50 ms", "p95 ms", "mean ms", "max ms"], rows),
        "",
        "The embedding row times the packaged model alone on the texts the learned extractor "
        "embeds per turn: the rest of the learned row is the extractor's own work. The speed "
        "of this machine's CPU varies from day to day; the heuristic row (pure Python) is a "
        "yardstick for it.",
        "",
        f"What the embedding costs here: {run_ms:.1f} ms a call plus {token_ms:.2f} ms a token "
        f"(one text of 8 and of 64 tokens, medians). The turns' texts hold "
        f"{tokens[len(tokens) // 2]} tokens at the median and {at_p95} at the 95th percentile "
        f"(the most: {tokens[-1]}), "
        f"so the p95 turn's texts, side by side in one run with no padding, need about "
        f"{run_ms + token_ms * at_p95:.0f} ms on this machine.",
        "",
        f"A 10,000-message compaction (synthetic task talk and tool output): "
        f"{compaction_s:.1f} s, {len(found)} candidate{'' if len(found) == 1 else 's'}. "
        f"Target ≤ {COMPACTION_S:.0f} s "
        f"({'met' if compaction_s <= COMPACTION_S else 'MISSED'}).",
    ]) + "\n"
    print(text)
    write_result("extraction_speed", text)
    return 0 if p95 <= TURN_P95_MS and compaction_s <= COMPACTION_S else 1


if __name__ == "__main__":
    sys.exit(main())
