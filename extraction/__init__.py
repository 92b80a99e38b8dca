"""Extractors: turn a conversation into memory candidates (see memory.ports.Extractor).

`learned` (the default) is a small trained model over the packaged MiniLM's sentence vectors
(learned/); it needs that Embedder handed in. `heuristic` is the older cue-lexicon extractor,
needing nothing. `llm` talks to any OpenAI-compatible chat-completions endpoint and falls back
to the learned extractor (or, with no embedder, the heuristic one) when the endpoint fails.
"""

from __future__ import annotations

from pathlib import Path

from memvet.extraction.heuristic import HeuristicExtractor
from memvet.extraction.learned import LearnedExtractor
from memvet.extraction.learned.model import DEFAULT_MODEL_PATH, ExtractorModel
from memvet.extraction.llm import LLMExtractor
from memvet.memory.errors import ConfigurationError, ValidationError
from memvet.memory.ports import Embedder, Extractor

EXTRACTORS = ("learned", "heuristic", "llm")

__all__ = [
    "EXTRACTORS",
    "HeuristicExtractor",
    "LLMExtractor",
    "LearnedExtractor",
    "build_extractor",
]


def build_extractor(
    name: str = "learned",
    *,
    embedder: Embedder | None = None,
    model_path: Path | None = None,
    llm_base_url: str | None = None,
    llm_model: str | None = None,
    llm_api_key: str | None = None,
    llm_timeout: float = 20.0,
    llm_fallback: bool = True,
) -> Extractor:
    """The extractor called `name`; ValidationError for an unknown name or missing LLM
    settings, ConfigurationError when the learned model file (or its embedder) is unusable."""
    key = (name or "").strip().lower()
    if key == "learned":
        if embedder is None:
            raise ConfigurationError("the learned extractor needs the packaged embedding model")
        return LearnedExtractor(embedder, ExtractorModel.load(model_path or DEFAULT_MODEL_PATH))
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
        fallback: Extractor | None = None
        if llm_fallback:
            fallback = (LearnedExtractor(embedder, ExtractorModel.load(
                model_path or DEFAULT_MODEL_PATH)) if embedder is not None
                else HeuristicExtractor())
        return LLMExtractor(
            base_url=llm_base_url.strip(),
            model=llm_model.strip(),
            api_key=llm_api_key or None,
            timeout=llm_timeout,
            fallback=fallback,
        )
    raise ValidationError(
        f"unknown extractor {str(name)[:40]!r}; choose one of: {', '.join(EXTRACTORS)}"
    )
