"""Edit before approve, end to end with the real default embedder (the packaged MiniLM): what
the reviewer typed is what agents recall, and the original wording is not."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.dashboard.support import Server, eventually, memvet_server, row, screenshot, sign_in

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with memvet_server(tmp_path_factory.mktemp("dashboard-model"), embedder=None,
                       timeout=240.0) as server:
        yield server


def test_edit_then_approve_makes_the_edited_text_recallable(
    page: Any, model_server: Server
) -> None:
    ns = "workspace:shop-api"
    original = "we r using yarn i think??"
    edited = "The shop-api project uses pnpm as its package manager (not npm or yarn)."
    cand = model_server.remember(original, "PREFERENCE", ns, confidence=0.6)
    sign_in(page, model_server)
    r = row(page, original)
    r.wait_for()
    r.click()
    page.keyboard.press("e")
    editor = page.locator("li.cand.is-editing form.editor")
    editor.locator("textarea").fill(edited)
    editor.locator("select").select_option("FACT")
    screenshot(page, "edit-before-approve")
    editor.get_by_role("button", name="Approve as edited").click()
    r.wait_for(state="detached")
    page.wait_for_function(
        "() => document.querySelector('#announcer').textContent.startsWith('Approved')")

    hits = eventually(lambda: model_server.recall("which package manager does shop-api use?", ns))
    top = hits[0]["memory"]
    assert top["content"] == edited and top["kind"] == "FACT"
    assert top["approvedBy"] == "reviewer:alice"
    assert all(h["memory"]["content"] != original for h in hits)
    # the audit trail records the edit with what the reviewer saw
    trail = model_server.candidate(cand["id"])
    assert trail["candidate"]["content"] == edited
    assert trail["transitions"][-1]["action"] == "APPROVED"

    # the approved view finds it by meaning, through recall
    page.keyboard.press("2")
    page.fill("#recall-q", "package manager")
    page.press("#recall-q", "Enter")
    page.locator("li.mem", has_text=edited).wait_for()
    screenshot(page, "approved-search")
