"""Read Claude Code's JSONL transcript: the last exchange, and what came since the last compaction.

A transcript line is one entry: `{"type": "user"|"assistant", "message": {"role", "content"},
"uuid", "parentUuid", "isSidechain", ...}` where content is a string or blocks (`text`,
`tool_use`, `tool_result`, `thinking`, ...). Other lines: `{"type": "system", "subtype":
"compact_boundary", "parentUuid": null, "logicalParentUuid": ...}` where a compaction cut the
context; `{"type": "summary", "leafUuid"}` (a session's title, not a boundary); bookkeeping
such as `file-history-snapshot` and `progress`.

The file is a tree, not a list: rewinding a conversation starts a new branch from an earlier
entry and leaves the abandoned one in the file, and Claude Code before 2.1 also wrote a
subagent's entries (`isSidechain: true`) into the main file. What the user sees is the chain
of `parentUuid` links from the newest main-chain entry back to the root, so that is what is
read. Only what people and the model said in words is kept: tool calls, tool results,
thinking, meta entries and local command echoes are left out.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

MAX_MESSAGE_CHARS = 15_000  # under the server's 64 KB per message even in 4-byte UTF-8
STOP_TAIL_BYTES = 4 * 1024 * 1024  # the last exchange is near the end of the file
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
_COMMAND_ECHOES = ("<command-name>", "<command-message>", "<local-command-stdout>",
                   "<local-command-stderr>", "<command-args>")


class Said(NamedTuple):  # a NamedTuple, not a dataclass: `dataclasses` costs ~8 ms to import
    """One message in words: a user's prompt or an assistant's text."""

    role: str
    text: str
    uuid: str | None = None


def read_entries(path: str | os.PathLike[str], *, tail_bytes: int | None = None
                 ) -> list[dict[str, Any]]:
    """Parse the transcript's lines (or its last `tail_bytes`); unreadable lines are skipped."""
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        limit = min(tail_bytes or MAX_TRANSCRIPT_BYTES, MAX_TRANSCRIPT_BYTES)
        start = max(0, size - limit)
        handle.seek(start)
        data = handle.read()
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first line is cut
    entries = []
    for line in lines:
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b["text"] for b in content if isinstance(b, dict)
                 and b.get("type") == "text" and isinstance(b.get("text"), str)]
        return "\n".join(p for p in parts if p)
    return ""


def said(entry: dict[str, Any]) -> Said | None:
    """The words in one entry, or None for tool traffic, meta entries and the like."""
    kind = entry.get("type")
    if kind not in ("user", "assistant") or entry.get("isMeta") or entry.get("isCompactSummary"):
        return None
    message = entry.get("message")
    if not isinstance(message, dict):
        return None
    text = _text_of(message.get("content")).strip()
    if not text:
        return None
    if kind == "user" and text.startswith(_COMMAND_ECHOES):
        return None
    uuid = entry.get("uuid")
    return Said(kind, text, uuid if isinstance(uuid, str) else None)


def is_boundary(entry: dict[str, Any]) -> bool:
    """A compaction's mark. (A `summary` line is a session title, written anywhere.)"""
    return entry.get("type") == "system" and entry.get("subtype") == "compact_boundary"


def active_branch(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries on the path from the newest main-chain entry back to the root, in order.

    A compact boundary has no `parentUuid` but names what came before it in
    `logicalParentUuid`, so the path runs through compactions. Transcripts without the links
    (hand-written, or cut by a tail read before the first linked entry) keep the file order.
    """
    main = [e for e in entries if not e.get("isSidechain")]
    linked = [e for e in main if isinstance(e.get("uuid"), str)]
    if not linked or "parentUuid" not in linked[-1]:
        return main
    by_uuid = {e["uuid"]: e for e in linked}
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    entry: dict[str, Any] | None = linked[-1]
    while entry is not None and entry["uuid"] not in seen:
        seen.add(entry["uuid"])
        path.append(entry)
        parent = entry.get("parentUuid") or entry.get("logicalParentUuid")
        entry = by_uuid.get(parent) if isinstance(parent, str) else None
    path.reverse()
    return path


def conversation(entries: Iterable[dict[str, Any]]) -> list[Said]:
    """The words in order, consecutive assistant texts joined into one message."""
    out: list[Said] = []
    for entry in entries:
        item = said(entry)
        if item is None:
            continue
        if out and item.role == "assistant" and out[-1].role == "assistant":
            prev = out[-1]
            out[-1] = Said("assistant", f"{prev.text}\n\n{item.text}", item.uuid or prev.uuid)
        else:
            out.append(item)
    return out


def last_exchange(entries: list[dict[str, Any]], last_assistant: str | None = None
                  ) -> tuple[list[Said], str]:
    """The last user prompt and the answer to it, plus a stable turn id for that exchange.

    `last_assistant` (the Stop hook's `last_assistant_message`) wins over the transcript,
    which may not have the final message written yet.
    """
    words = conversation(active_branch(entries))
    user_at = max((i for i, s in enumerate(words) if s.role == "user"), default=None)
    user = words[user_at] if user_at is not None else None
    answer: Said | None = None
    if last_assistant and last_assistant.strip():
        answer = Said("assistant", last_assistant.strip())
    elif user_at is not None and user_at + 1 < len(words):
        answer = words[user_at + 1]
    elif user_at is None and words:
        answer = words[-1]
    exchange = [s for s in (user, answer) if s is not None]
    exchange = [Said(s.role, clip(s.text), s.uuid) for s in exchange]
    digest = stable_hash(s.text for s in exchange)
    turn_id = f"{user.uuid}:{digest[:12]}" if user is not None and user.uuid else digest[:32]
    return exchange, turn_id


def since_compaction(entries: list[dict[str, Any]]) -> tuple[list[Said], str]:
    """The words after the last compaction boundary, and a stable id for that stretch."""
    branch = active_branch(entries)
    last = max((i for i, e in enumerate(branch) if is_boundary(e)), default=-1)
    stretch = branch[last + 1:]
    words = [Said(s.role, clip(s.text), s.uuid) for s in conversation(stretch)]
    uuids = [e.get("uuid") for e in stretch if isinstance(e.get("uuid"), str)]
    if uuids:
        span_id = f"compact:{uuids[0]}:{uuids[-1]}"
    else:
        span_id = "compact:" + stable_hash(s.text for s in words)[:32]
    return words, span_id[:200]


def chunks(words: list[Said], max_bytes: int = 1_000_000) -> Iterator[list[Said]]:
    """Split a long stretch so that each submission stays under the server's body limit."""
    batch: list[Said] = []
    size = 0
    for item in words:
        n = len(item.text.encode("utf-8", errors="replace")) + 64
        if batch and size + n > max_bytes:
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += n
    if batch:
        yield batch


def clip(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def stable_hash(texts: Iterable[str]) -> str:
    import hashlib  # only Stop and PreCompact need it; SessionStart starts faster without

    h = hashlib.sha256()
    for text in texts:
        h.update(text.encode("utf-8", errors="replace"))
        h.update(b"\x00")
    return h.hexdigest()
