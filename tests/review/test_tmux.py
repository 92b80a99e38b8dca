"""The real `memvet review` in a real terminal (tmux): it shows a candidate, `a` approves it."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

from tests.graph.support import Server
from tests.review.support import candidate, remember, space, wait_for

MEMVET = Path(sys.executable).with_name("memvet")


class Tmux:
    """One tmux server of our own (its own socket), so nobody else's sessions are touched."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket
        self.exe = shutil.which("tmux") or "tmux"  # `make test` installs it (system-deps)

    def __call__(self, *args: str) -> str:
        done = subprocess.run([self.exe, "-S", str(self.socket), *args], capture_output=True,
                              text=True, timeout=30, check=True)
        return done.stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "review")


@contextlib.contextmanager
def tmux(tmp: Path) -> Iterator[Tmux]:
    t = Tmux(tmp / f"tmux-{uuid.uuid4().hex[:6]}.sock")
    try:
        yield t
    finally:
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            t("kill-server")


def test_memvet_review_in_a_terminal_approves_with_a(server: Server, tmp_path: Path) -> None:
    ns = space("tmux")
    cand = remember(server, "Approved from a real terminal", ns)
    env = {"MEMVET_URL": server.url, "MEMVET_TOKEN": server.tokens["reviewer"],
           "TERM": "xterm-256color", "LANG": "C.UTF-8"}
    with tmux(tmp_path) as t:
        t("new-session", "-d", "-x", "120", "-y", "40", "-s", "review",
          *(arg for key, value in env.items() for arg in ("-e", f"{key}={value}")),
          f"{MEMVET} review --namespace {ns}; echo memvet-exited-$?; sleep 600")
        wait_for(lambda: "Approved from a real terminal" in t.screen(),
                 "the candidate on screen", timeout=90)
        wait_for(lambda: "● live" in t.screen(), "the live status", timeout=60)
        t("send-keys", "-t", "review", "a")
        wait_for(lambda: candidate(server, cand["id"])["status"] == "APPROVED",
                 "the approval on the server", timeout=60)
        t("send-keys", "-t", "review", "q")
        wait_for(lambda: "memvet-exited-0" in t.screen(), "memvet to quit cleanly",
                 timeout=60)
