"""A small GraphQL-over-HTTP client for scripts and hooks: stdlib only, so it starts fast.

    ClientError               anything that stops a call; `str()` is for a person
     ├── ServerUnavailable    nothing answers at MEMVET_URL (or it timed out)
     ├── Unauthenticated      missing, invalid or revoked token (HTTP 401)
     └── ApiError             the API refused: a UserError or a GraphQL error, with `.code`
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Mapping, Sequence
from typing import Any

DEFAULT_URL = "http://127.0.0.1:8765"

MEMORY_FIELDS = "id content kind namespace observations approvedAt approvedBy"
CANDIDATE_FIELDS = "id content kind namespace source confidence observations status"
USER_ERROR = "... on UserError { code message }"

REMEMBER = f"""
mutation Remember($content: String!, $kind: MemoryKind!, $namespace: String,
                  $confidence: Float! = 1) {{
  remember(content: $content, kind: $kind, namespace: $namespace, confidence: $confidence) {{
    __typename
    ... on Candidate {{ {CANDIDATE_FIELDS} }}
    {USER_ERROR}
  }}
}}"""

RECALL = f"""
query Recall($query: String!, $namespaces: [String!], $kinds: [MemoryKind!], $limit: Int) {{
  recall(query: $query, namespaces: $namespaces, kinds: $kinds, limit: $limit) {{
    score
    memory {{ {MEMORY_FIELDS} }}
  }}
}}"""

ACTIVE_PERSONA = "query { activePersona }"

_SUBMIT = """
mutation Submit($input: TurnInput!) {{
  {field}(input: $input) {{
    __typename
    ... on TurnResult {{ turnId queued duplicate candidates {{ id kind namespace status }} }}
    {error}
  }}
}}"""
SUBMIT_TURN = _SUBMIT.format(field="submitTurn", error=USER_ERROR)
SUBMIT_COMPACTION = _SUBMIT.format(field="submitCompaction", error=USER_ERROR)


class ClientError(Exception):
    """A call to the memvet server failed; the message says why, for a person."""

    code = "CLIENT_ERROR"


class ServerUnavailable(ClientError):
    code = "UNAVAILABLE"


class Unauthenticated(ClientError):
    code = "UNAUTHENTICATED"


class ApiError(ClientError):
    def __init__(self, message: str, code: str = "ERROR") -> None:
        super().__init__(message)
        self.code = code


class Client:
    """GraphQL over HTTP against a running memvet. Keyword-only; defaults from the env."""

    def __init__(self, *, url: str | None = None, token: str | None = None,
                 timeout: float = 10.0) -> None:
        self.url = (url or os.environ.get("MEMVET_URL") or DEFAULT_URL).rstrip("/")
        self.token = token if token is not None else (os.environ.get("MEMVET_TOKEN") or None)
        self.timeout = timeout

    @property
    def graphql_url(self) -> str:
        return f"{self.url}/graphql"

    def execute(self, query: str, variables: Mapping[str, Any] | None = None, *,
                timeout: float | None = None, partial: bool = False) -> dict[str, Any]:
        """Run one operation; return `data`. GraphQL errors raise ApiError unless `partial`."""
        body = json.dumps({"query": query, "variables": dict(variables or {})}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        payload = self._send(body, headers, self.timeout if timeout is None else timeout)
        errors = payload.get("errors") or []
        data = payload.get("data") or {}
        if errors and (not partial or not data):
            first = errors[0] if isinstance(errors[0], dict) else {}
            code = str((first.get("extensions") or {}).get("code") or "ERROR")
            if code == "UNAUTHENTICATED":
                raise Unauthenticated(auth_hint(self.token, str(first.get("message"))))
            raise ApiError(str(first.get("message") or "the API refused the request"), code)
        return data

    def _send(self, body: bytes, headers: dict[str, str], timeout: float) -> dict[str, Any]:
        try:
            status, raw = post(self.graphql_url, body, headers, timeout)
        except (OSError, ValueError) as err:  # refused, reset, timed out, unreadable answer
            reason = getattr(err, "reason", None) or err or type(err).__name__
            raise ServerUnavailable(unreachable_hint(self.url, str(reason))) from None
        if status == 401:
            raise Unauthenticated(auth_hint(self.token, error_text(raw)))
        if status >= 500 or (status >= 300 and not raw.strip().startswith(b"{")):
            raise ApiError(f"the server at {self.url} answered HTTP {status}", f"HTTP_{status}")
        try:
            payload = json.loads(raw)
        except ValueError:
            raise ApiError(f"the server at {self.url} did not answer with JSON",
                           "BAD_RESPONSE") from None
        if not isinstance(payload, dict):
            raise ApiError(f"the server at {self.url} answered unexpectedly", "BAD_RESPONSE")
        return payload

    # ------------------------------------------------------------------ operations
    def remember(self, content: str, kind: str, namespace: str | None = None,
                 confidence: float | None = None) -> dict[str, Any]:
        """Propose a candidate (source EXPLICIT); returns the Candidate as a dict."""
        variables: dict[str, Any] = {"content": content, "kind": kind_enum(kind),
                                     "namespace": namespace}
        if confidence is not None:
            variables["confidence"] = confidence
        return result_of(self.execute(REMEMBER, variables), "remember")

    def recall(self, query: str, *, namespaces: Sequence[str] | None = None,
               kinds: Sequence[str] | None = None, limit: int = 10) -> list[dict[str, Any]]:
        """Approved memories only: [{score, memory: {...}}]."""
        variables = {"query": query, "namespaces": list(namespaces) if namespaces else None,
                     "kinds": [kind_enum(k) for k in kinds] if kinds else None, "limit": limit}
        hits = self.execute(RECALL, variables).get("recall") or []
        return list(hits)

    def active_persona(self, *, timeout: float | None = None) -> str:
        return str(self.execute(ACTIVE_PERSONA, timeout=timeout)["activePersona"])

    def submit_turn(self, turn: Mapping[str, Any], *, compaction: bool = False,
                    timeout: float | None = None) -> dict[str, Any]:
        """Hand in a turn (or a stretch about to be compacted) for extraction."""
        name = "submitCompaction" if compaction else "submitTurn"
        query = SUBMIT_COMPACTION if compaction else SUBMIT_TURN
        return result_of(self.execute(query, {"input": dict(turn)}, timeout=timeout), name)


def kind_enum(kind: str) -> str:
    """`decision` -> `DECISION` (the GraphQL enum). Unknown kinds are left to the server."""
    return str(kind).strip().upper()


def result_of(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The success member of a mutation's union result, or ApiError for a UserError."""
    result = data.get(name)
    if not isinstance(result, dict):
        raise ApiError(f"the server returned no {name} result", "BAD_RESPONSE")
    if "code" in result and "message" in result:
        raise ApiError(str(result["message"]), str(result["code"]))
    return result


def error_text(raw: bytes) -> str:
    """The message in an error body: GraphQL's first error, or memvet's `{"error": ...}`."""
    try:
        payload = json.loads(raw)
    except ValueError:
        return ""
    if isinstance(payload, dict):
        if payload.get("errors"):
            return str(payload["errors"][0].get("message") or "")
        return str(payload.get("error") or payload.get("message") or "")
    return ""


def unreachable_hint(url: str, reason: str) -> str:
    """Why a call found no server, for a person; shared by the CLI, the hooks and `memvet mcp`."""
    return (f"cannot reach memvet at {url.rstrip('/')} ({reason}); is `memvet serve` running, "
            "and is MEMVET_URL right?")


def auth_hint(token: str | None, detail: str) -> str:
    """Why the server refused the call's credentials, and what to set."""
    if not token:
        return ("no token: set MEMVET_TOKEN to a token from `memvet token create --role agent` "
                "(or the dashboard)")
    return f"the server refused MEMVET_TOKEN ({detail or 'invalid or revoked token'})"


# ---------------------------------------------------------------------- transport
# The hook starts a new Python per event, and urllib.request (http.client, email, ssl) costs
# ~35 ms of imports. A plain-HTTP POST needs only a socket; https goes through urllib.
def post(url: str, body: bytes, headers: Mapping[str, str], timeout: float
         ) -> tuple[int, bytes]:
    """POST `body`; return (status, response body). Raises OSError or ValueError."""
    scheme, _, rest = url.partition("://")
    if scheme.lower() != "http":
        return _post_urllib(url, body, headers, timeout)
    netloc, slash, path = rest.partition("/")
    host, port = _host_port(netloc)
    deadline = time.monotonic() + timeout
    head = [f"POST /{path if slash else ''} HTTP/1.1", f"Host: {netloc}",
            f"Content-Length: {len(body)}", "Connection: close",
            *(f"{k}: {v}" for k, v in headers.items())]
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        chunks = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("timed out")
            sock.settimeout(left)
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
    return _parse_response(b"".join(chunks))


def _host_port(netloc: str) -> tuple[str, int]:
    hostport = netloc.rpartition("@")[2]
    if hostport.startswith("["):  # [::1]:8765
        host, _, rest = hostport[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else 80
    host, colon, port = hostport.partition(":")
    return host, int(port) if colon and port else 80


def _parse_response(raw: bytes) -> tuple[int, bytes]:
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        raise ValueError("incomplete HTTP response")
    lines = head.split(b"\r\n")
    parts = lines[0].split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        raise ValueError("not an HTTP response")
    fields = {}
    for line in lines[1:]:
        key, _, value = line.partition(b":")
        fields[key.strip().lower()] = value.strip()
    if fields.get(b"transfer-encoding", b"").lower() == b"chunked":
        body = _dechunk(body)
    elif fields.get(b"content-length", b"").isdigit():
        body = body[: int(fields[b"content-length"])]
    return int(parts[1]), body


def _dechunk(data: bytes) -> bytes:
    out: list[bytes] = []
    while True:
        size_line, sep, data = data.partition(b"\r\n")
        if not sep:
            raise ValueError("truncated chunked response")
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            return b"".join(out)
        out.append(data[:size])
        data = data[size + 2:]


def _post_urllib(url: str, body: bytes, headers: Mapping[str, str], timeout: float
                 ) -> tuple[int, bytes]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=timeout) as response:
            return int(response.status), response.read()
    except urllib.error.HTTPError as err:
        return int(err.code), err.read()
