"""An extractor backed by any OpenAI-compatible chat-completions endpoint.

Ollama, vLLM, the llama.cpp server and OpenAI all speak `POST {base_url}/chat/completions`.
The model is taught the six kinds and the two namespaces and asked for structured output (a
JSON schema whose kind is an enum of the six; a server that refuses it is asked for a JSON
object, then for plain text); every item is validated strictly either way. What does not
validate is dropped and counted in `stats`, never returned:

    ExtractionStats
     ├── dropped_ghost_kind   an item whose kind is not one of the six
     ├── dropped_malformed    an item (or a whole answer) of the wrong shape
     ├── dropped_non_json     an answer that is not JSON at all
     ├── errors               the endpoint failed: timeout, refused, 5xx, bad protocol
     └── fallbacks            calls answered by the fallback extractor instead

When the endpoint is down, slow or unusable the call still returns: with the fallback
extractor's result if one is configured, else with no candidates. It never raises.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from memvet.memory.kinds import Kind
from memvet.memory.namespaces import slugify
from memvet.memory.ports import (
    ExtractedCandidate,
    ExtractionContext,
    ExtractionStats,
    Extractor,
    Message,
)

log = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 4_000
MAX_PROMPT_CHARS = 24_000
MAX_CONTENT_CHARS = 1_000
MAX_ITEMS = 40
RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}

SYSTEM_PROMPT = """\
You extract long-term memories for AI coding agents from a conversation between a user and \
a coding agent. A person reviews every memory before agents may use it, so propose only what \
is worth remembering for months.

Each memory has exactly one kind, one of these six (no others exist):
- preference: how the user wants agents to work (style, communication, what to ask first).
- fact: a durable, checkable fact about the project (where things live, versions, ports).
- decision: a choice that was made, ideally with its reason ("X over Y because Z").
- pattern: a recurring practice or convention worth encoding once ("every migration gets ...").
- postmortem: what went wrong and what to do differently.
- event: something that happened at a point in time (a release, a migration, a cut-over).

Each memory has a namespace, one of two:
- "workspace": about this project (facts, decisions, patterns, postmortems, events).
- "persona": about the user across all projects (their preferences, their setup).

Rules:
- Only what the user stated or explicitly confirmed; not the agent's own unconfirmed plans.
- Nothing from questions, hypotheticals ("maybe one day"), one-off instructions ("run the \
tests now"), jokes, or anything the user took back.
- Ignore code blocks, stack traces and tool output.
- Write each memory as one standalone sentence that still makes sense months later, naming \
the project or tool ("The shop-api project uses pnpm, not npm."), not "we're on pnpm here".
- confidence: a number from 0 to 1, how sure you are it is durable and correctly stated.
- Most turns contain nothing worth remembering: then answer {"memories": []}.

Answer with JSON only, no prose:
{"memories": [{"content": "...", "kind": "fact", "namespace": "workspace", \
"confidence": 0.8, "excerpt": "the user's words it came from"}]}"""

_FENCE_RE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S | re.I)
_KINDS = {k.value for k in Kind}

# Structured output, strictest first: a JSON schema whose kind is an enum of the six (OpenAI,
# vLLM, llama.cpp, recent Ollama), then any JSON object, then plain text (the prompt still asks
# for JSON). A server that refuses a mode (400/422/501) is asked again at once in the next
# one, and the mode that worked is kept for later calls.
MODES = ("json_schema", "json_object", "text")
REFUSED_MODE_STATUS = {400, 404, 415, 422, 501}
MEMORY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["memories"],
    "properties": {"memories": {"type": "array", "items": {
        "type": "object",
        "additionalProperties": False,
        "required": ["content", "kind", "namespace", "confidence", "excerpt"],
        "properties": {
            "content": {"type": "string"},
            "kind": {"type": "string", "enum": [k.value for k in Kind]},
            "namespace": {"type": "string", "enum": ["workspace", "persona"]},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "excerpt": {"type": ["string", "null"]},
        },
    }}},
}


class LLMExtractor:
    """Extraction by a chat model over HTTP, with validation, retries and a fallback."""

    name = "llm"
    background = True  # slow: the service runs it off the request path

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 20.0,
        max_retries: int = 2,
        fallback: Extractor | None = None,
        transport: httpx.BaseTransport | None = None,
        backoff: float = 0.5,
        mode: str = "json_schema",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        self.model = model
        self.max_retries = max(0, int(max_retries))
        self.fallback = fallback
        self.backoff = max(0.0, backoff)
        self.mode = mode  # the structured-output mode in use; steps down when refused
        self.stats = ExtractionStats()
        self._sleep = sleep
        self._lock = threading.Lock()
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._client = httpx.Client(timeout=timeout, transport=transport, headers=headers)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    # -- the Extractor protocol ------------------------------------------------------------------

    def extract(
        self, messages: Sequence[Message], context: ExtractionContext
    ) -> list[ExtractedCandidate]:
        try:
            answer = self._complete(messages, context)
        except Exception:  # never let a model server fail a turn
            log.exception("llm extraction failed unexpectedly")
            self._count("errors")
            answer = None
        if answer is None:
            return self._fall_back(messages, context)
        items = self._parse(answer)
        if items is None:
            return self._fall_back(messages, context)
        return self._validate(items, context)

    # -- HTTP --------------------------------------------------------------------------------

    def _payload(self, messages: Sequence[Message], context: ExtractionContext) -> dict[str, Any]:
        lines: list[str] = []
        budget = MAX_PROMPT_CHARS
        for m in reversed(list(messages)):  # the most recent messages matter most
            content = m.content if isinstance(m.content, str) else ""
            line = f"[{m.role}] {content[:MAX_MESSAGE_CHARS]}"
            if len(line) > budget:
                break
            budget -= len(line)
            lines.append(line)
        lines.reverse()
        header = (
            f"Project (workspace): {context.workspace or '(none)'}\n"
            f"User persona: {context.persona}\n"
            f"Pass: {context.trigger}\n\nConversation:\n"
        )
        payload: dict[str, Any] = {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": header + "\n\n".join(lines)},
            ],
        }
        return payload

    @staticmethod
    def _with_mode(payload: dict[str, Any], mode: str) -> dict[str, Any]:
        if mode == "json_schema":
            return {**payload, "response_format": {"type": "json_schema", "json_schema": {
                "name": "memories", "strict": True, "schema": MEMORY_SCHEMA}}}
        if mode == "json_object":
            return {**payload, "response_format": {"type": "json_object"}}
        return payload

    def _complete(self, messages: Sequence[Message], context: ExtractionContext) -> str | None:
        """The model's answer text, or None when the endpoint could not give one."""
        payload = self._payload(messages, context)
        attempt = 0
        while attempt <= self.max_retries:
            if attempt:
                self._sleep(min(self.backoff * 2 ** (attempt - 1), 8.0))
            mode = self.mode
            try:
                response = self._client.post(self._url, json=self._with_mode(payload, mode))
            except httpx.TimeoutException:
                log.warning("llm endpoint timed out (attempt %d)", attempt + 1)
                attempt += 1
                continue
            except httpx.HTTPError as err:
                log.warning("llm endpoint unreachable (attempt %d): %s", attempt + 1, err)
                attempt += 1
                continue
            if response.status_code in REFUSED_MODE_STATUS and mode != MODES[-1]:
                self._step_down(mode, response.status_code)
                continue  # the same attempt, in the next mode
            if response.status_code in RETRY_STATUS:
                log.warning(
                    "llm endpoint answered %d (attempt %d)", response.status_code, attempt + 1
                )
                attempt += 1
                continue
            if response.status_code != 200:
                log.warning("llm endpoint refused the request: %d", response.status_code)
                break
            try:
                text = response.json()["choices"][0]["message"]["content"]
            except (ValueError, KeyError, IndexError, TypeError):
                log.warning("llm endpoint answered something that is not a chat completion")
                break
            if isinstance(text, str):
                return text
            break
        self._count("errors")
        return None

    def _step_down(self, mode: str, status: int) -> None:
        with self._lock:
            if self.mode == mode:
                self.mode = MODES[MODES.index(mode) + 1]
                log.warning("llm endpoint refused response_format %s (HTTP %d); using %s",
                            mode, status, self.mode)

    # -- validation --------------------------------------------------------------------------

    def _parse(self, answer: str) -> list[object] | None:
        """The list of items in the answer; None (counted) when the answer is unusable."""
        text = answer.strip()
        fenced = _FENCE_RE.match(text)
        if fenced:
            text = fenced.group(1)
        try:
            data = json.loads(text)
        except ValueError:
            start, end = text.find("{"), text.rfind("}")
            try:
                data = json.loads(text[start : end + 1]) if 0 <= start < end else None
            except ValueError:
                data = None
            if data is None:
                self._count("dropped_non_json")
                return None
        if isinstance(data, dict):
            for key in ("memories", "candidates", "items"):
                if isinstance(data.get(key), list):
                    return list(data[key])
        if isinstance(data, list):
            return data
        self._count("dropped_malformed")
        return None

    def _validate(
        self, items: list[object], context: ExtractionContext
    ) -> list[ExtractedCandidate]:
        out: list[ExtractedCandidate] = []
        persona_ns = f"persona:{slugify(context.persona or 'default')}"
        workspace_ns = f"workspace:{slugify(context.workspace)}" if context.workspace else None
        for item in items[:MAX_ITEMS]:
            if not isinstance(item, dict):
                self._count("dropped_malformed")
                continue
            kind = item.get("kind")
            if not isinstance(kind, str) or kind.strip().lower() not in _KINDS:
                self._count("dropped_ghost_kind" if isinstance(kind, str) else "dropped_malformed")
                continue
            content = item.get("content")
            confidence = item.get("confidence")
            namespace = item.get("namespace")
            excerpt = item.get("excerpt")
            scope = namespace.split(":", 1)[0].strip().lower() if isinstance(namespace, str) else ""
            if (
                not isinstance(content, str)
                or not 3 <= len(content.strip()) <= MAX_CONTENT_CHARS
                or isinstance(confidence, bool)
                or not isinstance(confidence, (int, float))
                or not 0.0 <= float(confidence) <= 1.0
                or scope not in ("workspace", "persona")
                or (excerpt is not None and not isinstance(excerpt, str))
            ):
                self._count("dropped_malformed")
                continue
            # the model picks the scope; the names come from the context, never from the model
            ns = workspace_ns if scope == "workspace" and workspace_ns else persona_ns
            out.append(
                ExtractedCandidate(
                    content=content.strip(),
                    kind=Kind(kind.strip().lower()),
                    namespace=ns,
                    confidence=round(float(confidence), 3),
                    excerpt=excerpt[:MAX_CONTENT_CHARS] if excerpt else None,
                )
            )
        return out

    # -- bookkeeping -------------------------------------------------------------------------

    def _fall_back(
        self, messages: Sequence[Message], context: ExtractionContext
    ) -> list[ExtractedCandidate]:
        if self.fallback is None:
            return []
        self._count("fallbacks")
        try:
            return self.fallback.extract(messages, context)
        except Exception:
            log.exception("fallback extractor failed")
            return []

    def _count(self, field: str) -> None:
        with self._lock:
            setattr(self.stats, field, getattr(self.stats, field) + 1)
