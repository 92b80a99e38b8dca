"""Helpers for the agent-integration tests: a real `memvet serve` subprocess, tokens for each
role, GraphQL over HTTP, hook runs as subprocesses, and an MCP client over streamable HTTP."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from memvet.api.settings import Settings
from tests.fixtures.net import free_port, http_process

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
MEMVET = shutil.which("memvet", path=str(Path(sys.executable).parent)) or "memvet"
# What every child `memvet` gets: the model offline, no telemetry. It imports memvet from the
# venv (the editable install), no test code, so it needs no PYTHONPATH.
BASE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "ANONYMIZED_TELEMETRY": "False", "TOKENIZERS_PARALLELISM": "false"}


@dataclass
class Server:
    url: str
    data_dir: Path
    log: Path
    tokens: dict[str, str] = field(default_factory=dict)

    def graphql(self, query: str, variables: dict[str, Any] | None = None, *,
                as_: str = "admin", token: str | None = None) -> dict[str, Any]:
        """POST a GraphQL operation; return the whole response body (data and errors)."""
        token = token if token is not None else self.tokens[as_]
        r = httpx.post(f"{self.url}/graphql", json={"query": query, "variables": variables or {}},
                       headers={"Authorization": f"Bearer {token}"}, timeout=60,
                       trust_env=False)
        assert r.status_code in (200, 400), r.text
        return dict(r.json())

    def data(self, query: str, variables: dict[str, Any] | None = None, *,
             as_: str = "admin") -> dict[str, Any]:
        body = self.graphql(query, variables, as_=as_)
        assert not body.get("errors"), body
        return dict(body["data"])

    def env(self, as_: str = "agent", **extra: str) -> dict[str, str]:
        """Environment for a client process (hook, CLI) talking to this server."""
        return {**os.environ, **BASE_ENV, "MEMVET_URL": self.url,
                "MEMVET_TOKEN": self.tokens.get(as_, as_), **extra}

    def create_token(self, role: str, namespaces: list[str] | None = None) -> str:
        data = self.data("mutation($r: TokenRole!, $n: [String!]) { createToken(role: $r, "
                         "namespaces: $n) { ... on CreatedToken { token } "
                         "... on UserError { message } } }",
                         {"r": role.upper(), "n": namespaces})
        return str(data["createToken"]["token"])

    def candidates(self, status: str = "PENDING", namespace: str | None = None
                   ) -> list[dict[str, Any]]:
        data = self.data(
            "query($s: CandidateStatus, $n: String) { candidates(status: $s, namespace: $n, "
            "first: 100) { edges { node { id content kind namespace source status "
            "observations origins { conversationId turnId turn { trigger messages "
            "{ role content } } } } } } }", {"s": status, "n": namespace})
        return [e["node"] for e in data["candidates"]["edges"]]

    def add_approved(self, content: str, kind: str, namespace: str) -> str:
        """A reviewer types a candidate in and approves it; returns the memory id."""
        data = self.data("mutation($c: String!, $k: MemoryKind!, $n: String) { addCandidate("
                         "content: $c, kind: $k, namespace: $n) { ... on Candidate { id } "
                         "... on UserError { message } } }",
                         {"c": content, "k": kind.upper(), "n": namespace}, as_="reviewer")
        return self.approve(str(data["addCandidate"]["id"]))

    def approve(self, candidate_id: str, *, as_: str = "reviewer") -> str:
        data = self.data("mutation($id: ID!) { approveCandidate(id: $id) { __typename "
                         "... on Memory { id } ... on UserError { code message } } }",
                         {"id": candidate_id}, as_=as_)
        result = data["approveCandidate"]
        assert result["__typename"] == "Memory", result
        return str(result["id"])


def _admin_token(log: Path) -> str:
    for line in log.read_text(errors="replace").splitlines():
        if line.strip().startswith("mvt_"):
            return line.strip()
    raise AssertionError(f"no admin token in the server log:\n{log.read_text()[-2000:]}")


@contextlib.contextmanager
def run_server(data_dir: Path, *, embedder: str | None = "fake", timeout: float = 180.0,
               **settings: str) -> Iterator[Server]:
    """`memvet serve` as a subprocess on a free loopback port, with admin/reviewer/agent tokens.
    `embedder=None` leaves the product's default (the packaged MiniLM model)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = data_dir.parent / f"{data_dir.name}-serve.log"
    env = {**BASE_ENV, "MEMVET_DATA_DIR": str(data_dir), "MEMVET_PORT": str(port),
           "MEMVET_HOST": "127.0.0.1", **settings}
    # The product's default, stated explicitly so an outer MEMVET_EMBEDDER cannot swap it.
    env["MEMVET_EMBEDDER"] = embedder or str(Settings.model_fields["embedder"].default)
    if embedder == "fake":  # the learned extractor reads the real model's vectors
        env.setdefault("MEMVET_EXTRACTOR", "heuristic")
    with http_process([MEMVET, "serve"], f"{url}/healthz", log=log, env=env, timeout=timeout):
        server = Server(url=url, data_dir=data_dir, log=log)
        server.tokens["admin"] = _admin_token(log)
        server.tokens["reviewer"] = server.create_token("reviewer")
        server.tokens["agent"] = server.create_token("agent")
        yield server


@dataclass
class HookRun:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def context(self) -> str:
        out = json.loads(self.stdout)
        assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        return str(out["hookSpecificOutput"]["additionalContext"])


def run_hook(payload: dict[str, Any] | bytes, env: dict[str, str], *, timeout: float = 30.0
             ) -> HookRun:
    """`memvet hook claude-code` with the payload on stdin, as Claude Code runs it."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    start = time.monotonic()
    proc = subprocess.run([MEMVET, "hook", "claude-code"], input=data, env=env,
                          capture_output=True, timeout=timeout, check=False)
    return HookRun(proc.returncode, proc.stdout.decode(), proc.stderr.decode(),
                   time.monotonic() - start)


def run_cli(args: list[str], env: dict[str, str], *, timeout: float = 60.0
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MEMVET, *args], env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def make_repo(root: Path, name: str, *, marker: str | None = None) -> Path:
    """A folder that looks like a git checkout (a `.git` folder is all the hook looks for)."""
    repo = root / name
    (repo / ".git").mkdir(parents=True, exist_ok=True)
    (repo / "src" / "deep").mkdir(parents=True, exist_ok=True)
    if marker is not None:
        (repo / ".memvet").write_text(marker)
    return repo


@contextlib.asynccontextmanager
async def mcp_session(url: str, token: str | None, path: str = "/mcp/") -> Any:
    """The MCP SDK's own client over streamable HTTP, with the bearer header."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
            streamable_http_client(f"{url}{path}", http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "tests", "version": "0"}}}


class StdioRelay:
    """`memvet mcp` as an MCP client launches it: JSON-RPC lines on its stdin and stdout."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([MEMVET, "mcp"], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._selector = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)
        self._buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def reply(self, request_id: int, *, within: float) -> dict[str, Any]:
        """The message that answers `request_id`; fails after `within` seconds."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + within
        while True:
            line, sep, rest = self._buffer.partition(b"\n")
            if sep:
                self._buffer = rest
                message = json.loads(line)
                if message.get("id") == request_id:
                    return dict(message)
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no reply to {request_id} within {within} s")
            if self._selector.select(left):
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise AssertionError(f"memvet mcp exited ({self.proc.wait(10)}) without "
                                         f"a reply:\n{self.finish()[1]}")
                self._buffer += chunk

    def finish(self, *, within: float = 30.0) -> tuple[int, str]:
        """Close stdin as a client does when it leaves; the exit status and stderr."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            code = self.proc.wait(within)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise
        finally:
            self._selector.close()
        return code, self.proc.stderr.read().decode(errors="replace")
