"""Turn one message into the plain sentences worth reading for memories.

What is cut before any cue is looked at: fenced code blocks, indented code, stack traces and
log lines, quoted lines (`> ...`), tool-output markers (`[ran ...]`), and long quoted strings
(someone else's words, a commit message). What is left is split into sentences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The heuristic reads at most this many characters of one message: a pasted log of a megabyte
# carries no preference, and the bound keeps every turn in the few-millisecond range.
MAX_CHARS_PER_MESSAGE = 6_000
MAX_SENTENCES_PER_MESSAGE = 60
MAX_SENTENCE_CHARS = 600

_FENCE_RE = re.compile(r"(```|~~~)[^\n]*\n.*?(?:\1|\Z)", re.S)
_TRACEBACK_RE = re.compile(r"Traceback \(most recent call last\):.*?(?:\n\s*\n|\Z)", re.S)
_TOOL_MARKER_RE = re.compile(
    r"\[(?:ran|read|output|tool|checked|fetched|grep|created|edited|wrote)\b[^\]]{0,300}\]", re.I
)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffd]")
# A long quoted passage: 'fix: CSV amounts parsed via float ...' (not an apostrophe in "don't").
_QUOTED_RE = re.compile(
    r"(?<![\w'\"])(['\"\u201c\u2018])([^'\"\n\u201d\u2019]{25,400})['\"\u201d\u2019](?!\w)"
)
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*|(?<=[.!?])(?=\.\.)")
_WS_RE = re.compile(r"[ \t]+")
_BULLET_RE = re.compile(r"^(?:[-*\u2022]|\d{1,2}[.)])\s+")

_LOG_LINE_RE = re.compile(
    r"""^\s*(?:
        File\ ".*",\ line\ \d+            # python frames
      | at\ [\w$.<>]+\s*\(.*\)            # JS / Java frames
      | at\ [\w$.<>/]+:\d+                # JS frames without parens
      | \#\d+\s+0x[0-9a-f]+               # native frames
      | goroutine\ \d+                    # go panics
      | [\w.]+(?:Error|Exception):\ .*    # bare exception lines
      | (?:ERROR|WARN|WARNING|INFO|DEBUG|TRACE|FATAL)\b[:\] ].*   # log lines
      | \d{4}-\d\d-\d\d[T ]\d\d:\d\d.*    # timestamped log lines
      | [$%#]\ \S.*                       # shell prompts
      | [+~]\ .*                          # diffs and plans
      | [|].*[|]                          # tables
      | [{}\[\]<].*                       # JSON / markup
    )$""",
    re.X | re.I,
)


@dataclass(frozen=True)
class Sentence:
    """One sentence of prose: `text` as written, `probe` with quoted passages masked."""

    text: str
    probe: str


def clean_text(text: str) -> str:
    """Bound and sanitise one message's text: cap its length, drop control characters."""
    if not isinstance(text, str):
        return ""
    if len(text) > MAX_CHARS_PER_MESSAGE:
        text = text[:MAX_CHARS_PER_MESSAGE]
    # Lone surrogates (bytes decoded with surrogateescape) become '?'.
    text = text.encode("utf-8", "replace").decode("utf-8", "replace")
    return _CONTROL_RE.sub(" ", text)


def strip_non_prose(text: str) -> str:
    """Remove code, stack traces, logs, quoted lines and tool-output markers from `text`."""
    text = _FENCE_RE.sub("\n", text)
    if "```" in text:  # an unclosed fence: everything after it is code
        text = text.split("```", 1)[0]
    text = _TRACEBACK_RE.sub("\n", text)
    text = _TOOL_MARKER_RE.sub(" ", text)
    kept: list[str] = []
    for line in text.split("\n"):
        if line.startswith(("    ", "\t")) and line.strip():
            continue  # indented code
        stripped = line.strip()
        if stripped.startswith(">"):
            continue  # quoted text
        if stripped and _LOG_LINE_RE.match(stripped):
            continue
        kept.append(line)
    return "\n".join(kept)


def split_sentences(text: str) -> list[Sentence]:
    """Split prose into sentences (on . ! ? followed by space, and on line breaks)."""
    out: list[Sentence] = []
    for raw in _SENTENCE_SPLIT_RE.split(text):
        if not raw:
            continue
        sent = _WS_RE.sub(" ", raw).strip()
        sent = _BULLET_RE.sub("", sent.lstrip(".…").strip())
        if len(sent) < 2 or not any(ch.isalpha() for ch in sent):
            continue
        if len(sent) > MAX_SENTENCE_CHARS:
            sent = sent[:MAX_SENTENCE_CHARS]
        probe = _QUOTED_RE.sub(lambda m: m.group(1) + "…" + m.group(1), sent)
        out.append(Sentence(sent, probe))
        if len(out) >= MAX_SENTENCES_PER_MESSAGE:
            break
    return out


def sentences(text: str) -> list[Sentence]:
    """The prose sentences of one message, bounded in size."""
    return split_sentences(strip_non_prose(clean_text(text)))
