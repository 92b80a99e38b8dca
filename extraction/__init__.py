"""Extractors: turn a conversation into memory candidates (see memory.ports.Extractor).

`heuristic` (the default) needs no model server; `llm` talks to any OpenAI-compatible
chat-completions endpoint and falls back to the heuristic when the endpoint fails.
"""

from __future__ import annotations

from memvet.extraction.heuristic import HeuristicExtractor
from memvet.extraction.llm import LLMExtractor
from memvet.memory.errors import ValidationError
from memvet.memory.ports import Extractor

EXTRACTORS = ("heuristic", "llm")

__all__ = [
    "EXTRACTORS",
    "HeuristicExtractor",
    "LLMExtractor",
    "build_extractor",
]


def build_extractor(
    name: str = "heuristic",
    *,
    llm_base_url: str | None = None,
    llm_model: str | None = None,
    llm_api_key: str | None = None,
    llm_timeout: float = 20.0,
    llm_fallback: bool = True,
) -> Extractor:
    """The extractor called `name`; raises ValidationError for unknown names or missing config."""
    key = (name or "").strip().lower()
    if key == "heuristic":
        return HeuristicExtractor()
    if key == "llm":
        missing = [
            env
            for env, value in (
                ("MEMVET_LLM_BASE_URL", llm_base_url),
                ("MEMVET_LLM_MODEL", llm_model),
            )
            if not (value and value.strip())
        ]
        if missing:
            raise ValidationError(
                f"the llm extractor needs {' and '.join(missing)} (an OpenAI-compatible "
                "endpoint such as http://localhost:11434/v1 and a model name)"
            )
        if llm_timeout <= 0:
            raise ValidationError("llm_timeout must be a positive number of seconds")
        assert llm_base_url is not None and llm_model is not None  # checked above
        return LLMExtractor(
            base_url=llm_base_url.strip(),
            model=llm_model.strip(),
            api_key=llm_api_key or None,
            timeout=llm_timeout,
            fallback=HeuristicExtractor() if llm_fallback else None,
        )
    raise ValidationError(
        f"unknown extractor {str(name)[:40]!r}; choose one of: {', '.join(EXTRACTORS)}"
    )
