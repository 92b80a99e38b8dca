"""The training corpus (extraction/corpus/*.jsonl, see GUIDE.md beside it) as labelled
statements: each expected memory's evidence quotes mark the statements that say it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memvet.extraction.learned.statements import Statement, statements, words
from memvet.memory.messages import validate_messages

CORPUS_DIR = Path(__file__).resolve().parents[1] / "corpus"
KINDS = ("preference", "fact", "decision", "pattern", "postmortem", "event")
OVERLAP = 0.6  # share of a statement's (or a quote's) words the other holds


@dataclass
class Case:
    """One excerpt with its statements and, per statement, the expected item it says."""

    id: str
    domain: str
    trigger: str
    workspace: str | None
    persona: str
    messages: list[Any]
    expected: list[dict[str, Any]]
    statements: list[Statement] = field(default_factory=list)
    item_of: list[int] = field(default_factory=list)  # -1: says nothing to remember


def load_cases(paths: Iterable[Path]) -> list[Case]:
    cases = []
    for path in sorted(paths):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                cases.append(_case(json.loads(line)))
    return cases


def corpus_files(directory: Path = CORPUS_DIR) -> list[Path]:
    return sorted(directory.glob("*.jsonl"))


def _case(data: dict[str, Any]) -> Case:
    messages = validate_messages(data["messages"])
    case = Case(id=str(data["id"]), domain=str(data.get("domain") or "unknown"),
                trigger=str(data.get("trigger") or "turn"),
                workspace=data.get("workspace") or None,
                persona=str(data.get("persona") or "default"), messages=messages,
                expected=list(data.get("expected") or []))
    case.statements = statements(messages)
    case.item_of = [_item(s, case.expected) for s in case.statements]
    return case


def _item(s: Statement, expected: list[dict[str, Any]]) -> int:
    mine = set(words(s.text))
    if not mine:
        return -1
    best, best_score = -1, 0.0
    for n, exp in enumerate(expected):
        for ev in exp.get("evidence") or []:
            if ev.get("message") != s.message:
                continue
            quote = set(words(str(ev.get("quote", ""))))
            if not quote:
                continue
            shared = len(mine & quote)
            score = max(shared / len(mine), shared / len(quote))
            if score >= OVERLAP and score > best_score:
                best, best_score = n, score
    return best
