"""What the HTTP edge does for every request: security headers, the Host/Origin guard against
DNS rebinding, and keeping sign-in tokens out of the access log.

- `SecurityHeaders`: every HTTP response gets a Content-Security-Policy header (with
  `frame-ancestors 'none'`), `X-Frame-Options: DENY`, `X-Content-Type-Options: nosniff` and
  `Referrer-Policy: no-referrer`, so no page on another origin can frame the dashboard.
- `HostGuard`: on a loopback bind, a request whose Host (or Origin) names anything but
  loopback, the public URL or a host in `MEMVET_ALLOWED_HOSTS` gets 421 (or 403): a web page
  that rebinds its own name to 127.0.0.1 cannot talk to the API. On other binds the same check
  runs when `MEMVET_ALLOWED_HOSTS` is set. MCP's own guard gets the same list.
- `RedactTokens`: a logging filter that masks `token=` query values (the legacy `/?token=`
  sign-in link) in every log line, the uvicorn access log included.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")
HEADERS = {
    "content-security-policy": CSP,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}
_TOKEN_QUERY = re.compile(r"([?&#]token=)[^&\s\"']*", re.I)


def allowed_hosts(bind_host: str, public_url: str | None, extra: Iterable[str]) -> list[str] | None:
    """Host names the API answers to, lower case without ports; None means any (a non-loopback
    bind with no allowed-hosts setting)."""
    names = [h.strip().lower() for h in extra if h.strip()]
    if public_url:
        parts = urlsplit(public_url)
        if parts.hostname:
            names.append(parts.hostname.lower())
    if bind_host in LOOPBACK_HOSTS:
        return [*LOOPBACK_HOSTS, *names]
    return names or None


def _hostname(value: str) -> str:
    """'example.com:8765' -> 'example.com'; '[::1]:8765' -> '::1'."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class SecurityHeaders:
    """Add the security headers to every HTTP response that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


class HostGuard:
    """Refuse requests whose Host or Origin is not an allowed name (DNS-rebinding guard)."""

    def __init__(self, app: ASGIApp, allowed: list[str] | None) -> None:
        self.app = app
        self.allowed = None if allowed is None else frozenset(allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.allowed is None or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        problem = self._problem(headers)
        if problem is None:
            await self.app(scope, receive, send)
            return
        status, message = problem
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 4403, "reason": message})
            return
        body = {"errors": [{"message": message, "extensions": {"code": "BAD_REQUEST"}}]}
        await JSONResponse(body, status_code=status)(scope, receive, send)

    def _problem(self, headers: Headers) -> tuple[int, str] | None:
        assert self.allowed is not None
        host = headers.get("host", "")
        if _hostname(host) not in self.allowed:
            return 421, ("this server does not answer to that Host name; add it to "
                         "MEMVET_ALLOWED_HOSTS if it is yours")
        origin = headers.get("origin")
        if origin and origin != "null":
            name = urlsplit(origin).hostname or ""
            if name.lower() not in self.allowed:
                return 403, "requests from that Origin are not allowed"
        return None


class RedactTokens(logging.Filter):
    """Mask `token=...` query values in a record's message and arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: redact(v) if isinstance(v, str) else v
                           for k, v in record.args.items()}
        return True


def redact(text: str) -> str:
    return _TOKEN_QUERY.sub(r"\1[redacted]", text)


def install_log_redaction(loggers: Iterable[str] = ("uvicorn.access", "uvicorn.error")
                          ) -> None:
    """Put one RedactTokens filter on each named logger (idempotent)."""
    for name in loggers:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactTokens) for f in logger.filters):
            logger.addFilter(RedactTokens())


def loopback_mcp_lists(allowed: list[str] | None) -> tuple[list[str], list[str]] | None:
    """The same allowed names in the form the MCP SDK's guard takes (host[:port] patterns
    and origins), or None to switch that guard off."""
    if allowed is None:
        return None
    hosts: list[str] = []
    origins: list[str] = []
    for name in dict.fromkeys(allowed):
        shown = f"[{name}]" if ":" in name else name
        hosts += [shown, f"{shown}:*"]
        origins += [f"http://{shown}", f"http://{shown}:*", f"https://{shown}",
                    f"https://{shown}:*"]
    return hosts, origins

