"""Conversation turns handed in for extraction: validation and bounds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memvet.memory.errors import ValidationError
from memvet.memory.messages import validate_messages
from memvet.memory.ports import Message
from memvet.memory.text import MAX_ID_CHARS, check_id

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


def validate_submission(sub: TurnSubmission) -> TurnSubmission:
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
