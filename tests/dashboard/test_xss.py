"""Everything from agents is untrusted: script and HTML payloads in every field a person sees
(content, excerpts and turn messages, reject reasons, actor names, search text) render as
literal text, and nothing runs."""

from __future__ import annotations

from typing import Any

import pytest

from tests.dashboard.support import Server, row, screenshot, sign_in

pytestmark = pytest.mark.slow

IMG = "<img src=x onerror=window.__xss=1>"
SCRIPT = "<script>window.__xss=1</script>"
SVG = "<svg onload=window.__xss=1></svg>"
LINK = '<a href="javascript:window.__xss=1" id=xss-link>click</a>'
PAYLOAD = f"{IMG} {SCRIPT} {SVG} {LINK}"

REJECT = """
mutation($id: ID!, $reason: String) {
  rejectCandidate(id: $id, reason: $reason) { __typename ... on Candidate { id } }
}"""


def assert_inert(page: Any) -> None:
    assert page.evaluate("typeof window.__xss") == "undefined"
    # nothing from the payloads became an element
    assert page.evaluate(
        "document.querySelectorAll('img[src=x], svg[onload], #xss-link, [onerror], [onload]')"
        ".length") == 0
    scripts = page.evaluate("[...document.scripts].map(s => s.getAttribute('src'))")
    assert scripts == ["app.js"], scripts


def test_payloads_in_every_field_render_as_text(page: Any, dashboard_server: Server) -> None:
    ns = "workspace:xss-demo"
    server = dashboard_server
    # actor names: tokens whose names are payloads
    server.tokens["xagent"] = server.create_token("AGENT", f"agent {IMG}")
    server.tokens["xreviewer"] = server.create_token("REVIEWER", f"rev {SCRIPT}")

    # content
    content = f"The xss-demo build note about compiler flags and linker scripts: {PAYLOAD}"
    cand = server.remember(content, "FACT", ns, token="xagent")
    # excerpt and stored turn messages
    turn = server.submit_turn("conv-xss", "t-1", [
        {"role": "user", "content": f"Remember: we use {IMG} here for deployments, not {SCRIPT}."},
        {"role": "assistant", "content": f"Noted {SVG} {LINK}"},
    ], workspace="xss-turn", token="xagent")
    assert turn["candidates"], turn
    turn_cand = turn["candidates"][0]
    assert turn_cand["id"] != cand["id"]
    # reason
    rejected = server.remember(f"Yesterday's standup ran long {SVG}", "EVENT", ns, token="xagent")
    assert rejected["observations"] == 1
    server.ok(REJECT, "rejectCandidate", "xreviewer", id=rejected["id"], reason=f"nope {IMG}")
    # approved by a reviewer whose name is a payload
    approved = server.remember(f"The xss-demo approved memory about caching {LINK}", "FACT", ns,
                               token="xagent")
    assert approved["observations"] == 1
    server.ok("""mutation($id: ID!) { approveCandidate(id: $id) { __typename } }""",
              "approveCandidate", "xreviewer", id=approved["id"])

    sign_in(page, server)
    page.select_option("#f-namespace", ns)
    r = row(page, content)
    r.wait_for()
    assert_inert(page)
    assert r.locator(".cand-content").text_content() == content
    # the detail pane: origin, history with the actor's name
    r.click()
    page.locator("#detail .history", has_text=f"agent:agent {IMG}").wait_for()
    assert_inert(page)

    # a live arrival with a payload
    live = server.remember(f"Vacuum the orders database weekly {SCRIPT}", "PATTERN", ns,
                           token="xagent")
    assert live["observations"] == 1 and live["id"] not in (cand["id"], turn_cand["id"])
    row(page, live["content"]).wait_for()
    assert_inert(page)

    # in-place edit shows the text in a textarea, not as markup
    row(page, content).get_by_role(
        "button", name="Edit: The xss-demo build note", exact=False).click()
    assert page.locator("li.cand.is-editing textarea").input_value() == content
    page.keyboard.press("Escape")

    # the turn view: messages and highlighted excerpt
    page.select_option("#f-namespace", "workspace:xss-turn")
    tr = row(page, turn_cand["content"])
    tr.get_by_role("button", name="Open the original turn", exact=False).click()
    dialog = page.locator("#turn-dialog")
    dialog.locator("mark.hl").first.wait_for()
    assert IMG in dialog.locator("mark.hl").first.text_content()
    assert dialog.locator(".msg-assistant .msg-text").text_content() == f"Noted {SVG} {LINK}"
    assert_inert(page)
    screenshot(page, "xss-turn")
    page.keyboard.press("Escape")

    # rejected candidates with their reason and reviewer
    page.select_option("#f-namespace", ns)
    page.select_option("#f-status", "REJECTED")
    rr = row(page, rejected["content"])
    rr.wait_for()
    page.locator("#detail .history").wait_for()
    review_line = rr.locator(".review-line").text_content()
    assert review_line.startswith(f"rejected by reviewer:rev {SCRIPT}")
    assert rr.locator(".reason").text_content() == f" — Reason: nope {IMG}"
    assert_inert(page)
    screenshot(page, "xss-pending")

    # approved view: content and approver, and a search echoing the payload
    page.keyboard.press("2")
    mem = page.locator("li.mem", has_text="The xss-demo approved memory")
    mem.wait_for()
    assert mem.locator(".cand-content").text_content() == approved["content"]
    assert f"by reviewer:rev {SCRIPT}" in mem.locator(".cand-meta").text_content()
    page.fill("#recall-q", f"xss-demo {IMG}")
    page.press("#recall-q", "Enter")
    page.locator(".group-title", has_text=f"Results for “xss-demo {IMG}”").wait_for()
    assert_inert(page)

    # and the literal text is what a person sees
    page.keyboard.press("Escape")  # leave the search box, then switch tabs
    page.keyboard.press("1")
    page.get_by_text(f"nope {IMG}", exact=False).first.wait_for()
    page.select_option("#f-status", "PENDING")
    page.get_by_text(content, exact=True).first.wait_for()
    assert page.evaluate("typeof window.__xss") == "undefined"


def test_the_page_has_a_strict_content_security_policy(page: Any, dashboard_server: Server) -> None:
    page.goto(dashboard_server.url + "/")
    csp = page.locator("meta[http-equiv=Content-Security-Policy]").get_attribute("content")
    assert "default-src 'self'" in csp and "script-src 'self'" in csp
    assert "connect-src 'self' ws: wss:" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    # no inline scripts or handlers anywhere in the shipped HTML
    assert page.evaluate("[...document.scripts].every(s => s.src)")
    assert page.evaluate(
        "[...document.querySelectorAll('*')].every(e => ![...e.attributes].some("
        "a => a.name.startsWith('on')))")
