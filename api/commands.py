"""Handlers of the data-dir commands (serve, token, export, import, archive, reindex, ingest,
extract, schema, prepare-model). Each builds Settings from flags + environment and uses
MemoryService."""

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
    from memvet.api.wiring import check_extractor, lock_data_dir

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
        check_extractor(settings)  # an unusable model file stops here, in one clear line
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


class _Progress:
    """A tqdm bar with its rate on a terminal, quiet when stderr is piped; called with
    (done, total) as a ProgressCallback."""

    def __init__(self, desc: str, unit: str) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=0, desc=desc, unit=unit, file=sys.stderr, disable=None,
                        dynamic_ncols=True, smoothing=0.1)

    def __call__(self, done: int, total: int) -> None:
        if self.bar.total != total:
            self.bar.total = total
            self.bar.refresh()
        if done > self.bar.n:
            self.bar.update(done - self.bar.n)

    def close(self) -> None:
        self.bar.close()


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
        bar = _Progress("import", "memory")
        try:
            report = rt.service.import_lines(lines, OPERATOR, progress=bar)
        except ImportFailed as exc:
            bar.close()
            for number, message in exc.errors:
                print(f"{args.file}:{number}: {message}", file=sys.stderr)
            return _fail(f"import refused: {len(exc.errors)} bad line(s); nothing was written")
        bar.close()
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
    """Reconcile the recall index with the database; to switch embedding models, build the
    configured model's collections beside the serving ones, then switch in one step."""
    import signal

    from memvet.api import wiring
    from memvet.memory.store.engine import make_engine
    from memvet.memory.store.migrate import upgrade

    settings = _settings(args)
    lock = wiring.lock_data_dir(settings)  # embedded: no server may hold the index meanwhile
    # `kill` stops it as cleanly as Ctrl-C: what reached the new collections stays there
    previous = signal.signal(signal.SIGTERM, _interrupt)
    client = None
    try:
        engine = make_engine(settings.db_url)
        try:
            upgrade(engine)
            client = wiring.make_client(settings)
            serving = wiring.serving_model(settings, engine, client)
        finally:
            engine.dispose()
        if serving is None:
            return _reindex_in_place(settings, client)
        return _switch_model(settings, client, serving.model_id)
    finally:
        if client is not None:
            client.close()
        signal.signal(signal.SIGTERM, previous)
        if lock is not None:
            lock.release()


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _reindex_in_place(settings: Settings, client: Any) -> int:
    from memvet.api import wiring
    from memvet.embeddings.chroma import drop_other_models

    rt = wiring.build_runtime(settings, with_index=True, lock=False)
    try:
        service = rt.service
        bar = _Progress("reindex", "memory")
        try:
            report = service.reconcile_index(bar)
        finally:
            bar.close()
        model = service.index_model()
        model_id = model.model_id if model is not None else wiring.configured_model_id(settings)
        _embed_candidates(service, getattr(service.index, "vectors", None))
        dropped = drop_other_models(client, model_id)  # a switch abandoned half-way, say
        pruned = service.prune_vectors(model_id)
    finally:
        rt.close()
    print(f"checked {report.checked} memories: {report.upserted} (re)indexed, "
          f"{report.removed} removed from the index"
          + (f"; dropped {dropped} collection(s) of other models" if dropped else "")
          + (f"; pruned {pruned} stored vector(s)" if pruned else ""), file=sys.stderr)
    return 0


def _switch_model(settings: Settings, client: Any, serving: str) -> int:
    from memvet.api import wiring
    from memvet.embeddings.chroma import drop_other_models

    rt = wiring.build_runtime(settings, with_index=False, lock=False)
    target = None
    try:
        service = rt.service
        embedder = wiring.make_embedder(settings)
        shared = wiring.make_vectors(embedder, service.engine)
        target = wiring.make_index(settings, shared, client)
        model = wiring.model_record(embedder, settings)
        bar = _Progress(f"reindex {model.model_id}", "memory")
        try:
            print(f"memvet: building the recall index for {model.model_id} beside the one of "
                  f"{serving}, which serves until this completes", file=sys.stderr, flush=True)
            report = service.build_index(target, model, bar)
        except KeyboardInterrupt:
            bar.close()
            print(f"memvet: interrupted; recall keeps serving {serving}. Run `memvet reindex` "
                  "again to carry on where this stopped", file=sys.stderr)
            raise
        bar.close()
        _embed_candidates(service, shared)
        dropped = 0
        if settings.embedded:  # this process holds the data dir: no server reads the old ones
            dropped = drop_other_models(client, model.model_id)
        pruned = service.prune_vectors(model.model_id)
    finally:
        if target is not None:
            target.close()
        rt.close()
    print(f"switched the recall index to {model.model_id}: {report.upserted} memories "
          f"embedded, {report.checked} checked"
          + (f"; dropped {dropped} collection(s) of {serving}" if dropped else
             f"; the collections of {serving} stay for workers still serving them (restart "
             "them; the next `memvet reindex` drops them)")
          + (f"; pruned {pruned} stored vector(s)" if pruned else ""), file=sys.stderr)
    return 0


def _embed_candidates(service: Any, vectors: Any) -> None:
    """Store a vector for every queued candidate's text, so the matcher embeds nothing later."""
    if vectors is None:
        return
    texts = service.candidate_texts()
    if not texts:
        return
    bar = _Progress("candidates", "text")
    bar(0, len(texts))
    done = 0

    def step(n: int) -> None:
        nonlocal done
        done += n
        bar(done, len(texts))

    try:
        vectors.vectors(texts, save=True, progress=step)
        bar(len(texts), len(texts))
    finally:
        bar.close()


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
@_guard
def cmd_extract(args: argparse.Namespace) -> int:
    """Run the extractor over labelled cases: one JSON line per candidate on stdout."""
    from memvet.api.wiring import make_extractor
    from memvet.extraction.batch import run_batch

    overrides = {"extractor": args.extractor} if args.extractor else {}
    settings = _settings(args, **overrides)
    extractor = make_extractor(settings)
    try:
        with open(args.input, encoding="utf-8", errors="replace") as f:
            for row in run_batch(f, extractor):
                sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as err:
        return _fail(f"cannot read {args.input}: {err.strerror}", 2)
    return 0


@_guard
def cmd_train_extractor(args: argparse.Namespace) -> int:
    """Train the learned extractor (extraction/learned/train.py) with the packaged model."""
    from memvet.api.wiring import packaged_embedder
    from memvet.extraction.learned.corpus import CORPUS_DIR
    from memvet.extraction.learned.model import DEFAULT_MODEL_PATH
    from memvet.extraction.learned.train import REPORT_PATH, train

    settings = _settings(args)
    out = Path(args.output) if args.output else DEFAULT_MODEL_PATH
    report = out.with_suffix(".json") if args.output else REPORT_PATH
    train(packaged_embedder(settings), corpus=Path(args.corpus) if args.corpus else CORPUS_DIR,
          out=out, report_path=report, folds=args.folds,
          cache_dir=settings.cache_dir / "extractor",
          progress=lambda line: print(f"train-extractor: {line}", file=sys.stderr, flush=True))
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from memvet.graph.schema import print_sdl

    sys.stdout.write(print_sdl())
    return 0


@_guard
def cmd_prepare_model(args: argparse.Namespace) -> int:
    """Export the packaged model to ONNX where the server looks for it (a Docker build step),
    and check that it loads; a second run finds it and exports nothing."""
    from memvet.embeddings.onnx import OnnxEmbedder, export_onnx

    settings = _settings(args, cache_dir=args.cache_dir)
    folder = settings.cache_dir / "models"  # where api.wiring.make_embedder looks
    before = set(folder.glob("*.onnx"))
    try:
        path = export_onnx(folder)
        OnnxEmbedder(cache_dir=folder).embed(["memvet prepare-model"])
    except Exception as exc:  # the `onnx` exporter or onnxruntime missing, say
        log.debug("prepare-model failed", exc_info=True)
        return _fail(f"cannot prepare the ONNX embedding model in {folder}: {exc}")
    done = "found" if path in before else "exported"
    print(f"{done} the ONNX embedding model: {path}", file=sys.stderr)
    return 0
