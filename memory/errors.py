"""Domain errors. Every one is safe to show a user and carries a stable code.

    MemvetError
     ├── NotFound            NOT_FOUND
     ├── Forbidden           FORBIDDEN
     ├── InvalidKind         INVALID_KIND
     ├── InvalidNamespace    INVALID_NAMESPACE
     ├── InvalidTransition   INVALID_TRANSITION
     ├── ValidationError     VALIDATION
     ├── Unauthenticated     UNAUTHENTICATED
     ├── DataDirLocked       DATA_DIR_LOCKED
     └── ConfigurationError  CONFIGURATION   (a setting or a shipped file is unusable; at start-up)
"""

from __future__ import annotations


class MemvetError(Exception):
    """Base of every expected failure; `str(err)` is the user-facing message."""

    code = "ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(MemvetError):
    code = "NOT_FOUND"


class Forbidden(MemvetError):
    code = "FORBIDDEN"


class InvalidKind(MemvetError):
    code = "INVALID_KIND"


class InvalidNamespace(MemvetError):
    code = "INVALID_NAMESPACE"


class InvalidTransition(MemvetError):
    code = "INVALID_TRANSITION"


class ValidationError(MemvetError):
    code = "VALIDATION"


class Unauthenticated(MemvetError):
    code = "UNAUTHENTICATED"


class DataDirLocked(MemvetError):
    code = "DATA_DIR_LOCKED"


class ConfigurationError(MemvetError):
    code = "CONFIGURATION"
