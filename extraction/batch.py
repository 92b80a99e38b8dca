"""Batch evaluation: run an extractor over labelled cases, one JSON line per candidate.

    python -m extraction.batch --input cases.jsonl [--extractor heuristic|llm] > out.jsonl

Input lines carry `id`, `trigger`, `workspace`, `persona`, `messages` (and `expected`, which
is ignored). The LLM extractor reads MEMVET_LLM_BASE_URL, MEMVET_LLM_MODEL and
MEMVET_LLM_API_KEY.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence

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


def main(argv: Sequence[str] | None = None) -> int:
    """`memvet extract`: print one JSON line per candidate; 0 on success, 2 on bad usage."""
    from memvet.extraction import build_extractor

    parser = argparse.ArgumentParser(prog="memvet extract", description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="cases, one JSON object per line")
    parser.add_argument("--extractor", default="heuristic", choices=("heuristic", "llm"))
    args = parser.parse_args(argv)
    try:
        extractor = build_extractor(
            args.extractor,
            llm_base_url=os.environ.get("MEMVET_LLM_BASE_URL"),
            llm_model=os.environ.get("MEMVET_LLM_MODEL"),
            llm_api_key=os.environ.get("MEMVET_LLM_API_KEY"),
        )
    except MemvetError as err:
        print(f"memvet extract: {err}", file=sys.stderr)
        return 2
    try:
        with open(args.input, encoding="utf-8", errors="replace") as f:
            for row in run_batch(f, extractor):
                sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as err:
        print(f"memvet extract: cannot read {args.input}: {err.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
