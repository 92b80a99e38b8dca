"""Shared helpers for the benchmarks: LoCoMo loading, a disk-cached embedder, tables."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import statistics
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache"
RESULTS = ROOT / "bench" / "results"
LOCOMO_DEV = ROOT.parent / "shared" / "data" / "locomo-dev.json"

_EVIDENCE_RE = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass(frozen=True)
class Turn:
    """One dialog turn as a memory: id `<sample_id>:<dia_id>`."""

    memory_id: str
    namespace: str
    text: str


@dataclass(frozen=True)
class Query:
    """One LoCoMo QA item: question, its conversation's namespace, evidence memory ids."""

    question: str
    namespace: str
    evidence: tuple[str, ...]
    category: int


@dataclass
class Locomo:
    """Turns, queries and how many evidence ids had to be normalised or were dropped."""

    turns: list[Turn] = field(default_factory=list)
    queries: list[Query] = field(default_factory=list)
    evidence_total: int = 0
    evidence_normalised: int = 0
    evidence_dropped: int = 0
    queries_without_evidence: int = 0


def turn_text(date: str, turn: dict[str, object]) -> str:
    """`[session date] speaker: text` plus ` [photo: caption]` when the turn shares a photo."""
    text = f"[{date}] {turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [photo: {turn['blip_caption']}]"
    return text


def load_locomo(path: Path = LOCOMO_DEV) -> Locomo:
    """Every turn a memory in `workspace:locomo-<sample_id>`; QA of categories 1-4 as queries."""
    out = Locomo()
    for sample in json.loads(path.read_text()):
        sid = sample["sample_id"]
        ns = f"workspace:locomo-{sid}".lower()
        conv = sample["conversation"]
        known: set[str] = set()
        for key, turns in conv.items():
            if not key.startswith("session_") or not isinstance(turns, list):
                continue
            date = conv.get(f"{key}_date_time", "")
            for turn in turns:
                known.add(turn["dia_id"])
                out.turns.append(Turn(f"{sid}:{turn['dia_id']}", ns, turn_text(date, turn)))
        for qa in sample["qa"]:
            if qa.get("category") not in (1, 2, 3, 4) or not qa.get("evidence"):
                continue
            ids: list[str] = []
            for raw in qa["evidence"]:
                out.evidence_total += 1
                pieces = [p for p in re.split(r"[;,\s]+", str(raw).strip()) if p]
                fixed = False
                for piece in pieces:
                    match = _EVIDENCE_RE.fullmatch(piece)
                    norm = f"D{match.group(1)}:{match.group(2)}" if match else piece
                    if norm != piece or len(pieces) > 1:
                        fixed = True
                    if norm in known:
                        ids.append(f"{sid}:{norm}")
                    else:
                        out.evidence_dropped += 1
                out.evidence_normalised += fixed
            if not ids:
                out.queries_without_evidence += 1
                continue
            out.queries.append(
                Query(str(qa["question"]), ns, tuple(dict.fromkeys(ids)), int(qa["category"]))
            )
    return out


class CachedEmbedder:
    """Wraps an embedder; vectors are kept on disk by text hash so reruns don't re-embed."""

    def __init__(self, inner: object, name: str) -> None:
        self.inner = inner
        self.model_id: str = inner.model_id  # type: ignore[attr-defined]
        self.dimension: int = inner.dimension  # type: ignore[attr-defined]
        CACHE.mkdir(parents=True, exist_ok=True)
        self.path = CACHE / f"vectors-{name}.npz"
        self._vectors: dict[str, np.ndarray] = {}
        self._dirty = False
        self._lock = threading.Lock()
        if self.path.is_file():
            data = np.load(self.path)
            self._vectors = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha1(text.encode()).hexdigest()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Cached vectors; misses go to the wrapped embedder in one batch."""
        keys = [self._key(t) for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in self._vectors]
        if missing:
            fresh = self.inner.embed([texts[i] for i in missing])  # type: ignore[attr-defined]
            with self._lock:
                for i, vec in zip(missing, fresh, strict=True):
                    self._vectors[keys[i]] = np.asarray(vec, dtype=np.float32)
                self._dirty = True
        return [self._vectors[k].tolist() for k in keys]

    def save(self) -> None:
        """Write the cache if it grew."""
        with self._lock:
            if not self._dirty:
                return
            keys = np.array(list(self._vectors), dtype="U40")
            vectors = np.vstack(list(self._vectors.values()))
            tmp = self.path.with_suffix(".tmp.npz")
            np.savez(tmp, keys=keys, vectors=vectors)
            tmp.replace(self.path)
            self._dirty = False


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) of values, linear interpolation."""
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else float("nan")


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean (nan for no values)."""
    return statistics.fmean(values) if values else float("nan")


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A markdown table; floats get 3 decimals."""

    def cell(v: object) -> str:
        return f"{v:.3f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_result(name: str, text: str) -> Path:
    """Print `text` and write it to bench/results/<name>.md under a first line that says when
    and on what machine it was measured (BENCHMARKS.md shows it: results of earlier runs stay
    there with their own date and machine)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.md"
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
    path.write_text(f"_`bench/{name}.py`, {stamp} UTC, on {machine()}_\n\n" + text.rstrip()
                    + "\n")
    print(text)
    return path


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return (f"{cpu}, {os.cpu_count()} cores{mem}; {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}")
