"""Fixtures for the dashboard tests: one shared `memvet serve` process, Debian's chromium."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.dashboard.support import CHROMIUM, CHROMIUM_ARGS, Server, memvet_server, require_chromium


@pytest.fixture(scope="session")
def dashboard_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with the fake embedder shared by the dashboard tests (each test works in its
    own namespace)."""
    with memvet_server(tmp_path_factory.mktemp("dashboard")) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Per module: Playwright's sync API keeps an event loop running in the main thread while
    it is open, which would break `asyncio.run` in the tests that follow."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser context and page; the test fails if the page throws or breaks its
    content security policy."""
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    context.set_default_timeout(15000)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    # a Content-Security-Policy violation means something tried to run or load inline
    pg.on("console", lambda msg: errors.append(msg.text)
          if msg.type == "error" and "Content Security Policy" in msg.text else None)
    try:
        yield pg
    finally:
        context.close()
    assert not errors, f"uncaught errors in the page: {errors}"
