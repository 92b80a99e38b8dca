"""Live updates survive a server restart: the dashboard shows that it is reconnecting, retries
with backoff, and new candidates appear again once the server is back."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from tests.dashboard.support import ROOT, memvet_server, row, server_env, sign_in
from tests.fixtures.net import http_process

pytestmark = pytest.mark.slow


def test_live_updates_reconnect_after_a_restart(
    page: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    data_dir = tmp_path_factory.mktemp("dashboard-restart")
    with memvet_server(data_dir) as server:
        sign_in(page, server)
        server.remember("The restart-demo first fact.", "FACT", "workspace:restart-demo")
        row(page, "The restart-demo first fact.").wait_for()
    # the server is gone: the page says so and keeps its queue
    page.wait_for_selector("#conn[data-state=reconnecting]", timeout=10000)
    assert page.locator("#conn-text").text_content() == "Reconnecting…"
    assert row(page, "The restart-demo first fact.").count() == 1

    port = server.url.rsplit(":", 1)[1]
    cmd = [sys.executable, "-m", "memvet.api.cli", "serve", "--port", port,
           "--data-dir", str(data_dir)]
    with http_process(cmd, f"{server.url}/healthz", log=data_dir / "server2.log",
                      env=server_env(data_dir, "fake"), cwd=ROOT, timeout=120):
        page.wait_for_selector("#conn[data-state=live]", timeout=30000)
        page.wait_for_timeout(400)
        server.remember("The restart-demo second fact.", "FACT", "workspace:restart-demo")
        row(page, "The restart-demo second fact.").wait_for()
