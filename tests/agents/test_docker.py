"""The server image prepares the embedding model at build time: the Dockerfile's step, and the
same command run here into a temporary cache dir, whose ONNX file the server then uses."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from memvet.api.settings import Settings
from memvet.api.wiring import make_embedder
from memvet.embeddings import onnx
from tests.agents.support import BASE_ENV, ROOT

STEP = "memvet prepare-model"


def instructions(text: str) -> list[tuple[str, str]]:
    """The Dockerfile as (INSTRUCTION, arguments), continuation lines joined, comments out."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):  # a comment inside a continued instruction
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        whole = pending + stripped
        pending = ""
        name, _, args = whole.partition(" ")
        out.append((name.upper(), " ".join(args.split())))
    assert not pending, "the Dockerfile ends inside a continued instruction"
    return out


def env_of(steps: list[tuple[str, str]]) -> dict[str, str]:
    env: dict[str, str] = {}
    for name, args in steps:
        if name == "ENV":
            for word in shlex.split(args):
                key, _, value = word.partition("=")
                env[key] = value
    return env


def index_of(steps: list[tuple[str, str]], name: str, contains: str = "") -> int:
    return next(i for i, (n, a) in enumerate(steps) if n == name and contains in a)


def test_the_image_exports_the_model_at_build_time_outside_the_volume() -> None:
    steps = instructions((ROOT / "Dockerfile").read_text())
    prepare = index_of(steps, "RUN", STEP)
    assert steps[prepare][1] == STEP  # no --cache-dir: the server's MEMVET_CACHE_DIR is used
    assert index_of(steps, "RUN", "pip install -c constraints.txt .") < prepare
    assert prepare < index_of(steps, "USER") < index_of(steps, "CMD") == len(steps) - 1
    env = env_of(steps[:prepare])  # set before the step, so the step and the server share it
    cache = PurePosixPath(env["MEMVET_CACHE_DIR"])
    volumes = [PurePosixPath(v) for n, a in steps if n == "VOLUME"
               for v in shlex.split(a.strip("[]").replace(",", " "))]
    assert volumes and PurePosixPath(env["MEMVET_DATA_DIR"]) in volumes
    assert not any(cache == v or v in cache.parents for v in volumes)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_build_step_exports_once_and_the_server_uses_its_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps = instructions((ROOT / "Dockerfile").read_text())
    command = steps[index_of(steps, "RUN", STEP)][1]
    cache = tmp_path / "cache"
    env = {**os.environ, **BASE_ENV, "MEMVET_CACHE_DIR": str(cache),
           "MEMVET_DATA_DIR": str(tmp_path / "data"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}

    def build_step() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["/bin/sh", "-c", command], cwd=tmp_path, env=env, text=True,
                              capture_output=True, timeout=240, check=False)

    first = build_step()
    assert first.returncode == 0, first.stderr
    [model] = (cache / "models").glob("*.onnx")
    assert f"exported the ONNX embedding model: {model}" in first.stderr
    stamp = model.stat().st_mtime_ns
    again = build_step()
    assert again.returncode == 0 and f"found the ONNX embedding model: {model}" in again.stderr
    assert model.stat().st_mtime_ns == stamp

    def no_export(*args: object) -> None:
        raise AssertionError("the model was exported again")

    monkeypatch.setattr(onnx, "_export_fp32", no_export)
    embedder = make_embedder(Settings(cache_dir=cache, data_dir=tmp_path / "data",
                                      embedder="onnx"))
    assert isinstance(embedder, onnx.OnnxEmbedder)  # not the torch fallback
    [vector] = embedder.embed(["the server's first query"])
    assert len(vector) == onnx.DIMENSION and model.stat().st_mtime_ns == stamp
    assert not (tmp_path / "data").exists()  # neither the step nor the embedder made one
