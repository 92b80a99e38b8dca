"""Regenerate the README's dashboard screenshots (docs/screenshots/*.png).

    .venv/bin/python -m tests.dashboard.screenshots [OUT_DIR]    (from the project root)

Starts `memvet serve` on a temporary data dir with the real embedder, fills it with a small,
realistic review queue through the GraphQL API, and photographs each page in Debian's
chromium. Not a test (pytest does not collect it); the tests keep their own screenshots in
artifacts/screenshots/.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests.dashboard.support import (
    CHROMIUM,
    CHROMIUM_ARGS,
    ROOT,
    Server,
    memvet_server,
    row,
    sign_in,
)


def seed(server: Server) -> dict[str, str]:
    shop, desk = "workspace:shop-api", "workspace:desktop"
    old = server.remember("The desktop app is built with Electron.", "DECISION", desk)
    server.approve(old["id"])
    for content, kind, ns in [
        ("API responses use snake_case keys.", "FACT", shop),
        ("Database migrations go through Alembic; never edit tables by hand.", "PATTERN", shop),
        ("Prefers concise answers with the code first.", "PREFERENCE", None),
        ("Release 2.3 shipped on 2024-05-14.", "EVENT", shop),
    ]:
        server.approve(server.remember(content, kind, ns)["id"])
    server.remember("The March outage came from an unbounded retry loop; cap retries and add "
                    "jitter.", "POSTMORTEM", shop, confidence=0.85)
    server.remember("Run the integration tests against a local PostgreSQL 16.", "PATTERN", shop,
                    confidence=0.7)
    server.remember("Prefers British spelling in user-facing text.", "PREFERENCE", None,
                    confidence=0.6)
    exchange = [
        {"role": "user", "content": "Can you add the lodash dependency?"},
        {"role": "assistant", "content": "Sure, running npm install lodash now."},
        {"role": "user", "content": "Stop: we use pnpm here, not npm."},
    ]
    turn = server.submit_turn("conv-2f9c", "turn-12", exchange, workspace="shop-api")
    server.submit_turn("conv-7a01", "turn-3", exchange, workspace="shop-api")
    server.submit_turn("conv-91be", "turn-8", exchange, workspace="shop-api")
    tauri = server.remember("Use Tauri instead of Electron for the desktop app: the bundle is "
                            "about ten times smaller.", "DECISION", desk, confidence=0.8)
    return {"turn": turn["candidates"][0]["content"], "tauri": tauri["content"]}


def main(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, \
            memvet_server(Path(tmp) / "data", embedder=None, timeout=240.0) as server, \
            sync_playwright() as p:
        texts = seed(server)
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1360, "height": 860})
        sign_in(page, server, "reviewer")
        r = row(page, texts["tauri"])
        r.click()
        page.locator("#detail .related-item", has_text="Electron").wait_for()
        page.locator("#detail .related-item", has_text="Electron").locator("input").check()
        page.wait_for_timeout(4500)  # let the toast fade
        page.screenshot(path=str(out / "pending-queue.png"))

        row(page, texts["turn"]).get_by_role(
            "button", name="Open the original turn", exact=False).click()
        page.locator("#turn-dialog mark.hl").first.wait_for()
        page.screenshot(path=str(out / "turn-view.png"))
        page.keyboard.press("Escape")

        page.keyboard.press("2")
        page.locator("section.group").first.wait_for()
        page.locator("li.mem", has_text="Electron").get_by_role("button", name="History").click()
        page.locator("li.mem .history li").first.wait_for()
        page.evaluate("document.activeElement.blur()")
        page.screenshot(path=str(out / "approved-view.png"))

        sign_in(page, server, "admin")  # settings are an admin's to change
        page.keyboard.press("3")
        page.wait_for_function(
            "() => document.querySelector('#policy-state').textContent === 'OFF'")
        page.evaluate("document.activeElement.blur()")
        page.screenshot(path=str(out / "advanced.png"))
        browser.close()
    for name in sorted(out.glob("*.png")):
        print(name.relative_to(ROOT) if name.is_relative_to(ROOT) else name)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots")
