"""`memvet hook claude-code` as Claude Code runs it: a subprocess, the event JSON on stdin,
transcripts in Claude Code's JSONL shape (tests/agents/data)."""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

import pytest

from tests.agents.support import BASE_ENV, DATA, Server, make_repo, run_hook
from tests.fixtures.net import free_port

pytestmark = pytest.mark.timeout(180)


def _stop(session: str, cwd: Path, transcript: Path, **extra: object) -> dict[str, object]:
    return {"hook_event_name": "Stop", "session_id": session, "cwd": str(cwd),
            "transcript_path": str(transcript), "stop_hook_active": False,
            "permission_mode": "default", **extra}


def test_stop_submits_the_last_exchange_as_a_turn(server: Server, tmp_path: Path,
                                                   hook_log: Path) -> None:
    repo = make_repo(tmp_path, "shop-api")
    env = server.env(MEMVET_HOOK_LOG=str(hook_log))
    payload = _stop("sess-stop-1", repo / "src" / "deep", DATA / "session_pnpm.jsonl")
    first = run_hook(payload, env)
    assert (first.returncode, first.stdout) == (0, "")
    assert not hook_log.exists(), hook_log.read_text()
    [cand] = [c for c in server.candidates("PENDING", "workspace:shop-api")
              if "pnpm" in c["content"]]
    assert cand["source"] == "TURN" and cand["observations"] == 1
    [origin] = cand["origins"]
    assert origin["conversationId"] == "sess-stop-1"
    assert origin["turnId"].startswith("a0000000-0000-4000-8000-000000000006:")
    messages = origin["turn"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[0]["content"].startswith("We use pnpm here, not npm.")
    assert "tool_result" not in json.dumps(messages) and "npm install -D" not in json.dumps(
        messages)
    again = run_hook(payload, env)  # Claude Code may fire Stop twice for one exchange
    assert again.returncode == 0
    [same] = [c for c in server.candidates("PENDING", "workspace:shop-api")
              if "pnpm" in c["content"]]
    assert same["observations"] == 1


def test_stop_prefers_last_assistant_message(server: Server, tmp_path: Path,
                                              hook_log: Path) -> None:
    repo = make_repo(tmp_path, "billing")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(e) for e in [
        {"type": "user", "uuid": "u-1", "sessionId": "sess-stop-2", "message": {
            "role": "user", "content": "From now on, the billing service deploys with Helm, "
                                       "never with kubectl apply."}},
        {"type": "assistant", "uuid": "u-2", "sessionId": "sess-stop-2", "message": {
            "role": "assistant", "content": [{"type": "text", "text": "Older text."}]}},
    ]) + "\n")
    payload = _stop("sess-stop-2", repo, transcript, last_assistant_message="Noted: Helm only.")
    run = run_hook(payload, server.env(MEMVET_HOOK_LOG=str(hook_log)))
    assert (run.returncode, run.stdout) == (0, "")
    [cand] = server.candidates("PENDING", "workspace:billing")
    messages = cand["origins"][0]["turn"]["messages"]
    assert [m["content"] for m in messages][1] == "Noted: Helm only."
    assert "Helm" in cand["content"]


def test_stop_without_a_transcript_logs_and_exits_zero(server: Server, tmp_path: Path,
                                                       hook_log: Path) -> None:
    payload = _stop("sess-stop-3", make_repo(tmp_path, "nofile"), tmp_path / "gone.jsonl",
                    last_assistant_message="Done.")
    run = run_hook(payload, server.env(MEMVET_HOOK_LOG=str(hook_log)))
    assert (run.returncode, run.stdout) == (0, "")
    assert "cannot read the transcript" in hook_log.read_text()
    nothing = run_hook(_stop("sess-stop-4", tmp_path, tmp_path / "gone.jsonl"),
                       server.env(MEMVET_HOOK_LOG=str(hook_log)))
    assert (nothing.returncode, nothing.stdout) == (0, "")
    assert "no exchange to submit" in hook_log.read_text()


def test_precompact_submits_only_what_came_after_the_last_compaction(
        server: Server, tmp_path: Path, hook_log: Path) -> None:
    repo = make_repo(tmp_path, "deploys")
    payload = {"hook_event_name": "PreCompact", "session_id": "sess-compact",
               "cwd": str(repo), "transcript_path": str(DATA / "compacted.jsonl"),
               "trigger": "auto", "custom_instructions": ""}
    run = run_hook(payload, server.env(MEMVET_HOOK_LOG=str(hook_log)))
    assert (run.returncode, run.stdout) == (0, "")
    assert not hook_log.exists(), hook_log.read_text()
    cands = server.candidates("PENDING", "workspace:deploys")
    assert cands and all(c["source"] == "COMPACTION" for c in cands)
    assert any("migration" in c["content"] for c in cands)
    turn = cands[0]["origins"][0]["turn"]
    assert turn["trigger"] == "compaction"
    text = json.dumps(turn["messages"])
    assert "migration" in text and "flaky" not in text and "Summary:" not in text


def test_stop_on_a_2_0_transcript_submits_the_users_prompt_not_the_subagents(
        server: Server, tmp_path: Path, hook_log: Path) -> None:
    repo = make_repo(tmp_path, "release-docs")
    payload = _stop("sess-2-0", repo, DATA / "session_2_0.jsonl")
    run = run_hook(payload, server.env(MEMVET_HOOK_LOG=str(hook_log)))
    assert (run.returncode, run.stdout) == (0, "")
    assert not hook_log.exists(), hook_log.read_text()
    cands = server.candidates("PENDING", "workspace:release-docs")
    assert cands
    [origin] = cands[0]["origins"]
    assert origin["turnId"].startswith("d0000000-0000-4000-8000-000000000001:")
    messages = origin["turn"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[0]["content"].startswith("From now on we always cut releases")
    assert "Answer with the job names only" not in json.dumps(messages)


def test_precompact_on_a_2_1_transcript_sends_only_the_live_branch_since_compaction(
        server: Server, tmp_path: Path, hook_log: Path) -> None:
    repo = make_repo(tmp_path, "argo")
    payload = {"hook_event_name": "PreCompact", "session_id": "sess-2-1", "cwd": str(repo),
               "transcript_path": str(DATA / "session_2_1.jsonl"), "trigger": "manual",
               "custom_instructions": ""}
    run = run_hook(payload, server.env(MEMVET_HOOK_LOG=str(hook_log)))
    assert (run.returncode, run.stdout) == (0, "")
    assert not hook_log.exists(), hook_log.read_text()
    cands = server.candidates("PENDING", "workspace:argo")
    assert cands and all(c["source"] == "COMPACTION" for c in cands)
    text = json.dumps(cands[0]["origins"][0]["turn"]["messages"])
    assert "Argo CD" in text and "pnpm" in text
    assert "Switched the repo to yarn" not in text and "Postgres" not in text
    assert not any("yarn.lock" in c["content"] or "Postgres" in c["content"] for c in cands)


def test_session_start_prints_approved_memories_for_the_workspace_and_persona(
        server: Server, tmp_path: Path, hook_log: Path) -> None:
    server.add_approved("Payments go through Stripe, never a second processor", "decision",
                        "workspace:brief")
    server.add_approved("Deleting the cache volume lost a day of orders: snapshot it first",
                        "postmortem", "workspace:brief")
    server.add_approved("The API is written in Go 1.22", "fact", "workspace:brief")
    server.add_approved("Wants commit messages in the imperative mood", "preference",
                        "persona:sam")
    server.add_approved("Another project uses Django", "fact", "workspace:elsewhere")
    pending = server.data("mutation { remember(content: \"Unreviewed: we use Bazel\", "
                          "kind: FACT, namespace: \"workspace:brief\") { __typename } }",
                          as_="agent")
    assert pending["remember"]["__typename"] == "Candidate"
    repo = make_repo(tmp_path, "checkout", marker="workspace=brief\n")
    payload = {"hook_event_name": "SessionStart", "session_id": "s", "source": "startup",
               "cwd": str(repo / "src"), "transcript_path": str(tmp_path / "t.jsonl")}
    run = run_hook(payload, server.env(MEMVET_HOOK_LOG=str(hook_log), MEMVET_PERSONA="sam"))
    assert run.returncode == 0, run.stderr
    text = run.context()
    assert "workspace 'brief'" in text and "persona 'sam'" in text
    for fact in ("Payments go through Stripe", "snapshot it first", "Go 1.22",
                 "imperative mood"):
        assert fact in text
    assert "Django" not in text and "Bazel" not in text  # other projects; nothing unapproved
    assert text.index("Decisions:") < text.index("Postmortems") < text.index("Facts:")
    assert len(text) <= 10_000


def test_session_start_uses_the_server_persona_and_prints_nothing_when_empty(
        server: Server, tmp_path: Path, hook_log: Path) -> None:
    persona = server.data("{ activePersona }")["activePersona"]
    server.add_approved("Likes tables over bullet lists", "preference", f"persona:{persona}")
    repo = make_repo(tmp_path, "fresh-project")
    payload = {"hook_event_name": "SessionStart", "session_id": "s", "source": "startup",
               "cwd": str(repo)}
    run = run_hook(payload, server.env(MEMVET_HOOK_LOG=str(hook_log)))
    assert "Likes tables over bullet lists" in run.context()
    scoped = server.create_token("agent", ["workspace:fresh-project"])
    empty = run_hook(payload, server.env(scoped, MEMVET_HOOK_LOG=str(hook_log)))
    assert (empty.returncode, empty.stdout) == (0, "")  # nothing it may read: say nothing


def test_session_start_briefs_a_fresh_context_but_not_a_resumed_one(
        server: Server, tmp_path: Path) -> None:
    server.add_approved("Every migration ships with a down step", "pattern",
                        "workspace:sources")
    log = tmp_path / "hook.log"
    repo = make_repo(tmp_path, "sources")
    for source in ("startup", "clear", "compact", "resume"):
        payload = {"hook_event_name": "SessionStart", "session_id": "s", "source": source,
                   "cwd": str(repo), "transcript_path": str(tmp_path / "t.jsonl")}
        run = run_hook(payload, server.env(MEMVET_HOOK_LOG=str(log)))
        assert run.returncode == 0, run.stderr
        if source == "resume":  # the resumed transcript still holds the first briefing
            assert run.stdout == "" and not log.exists()
        else:
            assert "Every migration ships with a down step" in run.context(), source


def test_session_start_stays_under_10k_characters(server: Server, tmp_path: Path) -> None:
    body = "Generated filler memory number {i} about the bulk project " + "x" * 300
    for i in range(45):
        server.add_approved(body.format(i=i), "decision" if i % 3 else "fact", "workspace:bulk")
    repo = make_repo(tmp_path, "bulk")
    run = run_hook({"hook_event_name": "SessionStart", "session_id": "s", "cwd": str(repo)},
                   server.env(MEMVET_HOOK_LOG=str(tmp_path / "log")))
    text = run.context()
    assert 9_000 < len(text) <= 10_000
    assert text.rstrip().endswith("use the memvet `recall` tool.)")


@pytest.mark.parametrize("event", ["SessionStart", "Stop", "PreCompact"])
def test_server_down_exits_zero_fast_and_logs_one_line(tmp_path: Path, event: str) -> None:
    log = tmp_path / "hook.log"
    repo = make_repo(tmp_path, "offline")
    env = {"MEMVET_URL": f"http://127.0.0.1:{free_port()}", "MEMVET_TOKEN": "mvt_x",
           "MEMVET_HOOK_LOG": str(log)}
    import os

    from tests.agents.support import BASE_ENV

    payload = _stop("s", repo, DATA / "session_pnpm.jsonl") | {"hook_event_name": event}
    run = run_hook(payload, {**os.environ, **BASE_ENV, **env})
    assert (run.returncode, run.stdout) == (0, "")
    assert run.seconds < 2.0
    lines = log.read_text().splitlines()
    assert len(lines) == 1 and "cannot reach memvet" in lines[0] and event in lines[0]


def test_a_server_that_never_answers_costs_at_most_two_seconds(tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:  # accept and then say nothing, ever
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        log = tmp_path / "hook.log"
        env = {**os.environ, **BASE_ENV, "MEMVET_TOKEN": "mvt_x", "MEMVET_HOOK_LOG": str(log),
               "MEMVET_URL": f"http://127.0.0.1:{listener.getsockname()[1]}"}
        run = run_hook({"hook_event_name": "SessionStart", "session_id": "s",
                        "cwd": str(make_repo(tmp_path, "slow"))}, env)
        assert (run.returncode, run.stdout) == (0, "")
        assert run.seconds < 2.5  # the 2 s promise plus process start-up on a busy machine
        assert len(log.read_text().splitlines()) == 1
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()


def test_wrong_token_is_logged_not_shown(server: Server, tmp_path: Path) -> None:
    log = tmp_path / "hook.log"
    run = run_hook({"hook_event_name": "SessionStart", "session_id": "s",
                    "cwd": str(make_repo(tmp_path, "x"))},
                   server.env("mvt_wrong", MEMVET_HOOK_LOG=str(log)))
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    assert "refused MEMVET_TOKEN" in log.read_text()
