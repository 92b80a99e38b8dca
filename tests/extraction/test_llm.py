"""The LLM extractor against a real local HTTP server speaking chat completions."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memvet.extraction.heuristic import HeuristicExtractor
from memvet.extraction.llm import LLMExtractor
from memvet.memory.kinds import Kind
from memvet.memory.ports import ExtractionContext, Extractor, Message

CTX = ExtractionContext(workspace="shop-api", persona="dana", trigger="turn")
TURN = [
    Message("user", "heads up: we're on pnpm here, the lockfile lives in the repo root"),
    Message("assistant", "Noted."),
]


@dataclass
class Reply:
    status: int = 200
    content: str | None = None  # the model's answer; wrapped in a chat completion
    raw: bytes | None = None  # or a raw body
    delay: float = 0.0


@dataclass
class Script:
    replies: list[Reply] = field(default_factory=list)
    requests: list[dict[str, object]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


def completion(content: str) -> bytes:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
    }
    return json.dumps(body).encode()


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # keep the test output quiet
            pass

        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            length = int(self.headers.get("Content-Length", 0))
            body = self.rfile.read(length)
            if self.path != "/v1/chat/completions":
                self.send_response(404)
                self.end_headers()
                return
            script.requests.append(json.loads(body))
            script.headers.append(dict(self.headers))
            reply = script.replies.pop(0) if script.replies else Reply(content='{"memories":[]}')
            if reply.delay:
                time.sleep(reply.delay)
            payload = reply.raw if reply.raw is not None else completion(reply.content or "")
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (the slow case)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", script
    finally:
        httpd.shutdown()
        httpd.server_close()


def extractor(base_url: str, **kwargs: object) -> LLMExtractor:
    options: dict[str, object] = {
        "model": "test-model",
        "api_key": "sk-test",
        "timeout": 2.0,
        "max_retries": 1,
        "backoff": 0.0,
    }
    options.update(kwargs)
    return LLMExtractor(base_url=base_url, **options)  # type: ignore[arg-type]


def item(**overrides: object) -> dict[str, object]:
    base: dict[str, object] = {
        "content": "The shop-api project uses pnpm, not npm.",
        "kind": "fact",
        "namespace": "workspace",
        "confidence": 0.8,
        "excerpt": "we're on pnpm here",
    }
    base.update(overrides)
    return base


def test_good_answer_becomes_candidates(server: tuple[str, Script]) -> None:
    url, script = server
    answer = {
        "memories": [
            item(),
            item(content="Keep answers short.", kind="preference", namespace="persona"),
        ]
    }
    script.replies.append(Reply(content=json.dumps(answer)))
    ex = extractor(url)
    got = ex.extract(TURN, CTX)
    assert [(c.kind, c.namespace) for c in got] == [
        (Kind.FACT, "workspace:shop-api"),
        (Kind.PREFERENCE, "persona:dana"),
    ]
    assert got[0].confidence == 0.8 and got[0].excerpt == "we're on pnpm here"
    request = script.requests[0]
    assert request["model"] == "test-model"
    prompt = json.dumps(request["messages"])
    assert all(k.value in prompt for k in Kind) and "workspace" in prompt and "persona" in prompt
    assert "pnpm" in prompt
    assert script.headers[0]["Authorization"] == "Bearer sk-test"
    assert ex.stats.fallbacks == 0 and ex.stats.errors == 0


def test_fenced_json_and_an_empty_answer_are_accepted(server: tuple[str, Script]) -> None:
    url, script = server
    script.replies.append(Reply(content="```json\n" + json.dumps([item()]) + "\n```"))
    script.replies.append(Reply(content='{"memories": []}'))
    ex = extractor(url)
    assert len(ex.extract(TURN, CTX)) == 1
    assert ex.extract(TURN, CTX) == []


def test_ghost_kinds_and_malformed_items_are_dropped_and_counted(
    server: tuple[str, Script],
) -> None:
    url, script = server
    answer = {
        "memories": [
            item(kind="todo"),  # ghost
            item(kind="Opinion"),  # ghost
            item(confidence=1.7),  # out of range
            item(confidence="high"),  # not a number
            item(namespace="project"),  # not one of the two
            item(content=""),  # empty
            "just a string",  # not an object
            item(kind="DECISION", content="Use sqlc over GORM for SQL visibility."),
        ]
    }
    script.replies.append(Reply(content=json.dumps(answer)))
    ex = extractor(url, fallback=HeuristicExtractor())
    got = ex.extract(TURN, CTX)
    assert [c.kind for c in got] == [Kind.DECISION]
    assert ex.stats.dropped_ghost_kind == 2
    assert ex.stats.dropped_malformed == 5
    assert ex.stats.fallbacks == 0  # a partly bad answer is still the model's answer


def test_model_cannot_choose_namespace_names(server: tuple[str, Script]) -> None:
    url, script = server
    script.replies.append(Reply(content=json.dumps([item(namespace="workspace:other-project")])))
    (got,) = extractor(url).extract(TURN, CTX)
    assert got.namespace == "workspace:shop-api"


def test_broken_json_is_counted_and_falls_back(server: tuple[str, Script]) -> None:
    url, script = server
    script.replies.append(Reply(content="Sure! Here are the memories: kind=fact, pnpm..."))
    ex = extractor(url, fallback=HeuristicExtractor())
    got = ex.extract(TURN, CTX)
    assert ex.stats.dropped_non_json == 1 and ex.stats.fallbacks == 1
    assert got and got[0].kind is Kind.FACT  # the heuristic's answer


def test_broken_json_without_fallback_returns_nothing(server: tuple[str, Script]) -> None:
    url, script = server
    script.replies.append(Reply(content='{"memories": [{"content": "x", '))
    ex = extractor(url, fallback=None)
    assert ex.extract(TURN, CTX) == []
    assert ex.stats.dropped_non_json == 1 and ex.stats.fallbacks == 0


def test_500_is_retried_then_falls_back(server: tuple[str, Script]) -> None:
    url, script = server
    script.replies += [Reply(status=500, raw=b"oops"), Reply(status=503, raw=b"busy")]
    ex = extractor(url, fallback=HeuristicExtractor(), max_retries=1)
    got = ex.extract(TURN, CTX)
    assert len(script.requests) == 2  # one try plus one retry, then give up
    assert ex.stats.errors == 1 and ex.stats.fallbacks == 1
    assert got and got[0].kind is Kind.FACT


def test_a_retry_can_succeed(server: tuple[str, Script]) -> None:
    url, script = server
    script.replies += [Reply(status=500, raw=b"oops"), Reply(content=json.dumps([item()]))]
    ex = extractor(url, fallback=HeuristicExtractor(), max_retries=2)
    assert len(ex.extract(TURN, CTX)) == 1
    assert ex.stats.errors == 0 and ex.stats.fallbacks == 0


def test_slow_endpoint_times_out_within_bounds_and_falls_back(server: tuple[str, Script]) -> None:
    url, script = server
    script.replies += [Reply(content="[]", delay=1.5), Reply(content="[]", delay=1.5)]
    ex = extractor(url, timeout=0.3, max_retries=1, fallback=HeuristicExtractor())
    start = time.perf_counter()
    got = ex.extract(TURN, CTX)
    assert time.perf_counter() - start < 1.5
    assert ex.stats.errors == 1 and ex.stats.fallbacks == 1
    assert got


def test_endpoint_down_still_returns() -> None:
    ex = extractor("http://127.0.0.1:9/v1", timeout=0.5, max_retries=1, fallback=None)
    assert ex.extract(TURN, CTX) == []
    assert ex.stats.errors == 1


def test_not_a_chat_completion_is_an_error(server: tuple[str, Script]) -> None:
    url, script = server
    script.replies.append(Reply(raw=b'{"unexpected": true}'))
    ex = extractor(url, fallback=HeuristicExtractor())
    assert ex.extract(TURN, CTX)
    assert ex.stats.errors == 1 and ex.stats.fallbacks == 1


def test_is_a_background_extractor() -> None:
    ex = extractor("http://127.0.0.1:9/v1")
    assert isinstance(ex, Extractor)
    assert ex.name == "llm" and ex.background is True
    ex.close()


def test_asks_for_a_json_schema_whose_kind_is_an_enum_of_the_six(
        server: tuple[str, Script]) -> None:
    url, script = server
    script.replies.append(Reply(content=json.dumps({"memories": [item()]})))
    got = extractor(url).extract(TURN, CTX)
    assert [c.kind for c in got] == [Kind.FACT]
    fmt = script.requests[0]["response_format"]
    assert isinstance(fmt, dict) and fmt["type"] == "json_schema"
    schema = fmt["json_schema"]["schema"]
    kinds = schema["properties"]["memories"]["items"]["properties"]["kind"]["enum"]
    assert sorted(kinds) == sorted(k.value for k in Kind)


def test_a_server_refusing_structured_output_is_asked_again_more_plainly(
        server: tuple[str, Script]) -> None:
    url, script = server
    script.replies.extend([
        Reply(status=400, raw=b'{"error": "response_format json_schema is not supported"}'),
        Reply(status=422, raw=b'{"error": "response_format is not supported"}'),
        Reply(content=json.dumps({"memories": [item(kind="insight")]})),  # a ghost kind
        Reply(content=json.dumps({"memories": [item()]})),
    ])
    ex = extractor(url)
    assert ex.extract(TURN, CTX) == []  # plain text answered, the ghost kind dropped
    assert ex.stats.dropped_ghost_kind == 1
    modes = [r.get("response_format", {"type": "text"}) for r in script.requests]
    assert [m["type"] for m in modes] == ["json_schema", "json_object", "text"]  # type: ignore[index]
    # the mode that worked is kept for the next call
    assert [c.kind for c in ex.extract(TURN, CTX)] == [Kind.FACT]
    assert "response_format" not in script.requests[-1]
