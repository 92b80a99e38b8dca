"""`memvet install|uninstall claude-code`: merge, idempotence, dry-run diff, exact removal."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

from memvet.api import install
from tests.agents.support import BASE_ENV, MEMVET, Server, make_repo

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
    outer = {k: v for k, v in os.environ.items() if k != "CLAUDE_CONFIG_DIR"}
    return {**outer, **BASE_ENV, "HOME": str(home), "MEMVET_URL": "http://127.0.0.1:9911",
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
    assert "MEMVET_URL=http://127.0.0.1:9911 " in diff

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
        assert ours["command"].startswith("MEMVET_URL=http://127.0.0.1:9911 ")
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


def test_installed_hooks_reach_the_server_from_a_shell_without_memvet_url(
        server: Server, tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "reach")
    server.add_approved("The reach service logs in UTC", "fact", "workspace:reach")
    env = {k: v for k, v in server.env().items() if k != "MEMVET_URL"}
    env["HOME"] = str(tmp_path)
    install = subprocess.run([MEMVET, "install", "claude-code", "--url", server.url], cwd=repo,
                             env=env, capture_output=True, text=True, timeout=60, check=False)
    assert install.returncode == 0, install.stderr
    hint = install.stderr
    assert "MEMVET_TOKEN" in hint and server.url in hint and "export MEMVET_URL" not in hint
    hooks = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]
    [command] = [h["command"] for g in hooks["SessionStart"] for h in g["hooks"]]
    log = tmp_path / "hook.log"
    payload = {"hook_event_name": "SessionStart", "session_id": "s", "source": "startup",
               "cwd": str(repo)}
    # As Claude Code runs it: the command line through a shell, the event on stdin.
    run = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), text=True,
                         env={**env, "MEMVET_HOOK_LOG": str(log)}, capture_output=True,
                         timeout=30, check=False)
    assert run.returncode == 0 and not log.exists(), log.read_text() if log.exists() else ""
    assert "The reach service logs in UTC" in run.stdout


def test_user_install_honours_claude_config_dir(tmp_path: Path) -> None:
    home, config = tmp_path / "home", tmp_path / "work-claude"
    home.mkdir()
    config.mkdir()
    state = {"numStartups": 3, "mcpServers": {"local": {"type": "stdio", "command": "foo"}}}
    (config / ".claude.json").write_text(json.dumps(state))
    env = {**_env(home), "CLAUDE_CONFIG_DIR": str(config)}

    def memvet(*args: str) -> None:
        out = subprocess.run([MEMVET, *args], cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=60, check=False)
        assert out.returncode == 0, out.stderr

    memvet("install", "claude-code", "--user")
    assert set(json.loads((config / ".claude.json").read_text())["mcpServers"]) == {
        "local", "memvet"}
    assert set(json.loads((config / "settings.json").read_text())["hooks"]) == {
        "SessionStart", "Stop", "PreCompact"}
    assert sorted(p.name for p in home.iterdir()) == []  # nothing under ~ itself
    memvet("uninstall", "claude-code", "--user")
    assert json.loads((config / ".claude.json").read_text()) == state
    assert not (config / "settings.json").exists()


def test_user_install_targets_the_config_dirs_legacy_state_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / ".config.json").write_text('{"numStartups": 1}')
    where = install.target("user", home=home, environ={})
    assert where.mcp == home / ".claude" / ".config.json"
    assert where.settings == home / ".claude" / "settings.json"
    fresh = tmp_path / "fresh"
    assert install.target("user", home=fresh, environ={}).mcp == fresh / ".claude.json"
    custom = install.target("user", home=fresh, environ={"CLAUDE_CONFIG_DIR": str(tmp_path / "c")})
    assert (custom.settings, custom.mcp) == (tmp_path / "c" / "settings.json",
                                             tmp_path / "c" / ".claude.json")


def test_hook_commands_old_and_new_are_ours_and_an_old_one_is_refreshed_in_place() -> None:
    old = {"type": "command", "command": "/opt/bin/memvet hook claude-code", "timeout": 5}
    quoted = {"type": "command", "command": "MEMVET_URL='http://h:1/a b' memvet hook claude-code"}
    assert install.is_our_hook(old) and install.is_our_hook(quoted)
    assert not install.is_our_hook({"command": "OTHER=1 memvet hook claude-code"})
    assert not install.is_our_hook({"command": "memvet hook claude-code --extra"})
    command = install.hook_command("http://h:1/a b")
    assert shlex.split(command)[0] == "MEMVET_URL=http://h:1/a b"
    settings = {"hooks": {"Stop": [{"matcher": "", "hooks": [old]}]}}
    updated = install.add_hooks(settings, command)
    assert updated["hooks"]["Stop"] == [{"matcher": "", "hooks": [
        {"type": "command", "command": command, "timeout": 5}]}]
    assert install.remove_hooks(updated) == {}
