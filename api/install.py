"""`memvet install|uninstall claude-code`: put memvet's hooks and MCP entry into Claude Code's
settings, merged with what is there, idempotently, and take out exactly that again.

    --project   hooks → <repo>/.claude/settings.json   MCP → <repo>/.mcp.json
    --user      hooks → ~/.claude/settings.json        MCP → ~/.claude.json (mcpServers)
                with CLAUDE_CONFIG_DIR set, both live in that folder, as Claude Code keeps them

Our entries are recognised by shape, not by a marker key (Claude Code validates its settings):
a hook whose command runs `memvet hook claude-code` (after `MEMVET_URL=<url>`), and the
`memvet` MCP server entry whose Authorization header reads `${MEMVET_TOKEN}` (the token itself
is never written to disk).

The server's URL goes into the hook command itself (`MEMVET_URL=<url> memvet hook claude-code`):
Claude Code runs a hook command through a shell, so the assignment reaches the hook whatever
environment Claude Code was started from. The settings' `env` block would be the other place,
but it is not applied to hooks in every mode (the IDE extensions' stream-json mode skips it),
and a user's own `env.MEMVET_URL` could not be told apart from ours on uninstall.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HOOK_EVENTS = ("SessionStart", "Stop", "PreCompact")
HOOK_ARGS = ("hook", "claude-code")
URL_VARIABLE = "MEMVET_URL"
_ASSIGNMENT = re.compile(r"MEMVET_[A-Z_]+=.*", re.DOTALL)
HOOK_TIMEOUT_S = 5
SERVER_NAME = "memvet"
TOKEN_HEADER = "Bearer ${MEMVET_TOKEN}"


class InstallError(Exception):
    """A settings file is not something we can safely edit; nothing was written."""


@dataclass(frozen=True)
class Target:
    settings: Path  # where the hooks go
    mcp: Path  # where the MCP server entry goes
    mcp_is_user_state: bool  # ~/.claude.json is Claude Code's own state: never delete it


def project_root(start: Path) -> Path:
    """The git repository's root above `start`, or `start` itself."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def target(scope: str, *, cwd: Path | None = None, home: Path | None = None,
           environ: Mapping[str, str] | None = None) -> Target:
    """Where the entries go. For `user`: Claude Code's config folder (CLAUDE_CONFIG_DIR, else
    ~/.claude) holds settings.json; its state file is `<folder>/.config.json` where that old
    name exists, else `.claude.json` in CLAUDE_CONFIG_DIR (or in the home folder)."""
    if scope == "user":
        home = home or Path.home()
        configured = (os.environ if environ is None else environ).get("CLAUDE_CONFIG_DIR")
        custom = Path(configured).expanduser() if configured else None
        folder = custom or home / ".claude"
        state = folder / ".config.json"
        if not state.is_file():
            state = (custom or home) / ".claude.json"
        return Target(folder / "settings.json", state, True)
    root = project_root(cwd or Path.cwd())
    return Target(root / ".claude" / "settings.json", root / ".mcp.json", False)


def hook_command(url: str | None = None) -> str:
    """`MEMVET_URL=<url> memvet hook claude-code`, with memvet's full path when it is not the
    one on PATH. The URL is quoted as a value, so the shell still reads an assignment."""
    exe = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    on_path = shutil.which("memvet")
    program = "memvet"
    if exe is not None and exe.name == "memvet" and (
            on_path is None or Path(on_path).resolve() != exe):
        program = str(exe)
    command = shlex.join([program, *HOOK_ARGS])
    if url is None:
        return command
    return f"{URL_VARIABLE}={shlex.quote(url.rstrip('/'))} {command}"


def is_our_hook(hook: Any) -> bool:
    """A command hook that runs `memvet hook claude-code`, after MEMVET_* assignments or not."""
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    try:
        words = shlex.split(hook["command"])
    except ValueError:
        return False
    while words and _ASSIGNMENT.fullmatch(words[0]):
        words = words[1:]
    return (len(words) == 3 and Path(words[0]).name == "memvet"
            and tuple(words[1:]) == HOOK_ARGS)


def mcp_entry(url: str) -> dict[str, Any]:
    return {"type": "http", "url": f"{url.rstrip('/')}/mcp/",
            "headers": {"Authorization": TOKEN_HEADER}}


def is_our_server(entry: Any) -> bool:
    return (isinstance(entry, dict) and entry.get("type") == "http"
            and (entry.get("headers") or {}).get("Authorization") == TOKEN_HEADER
            and str(entry.get("url", "")).rstrip("/").endswith("/mcp"))


# ---------------------------------------------------------------------- pure edits
def _copy(data: dict[str, Any]) -> dict[str, Any]:
    """A deep copy that is plain JSON again (the edits never touch the caller's dict)."""
    copied: dict[str, Any] = json.loads(json.dumps(data))
    return copied


def add_hooks(settings: dict[str, Any], command: str) -> dict[str, Any]:
    out = _copy(settings)
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError("'hooks' in the settings is not an object")
    for event in HOOK_EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InstallError(f"'hooks.{event}' in the settings is not a list")
        ours = [h for g in groups if isinstance(g, dict)
                for h in g.get("hooks") or [] if is_our_hook(h)]
        wanted = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}
        if ours:
            for hook in ours:  # keep the place, refresh the command
                hook.clear()
                hook.update(wanted)
        else:
            groups.append({"hooks": [wanted]})
    return out


def remove_hooks(settings: dict[str, Any]) -> dict[str, Any]:
    out = _copy(settings)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    removed_any = False
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        if not any(is_our_hook(h) for g in groups if isinstance(g, dict)
                   for h in (g.get("hooks") or [])):
            continue
        removed_any = True
        kept = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list) or not any(is_our_hook(h) for h in inner):
                kept.append(group)
                continue
            rest = [h for h in inner if not is_our_hook(h)]
            if rest:
                kept.append({**group, "hooks": rest})
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if removed_any and not hooks:
        del out["hooks"]
    return out


def add_server(config: dict[str, Any], url: str) -> dict[str, Any]:
    out = _copy(config)
    servers = out.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InstallError("'mcpServers' is not an object")
    existing = servers.get(SERVER_NAME)
    if existing is not None and not is_our_server(existing):
        raise InstallError(
            f"an MCP server named {SERVER_NAME!r} that memvet did not write is already "
            "configured; remove it first")
    servers[SERVER_NAME] = mcp_entry(url)
    return out


def remove_server(config: dict[str, Any]) -> dict[str, Any]:
    out = _copy(config)
    servers = out.get("mcpServers")
    if isinstance(servers, dict) and is_our_server(servers.get(SERVER_NAME)):
        del servers[SERVER_NAME]
        if not servers:
            del out["mcpServers"]
    return out


# ---------------------------------------------------------------------- files
def load(path: Path) -> dict[str, Any] | None:
    """The JSON object in `path`, or None when there is no file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as err:
        raise InstallError(f"{path} is not valid JSON ({err}); fix it first") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} does not hold a JSON object")
    return data


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Change:
    path: Path
    before: str | None  # None: the file does not exist
    after: str | None  # None: delete the file

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=str(self.path) if self.before is not None else "/dev/null",
            tofile=str(self.path) if self.after is not None else "/dev/null",
        )
        return "".join(lines)


def plan(path: Path, edit: Callable[[dict[str, Any]], dict[str, Any]], *,
         delete_if_empty: bool) -> Change:
    current = load(path)
    before = None if current is None else path.read_text(encoding="utf-8")
    updated = edit(current or {})
    if updated == (current or {}):
        return Change(path, before, before)
    after: str | None = render(updated)
    if not updated and delete_if_empty:
        after = None
    return Change(path, before, after)


def apply(change: Change) -> None:
    if not change.changed:
        return
    if change.after is None:
        change.path.unlink(missing_ok=True)
        return
    change.path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{change.path.name}.", dir=change.path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(change.after)
        if change.path.exists():
            os.chmod(tmp, change.path.stat().st_mode & 0o777)
        os.replace(tmp, change.path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def install_changes(where: Target, *, url: str, command: str | None = None) -> list[Change]:
    cmd = command or hook_command(url)
    return [plan(where.settings, lambda s: add_hooks(s, cmd), delete_if_empty=True),
            plan(where.mcp, lambda c: add_server(c, url), delete_if_empty=True)]


def uninstall_changes(where: Target) -> list[Change]:
    return [plan(where.settings, remove_hooks, delete_if_empty=True),
            plan(where.mcp, remove_server, delete_if_empty=not where.mcp_is_user_state)]
