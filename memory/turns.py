"""Conversation turns handed in for extraction: validation and bounds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.errors import ValidationError
from memory.intake import MAX_ID_CHARS
from memory.ports import ROLES, Message

MAX_MESSAGE_BYTES = 64 * 1024
MAX_MESSAGES = 10_000
MAX_TOTAL_BYTES = 8 * 1024 * 1024
TRIGGERS = ("turn", "compaction")


@dataclass(frozen=True)
class TurnSubmission:
    """The last exchange (trigger 'turn') or the stretch about to be compacted."""

    conversation_id: str
    turn_id: str
    messages: Sequence[Message]
    workspace: str | None = None
    persona: str | None = None
    trigger: str = "turn"


def _clean_text(value: object, index: int) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if not isinstance(value, str):
        raise ValidationError(f"message {index}: content must be text")
    # Drop NULs and other C0 controls except tab/newline/CR; keep everything else.
    text = "".join(ch for ch in value if ch >= " " or ch in "\t\n\r")
    if len(text.encode("utf-8", errors="replace")) > MAX_MESSAGE_BYTES:
        raise ValidationError(f"message {index}: content is over {MAX_MESSAGE_BYTES // 1024} KB")
    return text


def validate_messages(messages: Sequence[Message | dict[str, object]]) -> list[Message]:
    """Check roles, sizes and counts; returns cleaned messages or raises ValidationError."""
    if not messages:
        raise ValidationError("messages must not be empty")
    if len(messages) > MAX_MESSAGES:
        raise ValidationError(f"at most {MAX_MESSAGES} messages per submission")
    cleaned: list[Message] = []
    total = 0
    for i, m in enumerate(messages):
        role, content = (m.role, m.content) if isinstance(m, Message) else (
            m.get("role"), m.get("content"))
        if role not in ROLES:
            raise ValidationError(
                f"message {i}: unknown role {str(role)[:20]!r}; use one of {', '.join(ROLES)}"
            )
        text = _clean_text(content, i)
        total += len(text)
        if total > MAX_TOTAL_BYTES:
            raise ValidationError(f"messages are over {MAX_TOTAL_BYTES // (1024 * 1024)} MB")
        cleaned.append(Message(str(role), text))
    if not any(m.content.strip() for m in cleaned):
        raise ValidationError("messages hold no text")
    return cleaned


def validate_submission(sub: TurnSubmission) -> TurnSubmission:
    for name in ("conversation_id", "turn_id"):
        value = getattr(sub, name)
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID_CHARS:
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
