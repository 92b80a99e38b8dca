"""Scoring the extractor the way the evaluation scorer does, and the folds it is
cross-validated on (by domain, by writer): what training, the report and the quality tests
share."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memvet.extraction.learned.corpus import Case
from memvet.extraction.learned.extractor import LearnedExtractor
from memvet.extraction.learned.model import KINDS
from memvet.memory.ports import ExtractedCandidate, ExtractionContext

WRITER_FOLDS = 8  # 31 writers: about four left out at a time


def _matches(cand: ExtractedCandidate, exp: dict[str, Any]) -> bool:
    """The evaluation scorer's rule: kind, namespace prefix, one required term."""
    return (cand.kind.value == exp["kind"]
            and cand.namespace.startswith(exp["namespace"] + ":")
            and any(t.lower() in cand.content.lower() for t in exp["must_contain_any"]))


@dataclass
class Scored:
    matched: int = 0
    candidates: int = 0
    expected: int = 0
    quiet: int = 0
    quiet_silent: int = 0

    def add(self, case: Case, got: Sequence[ExtractedCandidate],
            right: list[bool] | None = None) -> None:
        self.candidates += len(got)
        self.expected += len(case.expected)
        if not case.expected:
            self.quiet += 1
            self.quiet_silent += not got
        free = list(range(len(got)))
        for exp in case.expected:
            hit = next((i for i in free if _matches(got[i], exp)), None)
            if hit is not None:
                free.remove(hit)
                self.matched += 1
                if right is not None:
                    right[hit] = True

    def summary(self) -> dict[str, float]:
        p = self.matched / self.candidates if self.candidates else 0.0
        r = self.matched / self.expected if self.expected else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        return {"precision": round(p, 3), "recall": round(r, 3), "f1": round(f1, 3),
                "quiet_silence": round(self.quiet_silent / self.quiet, 3) if self.quiet else 1.0,
                "candidates": self.candidates, "expected": self.expected,
                "matched": self.matched}


def context_of(case: Case) -> ExtractionContext:
    return ExtractionContext(workspace=case.workspace, persona=case.persona,
                             trigger=case.trigger)


def run(extractor: LearnedExtractor, case: Case) -> list[ExtractedCandidate]:
    return extractor.extract(case.messages, context_of(case))


def score_runs(cases: Sequence[Case], runs: dict[int, list[ExtractedCandidate]]
           ) -> dict[str, Scored]:
    out = {"turn": Scored(), "compaction": Scored()}
    for i, got in runs.items():
        out[cases[i].trigger].add(cases[i], got)
    return out


def combined(oof: dict[float, dict[str, Scored]], chosen: dict[str, float]) -> dict[str, Any]:
    total = Scored()
    for trigger, t in chosen.items():
        s = oof[t][trigger]
        total.matched += s.matched
        total.candidates += s.candidates
        total.expected += s.expected
        total.quiet += s.quiet
        total.quiet_silent += s.quiet_silent
    return total.summary()


def by_kind(cases: Sequence[Case], emitted: dict[int, list[ExtractedCandidate]]
             ) -> tuple[dict[str, Any], dict[str, dict[str, int]]]:
    """Recall per expected kind, precision per predicted kind, and which kind the candidate
    that carries an expected item's terms was given (rows: expected, columns: predicted)."""
    kinds = [k.value for k in KINDS]
    confusion = {e: dict.fromkeys([*kinds, "missed"], 0) for e in kinds}
    found: Counter[str] = Counter()
    expected: Counter[str] = Counter()
    predicted: Counter[str] = Counter()
    for i, got in emitted.items():
        case = cases[i]
        right = [False] * len(got)
        Scored().add(case, got, right)
        for g, r in zip(got, right, strict=True):
            predicted[g.kind.value] += 1
            found[g.kind.value] += r
        for exp in case.expected:
            expected[exp["kind"]] += 1
            near = next((g for g in got if any(t.lower() in g.content.lower()
                                                for t in exp["must_contain_any"])), None)
            confusion[exp["kind"]][near.kind.value if near else "missed"] += 1
    per_kind = {k: {"recall": round(found[k] / expected[k], 3) if expected[k] else None,
                    "precision": round(found[k] / predicted[k], 3) if predicted[k] else None,
                    "expected": expected[k], "predicted": predicted[k]} for k in kinds}
    return per_kind, confusion


def folds_of(cases: Sequence[Case], k: int) -> list[list[int]]:
    """Domains dealt round-robin (largest first, ties by name) into k folds."""
    sizes = Counter(c.domain for c in cases)
    order = sorted(sizes, key=lambda d: (-sizes[d], d))
    fold_of = {d: i % k for i, d in enumerate(order)}
    return [[i for i, c in enumerate(cases) if fold_of[c.domain] == f] for f in range(k)]


def writer_folds(cases: Sequence[Case], k: int = WRITER_FOLDS) -> list[list[int]]:
    """Writers (the letters before an excerpt id's digits) dealt round-robin, most excerpts
    first, into k folds: each fold's writers are unseen by the model that scores them."""
    sizes = Counter(_writer(c) for c in cases)
    order = sorted(sizes, key=lambda w: (-sizes[w], w))
    fold_of = {w: i % k for i, w in enumerate(order)}
    folds = [[i for i, c in enumerate(cases) if fold_of[_writer(c)] == f] for f in range(k)]
    return [f for f in folds if f]


def _writer(case: Case) -> str:
    return case.id.rstrip("0123456789") or case.id
