"""`memvet remember` / `memvet recall` against a running server, and their failures."""

from __future__ import annotations

import json
import os

import pytest

from tests.agents.support import BASE_ENV, Server, run_cli
from tests.fixtures.net import free_port

pytestmark = pytest.mark.timeout(180)


def test_remember_and_recall_readable_and_json(server: Server) -> None:
    env = server.env()
    out = run_cli(["remember", "The docs site builds with mkdocs", "--kind", "fact",
                   "--namespace", "workspace:docs"], env)
    assert out.returncode == 0, out.stderr
    assert "[fact] workspace:docs" in out.stdout and "queued for human review" in out.stdout
    raw = run_cli(["remember", "The docs site builds with mkdocs", "--kind", "FACT",
                   "-n", "workspace:docs", "--json"], env)
    cand = json.loads(raw.stdout)
    assert (cand["status"], cand["source"], cand["observations"]) == ("PENDING", "EXPLICIT", 2)

    none = run_cli(["recall", "mkdocs", "-n", "workspace:docs"], env)
    assert (none.returncode, none.stdout) == (0, "")  # pending is not recallable
    server.approve(cand["id"])
    hit = run_cli(["recall", "mkdocs", "-n", "workspace:docs", "--kind", "fact"], env)
    assert hit.returncode == 0 and "[fact] workspace:docs  The docs site builds with mkdocs" \
        in hit.stdout
    hits = json.loads(run_cli(["recall", "mkdocs", "-n", "workspace:docs", "--json",
                               "--limit", "3"], env).stdout)
    assert hits[0]["memory"]["content"] == "The docs site builds with mkdocs"
    assert hits[0]["memory"]["approvedBy"] and hits[0]["score"] > 0


def test_errors_are_clear_and_exit_1(server: Server) -> None:
    bad_ns = run_cli(["remember", "x is y", "--kind", "fact", "-n", "docs"], server.env())
    assert bad_ns.returncode == 1
    assert "must start with 'persona:' or 'workspace:'" in bad_ns.stderr
    wrong = run_cli(["recall", "x"], server.env("mvt_wrong"))
    assert wrong.returncode == 1 and "refused MEMVET_TOKEN" in wrong.stderr
    no_token = run_cli(["recall", "x"], {**server.env(), "MEMVET_TOKEN": ""})
    assert no_token.returncode == 1 and "set MEMVET_TOKEN" in no_token.stderr
    ghost = run_cli(["remember", "x", "--kind", "opinion"], server.env())
    assert ghost.returncode == 2 and "invalid choice" in ghost.stderr


def test_server_down_is_exit_1_with_a_hint() -> None:
    env = {**os.environ, **BASE_ENV, "MEMVET_URL": f"http://127.0.0.1:{free_port()}",
           "MEMVET_TOKEN": "mvt_x"}
    out = run_cli(["recall", "anything"], env)
    assert out.returncode == 1
    assert "cannot reach memvet" in out.stderr and "memvet serve" in out.stderr
