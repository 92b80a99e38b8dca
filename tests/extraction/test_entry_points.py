"""The factory, the input bounds, the batch CLI and the quality floor on the dev set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memvet.extraction import HeuristicExtractor, LLMExtractor, build_extractor
from memvet.extraction.batch import run_batch
from memvet.memory.errors import ValidationError
from memvet.memory.limits import MAX_MESSAGE_BYTES
from memvet.memory.messages import validate_messages
from memvet.memory.ports import Message

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
DEV_SET = SHARED / "eval" / "extraction-dev.jsonl"
SCORER = SHARED / "eval" / "score_extraction.py"

# -- factory -------------------------------------------------------------------------------------


def test_build_heuristic() -> None:
    assert isinstance(build_extractor("heuristic"), HeuristicExtractor)


def test_build_llm_with_fallback() -> None:
    ex = build_extractor(
        "llm", llm_base_url="http://localhost:11434/v1", llm_model="qwen", llm_api_key="k"
    )
    assert isinstance(ex, LLMExtractor)
    assert isinstance(ex.fallback, HeuristicExtractor)
    no_fallback = build_extractor(
        "llm", llm_base_url="http://x/v1", llm_model="m", llm_fallback=False
    )
    assert isinstance(no_fallback, LLMExtractor) and no_fallback.fallback is None


@pytest.mark.parametrize(
    ("name", "kwargs", "message"),
    [
        ("gpt", {}, "unknown extractor"),
        ("llm", {}, "MEMVET_LLM_BASE_URL and MEMVET_LLM_MODEL"),
        ("llm", {"llm_base_url": "http://x/v1"}, "MEMVET_LLM_MODEL"),
        ("llm", {"llm_base_url": "http://x/v1", "llm_model": "m", "llm_timeout": 0}, "timeout"),
    ],
)
def test_build_refuses_bad_config(name: str, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        build_extractor(name, **kwargs)  # type: ignore[arg-type]


# -- input bounds --------------------------------------------------------------------------------


def test_validate_cleans_what_it_can() -> None:
    got = validate_messages(
        [
            {"role": "User", "content": "hi\x00 there\x07\n\tok"},
            Message("assistant", "caf\udce9"),
            {"role": "tool", "content": b"\xff\xfebinary"},
        ]
    )
    assert got[0] == Message("user", "hi there\n\tok")
    assert "\ufffd" in got[1].content
    assert got[2].role == "tool" and got[2].content.endswith("binary")


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ([], "no messages"),
        ("hello", "must be a list"),
        ([{"role": "robot", "content": "x"}], "unknown role"),
        ([{"content": "x"}], "unknown role"),
        ([{"role": "user", "content": 42}], "must be text"),
        ([{"role": "user", "content": None}], "must be text"),
        ([{"role": "user", "content": " \x00 "}], "empty"),
        ([{"role": "user", "content": "x" * (MAX_MESSAGE_BYTES + 1)}], "at most 64 KiB"),
        ([{"role": "user", "content": "x"}] * 10_001, "too many messages"),
        ([{"role": "user", "content": "x" * 60_000}] * 80, "4 MiB"),
        (["not an object"], "expected an object"),
    ],
)
def test_validate_refuses_with_clear_errors(messages: object, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        validate_messages(messages)  # type: ignore[arg-type]


def test_validate_accepts_a_10000_message_compaction() -> None:
    msgs = [{"role": "user" if i % 2 else "assistant", "content": "ok"} for i in range(10_000)]
    assert len(validate_messages(msgs)) == 10_000


# -- batch ---------------------------------------------------------------------------------------


def test_run_batch_yields_one_row_per_candidate_and_skips_bad_lines() -> None:
    lines = [
        json.dumps(
            {
                "id": "x1",
                "trigger": "turn",
                "workspace": "shop-api",
                "persona": "default",
                "messages": [{"role": "user", "content": "heads up: the API runs on port 4001"}],
                "expected": [],
            }
        ),
        "not json",
        json.dumps({"id": "x2", "messages": [{"role": "martian", "content": "hi"}]}),
        "",
    ]
    rows = list(run_batch(lines, HeuristicExtractor()))
    assert len(rows) == 1
    assert set(rows[0]) == {"case_id", "content", "kind", "namespace", "confidence"}
    assert rows[0]["case_id"] == "x1" and rows[0]["namespace"] == "workspace:shop-api"


def test_extract_cli_reports_bad_usage(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVET_LLM")}
    missing = _extract(["--input", str(tmp_path / "missing.jsonl")], env)
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    no_llm = _extract(["--input", str(DEV_SET), "--extractor", "llm"], env)
    assert no_llm.returncode == 2 and "MEMVET_LLM_BASE_URL" in no_llm.stderr


def _extract(args: list[str], env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memvet.api.cli", "extract", *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env=env or dict(os.environ))


def test_the_heuristic_extractor_still_meets_its_floor_on_the_dev_set(tmp_path: Path) -> None:
    done = _extract(["--input", str(DEV_SET), "--extractor", "heuristic"])
    assert done.returncode == 0, done.stderr
    candidates = tmp_path / "candidates.jsonl"
    candidates.write_text(done.stdout, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(SCORER), str(DEV_SET), str(candidates)]
        + ["--min-f1", "0.75", "--min-quiet", "0.95"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    score = json.loads(result.stdout)
    assert score["ghost_kinds"] == 0 and score["unknown_case_ids"] == 0
