"""Helpers for the dashboard tests: a real `memvet serve` process, a GraphQL client with
tokens for every role, Debian's chromium driven by Playwright, and screenshots."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.fixtures.net import free_port, http_process

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run",
]
TOKEN_RE = re.compile(r"\bmvt_[A-Za-z0-9_\-]+")

REMEMBER = """
mutation($content: String!, $kind: MemoryKind!, $namespace: String, $confidence: Float! = 1.0) {
  remember(content: $content, kind: $kind, namespace: $namespace, confidence: $confidence) {
    __typename
    ... on Candidate { id content observations status }
    ... on UserError { code message }
  }
}"""

APPROVE = """
mutation($id: ID!) {
  approveCandidate(id: $id) {
    __typename
    ... on Memory { id content candidateId }
    ... on UserError { code message }
  }
}"""

SUBMIT_TURN = """
mutation($input: TurnInput!) {
  submitTurn(input: $input) {
    __typename
    ... on TurnResult { turnId candidates { id content observations } }
    ... on UserError { code message }
  }
}"""

CREATE_TOKEN = """
mutation($role: TokenRole!, $name: String) {
  createToken(role: $role, name: $name) {
    __typename
    ... on CreatedToken { token }
    ... on UserError { code message }
  }
}"""

RECALL = """
query($query: String!, $namespace: String) {
  recall(query: $query, namespace: $namespace, limit: 10) {
    score memory { id content kind namespace approvedBy }
  }
}"""

CANDIDATE = """
query($id: ID!) {
  candidate(id: $id) { id content kind namespace status observations reviewReason }
  transitions(candidateId: $id) { action actor reason fromStatus toStatus memoryId }
}"""

MEMORIES = """
query($namespace: String) {
  memories(namespace: $namespace, first: 100) {
    totalCount edges { node { id content candidateId approvedBy } }
  }
}"""

SET_POLICY = """
mutation($input: AutoApprovePolicyInput!) {
  setAutoApprovePolicy(input: $input) {
    __typename
    ... on AutoApprovePolicy { enabled }
    ... on UserError { code message }
  }
}"""


class GraphQLFailure(AssertionError):
    pass


@dataclass
class Server:
    url: str
    data_dir: Path
    tokens: dict[str, str] = field(default_factory=dict)

    def gql(self, document: str, token: str = "admin", /, **variables: Any) -> dict[str, Any]:
        """POST a document with the named role's token; return `data` (fail on errors)."""
        secret = self.tokens.get(token, token)
        with httpx.Client(trust_env=False, timeout=60.0) as client:
            response = client.post(f"{self.url}/graphql",
                                   json={"query": document, "variables": variables},
                                   headers={"Authorization": f"Bearer {secret}"})
        body = response.json()
        if response.status_code != 200 or body.get("errors"):
            raise GraphQLFailure(f"HTTP {response.status_code}: {body}")
        data: dict[str, Any] = body["data"]
        return data

    def ok(self, document: str, field_name: str, token: str = "admin", /,
           **variables: Any) -> dict[str, Any]:
        """Run a mutation whose result is a union and return the success member."""
        result = self.gql(document, token, **variables)[field_name]
        if result.get("code") and "id" not in result:
            raise GraphQLFailure(f"{field_name}: {result}")
        value: dict[str, Any] = result
        return value

    def remember(self, content: str, kind: str = "FACT", namespace: str | None = None,
                 confidence: float = 1.0, token: str = "agent") -> dict[str, Any]:
        return self.ok(REMEMBER, "remember", token, content=content, kind=kind,
                       namespace=namespace, confidence=confidence)

    def approve(self, candidate_id: str) -> dict[str, Any]:
        return self.ok(APPROVE, "approveCandidate", "admin", id=candidate_id)

    def submit_turn(self, conversation_id: str, turn_id: str, messages: list[dict[str, str]],
                    workspace: str | None = None, token: str = "agent") -> dict[str, Any]:
        return self.ok(SUBMIT_TURN, "submitTurn", token, input={
            "conversationId": conversation_id, "turnId": turn_id, "messages": messages,
            "workspace": workspace})

    def create_token(self, role: str, name: str) -> str:
        token: str = self.ok(CREATE_TOKEN, "createToken", "admin", role=role, name=name)["token"]
        return token

    def candidate(self, candidate_id: str) -> dict[str, Any]:
        return self.gql(CANDIDATE, "admin", id=candidate_id)

    def recall(self, query: str, namespace: str | None = None) -> list[dict[str, Any]]:
        hits: list[dict[str, Any]] = self.gql(RECALL, "admin", query=query,
                                              namespace=namespace)["recall"]
        return hits

    def memories(self, namespace: str | None = None) -> list[dict[str, Any]]:
        data = self.gql(MEMORIES, "admin", namespace=namespace)["memories"]
        return [edge["node"] for edge in data["edges"]]


def _cli(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "memvet.api.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    if done.returncode != 0:
        raise RuntimeError(f"memvet {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout + done.stderr


def server_env(data_dir: Path, embedder: str | None) -> dict[str, str]:
    env = {**os.environ, "MEMVET_DATA_DIR": str(data_dir),
           "MEMVET_LOG_LEVEL": "WARNING", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "ANONYMIZED_TELEMETRY": "False"}
    env.pop("MEMVET_EMBEDDER", None)
    if embedder is not None:
        env["MEMVET_EMBEDDER"] = embedder
    if embedder == "fake":  # the learned extractor reads the real model's vectors
        env["MEMVET_EXTRACTOR"] = "heuristic"
    return env


@contextlib.contextmanager
def memvet_server(data_dir: Path, *, embedder: str | None = "fake",
                  timeout: float = 120.0) -> Iterator[Server]:
    """`memvet serve` in a subprocess on a fresh data dir, with admin/reviewer/agent tokens.

    `embedder=None` uses the real default embedder (the packaged MiniLM)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    env = server_env(data_dir, embedder)
    out = _cli(["token", "create", "--role", "admin", "--name", "test-admin",
                "--data-dir", str(data_dir)], env)
    found = TOKEN_RE.findall(out)
    assert found, f"no token in the output of memvet token create:\n{out}"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = data_dir / "server.log"
    cmd = [sys.executable, "-m", "memvet.api.cli", "serve", "--port", str(port),
           "--data-dir", str(data_dir)]
    with http_process(cmd, f"{url}/healthz", log=log, env=env, cwd=ROOT, timeout=timeout):
        server = Server(url=url, data_dir=data_dir, tokens={"admin": found[-1]})
        server.tokens["reviewer"] = server.create_token("REVIEWER", "alice")
        server.tokens["agent"] = server.create_token("AGENT", "claude-code")
        yield server


def require_chromium() -> None:
    import pytest

    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: the dashboard tests drive Debian's chromium "
                    "(apt-get install chromium); they never download a browser.",
                    pytrace=False)


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def sign_in(page: Any, server: Server, role: str = "reviewer", *,
            wait_live: bool = True) -> None:
    """Open the dashboard signed in through `/#token=` and wait for live updates."""
    page.goto(f"{server.url}/#token={server.tokens[role]}")
    page.wait_for_selector("#app:not([hidden])")
    if wait_live:
        page.wait_for_selector("#conn[data-state=live]", timeout=15000)
        # the subscription is sent right after connection_ack; give the server a moment to
        # register it before the test publishes anything
        page.wait_for_timeout(400)


def focus_namespace(page: Any, namespace: str) -> None:
    """Narrow the queue to one namespace (the shared server holds other tests' candidates)."""
    page.select_option("#f-namespace", namespace)
    page.wait_for_function(
        "ns => [...document.querySelectorAll('li.cand .ns')].every(e => e.textContent === ns)",
        arg=namespace)


def row(page: Any, text: str) -> Any:
    """The pending-queue row whose content is exactly `text`."""
    return page.locator("li.cand").filter(
        has=page.locator(".cand-content", has_text=re.compile(f"^{re.escape(text)}$")))


def eventually(check: Callable[[], Any], timeout: float = 10.0, interval: float = 0.1) -> Any:
    """Retry `check` until it returns a truthy value without raising."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        try:
            value = check()
            if value:
                return value
        except AssertionError as exc:
            last = exc
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s: {last!r}")
        time.sleep(interval)
