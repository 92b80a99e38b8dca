"""Turns and messages handed in for extraction: bounds and cleaning, checked before anything
is stored.

Clear `ValidationError`s for what cannot be accepted (no messages, an unknown role, content
that is not text, a message over 64 KiB, more than 10,000 messages or 4 MiB in all); what can
be repaired is repaired (NUL and other control characters dropped, undecodable bytes
replaced, blank messages left out).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from memvet.memory.errors import ValidationError
from memvet.memory.limits import MAX_ID_CHARS, MAX_MESSAGE_BYTES, MAX_MESSAGES, MAX_TOTAL_BYTES
from memvet.memory.ports import ROLES, Message
from memvet.memory.records import TRIGGERS, TurnSubmission
from memvet.memory.text import check_id

# Control characters other than tab, newline and carriage return.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _text(content: object, index: int) -> str:
    if isinstance(content, (bytes, bytearray)):
        return bytes(content).decode("utf-8", "replace")
    if not isinstance(content, str):
        raise ValidationError(
            f"message {index}: content must be text, not {type(content).__name__}"
        )
    # lone surrogates (from undecodable input) become U+FFFD, one for one
    return _SURROGATE_RE.sub("\ufffd", content)


def _parts(item: object, index: int) -> tuple[object, object]:
    if isinstance(item, Message):
        return item.role, item.content
    if isinstance(item, Mapping):
        return item.get("role"), item.get("content")
    raise ValidationError(f"message {index}: expected an object with 'role' and 'content'")


def validate_messages(messages: Iterable[object]) -> list[Message]:
    """Check and clean messages (`Message`s or `{"role", "content"}` mappings)."""
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise ValidationError("messages must be a list of {role, content} objects")
    out: list[Message] = []
    total = seen = 0
    for index, item in enumerate(messages):
        if index >= MAX_MESSAGES:
            raise ValidationError(
                f"too many messages: at most {MAX_MESSAGES:,} per turn or compaction"
            )
        role, content = _parts(item, index)
        if not isinstance(role, str) or role.strip().lower() not in ROLES:
            shown = str(role)[:20] if role is not None else "missing"
            raise ValidationError(
                f"message {index}: unknown role {shown!r}; a role is one of: {', '.join(ROLES)}"
            )
        text = _text(content, index)
        size = len(text.encode("utf-8"))
        if size > MAX_MESSAGE_BYTES:
            raise ValidationError(
                f"message {index} is {size:,} bytes; a message may be at most "
                f"{MAX_MESSAGE_BYTES // 1024} KiB"
            )
        total += size
        if total > MAX_TOTAL_BYTES:
            raise ValidationError(
                f"messages exceed {MAX_TOTAL_BYTES // (1024 * 1024)} MiB in total"
            )
        text = _CONTROL_RE.sub("", text)
        if text.strip():  # an empty tool result, say, carries nothing to extract
            out.append(Message(role=role.strip().lower(), content=text))
        seen = index + 1
    if not out:
        if seen:
            raise ValidationError("every message is empty: there is no text to extract from")
        raise ValidationError("no messages: a turn needs at least one message")
    return out


def validate_submission(sub: TurnSubmission) -> TurnSubmission:
    """A turn's ids, trigger and messages, checked and cleaned."""
    for name in ("conversation_id", "turn_id"):
        value = check_id(getattr(sub, name), name)
        if not value.strip():
            raise ValidationError(f"{name} must be 1-{MAX_ID_CHARS} characters")
    if sub.trigger not in TRIGGERS:
        raise ValidationError(f"trigger must be one of {', '.join(TRIGGERS)}")
    return TurnSubmission(
        conversation_id=sub.conversation_id.strip(),
        turn_id=sub.turn_id.strip(),
        messages=validate_messages(sub.messages),
        workspace=sub.workspace,
        persona=sub.persona,
        trigger=sub.trigger,
    )
