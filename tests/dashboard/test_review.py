"""Reviewing in a real browser: live arrivals, reject, the original turn, supersede, bulk,
keyboard-only review, and the approved view (search, history, delete)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.dashboard.support import Server, eventually, focus_namespace, row, screenshot, sign_in

pytestmark = pytest.mark.slow


def test_a_candidate_from_another_client_appears_live(page: Any, dashboard_server: Server) -> None:
    ns = "workspace:live-demo"
    sign_in(page, dashboard_server)
    text = "The live-demo service deploys with Helm, not kustomize."
    assert row(page, text).count() == 0

    created = dashboard_server.remember(text, "FACT", ns, confidence=0.8)
    new_row = row(page, text)
    new_row.wait_for()  # no reload: it came over the subscription
    assert "is-fresh" in (new_row.get_attribute("class") or "")
    assert new_row.locator(".fresh-tag").text_content() == "new"
    meta = new_row.locator(".cand-meta").text_content()
    assert ns in meta and "explicit" in meta and "confidence 0.80" in meta and "seen 1×" in meta
    assert new_row.locator(".badge.kind").text_content() == "fact"
    page.wait_for_function(
        "() => document.querySelector('#announcer').textContent.includes('New candidate')")

    # the same thing again merges into it, live as well
    dashboard_server.remember(text, "FACT", ns, confidence=0.9)
    new_row.locator(".cand-meta", has_text="seen 2×").wait_for()
    assert "seen again" in new_row.locator(".fresh-tag").text_content()
    assert "confidence 0.90" in new_row.locator(".cand-meta").text_content()
    assert row(page, text).count() == 1
    # the per-namespace count follows
    page.locator(".ns-chips .chip", has_text=ns).wait_for()
    screenshot(page, "pending-live")
    assert dashboard_server.candidate(created["id"])["candidate"]["observations"] == 2


def test_reject_with_a_reason(page: Any, dashboard_server: Server) -> None:
    ns = "workspace:reject-demo"
    cand = dashboard_server.remember("The reject-demo team prefers tabs.", "PREFERENCE", ns)
    sign_in(page, dashboard_server)
    r = row(page, cand["content"])
    r.get_by_role("button", name=re.compile("^Reject")).click()
    dialog = page.locator("#confirm-dialog")
    dialog.wait_for(state="visible")
    dialog.locator("input").fill("one-off remark, not a preference")
    screenshot(page, "reject-dialog")
    dialog.get_by_role("button", name="Reject").click()
    r.wait_for(state="detached")
    data = dashboard_server.candidate(cand["id"])
    assert data["candidate"]["status"] == "REJECTED"
    assert data["candidate"]["reviewReason"] == "one-off remark, not a preference"
    last = data["transitions"][-1]
    assert last["action"] == "REJECTED" and last["actor"] == "reviewer:alice"


def test_jump_to_the_original_turn_highlights_the_excerpt(
    page: Any, dashboard_server: Server
) -> None:
    exchange = [
        {"role": "user", "content": "Can you add the lodash dependency?"},
        {"role": "assistant", "content": "Sure, running npm install lodash now."},
        {"role": "user", "content": "Stop: we use pnpm here, not npm."},
    ]
    result = dashboard_server.submit_turn("conv-pnpm", "turn-1", exchange, workspace="turn-demo")
    assert result["candidates"], result
    cand = result["candidates"][0]
    # the same exchange in another conversation merges into it as a second origin
    again = dashboard_server.submit_turn("conv-pnpm-2", "turn-9", exchange, workspace="turn-demo")
    assert again["candidates"][0]["id"] == cand["id"]
    sign_in(page, dashboard_server)
    focus_namespace(page, "workspace:turn-demo")
    r = row(page, cand["content"])
    r.locator(".cand-meta", has_text="seen 2×").wait_for()
    r.get_by_role("button", name=re.compile("^Open the original turn")).click()
    dialog = page.locator("#turn-dialog")
    dialog.wait_for(state="visible")
    mark = dialog.locator("mark.hl").first
    mark.wait_for()
    assert "we use pnpm here, not npm" in mark.text_content()
    # the highlight is the extracted passage, inside the user's message that said it
    marked = dialog.locator(".msg", has=page.locator("mark.hl"))
    assert marked.count() == 1
    assert "msg-user" in (marked.get_attribute("class") or "")
    assert marked.locator(".msg-text").text_content() == "Stop: we use pnpm here, not npm."
    assert dialog.locator(".msg").count() == 3
    assert "conv-pnpm" in dialog.locator(".facts").text_content()
    other = dialog.locator(".other-origins")
    assert "1 other place" in other.locator("h3").text_content()
    assert "conv-pnpm-2" in other.text_content()
    screenshot(page, "turn")

    # open the other origin's turn from the same dialog
    other.get_by_role("button", name="Open this turn").click()
    dialog.locator(".facts", has_text="conv-pnpm-2").wait_for()
    assert "we use pnpm here, not npm" in dialog.locator("mark.hl").first.text_content()
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")


def test_approve_superseding_a_related_memory(page: Any, dashboard_server: Server) -> None:
    ns = "workspace:supersede-demo"
    old = dashboard_server.remember("The supersede-demo desktop app uses Electron.", "DECISION", ns)
    old_memory = dashboard_server.approve(old["id"])
    new = dashboard_server.remember(
        "The supersede-demo desktop app uses Tauri instead of Electron, for bundle size.",
        "DECISION", ns)
    sign_in(page, dashboard_server)
    focus_namespace(page, ns)
    r = row(page, new["content"])
    r.click()
    detail = page.locator("#detail")
    related = detail.locator(".related-item", has_text=old["content"])
    related.wait_for()
    assert related.locator(".badge.kind").text_content() == "decision"
    related.locator("input[type=radio]").check()
    approve = r.get_by_role("button", name=re.compile("^Approve"))
    assert approve.text_content() == "Approve & replace"
    screenshot(page, "supersede")
    approve.click()
    r.wait_for(state="detached")

    contents = [m["content"] for m in dashboard_server.memories(ns)]
    assert contents == [new["content"]]
    trail = dashboard_server.candidate(old["id"])["transitions"]
    deleted = [t for t in trail if t["action"] == "MEMORY_DELETED"]
    assert deleted and deleted[0]["actor"] == "reviewer:alice"
    assert deleted[0]["memoryId"] == old_memory["id"]
    assert "superseded" in (deleted[0]["reason"] or "")


def test_bulk_approve_and_reject(page: Any, dashboard_server: Server) -> None:
    ns = "workspace:bulk-demo"
    texts = [f"The bulk-demo rule number {i} holds." for i in range(4)]
    ids = [dashboard_server.remember(t, "PATTERN", ns)["id"] for t in texts]
    sign_in(page, dashboard_server)
    focus_namespace(page, ns)
    for t in texts[:2]:
        row(page, t).locator(".row-check").check()
    assert page.locator(".bulk-info").text_content() == "2 selected"
    page.get_by_role("button", name="Approve selected").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Approve").click()
    for t in texts[:2]:
        row(page, t).wait_for(state="detached")
    page.locator("#select-all").check()
    assert page.locator(".bulk-info").text_content() == "2 selected"
    page.get_by_role("button", name="Reject selected").click()
    page.locator("#confirm-dialog input").fill("duplicates")
    page.locator("#confirm-dialog").get_by_role("button", name="Reject").click()
    for t in texts[2:]:
        row(page, t).wait_for(state="detached")
    statuses = [dashboard_server.candidate(i)["candidate"]["status"] for i in ids]
    assert statuses == ["APPROVED", "APPROVED", "REJECTED", "REJECTED"]


def test_keyboard_only_review(page: Any, dashboard_server: Server) -> None:
    ns = "workspace:kbd-demo"
    texts = ["The kbd-demo first fact.", "The kbd-demo second fact.", "The kbd-demo third fact."]
    ids = {t: dashboard_server.remember(t, "FACT", ns)["id"] for t in texts}
    sign_in(page, dashboard_server)
    focus_namespace(page, ns)
    page.keyboard.press("Escape")  # leave the select; from here on only keys
    page.evaluate("document.activeElement.blur()")

    def active() -> str:
        return str(page.evaluate(
            "document.activeElement.closest('li.cand')?.querySelector('.cand-content').textContent"))

    # newest first: third (selected), second, first
    page.keyboard.press("j")
    assert active() == texts[1]
    page.keyboard.press("j")
    assert active() == texts[0]
    page.keyboard.press("k")
    page.keyboard.press("k")
    assert active() == texts[2]
    page.keyboard.press("j")
    assert active() == texts[1]
    assert page.evaluate("document.activeElement.getAttribute('aria-current')") == "true"
    page.keyboard.press("a")  # approve the second
    row(page, texts[1]).wait_for(state="detached")
    eventually(lambda: active() in (texts[0], texts[2]))
    focused = active()
    page.keyboard.press("r")
    page.locator("#confirm-dialog").wait_for(state="visible")
    page.keyboard.type("not needed")
    page.keyboard.press("Enter")
    row(page, focused).wait_for(state="detached")
    remaining = next(t for t in texts if t not in (texts[1], focused))
    eventually(lambda: active() == remaining)
    # e edits in place; Escape cancels and focus returns to the row
    page.keyboard.press("e")
    assert page.evaluate("document.activeElement.tagName") == "TEXTAREA"
    page.keyboard.press("Escape")
    eventually(lambda: active() == remaining)
    # ? opens the help, / focuses the filter
    page.keyboard.press("?")
    page.locator("#help-dialog").wait_for(state="visible")
    page.keyboard.press("Escape")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "f-text"

    assert dashboard_server.candidate(ids[texts[1]])["candidate"]["status"] == "APPROVED"
    rejected = dashboard_server.candidate(ids[focused])
    assert rejected["candidate"]["status"] == "REJECTED"
    assert rejected["candidate"]["reviewReason"] == "not needed"
    assert dashboard_server.candidate(ids[remaining])["candidate"]["status"] == "PENDING"


def test_approved_view_search_history_and_delete(page: Any, dashboard_server: Server) -> None:
    ns = "workspace:approved-demo"
    keep = dashboard_server.remember("The approved-demo API uses snake_case JSON keys.", "FACT", ns)
    gone = dashboard_server.remember("The approved-demo cache TTL is 300 seconds.", "FACT", ns)
    dashboard_server.approve(keep["id"])
    gone_memory = dashboard_server.approve(gone["id"])
    sign_in(page, dashboard_server)
    page.get_by_role("tab", name=re.compile("Approved")).click()
    group = page.locator("section.group", has=page.locator(".group-title", has_text=ns))
    group.wait_for()
    assert group.locator("li.mem").count() == 2
    screenshot(page, "approved")

    # history (the audit trail) of a memory
    mem_row = group.locator("li.mem", has_text=gone["content"])
    mem_row.get_by_role("button", name="History").click()
    history = mem_row.locator(".mem-history")
    history.locator(".history li", has_text="approved").first.wait_for()
    assert "admin:test-admin" in history.text_content()

    # search uses recall
    page.fill("#recall-q", "cache TTL seconds")
    page.press("#recall-q", "Enter")
    page.locator(".group-title", has_text="Results for").wait_for()
    assert page.locator("li.mem", has_text=gone["content"]).count() == 1
    page.get_by_role("button", name="Clear").click()

    # delete with a confirmation
    group.locator("li.mem", has_text=gone["content"]).get_by_role(
        "button", name=re.compile("^Delete")).click()
    page.locator("#confirm-dialog").get_by_role("button", name="Delete").click()
    group.locator("li.mem", has_text=gone["content"]).wait_for(state="detached")
    assert [m["id"] for m in dashboard_server.memories(ns)] != [] and all(
        m["id"] != gone_memory["id"] for m in dashboard_server.memories(ns))
    assert all(h["memory"]["id"] != gone_memory["id"]
               for h in dashboard_server.recall("cache TTL 300 seconds", ns))
    trail = dashboard_server.candidate(gone["id"])["transitions"]
    assert trail[-1]["action"] == "MEMORY_DELETED" and trail[-1]["actor"] == "reviewer:alice"


def test_edit_an_approved_memory(page: Any, dashboard_server: Server) -> None:
    ns = "workspace:memedit-demo"
    cand = dashboard_server.remember("The memedit-demo queue is RabbitMQ.", "FACT", ns)
    memory = dashboard_server.approve(cand["id"])
    sign_in(page, dashboard_server)
    page.keyboard.press("2")
    mem_row = page.locator("li.mem", has_text=cand["content"])
    mem_row.get_by_role("button", name=re.compile("^Edit")).click()
    editor = page.locator("form.editor[aria-label='Edit memory']")
    editor.locator("textarea").fill("The memedit-demo queue is NATS (moved from RabbitMQ in 2024).")
    editor.get_by_role("button", name="Save").click()
    page.locator("li.mem", has_text="NATS (moved from RabbitMQ").wait_for()
    assert [m["content"] for m in dashboard_server.memories(ns)] == [
        "The memedit-demo queue is NATS (moved from RabbitMQ in 2024)."]
    hits = dashboard_server.recall("NATS", ns)
    assert hits and hits[0]["memory"]["id"] == memory["id"]
