"""Checks for text that comes from outside: ids, names and free text.

Everything a caller hands the core passes one of these before it reaches the store, so a lone
UTF-16 surrogate (`"\\ud800"` in JSON), a NUL byte in an id or a control character in a name is
a `ValidationError` the caller can read, never a driver error deep in a transaction.
"""

from __future__ import annotations

import re

from memvet.memory.errors import ValidationError
from memvet.memory.limits import MAX_ID_CHARS

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_text(value: object, what: str) -> str:
    """Free text (content, a reason, a query): any characters but lone surrogates."""
    if not isinstance(value, str):
        raise ValidationError(f"{what} must be text")
    if _SURROGATE.search(value):
        raise ValidationError(f"{what} is not valid Unicode (it holds a lone surrogate)")
    return value


def check_optional_text(value: object, what: str) -> str | None:
    return None if value is None else check_text(value, what)


def check_id(value: object, what: str = "id") -> str:
    """An id or a name: 1-200 characters, no control characters, no lone surrogates."""
    text = check_text(value, what)
    if not text or len(text) > MAX_ID_CHARS:
        raise ValidationError(f"{what} must be 1-{MAX_ID_CHARS} characters")
    if _CONTROL.search(text):
        raise ValidationError(f"{what} must not contain control characters (such as NUL)")
    return text
