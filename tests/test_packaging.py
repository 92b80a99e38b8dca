"""One `memvet` package: the top-level folders install as `memvet.*` and nothing else.

A user's repo with an `api/` folder, or another distribution called `graph`, must not shadow
or overwrite memvet: so no source file imports a top-level name of ours, every package folder
is listed under pyproject's `packages`, and outside the source tree only `memvet.*` imports.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("api", "graph", "memory", "embeddings", "extraction")


def test_every_package_folder_is_listed_and_mapped() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {f"memvet.{f}": f for f in FOLDERS}
    listed = set(config["packages"])
    found = {
        "memvet." + ".".join(init.parent.relative_to(ROOT).parts)
        for folder in FOLDERS for init in (ROOT / folder).rglob("__init__.py")
    }
    assert found <= listed, f"add to pyproject's packages: {sorted(found - listed)}"
    data_only = {p for p in listed - found if (ROOT / p.removeprefix("memvet.").replace(
        ".", "/")).is_dir()}
    assert listed - found == data_only, f"listed but missing: {sorted(listed - found - data_only)}"


def test_sources_import_only_memvet_names() -> None:
    offenders = []
    for folder in (*FOLDERS, "tests", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for node in ast.walk(tree):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for name in names:
                    if name.split(".")[0] in FOLDERS:
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    assert not offenders, "import these as memvet.<package>: " + ", ".join(offenders)


def test_outside_the_source_tree_only_memvet_imports(tmp_path: Path) -> None:
    script = (
        "import importlib, sys\n"
        "import memvet.memory, memvet.api.cli, memvet.graph, memvet.embeddings, "
        "memvet.extraction\n"
        f"for name in {FOLDERS!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ModuleNotFoundError:\n"
        "        continue\n"
        "    sys.exit(f'{name} is importable as a top-level package')\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
