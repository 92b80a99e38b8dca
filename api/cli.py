"""The `memvet` command line. Imports stay lazy so client commands (hooks) start fast.

Commands on the data dir: serve, token, export, import, archive, reindex, ingest, extract,
schema, and prepare-model (the cache dir only). Client commands against a running server
(MEMVET_URL, MEMVET_TOKEN): remember, recall, hook, install, mcp (see api/client_cli.py), and
review (api/review/).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _add_data_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", help="where memvet keeps its data (default: MEMVET_DATA_DIR "
                   "or the user's data dir)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memvet",
        description="Long-term memory for AI coding agents, vetted by a human first.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("serve", help="run the server (GraphQL, MCP, dashboard)")
    _add_data_dir(p)
    p.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port to listen on (default 8765)")
    p.add_argument("--workers", type=int, default=1,
                   help="worker processes (needs PostgreSQL and a Chroma server)")

    p = sub.add_parser("token", help="manage API tokens")
    tsub = p.add_subparsers(dest="token_command", metavar="ACTION", required=True)
    tc = tsub.add_parser("create", help="create a token (printed once)")
    _add_data_dir(tc)
    tc.add_argument("--role", required=True, choices=["agent", "reviewer", "admin"])
    tc.add_argument("--namespace", action="extend", nargs="+", default=[], metavar="NS",
                    help="limit the token to these namespaces (`--namespace A B` or repeated)")
    tc.add_argument("--name", help="a label for the token")
    tl = tsub.add_parser("list", help="list tokens (never their secrets)")
    _add_data_dir(tl)
    tr = tsub.add_parser("revoke", help="revoke a token by id")
    _add_data_dir(tr)
    tr.add_argument("id")

    p = sub.add_parser("export", help="export everything as JSON Lines")
    _add_data_dir(p)
    p.add_argument("--output", "-o", help="file to write (default: stdout)")

    p = sub.add_parser("import", help="import JSON Lines (all or nothing)")
    _add_data_dir(p)
    p.add_argument("file", help="JSON Lines file, or - for stdin")

    p = sub.add_parser("archive", help="archive pending candidates untouched for N days")
    _add_data_dir(p)
    p.add_argument("--days", type=int, help="the window (default: the configured one, 30)")

    p = sub.add_parser("reindex", help="reconcile the recall index with the database")
    _add_data_dir(p)

    p = sub.add_parser("ingest", help="submit a conversation turn or compaction from JSON")
    _add_data_dir(p)
    p.add_argument("file", help="JSON file ({conversation_id, turn_id, messages, workspace, "
                   "persona}) or - for stdin")
    p.add_argument("--compaction", action="store_true", help="treat it as a compaction pass")

    p = sub.add_parser("extract", help="run the extractor over labelled cases (JSON Lines)",
                       description="Print one JSON line per candidate ({case_id, content, kind, "
                                   "namespace, confidence}) for cases in the evaluation format. "
                                   "The llm extractor reads MEMVET_LLM_BASE_URL, _MODEL and "
                                   "_API_KEY.")
    p.add_argument("--input", required=True, help="cases in the eval format")
    p.add_argument("--extractor", choices=["learned", "heuristic", "llm"],
                   help="which extractor (default: MEMVET_EXTRACTOR, else learned)")

    p = sub.add_parser("train-extractor",
                       help="train the learned extractor on extraction/corpus (developers)",
                       description="Train the learned extractor on the labelled corpus: "
                                   "cross-validation by domain and by writer, thresholds and "
                                   "calibration from held-out folds, then model.npz and "
                                   "model-report.json beside the extractor's code.")
    p.add_argument("--corpus", help="folder of corpus JSON Lines (default: extraction/corpus)")
    p.add_argument("--output", help="model file to write (default: the shipped model.npz)")
    p.add_argument("--folds", type=int, default=5, help="domain folds (default 5)")

    sub.add_parser("schema", help="print the GraphQL schema (SDL)")

    p = sub.add_parser("prepare-model",
                       help="export the embedding model to ONNX in the cache dir, ahead of "
                            "the first start (a Docker build step)")
    p.add_argument("--cache-dir", help="where (default: MEMVET_CACHE_DIR or the user's cache "
                                       "dir); the server must be given the same")

    try:
        from memvet.api import client_cli, review
    except ImportError:  # the client commands are optional to the data-dir commands
        client_cli = None  # type: ignore[assignment]
    if client_cli is not None:
        client_cli.register(sub)
        review.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if hasattr(args, "run"):  # client commands registered by api.client_cli
        return int(args.run(args) or 0)
    from memvet.api import commands  # data-dir commands; heavier imports live there

    handler = getattr(commands, f"cmd_{args.command.replace('-', '_')}")
    return int(handler(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
