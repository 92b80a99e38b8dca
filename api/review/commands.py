"""The forms of `memvet review`: --list, approve, reject, and starting the interactive queue.

Every form first asks the server who the token is (`viewer`) and stops with one line on
stderr unless it is a reviewer or admin token; every expected failure (no server, a refused
token, NOT_FOUND, an invalid transition) is one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys

from memvet.api.client import ClientError
from memvet.api.review.client import ReviewClient
from memvet.api.review.format import table
from memvet.api.review.models import Edit, Viewer

PROG = "memvet review"


def main(args: argparse.Namespace, client: ReviewClient | None = None) -> int:
    """Run the form `args` asks for; the exit status."""
    try:
        return asyncio.run(_main(args, client or ReviewClient()))
    except ClientError as err:
        return fail(describe(err))
    except KeyboardInterrupt:
        return 130


def fail(message: str) -> int:
    """One line on stderr, exit status 1."""
    print(f"{PROG}: {message}", file=sys.stderr)
    return 1


def describe(err: ClientError) -> str:
    """The error's message, with its code when the message does not already say it."""
    message = " ".join(str(err).split()) or type(err).__name__
    code = str(getattr(err, "code", "") or "")
    if code and code not in ("CLIENT_ERROR", "UNAVAILABLE", "UNAUTHENTICATED", "ERROR") \
            and code not in message:
        return f"{message} ({code})"
    return message


def refusal(viewer: Viewer) -> str:
    """Why this token may not review."""
    return (f"MEMVET_TOKEN is an {viewer.role} token ({viewer.name!r}); reviewing needs a "
            "reviewer or admin token (`memvet token create --role reviewer`)")


async def _main(args: argparse.Namespace, client: ReviewClient) -> int:
    try:
        return await _run(args, client)
    finally:
        await client.aclose()


async def _run(args: argparse.Namespace, client: ReviewClient) -> int:
    viewer = await client.viewer()
    if not viewer.can_review:
        return fail(refusal(viewer))
    if args.review_action == "approve":
        return await approve(client, args)
    if args.review_action == "reject":
        return await reject(client, args)
    if args.list:
        return await list_pending(client, args)
    return await interactive(client, args, viewer)


async def list_pending(client: ReviewClient, args: argparse.Namespace) -> int:
    """`--list`: the pending candidates as a table, or as JSON with `--json`."""
    page = await client.pending(namespace=args.filter_namespace, kind=args.filter_kind)
    if args.json:
        print(json.dumps([c.as_json() for c in page.candidates], indent=2,
                         ensure_ascii=False))
        return 0
    if not page.candidates:
        print("no pending candidates", file=sys.stderr)
        return 0
    # Clipped to a terminal's width; whole when piped, so scripts get every word.
    width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
    print(table(page.candidates, width=width))
    return 0


async def approve(client: ReviewClient, args: argparse.Namespace) -> int:
    """`approve ID`: approve, after the edits given, retiring `--supersede`."""
    edit = Edit(content=args.content, kind=args.edit_kind, namespace=args.edit_namespace)
    memory = await client.approve(args.id, edit, supersede=args.supersede)
    retired = f"; memory {args.supersede} retired" if args.supersede else ""
    print(f"approved {args.id} as memory {memory.id} [{memory.kind}] {memory.namespace}: "
          f"{' '.join(memory.content.split())}{retired}")
    return 0


async def reject(client: ReviewClient, args: argparse.Namespace) -> int:
    """`reject ID`: reject, with the reason if given."""
    cand = await client.reject(args.id, args.reason)
    why = f" ({args.reason})" if args.reason else ""
    print(f"rejected {cand.id} [{cand.kind}] {cand.namespace}{why}")
    return 0


async def interactive(client: ReviewClient, args: argparse.Namespace, viewer: Viewer) -> int:
    """The Textual queue, in this terminal."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return fail("the interactive queue needs a terminal; in scripts use --list, "
                    "approve ID or reject ID")
    # Deferred: Textual is only for the interactive form.
    from memvet.api.review.tui import ReviewApp

    app = ReviewApp(client, viewer=viewer, namespace=args.filter_namespace,
                    kind=args.filter_kind)
    await app.run_async()
    return int(app.return_code or 0)
