"""What may enter the queue: the rules a proposal passes before intake touches the store.

Content is non-empty text of at most 16 KB; a confidence is a number in [0, 1]; an origin's ids
are ids and its excerpt is trimmed; two texts are the same memory when they normalise alike
(case, width, whitespace and edge punctuation aside), which `content_key` hashes.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from dataclasses import dataclass

from memvet.memory.errors import ValidationError
from memvet.memory.kinds import Kind
from memvet.memory.limits import MAX_CONTENT_BYTES, MAX_EXCERPT_CHARS, MAX_REASON_CHARS
from memvet.memory.records import OriginInput, Source
from memvet.memory.text import check_id, check_text

_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = " \t\n.!?;:,'\"`“”‘’()[]"


def normalize(text: str) -> str:
    """Case, width, whitespace and edge punctuation do not make a different memory."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", folded).strip(_EDGE_PUNCT)


def content_key(text: str) -> str:
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()


def clean_content(value: object) -> str:
    """Validate candidate/memory text: non-empty, at most 16 KB of UTF-8."""
    text = check_text(value, "content").replace("\x00", "").strip()
    if not text:
        raise ValidationError("content must not be empty")
    if len(text.encode("utf-8", errors="replace")) > MAX_CONTENT_BYTES:
        raise ValidationError(f"content is over {MAX_CONTENT_BYTES // 1024} KB")
    return text


def clean_confidence(value: object) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]  # validated just below
    except (TypeError, ValueError) as exc:
        raise ValidationError("confidence must be a number between 0 and 1") from exc
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise ValidationError("confidence must be between 0 and 1")
    return number


def clean_origin(origin: OriginInput | None) -> OriginInput | None:
    if origin is None:
        return None
    conversation_id = check_id(origin.conversation_id, "conversation_id") if (
        origin.conversation_id is not None) else None
    turn_id = check_id(origin.turn_id, "turn_id") if origin.turn_id is not None else None
    excerpt = origin.excerpt
    if excerpt is not None:
        excerpt = check_text(excerpt, "excerpt").replace("\x00", "")[:MAX_EXCERPT_CHARS]
    return OriginInput(conversation_id, turn_id, excerpt, origin.turn_ref)


def clean_reason(reason: str | None) -> str | None:
    """A reviewer's reason: optional, at most 2,000 characters; blank means none."""
    if reason is None:
        return None
    reason = check_text(reason, "reason").replace("\x00", "").strip()
    if len(reason) > MAX_REASON_CHARS:
        raise ValidationError(f"reason is over {MAX_REASON_CHARS} characters")
    return reason or None


@dataclass(frozen=True)
class Proposal:
    """A validated candidate about to enter the queue."""

    content: str
    kind: Kind
    namespace: str
    source: Source
    confidence: float
    origin: OriginInput | None
    created_by: str | None
