"""`memvet review`: the candidate queue from a terminal, for reviewers and admins.

    memvet review [--namespace NS] [--kind K]        the interactive queue (Textual)
    memvet review --list [--namespace NS] [--kind K] [--json]
    memvet review approve ID [--content T] [--kind K] [--namespace NS] [--supersede MEMORY_ID]
    memvet review reject ID [--reason TEXT]

Registered into `memvet`'s parser by `api.cli`. Like the hook's commands, this module imports
only the standard library: `memvet hook` builds the same parser on every agent turn, so
httpx, websockets and Textual load only when `memvet review` runs (api/review/commands.py).
"""

from __future__ import annotations

import argparse
from typing import Any

from memvet.api.client_cli import KINDS

DESCRIPTION = ("Review pending candidates: an interactive queue in the terminal, or the "
               "scriptable --list / approve / reject. Uses MEMVET_URL (default "
               "http://127.0.0.1:8765) and MEMVET_TOKEN, which must be a reviewer or admin "
               "token.")


# argparse would print `ACTION ...` as if an action were required; it is not.
USAGE = """
  memvet review [--namespace NS] [--kind K]
  memvet review --list [--namespace NS] [--kind K] [--json]
  memvet review approve ID [--content TEXT] [--kind K] [--namespace NS] [--supersede MEMORY_ID]
  memvet review reject ID [--reason TEXT]"""


def register(sub: Any) -> None:
    """Add `review` and its actions to `memvet`'s subparsers."""
    p = sub.add_parser("review", help="review the candidate queue in the terminal",
                       description=DESCRIPTION, usage=USAGE)
    p.add_argument("--list", action="store_true",
                   help="print the pending candidates instead of opening the queue")
    p.add_argument("--namespace", "-n", dest="filter_namespace", metavar="NS",
                   help="only this namespace")
    p.add_argument("--kind", "-k", dest="filter_kind", type=str.lower, choices=KINDS,
                   help="only this kind")
    p.add_argument("--json", action="store_true",
                   help="with --list: a JSON array of {id, content, kind, namespace, source, "
                        "confidence, observations, createdAt}")
    actions = p.add_subparsers(dest="review_action", metavar="ACTION")

    a = actions.add_parser("approve", help="approve a candidate (optionally corrected first)",
                           description="Approve a pending candidate. Edits are applied "
                                       "first: what is approved is what you passed.")
    a.add_argument("id", help="the candidate's id")
    a.add_argument("--content", help="corrected text")
    a.add_argument("--kind", dest="edit_kind", type=str.lower, choices=KINDS,
                   help="corrected kind")
    a.add_argument("--namespace", dest="edit_namespace", metavar="NS",
                   help="corrected namespace")
    a.add_argument("--supersede", metavar="MEMORY_ID",
                   help="an approved memory this one replaces (it is deleted)")

    r = actions.add_parser("reject", help="reject a candidate (equivalents are not asked "
                                          "again)")
    r.add_argument("id", help="the candidate's id")
    r.add_argument("--reason", help="why (kept in the audit trail)")

    p.set_defaults(run=run, review_parser=p)


def run(args: argparse.Namespace) -> int:
    """Run `memvet review` with parsed arguments; the exit status."""
    if args.review_action and (args.list or args.json):
        args.review_parser.error("--list and --json go without approve/reject")
    if args.json and not args.list:
        args.review_parser.error("--json goes with --list")
    # Deferred: it imports httpx and websockets, which the hook's start-up must not pay.
    from memvet.api.review import commands

    return commands.main(args)
