#!/usr/bin/env python3
"""Check corpus files against the labelling guide (GUIDE.md beside this file).

    python3 extraction/corpus/validate.py extraction/corpus/*.jsonl

Prints one line per problem (`FILE:LINE: message`) and a summary; exits 1 on any problem.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

KINDS = {"preference", "fact", "decision", "pattern", "postmortem", "event"}
ROLES = {"user", "assistant", "system", "tool"}
FIELDS = {"id", "domain", "trigger", "conversation_id", "turn_id", "workspace", "persona",
          "messages", "expected"}


def check_case(case: dict[str, Any], where: str, problems: list[str]) -> None:
    def bad(msg: str) -> None:
        problems.append(f"{where}: {msg}")

    missing = FIELDS - set(case)
    if missing:
        bad(f"missing fields {sorted(missing)}")
        return
    if case["trigger"] not in ("turn", "compaction"):
        bad("trigger must be turn or compaction")
    msgs = case["messages"]
    if not isinstance(msgs, list) or not msgs:
        bad("messages must be a non-empty list")
        return
    for i, m in enumerate(msgs):
        if not isinstance(m, dict) or m.get("role") not in ROLES or not isinstance(
                m.get("content"), str) or not m["content"].strip():
            bad(f"message {i} needs a role in {sorted(ROLES)} and non-empty content")
            return
    if case["trigger"] == "compaction" and not 10 <= len(msgs) <= 40:
        bad(f"a compaction stretch has 10-40 messages, this one {len(msgs)}")
    if case["trigger"] == "turn" and len(msgs) > 6:
        bad(f"a turn has 2-6 messages, this one {len(msgs)}")
    text = "\n".join(m["content"] for m in msgs).lower()
    for j, exp in enumerate(case["expected"]):
        w = f"expected {j}"
        if exp.get("kind") not in KINDS:
            bad(f"{w}: kind {exp.get('kind')!r} is not one of the six")
        if exp.get("namespace") not in ("persona", "workspace"):
            bad(f"{w}: namespace must be persona or workspace")
        if exp.get("namespace") == "persona" and exp.get("kind") != "preference":
            bad(f"{w}: only preferences go to persona")
        terms = exp.get("must_contain_any")
        if not isinstance(terms, list) or not terms or not all(
                isinstance(t, str) and t.strip() for t in terms):
            bad(f"{w}: must_contain_any must be a list of terms")
            terms = []
        for t in terms:
            if t.lower() not in text:
                bad(f"{w}: term {t!r} does not occur in the messages")
        if not isinstance(exp.get("gist"), str) or len(exp["gist"]) < 10:
            bad(f"{w}: gist must be a sentence")
        ev = exp.get("evidence")
        if not isinstance(ev, list) or not ev:
            bad(f"{w}: evidence must be a non-empty list")
            continue
        quotes = []
        for e in ev:
            idx = e.get("message") if isinstance(e, dict) else None
            quote = e.get("quote") if isinstance(e, dict) else None
            if not isinstance(idx, int) or not 0 <= idx < len(msgs) or not isinstance(quote, str):
                bad(f"{w}: evidence items are {{message: index, quote: text}}")
                continue
            if quote not in msgs[idx]["content"]:
                bad(f"{w}: quote {quote[:50]!r} is not an exact substring of message {idx}")
            quotes.append(quote.lower())
        if terms and quotes and not any(t.lower() in q for t in terms for q in quotes):
            bad(f"{w}: no must_contain_any term occurs in an evidence quote")


def main(paths: list[str]) -> int:
    problems: list[str] = []
    ids: Counter[str] = Counter()
    cases = []
    for path in paths:
        for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                case = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(f"{where}: not JSON ({exc})")
                continue
            check_case(case, where, problems)
            ids[str(case.get("id"))] += 1
            cases.append(case)
    for case_id, n in ids.items():
        if n > 1:
            problems.append(f"id {case_id!r} is used {n} times")
    for p in problems:
        print(p)
    quiet = sum(1 for c in cases if not c.get("expected"))
    kinds = Counter(e.get("kind") for c in cases for e in c.get("expected", []))
    trig = Counter(c.get("trigger") for c in cases)
    domains = Counter(c.get("domain") for c in cases)
    print(f"{len(cases)} excerpts, {quiet} quiet ({quiet / max(1, len(cases)):.0%}), "
          f"triggers {dict(trig)}, kinds {dict(kinds)}, {len(domains)} domains; "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
