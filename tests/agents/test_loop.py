"""The whole loop with the real default embedder: a Stop hook turn says "we use pnpm here, not
npm" → a pending candidate → a reviewer approves it → the next SessionStart prints it → recall
through MCP finds it. The agent's token can approve nothing on the way."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from tests.agents.support import DATA, Server, make_repo, mcp_session, run_hook, run_server, text_of

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with run_server(tmp_path_factory.mktemp("loop") / "data", embedder=None) as running:
        yield running


def test_stop_turn_to_approved_memory_to_session_start_and_mcp_recall(
        real_server: Server, tmp_path: Path) -> None:
    server = real_server
    repo = make_repo(tmp_path, "shop-api")
    log = tmp_path / "hook.log"
    env = server.env(MEMVET_HOOK_LOG=str(log))

    stop = run_hook({"hook_event_name": "Stop", "session_id": "loop-session",
                     "cwd": str(repo / "src"), "stop_hook_active": False,
                     "transcript_path": str(DATA / "session_pnpm.jsonl")}, env)
    assert (stop.returncode, stop.stdout) == (0, "")
    assert not log.exists(), log.read_text()
    [cand] = [c for c in server.candidates("PENDING", "workspace:shop-api")
              if "pnpm" in c["content"]]
    assert cand["source"] == "TURN"

    # Before approval: nothing to brief, nothing to recall.
    start = {"hook_event_name": "SessionStart", "session_id": "next", "source": "startup",
             "cwd": str(repo)}
    assert run_hook(start, env).stdout == ""

    # The agent's own token cannot approve it; a reviewer's can.
    denied = server.graphql("mutation($id: ID!) { approveCandidate(id: $id) { __typename "
                            "... on UserError { code } } }", {"id": cand["id"]}, as_="agent")
    result = (denied.get("data") or {}).get("approveCandidate") or {}
    codes = [e.get("extensions", {}).get("code") for e in denied.get("errors") or []]
    assert result.get("code") == "FORBIDDEN" or "FORBIDDEN" in codes, denied
    server.approve(cand["id"], as_="reviewer")

    brief = run_hook(start, env)
    assert brief.returncode == 0 and not log.exists()
    context = brief.context()
    assert "pnpm" in context and "workspace 'shop-api'" in context

    async def recall() -> str:
        async with mcp_session(server.url, server.tokens["agent"]) as s:
            hits = await s.call_tool("recall", {"query": "which package manager do we use?",
                                                "namespace": "workspace:shop-api"})
            assert not hits.is_error
            return text_of(hits)

    recalled = anyio.run(recall)
    assert "pnpm" in recalled and "workspace:shop-api" in recalled
