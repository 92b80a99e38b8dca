"""Segmentation: prose sentences only, code / traces / logs / quotes cut out."""

from __future__ import annotations

from memvet.extraction.segment import MAX_CHARS_PER_MESSAGE, sentences


def texts(message: str) -> list[str]:
    return [s.text for s in sentences(message)]


def test_splits_on_sentence_ends_and_line_breaks() -> None:
    got = texts("We use pnpm. The API runs on port 4001!\nDeploys go out on Fridays?")
    assert got == ["We use pnpm.", "The API runs on port 4001!", "Deploys go out on Fridays?"]


def test_file_names_and_versions_do_not_split() -> None:
    got = texts("the tokens live in packages/ui/src/tokens.ts and we pin node 20.11.1 here")
    assert len(got) == 1


def test_fenced_code_is_skipped_even_when_unclosed() -> None:
    got = texts("look at this:\n```python\nx = 1  # we use tabs\n```\nthat's all\n```\nmore code")
    assert got == ["look at this:", "that's all"]


def test_stack_traces_and_log_lines_are_skipped() -> None:
    message = (
        "getting this:\n"
        "Traceback (most recent call last):\n"
        '  File "/app/main.py", line 3, in <module>\n'
        "KeyError: 'customer_id'\n"
        "\n"
        "ERROR: connection refused\n"
        "    at Object.<anonymous> (/app/index.js:10:5)\n"
        "any idea"
    )
    assert texts(message) == ["getting this:", "any idea"]


def test_quoted_lines_and_tool_markers_are_skipped() -> None:
    message = "> we always deploy on fridays\n[ran `pnpm test`] ok so tests pass"
    assert texts(message) == ["ok so tests pass"]


def test_long_quoted_passages_are_masked_in_the_probe() -> None:
    (sent,) = sentences("add under 0.4.1: 'fix: we never parse money through floats anymore'")
    assert "never" in sent.text
    assert "never" not in sent.probe


def test_bullets_lose_their_markers() -> None:
    assert texts("- always rebase\n* never squash\n1. tag releases") == [
        "always rebase",
        "never squash",
        "tag releases",
    ]


def test_binary_junk_and_huge_text_are_bounded() -> None:
    junk = "".join(chr(i % 256) for i in range(50_000)) + "\ud800 lone surrogate"
    got = sentences(junk)
    assert sum(len(s.text) for s in got) <= MAX_CHARS_PER_MESSAGE
    assert all("\x00" not in s.text for s in got)
