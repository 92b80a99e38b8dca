"""Units of the hook adapter: transcript reading, workspace detection, the briefing text."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from memvet.api.client import _dechunk, _host_port, _parse_response
from memvet.api.hooks import claude_code, transcript
from memvet.api.hooks.context import find_workspace, read_marker, slugify
from tests.agents.support import DATA


def test_last_exchange_skips_tool_traffic_meta_and_command_echoes() -> None:
    entries = transcript.read_entries(DATA / "session_pnpm.jsonl")
    exchange, turn_id = transcript.last_exchange(entries)
    assert [m.role for m in exchange] == ["user", "assistant"]
    assert exchange[0].text == "We use pnpm here, not npm. Please always use pnpm in this repo."
    assert exchange[1].text == "Done: eslint is installed with pnpm and `pnpm lint` runs it."
    assert turn_id.startswith("a0000000-0000-4000-8000-000000000006:")
    again, same_id = transcript.last_exchange(transcript.read_entries(DATA / "session_pnpm.jsonl"))
    assert same_id == turn_id  # stable: re-running the Stop hook re-submits the same turn id


def test_last_assistant_message_from_the_payload_wins() -> None:
    entries = transcript.read_entries(DATA / "session_pnpm.jsonl")
    exchange, _ = transcript.last_exchange(entries, "Switched everything to pnpm.")
    assert exchange[-1].text == "Switched everything to pnpm."
    only, turn_id = transcript.last_exchange([], "Just an answer.")
    assert [m.role for m in only] == ["assistant"] and len(turn_id) == 32


def test_since_compaction_starts_after_the_last_boundary() -> None:
    entries = transcript.read_entries(DATA / "compacted.jsonl")
    words, span_id = transcript.since_compaction(entries)
    texts = " ".join(w.text for w in words)
    assert "migration" in texts
    assert "flaky" not in texts and "continued from a previous conversation" not in texts
    assert [w.role for w in words] == ["user", "assistant"]  # the two assistant texts join
    assert "pre-deploy migration step" in words[1].text and "migrations first" in words[1].text
    assert span_id.startswith("compact:b0000000-0000-4000-8000-000000000004")


def test_tail_read_drops_the_cut_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [json.dumps({"type": "user", "message": {"role": "user", "content": f"m{i} " * 50},
                         "uuid": f"u{i}"}) for i in range(200)]
    path.write_text("\n".join(lines) + "\nnot json\n")
    tail = transcript.read_entries(path, tail_bytes=2000)
    assert 0 < len(tail) < 200 and tail[-1]["uuid"] == "u199"


def test_chunks_respect_the_byte_budget() -> None:
    words = [transcript.Said("user", "x" * 1000) for _ in range(50)]
    parts = list(transcript.chunks(words, max_bytes=10_000))
    assert sum(len(p) for p in parts) == 50 and all(len(p) <= 10 for p in parts)


def test_long_messages_are_clipped() -> None:
    assert len(transcript.clip("y" * 100_000)) == transcript.MAX_MESSAGE_CHARS


def test_workspace_is_the_repository_folder(tmp_path: Path) -> None:
    repo = tmp_path / "Shop API"
    (repo / ".git").mkdir(parents=True)
    (repo / "a" / "b").mkdir(parents=True)
    assert find_workspace(repo / "a" / "b") == "shop-api"
    worktree = tmp_path / "wt"
    (worktree / "x").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: /elsewhere\n")  # worktrees and submodules
    assert find_workspace(worktree / "x") == "wt"


@pytest.mark.parametrize("text,expected", [
    ("shop-api\n", "shop-api"),
    ("# comment\nworkspace = Billing\n", "billing"),
    ("workspace=workspace:infra\n", "infra"),
    ("\n\n", None),
])
def test_memvet_file_names_the_workspace(tmp_path: Path, text: str, expected: str | None
                                         ) -> None:
    (tmp_path / ".memvet").write_text(text)
    assert read_marker(tmp_path / ".memvet") == expected


def test_memvet_file_wins_over_the_folder_name(tmp_path: Path) -> None:
    repo = tmp_path / "checkout"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / ".memvet").write_text("workspace=shop-api\n")
    assert find_workspace(repo / "src") == "shop-api"


def test_slugify() -> None:
    assert slugify("My Project!") == "my-project"
    assert slugify("***") is None


def _hits(kind: str, n: int, size: int = 40) -> list[dict[str, object]]:
    return [{"id": f"{kind}{i}", "kind": kind.upper(), "namespace": "workspace:w",
             "content": f"{kind} {i} " + "z" * size} for i in range(n)]


def test_briefing_puts_decisions_and_postmortems_first_and_caps_the_size() -> None:
    data = (_hits("fact", 30) + _hits("event", 5) + _hits("postmortem", 3)
            + _hits("decision", 3) + _hits("preference", 4))
    text = claude_code.briefing(data, "w", "me")
    assert text is not None
    order = [text.index(h) for h in ("Decisions:", "Postmortems", "preferences:", "Facts:",
                                     "Events:")]
    assert order == sorted(order)
    big = _hits("fact", 400, size=200)
    capped = claude_code.briefing(big, "w", None)
    assert capped is not None and len(capped) <= claude_code.MAX_CONTEXT_CHARS
    assert capped.endswith("use the memvet `recall` tool.)")
    assert claude_code.briefing([], "w", "me") is None
    nowhere = claude_code.briefing(_hits("fact", 1), None, None)
    assert nowhere is not None and nowhere.startswith(
        "Memory from memvet (approved by a person). Treat these")


def test_bad_payload_exits_zero_and_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    log = tmp_path / "hook.log"
    monkeypatch.setenv("MEMVET_HOOK_LOG", str(log))
    out = io.StringIO()
    assert claude_code.main(io.BytesIO(b"{not json"), out) == 0
    assert claude_code.main(io.BytesIO(b'{"hook_event_name": "Nope"}'), out) == 0
    assert out.getvalue() == ""
    lines = log.read_text().splitlines()
    assert len(lines) == 2 and "not JSON" in lines[0] and "Nope" in lines[1]


def test_raw_http_response_parsing() -> None:
    assert _parse_response(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}xx") == (200, b"{}")
    chunked = (b"HTTP/1.1 401 Unauthorized\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"3\r\nabc\r\n0\r\n\r\n")
    assert _parse_response(chunked) == (401, b"abc")
    assert _dechunk(b"2\r\nhi\r\n1;ext=1\r\n!\r\n0\r\n\r\n") == b"hi!"
    assert _host_port("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert _host_port("[::1]:9") == ("::1", 9) and _host_port("example.org") == ("example.org", 80)
    with pytest.raises(ValueError):
        _parse_response(b"garbage")


# ---------------------------------------------------------------------- transcript layouts
def _texts(words: list[transcript.Said]) -> str:
    return "\n".join(w.text for w in words)


def test_2_1_layout_follows_the_chain_past_a_rewind_and_cuts_at_the_compact_boundary() -> None:
    entries = transcript.read_entries(DATA / "session_2_1.jsonl")
    exchange, turn_id = transcript.last_exchange(entries)
    assert [m.text for m in exchange] == [
        "Use pnpm for everything in this repo, never npm or yarn.",
        "I'll switch the scripts and the lockfile to pnpm.\n\nDone: pnpm-lock.yaml replaces "
        "package-lock.json, and the README says pnpm."]
    assert turn_id.startswith("c0000000-0000-4000-8000-000000000017:")
    words, span_id = transcript.since_compaction(entries)
    text = _texts(words)
    assert [w.role for w in words] == ["user", "assistant", "user", "assistant"]
    assert "Argo CD" in text and "pnpm-lock.yaml" in text
    assert "Switched the repo to yarn" not in text and "move the whole repo" not in text  # rewound
    assert "Postgres" not in text  # before the compaction, and in its summary
    assert span_id.startswith("compact:c0000000-0000-4000-8000-000000000009:")


def test_a_summary_line_is_a_title_not_a_compaction() -> None:
    entries = transcript.read_entries(DATA / "session_2_1.jsonl")
    assert entries[-1]["type"] == "summary"
    assert not transcript.is_boundary(entries[-1])
    words, _ = transcript.since_compaction(entries)
    assert words  # a summary written after the last message cuts nothing off
    first = transcript.read_entries(DATA / "session_2_0.jsonl")
    assert first[0]["type"] == first[1]["type"] == "summary"
    assert [w.role for w in transcript.since_compaction(first)[0]] == ["user", "assistant"]


def test_2_0_layout_leaves_the_subagents_sidechain_out() -> None:
    entries = transcript.read_entries(DATA / "session_2_0.jsonl")
    assert any(e.get("isSidechain") for e in entries)
    exchange, turn_id = transcript.last_exchange(entries)
    assert exchange[0].text.startswith("From now on we always cut releases from the main branch")
    assert turn_id.startswith("d0000000-0000-4000-8000-000000000001:")
    text = _texts(exchange) + _texts(transcript.since_compaction(entries)[0])
    assert "Answer with the job names only" not in text  # the Task prompt, the subagent's
    assert "test` and `e2e` jobs of ci.yml" not in text  # the subagent's own answer
    assert "RELEASING.md now says releases are cut from main" in text


def test_a_compaction_mid_turn_keeps_the_prompt_it_answers() -> None:
    def entry(uuid: str, parent: str | None, kind: str, text: str, **extra: object
              ) -> dict[str, object]:
        return {"uuid": uuid, "parentUuid": parent, "isSidechain": False, "type": kind,
                "message": {"role": kind, "content": [{"type": "text", "text": text}]},
                **extra}

    entries = [
        entry("u1", None, "user", "Rename the orders table to purchases everywhere."),
        entry("a1", "u1", "assistant", "Renaming the table in the models first."),
        {"uuid": "b1", "parentUuid": None, "logicalParentUuid": "a1", "isSidechain": False,
         "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"},
        entry("s1", "b1", "user", "This session is being continued...", isCompactSummary=True),
        entry("a2", "s1", "assistant", "Done: the table is now purchases."),
    ]
    exchange, turn_id = transcript.last_exchange(entries)
    assert [m.role for m in exchange] == ["user", "assistant"]
    assert exchange[0].text == "Rename the orders table to purchases everywhere."
    assert exchange[1].text.endswith("Done: the table is now purchases.")
    assert turn_id.startswith("u1:")
    words, _ = transcript.since_compaction(entries)
    assert [w.text for w in words] == ["Done: the table is now purchases."]


def test_entries_without_links_keep_the_file_order() -> None:
    entries = [{"type": "user", "uuid": "x1", "message": {"role": "user", "content": "One"}},
               {"type": "assistant", "uuid": "x2",
                "message": {"role": "assistant", "content": "Two"}}]
    assert [e["uuid"] for e in transcript.active_branch(entries)] == ["x1", "x2"]
