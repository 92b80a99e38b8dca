"""Extraction quality: each extractor on the labelled dev set (scored by
../shared/eval/score_extraction.py, untuned: the dev set is a test set), the learned
extractor's cross-validation on the training corpus (by domain, and by writer: each fold's
writers unseen), per kind and with the confusion matrix of kinds, and its score on the held-out
domains (extraction/learned/model-report.json, written by `make train-extractor`).

    .venv/bin/python -m bench.extraction_quality
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.common import table, write_result

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT.parent / "shared" / "eval"
REPORT = ROOT / "extraction" / "learned" / "model-report.json"
METRICS = ("precision", "recall", "f1", "kind_accuracy", "quiet_silence", "ghost_kinds")


def dev_score(extractor: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The scorer's summary of `extractor` on the dev set, and the candidates it emitted."""
    cases = EVAL / "extraction-dev.jsonl"
    with tempfile.NamedTemporaryFile("w+", suffix=".jsonl") as out:
        subprocess.run([sys.executable, "-m", "memvet.api.cli", "extract", "--input", str(cases),
                        "--extractor", extractor], cwd=ROOT, stdout=out, check=True)
        scored = subprocess.run(
            [sys.executable, str(EVAL / "score_extraction.py"), str(cases), out.name],
            capture_output=True, text=True)
        out.seek(0)
        emitted = [json.loads(line) for line in out if line.strip()]
    result: dict[str, Any] = json.loads(scored.stdout.strip().splitlines()[-1])
    return result, emitted


def per_kind(cases: list[dict[str, Any]], emitted: list[dict[str, Any]], kinds: list[str]
             ) -> tuple[list[list[Any]], list[list[Any]]]:
    """Rows per kind (expected, recall, predicted, precision) and the confusion of kinds, by
    the scorer's rules: a match has the kind, the namespace prefix and one of the terms; the
    confusion row of an expected item is the kind of the candidate that carries its terms."""
    by_case: dict[str, list[dict[str, Any]]] = {}
    for c in emitted:
        by_case.setdefault(c["case_id"], []).append(c)
    expected = dict.fromkeys(kinds, 0)
    predicted = dict.fromkeys(kinds, 0)
    found = dict.fromkeys(kinds, 0)
    confusion = {k: dict.fromkeys([*kinds, "missed"], 0) for k in kinds}
    for case in cases:
        got = by_case.get(case["id"], [])
        for c in got:
            predicted[c["kind"]] = predicted.get(c["kind"], 0) + 1
        free = list(got)
        for exp in case["expected"]:
            terms = [t.lower() for t in exp["must_contain_any"]]
            carries = [c for c in got if any(t in c["content"].lower() for t in terms)]
            hit = next((c for c in free if c in carries and c["kind"] == exp["kind"]
                        and c["namespace"].startswith(exp["namespace"] + ":")), None)
            expected[exp["kind"]] += 1
            if hit is not None:
                free.remove(hit)
                found[exp["kind"]] += 1
            confusion[exp["kind"]][carries[0]["kind"] if carries else "missed"] += 1
    rows = [[k, expected[k], round(found[k] / expected[k], 3) if expected[k] else "",
             predicted[k], round(found[k] / predicted[k], 3) if predicted[k] else ""]
            for k in kinds]
    return rows, [[k, *(confusion[k][g] for g in [*kinds, "missed"])] for k in kinds]


def main() -> int:
    runs = {name: dev_score(name) for name in ("learned", "heuristic")}
    dev = {name: summary for name, (summary, _) in runs.items()}
    report = json.loads(REPORT.read_text())
    cv = report["cross_validation"]
    kinds = list(cv["by_writer"]["per_kind"])
    dev_cases = [json.loads(line) for line in
                 (EVAL / "extraction-dev.jsonl").read_text().splitlines() if line.strip()]
    dev_kinds, dev_confusion = per_kind(dev_cases, runs["learned"][1], kinds)
    lines = [
        "**Dev set** (`../shared/eval/extraction-dev.jsonl`, 90 excerpts, never used to train "
        "or tune the learned extractor; the heuristic one was written against it).",
        "",
        table(["extractor", *METRICS], [[n, *(d[m] for m in METRICS)] for n, d in dev.items()]),
        "",
        "The learned extractor on the dev set, per kind, and the confusion of kinds (rows: the "
        "expected kind; columns: the kind of the candidate that carries its terms, or missed):",
        "",
        table(["kind", "expected", "recall", "predicted", "precision"], dev_kinds),
        "",
        table(["expected \\ got", *kinds, "missed"], dev_confusion),
        "",
        f"**Learned extractor, cross-validated on its training corpus** "
        f"({report['corpus']['training']} excerpts, {report['corpus']['domains']} domains; "
        f"{report['corpus']['held_out']} excerpts of "
        f"{len(report['corpus']['held_out_domains'])} domains held out). Thresholds (turn "
        f"{report['params']['threshold_turn']}, compaction "
        f"{report['params']['threshold_compaction']}) are chosen on the by-writer "
        "runs: the best F1 with at least 95 % of quiet excerpts silent.",
        "",
        table(["evaluation", "precision", "recall", "F1", "quiet silent", "turns F1",
               "compactions F1"],
              [[f"{name.replace('_', ' ')} ({v['folds']} folds)", v["precision"], v["recall"],
                v["f1"], v["quiet_silence"], v["turn"]["f1"], v["compaction"]["f1"]]
               for name, v in cv.items()]
              + [["held-out domains (shipped model)", report["held_out"]["precision"],
                  report["held_out"]["recall"], report["held_out"]["f1"],
                  report["held_out"]["quiet_silence"], "", ""]]),
        "",
        "Per kind (by writer: each fold's writers unseen in training):",
        "",
        table(["kind", "expected", "recall", "predicted", "precision"],
              [[k, v["expected"], v["recall"], v["predicted"], v["precision"]]
               for k, v in cv["by_writer"]["per_kind"].items()]),
        "",
        "Confusion of kinds (by writer; rows: the expected kind, columns: the kind "
        "of the candidate that carries its terms, or missed):",
        "",
        table(["expected \\ got", *kinds, "missed"],
              [[e, *(row[k] for k in [*kinds, "missed"])]
               for e, row in cv["by_writer"]["kind_confusion"].items()]),
        "",
        f"Model file: {report['model_bytes']:,} bytes; training took {report['seconds']} s.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    write_result("extraction_quality", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
