"""The Advanced tab: auto-approve is visibly off by default; switching it on (admin) with
thresholds promotes a qualifying candidate without a click. Its own server: the policy is
global."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.dashboard.support import Server, eventually, memvet_server, row, screenshot, sign_in

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def policy_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with memvet_server(tmp_path_factory.mktemp("dashboard-policy")) as server:
        yield server


def test_reviewers_see_the_settings_read_only(page: Any, policy_server: Server) -> None:
    sign_in(page, policy_server, "reviewer")
    page.keyboard.press("3")
    page.locator("#policy-state").wait_for()
    page.wait_for_function("() => document.querySelector('#policy-state').textContent === 'OFF'")
    assert page.locator(".notice").is_visible()
    assert page.locator("#policy-enabled").is_disabled()
    assert page.locator("#policy-save").is_disabled()


def test_auto_approve_off_by_default_then_promotes_a_qualifying_candidate(
    page: Any, policy_server: Server
) -> None:
    ns = "workspace:policy-demo"
    text = "The policy-demo service runs on port 8080."
    sign_in(page, policy_server, "admin")
    page.keyboard.press("3")
    pill = page.locator("#policy-state")
    page.wait_for_function("() => document.querySelector('#policy-state').textContent !== ''")
    assert pill.text_content() == "OFF"
    assert not page.locator("#policy-enabled").is_checked()
    assert page.locator("#policy-sentence").text_content() == (
        "Auto-approve is off: every candidate waits for a person.")
    assert page.locator("#policy-min-obs").input_value() == "3"
    assert page.locator("#policy-min-conf").input_value() == "0.9"
    assert page.locator("#archive-days").input_value() == "30"
    assert page.locator("#persona-name").input_value() == "default"
    screenshot(page, "advanced")

    # one observation: it waits in the queue
    first = policy_server.remember(text, "FACT", ns, confidence=0.95)
    assert first["status"] == "PENDING"

    # switch it on with the keyboard, thresholds 2 observations / 0.9
    page.locator("#policy-enabled").focus()
    page.keyboard.press("Space")
    page.fill("#policy-min-obs", "2")
    page.fill("#policy-min-conf", "0.9")
    assert "Promote candidates seen in ≥ 2 separate conversations with confidence ≥ 0.9" in (
        page.locator("#policy-sentence").text_content())
    assert "once per token" in page.locator("#policy-counts").text_content()
    page.click("#policy-save")
    page.wait_for_function("() => document.querySelector('#policy-state').textContent === 'ON'")
    # the sentence is now the server's own description
    assert page.locator("#policy-sentence").text_content() == (
        "Promote candidates seen in ≥ 2 separate conversations with confidence ≥ 0.9.")
    screenshot(page, "advanced-on")

    # the queue shows the candidate; the same agent repeating itself is one observation...
    page.keyboard.press("1")
    r = row(page, text)
    r.wait_for()
    again = policy_server.remember(text, "FACT", ns, confidence=0.95)
    assert again["status"] == "PENDING"
    r.filter(has_text="seen 2× · in 1 conversation").wait_for()
    # ...and a second, independent observation promotes it without a click
    other = policy_server.create_token("AGENT", "second-agent")
    policy_server.remember(text, "FACT", ns, confidence=0.95, token=other)
    r.wait_for(state="detached")  # live: it left the queue by itself
    page.wait_for_function(
        "() => document.querySelector('#announcer').textContent.includes('Auto-approved')")
    memories = eventually(lambda: policy_server.memories(ns))
    assert [m["content"] for m in memories] == [text]
    assert memories[0]["approvedBy"] == "policy:auto-approve"
    trail = policy_server.candidate(first["id"])["transitions"]
    assert trail[-1]["action"] == "APPROVED" and trail[-1]["actor"] == "policy:auto-approve"

    # switch it off again
    page.keyboard.press("3")
    page.wait_for_function("() => document.querySelector('#policy-state').textContent === 'ON'")
    page.locator("#policy-enabled").uncheck()
    page.click("#policy-save")
    page.wait_for_function("() => document.querySelector('#policy-state').textContent === 'OFF'")
    below = policy_server.remember("The policy-demo cache is Redis.", "FACT", ns)
    again = policy_server.remember("The policy-demo cache is Redis.", "FACT", ns)
    assert again["id"] == below["id"] and again["status"] == "PENDING"


def test_archive_window_and_persona_settings(page: Any, policy_server: Server) -> None:
    sign_in(page, policy_server, "admin")
    page.keyboard.press("3")
    page.wait_for_function("() => document.querySelector('#archive-days').value !== ''")
    page.fill("#archive-days", "14")
    page.locator("#archive-form").get_by_role("button", name="Save window").click()
    page.wait_for_function(
        "() => document.querySelector('#announcer').textContent.includes('14 days')")
    assert policy_server.gql("{ archiveDays }")["archiveDays"] == 14

    page.fill("#persona-name", "Not A Slug!")
    page.locator("#persona-form").get_by_role("button", name="Save persona").click()
    page.locator("#persona-form .error").wait_for()
    page.fill("#persona-name", "night-shift")
    page.locator("#persona-form").get_by_role("button", name="Save persona").click()
    page.wait_for_function(
        "() => document.querySelector('#persona-chip').textContent === 'persona: night-shift'")
    assert policy_server.gql("{ activePersona }")["activePersona"] == "night-shift"
