"""Batch evaluation: run an extractor over labelled cases, one JSON line per candidate.

    memvet extract --input cases.jsonl [--extractor learned|heuristic|llm] > out.jsonl

Input lines carry `id`, `trigger`, `workspace`, `persona`, `messages` (and `expected`, which
is ignored).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator

from memvet.memory.errors import MemvetError
from memvet.memory.messages import validate_messages
from memvet.memory.ports import ExtractionContext, Extractor


def run_batch(lines: Iterable[str], extractor: Extractor) -> Iterator[dict[str, object]]:
    """Yield `{"case_id", "content", "kind", "namespace", "confidence"}` per candidate.

    A line that is not a valid case is reported on stderr and skipped.
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
            if not isinstance(case, dict):
                raise ValueError("a case must be a JSON object")
            messages = validate_messages(case.get("messages") or [])
            context = ExtractionContext(
                workspace=case.get("workspace") or None,
                persona=str(case.get("persona") or "default"),
                trigger=str(case.get("trigger") or "turn"),
            )
        except (ValueError, MemvetError) as err:
            print(f"line {number}: skipped: {err}", file=sys.stderr)
            continue
        for cand in extractor.extract(messages, context):
            yield {
                "case_id": case.get("id"),
                "content": cand.content,
                "kind": cand.kind.value,
                "namespace": cand.namespace,
                "confidence": cand.confidence,
            }
