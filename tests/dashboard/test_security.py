"""No page on another origin can frame the dashboard (frame-ancestors 'none', X-Frame-Options)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.dashboard.support import Server
from tests.fixtures.net import free_port


@pytest.fixture
def framing_page(dashboard_server: Server) -> Iterator[str]:
    """A page on another port that tries to frame the signed-in dashboard."""
    html = (f'<!doctype html><title>evil</title><iframe id="victim" width="800" height="600" '
            f'src="{dashboard_server.url}/#token={dashboard_server.tokens["admin"]}"></iframe>')

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    port = free_port()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_another_origin_cannot_frame_the_dashboard(browser: Any, framing_page: str) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        refused: list[str] = []
        page.on("console", lambda msg: refused.append(msg.text)
                if "frame-ancestors" in msg.text or "X-Frame-Options" in msg.text else None)
        page.goto(framing_page)
        page.wait_for_timeout(1500)  # give the frame every chance to load
        frame = page.frame_locator("#victim")
        assert frame.locator("#signin, #app").count() == 0
        assert refused, "Chromium did not report the refused frame"
    finally:
        context.close()
