"""`memvet review --list / approve / reject` end to end against a real server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memvet.api.cli import main
from memvet.api.review.client import ReviewClient
from memvet.api.review.models import LiveStatus
from tests.fixtures.net import free_port
from tests.graph.support import Server
from tests.review.support import approve, candidate, memory_exists, remember, space

ROOT = Path(__file__).resolve().parents[2]
MEMVET = Path(sys.executable).with_name("memvet")
Run = Callable[..., tuple[int, str, str]]
KEYS = {"id", "content", "kind", "namespace", "source", "confidence", "observations",
        "createdAt"}


@pytest.fixture
def review(server: Server, monkeypatch: pytest.MonkeyPatch,
           capsys: pytest.CaptureFixture[str]) -> Run:
    """Run `memvet review ARGS` in this process as `as_`; (exit status, stdout, stderr)."""
    def run(*args: str, as_: str = "reviewer", url: str | None = None) -> tuple[int, str, str]:
        monkeypatch.setenv("MEMVET_URL", url or server.url)
        monkeypatch.setenv("MEMVET_TOKEN", server.tokens.get(as_, as_))
        capsys.readouterr()
        code = main(["review", *args])
        out, err = capsys.readouterr()
        return code, out, err
    return run


def one_line(err: str) -> str:
    """stderr must be exactly one line, no traceback."""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_list_json_has_exactly_the_keys_in_lower_case(server: Server, review: Run) -> None:
    ns, other = space("list"), space("list-other")
    fact = remember(server, "shop-api uses pnpm, not npm", ns, "FACT", confidence=0.7)
    decision = remember(server, "We chose Tauri over Electron for bundle size", ns, "DECISION")
    remember(server, "Somewhere else entirely", other, "EVENT")

    code, out, err = review("--list", "--namespace", ns, "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["id"] for r in rows] == [decision["id"], fact["id"]]  # newest first
    assert all(set(r) == KEYS for r in rows)
    first = rows[1]
    assert first["kind"] == "fact" and first["source"] == "explicit"
    assert first["content"] == "shop-api uses pnpm, not npm" and first["namespace"] == ns
    assert first["confidence"] == pytest.approx(0.7) and first["observations"] == 1
    assert first["createdAt"].startswith("20")

    code, out, _ = review("--list", "--namespace", ns, "--kind", "decision", "--json")
    assert code == 0 and [r["id"] for r in json.loads(out)] == [decision["id"]]


def test_list_without_json_is_a_table(server: Server, review: Run) -> None:
    ns = space("table")
    cand = remember(server, "Releases are cut on Tuesdays", ns, "PATTERN")
    code, out, _ = review("--list", "--namespace", ns)
    assert code == 0
    header, row = out.strip().splitlines()
    assert header.split() == ["ID", "KIND", "NAMESPACE", "SOURCE", "CONF", "SEEN", "AGE",
                              "CONTENT"]
    assert row.split()[:6] == [cand["id"], "pattern", ns, "explicit", "0.80", "1"]
    assert row.endswith("Releases are cut on Tuesdays")

    code, out, err = review("--list", "--namespace", space("empty"))
    assert (code, out) == (0, "") and "no pending candidates" in err


def test_approve_with_edits_and_supersede(server: Server, review: Run) -> None:
    ns, moved = space("approve"), space("approve-moved")
    old = approve(server, remember(server, "CI runs on Jenkins", ns)["id"])
    cand = remember(server, "ci runs on github actions now", ns, "EVENT")

    code, out, err = review("approve", cand["id"], "--content", "CI runs on GitHub Actions",
                            "--kind", "decision", "--namespace", moved, "--supersede", old)
    assert code == 0, err
    assert cand["id"] in out and "approved" in out
    now = candidate(server, cand["id"])
    assert now["status"] == "APPROVED"
    assert now["memory"]["content"] == "CI runs on GitHub Actions"
    assert now["memory"]["kind"] == "DECISION" and now["memory"]["namespace"] == moved
    assert not memory_exists(server, old)  # superseded: retired in the same step

    plain = remember(server, "The API listens on 8765", ns)
    code, _, err = review("approve", plain["id"])
    assert code == 0, err
    assert candidate(server, plain["id"])["memory"]["content"] == "The API listens on 8765"


def test_reject_with_reason(server: Server, review: Run) -> None:
    ns = space("reject")
    cand = remember(server, "User likes tabs", ns, "PREFERENCE")
    code, out, err = review("reject", cand["id"], "--reason", "one-off remark")
    assert code == 0, err
    assert "rejected" in out and "one-off remark" in out
    now = candidate(server, cand["id"])
    assert now["status"] == "REJECTED" and now["reviewReason"] == "one-off remark"

    bare = remember(server, "User likes spaces", ns, "PREFERENCE")
    assert review("reject", bare["id"])[0] == 0
    assert candidate(server, bare["id"])["reviewReason"] is None


@pytest.mark.parametrize("form", [["--list"], ["approve", "{id}"], ["reject", "{id}"], []],
                         ids=["list", "approve", "reject", "interactive"])
def test_agent_token_is_refused_for_every_form(server: Server, review: Run,
                                               form: list[str]) -> None:
    cand = remember(server, "Agents may not approve this", space("agent"))
    code, out, err = review(*[a.format(id=cand["id"]) for a in form], as_="agent")
    assert code != 0 and out == ""
    line = one_line(err)
    assert "agent token" in line and "reviewer or admin token" in line
    assert candidate(server, cand["id"])["status"] == "PENDING"


def test_agent_token_is_refused_by_the_real_command(server: Server) -> None:
    cand = remember(server, "Still not for agents", space("agent-proc"))
    env = {**os.environ, "MEMVET_URL": server.url,
           "MEMVET_TOKEN": server.tokens["agent"]}
    done = subprocess.run([str(MEMVET), "review", "approve", cand["id"]], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and done.stdout == ""
    assert "agent token" in one_line(done.stderr)
    assert candidate(server, cand["id"])["status"] == "PENDING"


def test_unknown_id_and_invalid_transition(server: Server, review: Run) -> None:
    code, _, err = review("approve", "no-such-candidate")
    assert code != 0 and "NOT_FOUND" in one_line(err)
    code, _, err = review("reject", "no-such-candidate", "--reason", "x")
    assert code != 0 and "NOT_FOUND" in one_line(err)

    cand = remember(server, "Decided twice", space("twice"))
    assert review("reject", cand["id"])[0] == 0
    code, _, err = review("approve", cand["id"])
    assert code != 0 and "INVALID_TRANSITION" in one_line(err)


def test_wrong_token_and_unreachable_server(review: Run) -> None:
    code, out, err = review("--list", as_="mvt_not_a_real_token")
    assert code != 0 and out == "" and "refused MEMVET_TOKEN" in one_line(err)
    code, out, err = review("--list", url=f"http://127.0.0.1:{free_port()}")
    assert code != 0 and out == "" and "cannot reach memvet" in one_line(err)
    code, out, err = review("approve", "x", url=f"http://127.0.0.1:{free_port()}")
    assert code != 0 and "cannot reach memvet" in one_line(err)


def test_the_interactive_form_needs_a_terminal(review: Run) -> None:
    code, out, err = review()  # pytest's stdin and stdout are no terminal
    assert code != 0 and out == "" and "needs a terminal" in one_line(err)
    with pytest.raises(SystemExit) as usage:  # argparse's usage error, before any request
        review("--json")
    assert usage.value.code == 2


def test_scoped_reviewer_sees_only_its_namespaces(server: Server, review: Run) -> None:
    mine = remember(server, "Only in mine", "workspace:mine")
    remember(server, "Not in mine", space("elsewhere"))
    code, out, _ = review("--list", "--json", as_="scoped_reviewer")
    assert code == 0
    rows = json.loads(out)
    assert mine["id"] in {r["id"] for r in rows}
    assert {r["namespace"] for r in rows} == {"workspace:mine"}


def test_the_hooks_start_up_imports_no_textual_or_httpx() -> None:
    probe = ("import sys; from memvet.api.cli import build_parser; "
             "build_parser().parse_args(['hook', 'claude-code']); "
             "print(sorted(m for m in ('textual', 'httpx', 'websockets', "
             "'memvet.api.review.client') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_live_updates_with_a_refused_token_say_so(server: Server) -> None:
    seen: list[LiveStatus] = []

    async def follow() -> None:
        events = ReviewClient(url=server.url, token="mvt_not_a_real_token").events(seen.append)
        task = asyncio.ensure_future(anext(events))
        deadline = time.monotonic() + 60
        try:
            while not any(s.state == "denied" for s in seen):
                assert time.monotonic() < deadline, seen
                assert not task.done(), task
                await asyncio.sleep(0.05)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(follow())
    assert seen[0].state == "connecting"
    denied = next(s for s in seen if s.state == "denied")
    assert "refused MEMVET_TOKEN" in denied.detail
    assert denied.retry_in is not None and denied.retry_in >= 15  # slowly: it won't fix itself
