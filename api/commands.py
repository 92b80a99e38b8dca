"""Handlers of the data-dir commands (serve, token, export, import, archive, reindex, ingest,
extract, schema). Each builds Settings from flags + environment and uses MemoryService."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memvet.api.settings import Settings
from memvet.memory.access import Principal
from memvet.memory.errors import DataDirLocked, MemvetError

log = logging.getLogger("memvet")
OPERATOR = Principal.system("cli")


def _settings(args: argparse.Namespace, **extra: Any) -> Settings:
    overrides: dict[str, Any] = {k: v for k, v in extra.items() if v is not None}
    if getattr(args, "data_dir", None):
        overrides["data_dir"] = Path(args.data_dir)
    return Settings(**overrides)


def _fail(message: str, code: int = 1) -> int:
    print(f"memvet: {message}", file=sys.stderr)
    return code


def _guard(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Expected failures print one clear line; anything else is logged in full."""

    def run(args: argparse.Namespace) -> int:
        logging.basicConfig(level=os.environ.get("MEMVET_LOG_LEVEL", "WARNING"),
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        try:
            return handler(args)
        except MemvetError as exc:
            return _fail(f"{exc.code.lower()}: {exc.message}", 2)
        except KeyboardInterrupt:
            return 130

    run.__doc__ = handler.__doc__
    return run


@contextmanager
def _runtime(settings: Settings, *, index: bool, extractor: bool = False,
             required_index: bool = False) -> Iterator[Any]:
    """Open the store; the recall index too when this process may own it.

    The embedded index belongs to the running server. When one holds the data dir, commands
    that only need the database go ahead, and the server applies index changes itself."""
    from memvet.api.wiring import build_runtime

    runtime = None
    if index:
        try:
            runtime = build_runtime(settings, with_index=True, with_extractor=extractor)
        except DataDirLocked:
            if required_index:
                raise
            print("memvet: a server is running on this data dir; it will index the changes",
                  file=sys.stderr)
    if runtime is None:
        runtime = build_runtime(settings, with_index=False, with_extractor=extractor, lock=False)
    try:
        if runtime.service.index is not None:
            runtime.service.start()
        yield runtime
    finally:
        runtime.close()


@_guard
def cmd_serve(args: argparse.Namespace) -> int:
    """Run the server: GraphQL at /graphql, MCP at /mcp, the dashboard at /."""
    import uvicorn

    from memvet.api.app import create_app
    from memvet.api.wiring import lock_data_dir

    settings = _settings(args, host=args.host, port=args.port)
    logging.getLogger().setLevel(settings.log_level)
    if args.workers > 1:
        if settings.embedded:
            return _fail("several workers need MEMVET_DATABASE_URL (PostgreSQL) and "
                         "MEMVET_CHROMA_URL (a Chroma server)", 2)
        os.environ.update({"MEMVET_DATA_DIR": str(settings.data_dir)})
        uvicorn.run("memvet.api.asgi:app", factory=True, host=settings.host, port=settings.port,
                    workers=args.workers, log_level=settings.log_level.lower())
        return 0
    lock = lock_data_dir(settings)  # refuse early, with a clear message, if one is running
    try:
        app = create_app(settings, lock=False)
        print(f"memvet: serving on {settings.base_url} (data: {settings.data_dir})",
              file=sys.stderr, flush=True)
        uvicorn.run(app, host=settings.host, port=settings.port,
                    log_level=settings.log_level.lower(), ws="websockets-sansio")
    finally:
        if lock is not None:
            lock.release()
    return 0


@_guard
def cmd_token(args: argparse.Namespace) -> int:
    settings = _settings(args)
    with _runtime(settings, index=False) as rt:
        service = rt.service
        if args.token_command == "create":
            info, token = service.create_token(args.role, OPERATOR, namespaces=args.namespace,
                                               name=args.name)
            scope = ", ".join(info.namespaces) if info.namespaces else "all namespaces"
            print(f"created {info.role.value} token {info.name!r} ({info.id}) for {scope}; "
                  "it is shown once:", file=sys.stderr)
            print(token)
        elif args.token_command == "list":
            for t in service.list_tokens(OPERATOR):
                state = "revoked" if t.revoked_at else "active"
                scope = ",".join(t.namespaces) if t.namespaces else "*"
                print(f"{t.id}  {t.role.value:8}  {state:7}  {scope}  {t.name}")
        elif args.token_command == "revoke":
            info = service.revoke_token(args.id, OPERATOR)
            print(f"revoked token {info.name!r} ({info.id})", file=sys.stderr)
    return 0


@_guard
def cmd_export(args: argparse.Namespace) -> int:
    settings = _settings(args)
    with _runtime(settings, index=False) as rt:
        lines = rt.service.export_lines(OPERATOR)
        if args.output and args.output != "-":
            target = Path(args.output)
            tmp = target.with_name(target.name + ".partial")
            count = 0
            with tmp.open("w", encoding="utf-8") as fh:
                for line in lines:
                    fh.write(line + "\n")
                    count += 1
            tmp.replace(target)
            print(f"exported {count} records to {target}", file=sys.stderr)
        else:
            for line in lines:
                sys.stdout.write(line + "\n")
    return 0


@_guard
def cmd_import(args: argparse.Namespace) -> int:
    from memvet.memory.store.transfer import ImportFailed

    settings = _settings(args)
    try:
        if args.file == "-":
            text = sys.stdin.buffer.read()
        else:
            text = Path(args.file).read_bytes()
    except OSError as exc:
        return _fail(f"cannot read {args.file}: {exc.strerror}", 2)
    lines = text.decode("utf-8", errors="replace").splitlines()
    with _runtime(settings, index=True) as rt:
        try:
            report = rt.service.import_lines(lines, OPERATOR)
        except ImportFailed as exc:
            for number, message in exc.errors:
                print(f"{args.file}:{number}: {message}", file=sys.stderr)
            return _fail(f"import refused: {len(exc.errors)} bad line(s); nothing was written")
    counts = ", ".join(f"{n} {k}" for k, n in report.counts.items() if n) or "nothing"
    skipped = f"; {report.skipped} duplicate memories skipped" if report.skipped else ""
    print(f"imported {counts}{skipped}", file=sys.stderr)
    return 0


@_guard
def cmd_archive(args: argparse.Namespace) -> int:
    settings = _settings(args)
    with _runtime(settings, index=False) as rt:
        archived = rt.service.archive_stale(OPERATOR, older_than_days=args.days)
    print(f"archived {len(archived)} pending candidate(s)", file=sys.stderr)
    return 0


@_guard
def cmd_reindex(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    settings = _settings(args)
    with _runtime(settings, index=True, required_index=True) as rt:
        bar = tqdm(total=0, unit="memory", desc="reindex", file=sys.stderr)

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        report = rt.service.reconcile_index(progress)
        bar.close()
    print(f"checked {report.checked} memories: {report.upserted} (re)indexed, "
          f"{report.removed} removed from the index", file=sys.stderr)
    return 0


@_guard
def cmd_ingest(args: argparse.Namespace) -> int:
    from memvet.memory.errors import ValidationError
    from memvet.memory.ports import Message
    from memvet.memory.records import TurnSubmission

    settings = _settings(args)
    raw = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
    try:
        data = json.loads(raw)
        messages = [Message(str(m["role"]), str(m["content"])) for m in data["messages"]]
        sub = TurnSubmission(
            conversation_id=str(data["conversation_id"]), turn_id=str(data["turn_id"]),
            messages=messages, workspace=data.get("workspace"), persona=data.get("persona"),
            trigger="compaction" if args.compaction else str(data.get("trigger", "turn")))
    except (ValueError, KeyError, TypeError) as exc:
        raise ValidationError(f"bad ingest input: {exc}") from exc
    with _runtime(settings, index=True, extractor=True) as rt:
        result = rt.service.submit_turn(sub, OPERATOR)
    for r in result.results:
        c = r.candidate
        print(json.dumps({"id": c.id, "outcome": r.outcome.value, "kind": c.kind.value,
                          "namespace": c.namespace, "content": c.content,
                          "confidence": c.confidence, "status": c.status.value}))
    print(f"turn {result.turn.id}: {len(result.results)} candidate(s)"
          + (" (already ingested)" if result.duplicate else ""), file=sys.stderr)
    return 0


@_guard
def cmd_extract(args: argparse.Namespace) -> int:
    from memvet.extraction.batch import main as batch_main

    return int(batch_main(["--input", args.input, "--extractor", args.extractor]) or 0)


def cmd_schema(args: argparse.Namespace) -> int:
    from memvet.graph.schema import print_sdl

    sys.stdout.write(print_sdl())
    return 0
