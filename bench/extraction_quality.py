"""Extraction quality on the labelled dev set, scored by ../shared/eval/score_extraction.py."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT.parent / "shared" / "eval"


def main() -> int:
    cases = EVAL / "extraction-dev.jsonl"
    with tempfile.NamedTemporaryFile("w+", suffix=".jsonl") as out:
        subprocess.run([sys.executable, "-m", "memvet.extraction.batch", "--input", str(cases)],
                       cwd=ROOT, stdout=out, check=True)
        scored = subprocess.run(
            [sys.executable, str(EVAL / "score_extraction.py"), str(cases), out.name],
            capture_output=True, text=True)
    result = json.loads(scored.stdout.strip().splitlines()[-1])
    rows = ["| metric | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in result.items()]
    text = ("Heuristic extractor on `../shared/eval/extraction-dev.jsonl` "
            "(floor in the test suite: F1 ≥ 0.75, quiet ≥ 0.95, no ghost kinds).\n\n"
            + "\n".join(rows) + "\n")
    print(text)
    (ROOT / "bench" / "results" / "extraction_quality.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
