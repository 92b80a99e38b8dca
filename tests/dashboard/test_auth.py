"""Signing in to the dashboard: the token form, `/?token=`, bad tokens, agent tokens, sign-out."""

from __future__ import annotations

from typing import Any

import pytest

from tests.dashboard.support import Server, screenshot, sign_in

pytestmark = pytest.mark.slow


def test_sign_in_with_the_form_and_sign_out(page: Any, dashboard_server: Server) -> None:
    page.goto(dashboard_server.url + "/")
    page.wait_for_selector("#signin:not([hidden])")
    assert page.evaluate("document.activeElement.id") == "token-input"
    screenshot(page, "signin")

    page.fill("#token-input", "mvt_not-a-real-token")
    page.press("#token-input", "Enter")
    error = page.locator("#signin-error")
    error.wait_for(state="visible")
    assert "not valid" in error.text_content()

    page.fill("#token-input", dashboard_server.tokens["reviewer"])
    page.click("#signin-form button[type=submit]")
    page.wait_for_selector("#app:not([hidden])")
    assert page.locator("#viewer-chip").text_content() == "reviewer · alice"
    page.wait_for_selector("#conn[data-state=live]")
    # the token is kept for this tab only (sessionStorage), not on the device
    stored = page.evaluate("sessionStorage.getItem('memvet.token')")
    assert stored == dashboard_server.tokens["reviewer"]
    assert page.evaluate("localStorage.getItem('memvet.token')") is None

    page.reload()
    page.wait_for_selector("#app:not([hidden])")  # still signed in after a reload

    page.click("#signout-btn")
    page.wait_for_selector("#signin:not([hidden])")
    assert page.locator("#app").is_hidden()
    assert page.evaluate("sessionStorage.getItem('memvet.token')") is None
    page.reload()
    page.wait_for_selector("#signin:not([hidden])")


@pytest.mark.parametrize("link", ["/#token=", "/?token="], ids=["fragment", "legacy-query"])
def test_token_in_the_url_signs_in_and_leaves_the_address_bar(
    page: Any, dashboard_server: Server, link: str
) -> None:
    token = dashboard_server.tokens["admin"]
    page.goto(f"{dashboard_server.url}{link}{token}")
    page.wait_for_selector("#app:not([hidden])")
    assert token not in page.url
    assert "token=" not in page.url
    assert page.evaluate("location.search") == ""
    assert token not in page.evaluate("JSON.stringify(history.state) + location.href")
    assert page.locator("#viewer-chip").text_content().startswith("admin")
    page.wait_for_selector("#conn[data-state=live]")


def test_an_agent_token_cannot_sign_in(page: Any, dashboard_server: Server) -> None:
    page.goto(f"{dashboard_server.url}/?token={dashboard_server.tokens['agent']}")
    page.wait_for_selector("#signin:not([hidden])")
    error = page.locator("#signin-error")
    error.wait_for(state="visible")
    assert "reviewer or admin" in error.text_content()
    assert "token=" not in page.url
    assert page.evaluate("sessionStorage.getItem('memvet.token')") is None


def test_a_revoked_session_goes_back_to_sign_in(page: Any, dashboard_server: Server) -> None:
    token = dashboard_server.create_token("REVIEWER", "short-lived")
    dashboard_server.tokens["short"] = token
    sign_in(page, dashboard_server, "short")
    token_id = dashboard_server.gql(
        "{ tokens { id name revokedAt } }")["tokens"]
    target = next(t["id"] for t in token_id if t["name"] == "short-lived" and not t["revokedAt"])
    dashboard_server.gql(
        "mutation($id: ID!) { revokeToken(id: $id) { __typename } }", id=target)
    page.keyboard.press("2")  # any request now answers 401
    page.wait_for_selector("#signin:not([hidden])")
    assert "no longer valid" in page.locator("#signin-error").text_content()
