"""Input bounds for extraction: the core's message validation (memory/messages.py)."""

from __future__ import annotations

from memvet.memory.messages import (
    MAX_MESSAGE_BYTES,
    MAX_MESSAGES,
    MAX_TOTAL_BYTES,
    validate_messages,
)

__all__ = ["MAX_MESSAGES", "MAX_MESSAGE_BYTES", "MAX_TOTAL_BYTES", "validate_messages"]
