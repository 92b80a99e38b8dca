"""Where a hook runs: the workspace (from the git repository at cwd), the persona, the log."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

MARKER = ".memvet"
_NOT_SLUG = re.compile(r"[^a-z0-9_.-]+")


def slugify(name: str) -> str | None:
    """A folder name as a namespace slug: lowercase; other characters become '-'."""
    slug = _NOT_SLUG.sub("-", name.strip().lower()).strip("-./")[:128]
    return slug or None


def read_marker(path: Path) -> str | None:
    """The workspace a `.memvet` file names: its first `workspace=...` line, or plain text."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return None
    plain = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if sep and key.strip().lower() == "workspace":
            value = value.strip().strip("'\"")
            return slugify(value.removeprefix("workspace:"))
        if not sep and plain is None:
            plain = slugify(line.removeprefix("workspace:"))
    return plain


def find_workspace(cwd: str | os.PathLike[str] | None) -> str | None:
    """The workspace slug for `cwd`: a `.memvet` file on the way up to the repository root
    names it; else the repository's top-level folder name; outside a repository, the folder's
    own name (None for the home folder or /). No git process is spawned."""
    if not cwd:
        return None
    start = Path(cwd).expanduser()
    try:
        start = start.resolve()
    except OSError:
        return None
    for folder in (start, *start.parents):
        marker = folder / MARKER
        if marker.is_file():
            named = read_marker(marker)
            if named:
                return named
        if (folder / ".git").exists():  # a directory, or a file in worktrees and submodules
            return slugify(folder.name)
    if start == Path.home() or start.parent == start:
        return None
    return slugify(start.name)


def persona() -> str | None:
    """MEMVET_PERSONA, or None for the server's active persona."""
    value = os.environ.get("MEMVET_PERSONA", "").strip()
    return slugify(value.removeprefix("persona:")) if value else None


def log_path() -> Path:
    configured = os.environ.get("MEMVET_HOOK_LOG")
    if configured:
        return Path(configured).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "memvet" / "hook.log"


def log_line(message: str) -> None:
    """Append one line to the hook log; never raise (a hook must not break the agent)."""
    try:
        path = log_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        line = " ".join(message.split())[:2000]
        with path.open("a", encoding="utf-8") as out:
            out.write(f"{stamp} {line}\n")
    except Exception:  # noqa: BLE001  (nowhere left to report to)
        pass
