"""A narrow window (a half-screen browser, a phone) stays usable: nothing is wider than the
window, the queue's text keeps a readable width, the buttons, the detail pane, the editor and
the dialogs lie inside it, and approve, reject and edit work there."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.dashboard.support import Server, focus_namespace, row, sign_in

pytestmark = pytest.mark.slow

# what sticks out on the right, to say why a page is too wide
OVERFLOW = """() => {
  const w = window.innerWidth;
  const out = [...document.querySelectorAll('body *')]
    .filter((el) => el.getClientRects().length && el.getBoundingClientRect().right > w + 0.5)
    .map((el) => `${el.tagName.toLowerCase()}#${el.id}.${el.className}`);
  return { scrollWidth: document.documentElement.scrollWidth, innerWidth: w, out: out.slice(0, 8) };
}"""


def assert_fits(page: Any, where: str) -> None:
    m = page.evaluate(OVERFLOW)
    assert m["scrollWidth"] <= m["innerWidth"], f"{where}: wider than the window: {m}"


def assert_inside(page: Any, locator: Any, what: str) -> None:
    """`locator` is visible and lies within the window's width."""
    locator.wait_for()
    box = locator.bounding_box()
    width = page.evaluate("window.innerWidth")
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width, f"{what}: {box} vs {width}"


@pytest.mark.parametrize("size", [(760, 900), (390, 844)], ids=["760x900", "390x844"])
def test_review_in_a_narrow_window(page: Any, dashboard_server: Server,
                                   size: tuple[int, int]) -> None:
    width, height = size
    ns = f"workspace:narrow-demo-{width}-with-a-rather-long-namespace-name"
    url = ("https://example.com/narrow-demo/" + "a-very-long-path-without-spaces" * 4
           + f"/{width}")
    edit_text = f"The narrow-demo {width} service deploys with Helm."
    approve_text = f"The narrow-demo {width} build runs on every push to main, in CI."
    reject_text = url
    exchange = [
        {"role": "user", "content": "Can you add the lodash dependency?"},
        {"role": "assistant", "content": "Sure, running npm install lodash now."},
        {"role": "user", "content": "Stop: we use pnpm here, not npm."},
    ]
    turn = dashboard_server.submit_turn(f"conv-narrow-{width}-" + "x" * 60, "turn-1", exchange,
                                        workspace=ns.removeprefix("workspace:"))
    assert turn["candidates"], turn
    ids = {t: dashboard_server.remember(t, kind, ns)["id"] for t, kind in [
        (reject_text, "FACT"), (approve_text, "DECISION"), (edit_text, "FACT")]}
    page.set_viewport_size({"width": width, "height": height})
    sign_in(page, dashboard_server)
    focus_namespace(page, ns)
    row(page, edit_text).wait_for()
    assert_fits(page, "pending queue")
    for tab in ("Pending queue", "Approved", "Advanced"):
        assert_inside(page, page.get_by_role("tab", name=re.compile(f"^{tab}")), f"tab {tab}")
    assert_inside(page, page.locator("#signout-btn"), "sign out")

    # every row: its text is readable, its buttons inside the window
    for text in (edit_text, approve_text, reject_text):
        r = row(page, text)
        content = r.locator(".cand-content").bounding_box()
        assert content and content["width"] >= 240, f"{text[:30]}: text squeezed to {content}"
        for name in ("Edit", "Reject", "Approve"):
            assert_inside(page, r.get_by_role("button", name=re.compile(f"^{name}:")), name)

    # the detail pane, with a long conversation id, and the original turn
    turn_row = row(page, turn["candidates"][0]["content"])
    turn_row.locator(".cand-content").click()
    detail = page.locator("#detail .detail-inner")
    detail.locator(".origin-meta", has_text="conv-narrow").wait_for()
    assert_inside(page, detail, "detail pane")
    assert_fits(page, "detail pane")
    turn_row.get_by_role("button", name=re.compile("^Open the original turn")).click()
    dialog = page.locator("#turn-dialog")
    dialog.locator("mark.hl").first.wait_for()
    assert_inside(page, dialog.locator(".facts"), "turn facts")
    assert_fits(page, "turn dialog")
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")

    # edit in place, then save the edit
    r = row(page, edit_text)
    r.get_by_role("button", name=re.compile("^Edit:")).click()
    editor = page.locator("form.editor[aria-label='Edit candidate before approving']")
    assert_inside(page, editor.locator("textarea"), "editor")
    assert_fits(page, "editor")
    edited = f"The narrow-demo {width} service deploys with Helm 3."
    editor.locator("textarea").fill(edited)
    save = editor.get_by_role("button", name="Save edit")
    assert_inside(page, save, "save edit")
    save.click()
    row(page, edited).wait_for()
    assert dashboard_server.candidate(ids[edit_text])["candidate"]["content"] == edited

    # approve
    row(page, approve_text).get_by_role("button", name=re.compile("^Approve:")).click()
    row(page, approve_text).wait_for(state="detached")
    assert dashboard_server.candidate(ids[approve_text])["candidate"]["status"] == "APPROVED"

    # reject, with the dialog inside the window
    row(page, reject_text).get_by_role("button", name=re.compile("^Reject:")).click()
    confirm = page.locator("#confirm-dialog")
    confirm.wait_for(state="visible")
    assert_inside(page, confirm, "reject dialog")
    assert_fits(page, "reject dialog")
    confirm.locator("input").fill("a link, not a fact")
    confirm.get_by_role("button", name="Reject").click()
    row(page, reject_text).wait_for(state="detached")
    assert dashboard_server.candidate(ids[reject_text])["candidate"]["status"] == "REJECTED"
    assert_fits(page, "pending queue after review")

    # the other tabs fit as well
    page.keyboard.press("2")
    page.locator("li.mem", has_text=approve_text).wait_for()
    assert_fits(page, "approved")
    assert_inside(page, page.locator("li.mem", has_text=approve_text).get_by_role(
        "button", name=re.compile("^Delete")), "delete memory")
    page.keyboard.press("3")
    page.locator("#policy-form").wait_for()
    assert_fits(page, "advanced")
