"""Client commands against a running server: remember, recall, hook, install, uninstall, mcp.

Registered into `memvet`'s parser by `api.cli`. Imports stay stdlib-only at module level
(the hook must cold-start fast); each handler imports what it needs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

KINDS = ("preference", "fact", "decision", "pattern", "postmortem", "event")


def register(sub: Any) -> None:
    """Add the client commands to `memvet`'s subparsers."""
    p = sub.add_parser("remember", help="propose a memory (a candidate that awaits review)",
                       description="Propose a memory. It is queued for human review and is "
                                   "not recallable until approved. Uses MEMVET_URL and "
                                   "MEMVET_TOKEN.")
    p.add_argument("content", help="the memory, one self-contained statement")
    p.add_argument("--kind", "-k", required=True, type=str.lower, choices=KINDS)
    p.add_argument("--namespace", "-n",
                   help="workspace:<project> or persona:<name> (default: the active persona)")
    p.add_argument("--confidence", type=float, help="0-1 (default 1)")
    p.add_argument("--json", action="store_true", help="print the candidate as JSON")
    p.set_defaults(run=cmd_remember)

    p = sub.add_parser("recall", help="search approved memories",
                       description="Search approved memories (nothing pending is ever "
                                   "returned). Uses MEMVET_URL and MEMVET_TOKEN.")
    p.add_argument("query")
    p.add_argument("--namespace", "-n", action="append", default=[],
                   help="only this namespace (repeatable)")
    p.add_argument("--kind", "-k", action="append", default=[], type=str.lower,
                   choices=KINDS, help="only this kind (repeatable)")
    p.add_argument("--limit", type=int, default=10, help="at most N results (default 10)")
    p.add_argument("--json", action="store_true", help="print the hits as JSON")
    p.set_defaults(run=cmd_recall)

    p = sub.add_parser("hook", help="run an agent hook (reads the event JSON on stdin)")
    p.add_argument("agent", choices=["claude-code"])
    p.set_defaults(run=cmd_hook)

    for name, helptext in (("install", "add memvet's hooks and MCP server to an agent"),
                           ("uninstall", "remove exactly what `memvet install` added")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("agent", choices=["claude-code"])
        scope = p.add_mutually_exclusive_group()
        scope.add_argument("--project", dest="scope", action="store_const", const="project",
                           help="this repository: .claude/settings.json and .mcp.json "
                                "(the default)")
        scope.add_argument("--user", dest="scope", action="store_const", const="user",
                           help="every project: ~/.claude/settings.json and ~/.claude.json "
                                "(in $CLAUDE_CONFIG_DIR when that is set)")
        p.add_argument("--dry-run", action="store_true",
                       help="print the changes as a unified diff and write nothing")
        if name == "install":
            p.add_argument("--url", help="the server's URL, written into the hooks and the "
                                         "MCP entry (default: MEMVET_URL or "
                                         "http://127.0.0.1:8765)")
        p.set_defaults(run=cmd_install if name == "install" else cmd_uninstall, scope="project")

    p = sub.add_parser("mcp", help="serve MCP over stdio, relayed to a running server's /mcp",
                       description="For MCP clients that only speak stdio: relays every "
                                   "message to MEMVET_URL/mcp/ with MEMVET_TOKEN.")
    p.set_defaults(run=cmd_mcp)


def _fail(message: str) -> int:
    print(f"memvet: {message}", file=sys.stderr)
    return 1


def cmd_remember(args: argparse.Namespace) -> int:
    from memvet.api.client import Client, ClientError

    try:
        cand = Client().remember(args.content, args.kind, args.namespace, args.confidence)
    except ClientError as err:
        return _fail(str(err))
    if args.json:
        print(json.dumps(cand, indent=2, ensure_ascii=False))
        return 0
    status = str(cand.get("status", "")).lower()
    seen = cand.get("observations")
    again = (f" (seen {seen} times: it merged with an equivalent one)"
             if isinstance(seen, int) and seen > 1 else "")
    note = (f"queued for human review{again}; it is not recallable until approved"
            if status == "pending" else f"status {status}{again}")
    print(f"candidate {cand.get('id')} [{str(cand.get('kind', '')).lower()}] "
          f"{cand.get('namespace')}: {note}")
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    from memvet.api.client import Client, ClientError

    try:
        hits = Client().recall(args.query, namespaces=args.namespace or None,
                               kinds=args.kind or None, limit=args.limit)
    except ClientError as err:
        return _fail(str(err))
    if args.json:
        print(json.dumps(hits, indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("no approved memories match", file=sys.stderr)
        return 0
    for hit in hits:
        mem = hit.get("memory") or {}
        content = " ".join(str(mem.get("content", "")).split())
        print(f"{float(hit.get('score') or 0):.2f}  [{str(mem.get('kind', '')).lower()}] "
              f"{mem.get('namespace')}  {content}")
    return 0


def cmd_hook(args: argparse.Namespace) -> int:
    from memvet.api.hooks import claude_code

    return claude_code.main(watchdog=True)


def _changes(args: argparse.Namespace, install: bool) -> int:
    from memvet.api import install as inst

    url = ""
    try:
        where = inst.target(args.scope)
        if install:
            from memvet.api.client import DEFAULT_URL

            url = (args.url or os.environ.get("MEMVET_URL") or DEFAULT_URL).rstrip("/")
            changes = inst.install_changes(where, url=url)
        else:
            changes = inst.uninstall_changes(where)
    except inst.InstallError as err:
        return _fail(str(err))
    changed = [c for c in changes if c.changed]
    if args.dry_run:
        for change in changed:
            sys.stdout.write(change.diff())
        if not changed:
            print("nothing to change", file=sys.stderr)
        return 0
    for change in changed:
        inst.apply(change)
        verb = "removed" if change.after is None else "updated"
        print(f"{verb} {change.path}")
    if not changed:
        print("already " + ("installed" if install else "uninstalled") + "; nothing changed")
    if install:
        # The URL is in the hook commands and the MCP entry; the token is never written, so
        # it is the one variable Claude Code's environment still needs.
        where_from = ("it is set in this shell; keep it set wherever you start Claude Code"
                      if os.environ.get("MEMVET_TOKEN") else
                      "export MEMVET_TOKEN=<a token from `memvet token create --role agent`> "
                      "in the shell that starts Claude Code")
        print(f"next: Claude Code needs MEMVET_TOKEN ({where_from}); the server's URL, "
              f"{url}, is written into the settings", file=sys.stderr)
    return 0


def cmd_install(args: argparse.Namespace) -> int:
    return _changes(args, install=True)


def cmd_uninstall(args: argparse.Namespace) -> int:
    return _changes(args, install=False)


def cmd_mcp(args: argparse.Namespace) -> int:
    from memvet.api.mcp_proxy import run

    return run()
