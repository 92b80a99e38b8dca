"""`memvet install|uninstall claude-code`: merge, idempotence, dry-run diff, exact removal."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from agents_support import BASE_ENV, MEMVET

EXISTING_SETTINGS = {
    "permissions": {"allow": ["Bash(pnpm test:*)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                                                      "command": "./guard.sh"}]}],
    },
}
EXISTING_MCP = {"mcpServers": {"github": {"type": "http",
                                          "url": "https://api.githubcopilot.com/mcp/"}}}


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, **BASE_ENV, "HOME": str(home), "MEMVET_URL": "http://127.0.0.1:9911",
            "MEMVET_TOKEN": "mvt_secret_never_written"}


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".claude").mkdir()
    (repo / "sub").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps(EXISTING_SETTINGS, indent=2))
    (repo / ".mcp.json").write_text(json.dumps(EXISTING_MCP, indent=4) + "\n")
    return repo


def _memvet(args: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MEMVET, *args], cwd=cwd, env=_env(home), capture_output=True,
                          text=True, timeout=60, check=False)


def _run(args: list[str], cwd: Path, home: Path) -> str:
    out = _memvet(args, cwd, home)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _snapshot(*paths: Path) -> dict[str, str | None]:
    return {str(p): p.read_text() if p.exists() else None for p in paths}


def test_project_install_merges_is_idempotent_and_uninstalls_exactly(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    settings, mcp = repo / ".claude" / "settings.json", repo / ".mcp.json"
    before = _snapshot(settings, mcp)

    diff = _run(["install", "claude-code", "--project", "--dry-run"], repo / "sub", tmp_path)
    assert _snapshot(settings, mcp) == before  # a dry run writes nothing
    assert diff.startswith("--- ") and "+++ " in diff and '"SessionStart"' in diff
    assert "+      \"url\": \"http://127.0.0.1:9911/mcp/\"" in diff

    _run(["install", "claude-code", "--project"], repo / "sub", tmp_path)
    data = json.loads(settings.read_text())
    assert data["permissions"] == EXISTING_SETTINGS["permissions"]
    assert data["hooks"]["PreToolUse"] == EXISTING_SETTINGS["hooks"]["PreToolUse"]
    stop = data["hooks"]["Stop"]
    assert stop[0] == EXISTING_SETTINGS["hooks"]["Stop"][0] and len(stop) == 2
    for event in ("SessionStart", "Stop", "PreCompact"):
        [ours] = [h for g in data["hooks"][event] for h in g["hooks"]
                  if h["command"].endswith("memvet hook claude-code")]
        assert ours["type"] == "command" and ours["timeout"] == 5
    servers = json.loads(mcp.read_text())["mcpServers"]
    assert servers["github"] == EXISTING_MCP["mcpServers"]["github"]
    assert servers["memvet"] == {"type": "http", "url": "http://127.0.0.1:9911/mcp/",
                                 "headers": {"Authorization": "Bearer ${MEMVET_TOKEN}"}}
    assert "mvt_secret_never_written" not in settings.read_text() + mcp.read_text()

    installed = _snapshot(settings, mcp)
    _run(["install", "claude-code", "--project"], repo, tmp_path)
    assert _snapshot(settings, mcp) == installed  # idempotent, byte for byte
    assert _run(["install", "claude-code", "--dry-run"], repo, tmp_path) == ""

    undiff = _run(["uninstall", "claude-code", "--project", "--dry-run"], repo, tmp_path)
    assert "-" in undiff and _snapshot(settings, mcp) == installed
    _run(["uninstall", "claude-code", "--project"], repo, tmp_path)
    assert json.loads(settings.read_text()) == EXISTING_SETTINGS
    assert json.loads(mcp.read_text()) == EXISTING_MCP
    _run(["uninstall", "claude-code", "--project"], repo, tmp_path)  # again: nothing to do
    assert json.loads(settings.read_text()) == EXISTING_SETTINGS


def test_fresh_project_install_then_uninstall_leaves_no_files(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    (repo / ".git").mkdir(parents=True)
    _run(["install", "claude-code"], repo, tmp_path)
    assert (repo / ".claude" / "settings.json").is_file() and (repo / ".mcp.json").is_file()
    _run(["uninstall", "claude-code"], repo, tmp_path)
    assert not (repo / ".claude" / "settings.json").exists()
    assert not (repo / ".mcp.json").exists()


def test_user_install_keeps_claude_json_state(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    state = {"numStartups": 12, "projects": {"/x": {"allowedTools": []}},
             "mcpServers": {"local": {"type": "stdio", "command": "foo"}}}
    (home / ".claude.json").write_text(json.dumps(state))
    _run(["install", "claude-code", "--user"], tmp_path, home)
    data = json.loads((home / ".claude.json").read_text())
    assert data["numStartups"] == 12 and data["projects"] == state["projects"]
    assert set(data["mcpServers"]) == {"local", "memvet"}
    hooks = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "Stop", "PreCompact"}
    _run(["uninstall", "claude-code", "--user"], tmp_path, home)
    assert json.loads((home / ".claude.json").read_text()) == state
    assert not (home / ".claude" / "settings.json").exists()


def test_refuses_broken_json_and_foreign_memvet_entry(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    (repo / ".claude").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / ".claude" / "settings.json").write_text("{ not json")
    broken = _memvet(["install", "claude-code"], repo, tmp_path)
    assert broken.returncode == 1 and "is not valid JSON" in broken.stderr
    assert (repo / ".claude" / "settings.json").read_text() == "{ not json"
    (repo / ".claude" / "settings.json").unlink()
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"memvet": {
        "type": "stdio", "command": "my-own-memvet"}}}))
    foreign = _memvet(["install", "claude-code"], repo, tmp_path)
    assert foreign.returncode == 1 and "did not write" in foreign.stderr
    assert not (repo / ".claude" / "settings.json").exists()  # all or nothing
