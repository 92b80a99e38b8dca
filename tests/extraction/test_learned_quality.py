"""The learned extractor end to end, with the real packaged model: quality floors on the dev
set (a test set: never tuned on) and on the corpus's held-out domains, both sides of an
exchange, and a model file that loads from an installed package and fails loudly when broken.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from memvet.api.settings import Settings
from memvet.api.wiring import build_runtime, packaged_embedder
from memvet.extraction.learned import LearnedExtractor
from memvet.extraction.learned.corpus import CORPUS_DIR, corpus_files, load_cases
from memvet.extraction.learned.evaluation import Scored, run
from memvet.extraction.learned.model import DEFAULT_MODEL_PATH, ExtractorModelError
from memvet.extraction.learned.train import _holdout
from memvet.memory.kinds import Kind
from memvet.memory.ports import ExtractionContext, Message

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
DEV_SET = SHARED / "eval" / "extraction-dev.jsonl"
SCORER = SHARED / "eval" / "score_extraction.py"
CTX = ExtractionContext(workspace="shop-api", persona="dana", trigger="turn")


@pytest.fixture(scope="module")
def extractor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LearnedExtractor]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("learned"))
    yield LearnedExtractor(packaged_embedder(settings))


def test_dev_set_floor(tmp_path: Path) -> None:
    """`memvet extract` uses the learned extractor by default; the floor is what it scored
    when it was last trained, less a margin (the dev set is never used to tune it)."""
    done = subprocess.run([sys.executable, "-m", "memvet.api.cli", "extract", "--input",
                           str(DEV_SET)], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "MEMVET_EXTRACTOR": "learned"})
    assert done.returncode == 0, done.stderr
    out = tmp_path / "candidates.jsonl"
    out.write_text(done.stdout)
    result = subprocess.run([sys.executable, str(SCORER), str(DEV_SET), str(out),
                             "--min-f1", "0.80", "--min-quiet", "0.95"],
                            capture_output=True, text=True, timeout=120)
    score = json.loads(result.stdout)
    assert result.returncode == 0, score
    assert score["precision"] >= 0.83 and score["ghost_kinds"] == 0, score  # 0.851, P 0.877


def test_held_out_domains_floor(extractor: LearnedExtractor) -> None:
    """Domains never trained or cross-validated on hold the issue's targets for conversations
    the model never saw: F1 and precision at least 0.70, 95 % of quiet excerpts silent (the
    shipped model scored 0.767, 0.780 and 0.957)."""
    held = _holdout(CORPUS_DIR)
    cases = [c for c in load_cases(corpus_files()) if c.domain in held]
    assert len(cases) >= 150 and len({c.domain for c in cases}) >= 4
    scored = Scored()
    for case in cases:
        scored.add(case, run(extractor, case))
    summary = scored.summary()
    assert summary["f1"] >= 0.70 and summary["precision"] >= 0.70, summary
    assert summary["quiet_silence"] >= 0.95, summary


def test_what_the_agent_found_and_the_user_confirmed_is_a_candidate(
        extractor: LearnedExtractor) -> None:
    msgs = [Message("user", "why do the integration tests fail on my machine?"),
            Message("assistant", "They connect to Postgres on port 5433, the docker compose "
                                 "database, not the local one on 5432. Nothing listens on "
                                 "5433 here."),
            Message("user", "yep, that's how it's set up. start it then"),
            Message("assistant", "Started it with `docker compose up -d db`; 31 tests pass.")]
    got = extractor.extract(msgs, CTX)
    assert any("5433" in c.content and c.namespace == "workspace:shop-api" for c in got), got
    assert all("yep" not in c.content.lower() for c in got)


def test_an_answer_that_agrees_and_goes_on_carries_the_finding_it_is_about(
        extractor: LearnedExtractor) -> None:
    """"correct, and it has to stay that way ..." says what "it" is only beside the agent's
    finding: one candidate with both, without the agent's hedge or the user's "correct"."""
    msgs = [Message("user", "why do the invoices show yesterday's date?"),
            Message("assistant", "Looks like the nightly invoice cron job runs in UTC, not in "
                                 "local time."),
            Message("user", "correct, and it has to stay that way because the billing export "
                            "depends on it.")]
    got = extractor.extract(msgs, CTX)
    assert len(got) == 1, got
    assert got[0].content == ("The nightly invoice cron job runs in UTC, not in local time. It "
                              "has to stay that way because the billing export depends on it.")


def test_what_the_user_turned_down_is_not(extractor: LearnedExtractor) -> None:
    msgs = [Message("user", "the checkout test is flaky again"),
            Message("assistant", "It times out waiting for the payment mock. Want me to add a "
                                 "retry loop around the whole checkout suite?"),
            Message("user", "no, leave it. just rerun it for now"),
            Message("assistant", "Rerun: 48 passed.")]
    assert extractor.extract(msgs, CTX) == []


def test_a_preference_about_the_person_goes_to_the_persona(
        extractor: LearnedExtractor) -> None:
    msgs = [Message("user", "stop adding a summary of every change at the end of your answers. "
                            "I read the diff anyway, keep answers short"),
            Message("assistant", "Understood: short answers, no summary.")]
    got = extractor.extract(msgs, CTX)
    assert [(c.kind, c.namespace) for c in got] == [(Kind.PREFERENCE, "persona:dana")], got
    assert 0.0 < got[0].confidence <= 1.0


def test_a_broken_model_file_stops_the_server_at_start(tmp_path: Path) -> None:
    broken = tmp_path / "model.npz"
    broken.write_bytes(DEFAULT_MODEL_PATH.read_bytes()[:1000])
    settings = Settings(data_dir=tmp_path / "data", extractor_model=broken)
    with pytest.raises(ExtractorModelError, match="cannot be read"):
        build_runtime(settings, with_index=False, lock=False)
    done = subprocess.run([sys.executable, "-m", "memvet.api.cli", "serve", "--port", "1"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "MEMVET_DATA_DIR": str(tmp_path / "data"),
                               "MEMVET_EXTRACTOR_MODEL": str(broken)})
    assert done.returncode == 2
    assert "configuration" in done.stderr and str(broken) in done.stderr
    assert "Traceback" not in done.stderr


def test_the_model_loads_from_an_installed_package_in_a_clean_venv(tmp_path: Path) -> None:
    """A wheel built from the repo, installed (without the editable install) into a new venv
    that borrows only the dependencies: the model file ships inside the package."""
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(wheels), str(ROOT)], check=True, timeout=600,
                   capture_output=True)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; "
                           "print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    deps = sysconfig.get_paths()["purelib"]  # the dependencies only: .pth files in it are not
    Path(site, "deps.pth").write_text(deps + "\n")  # processed, so no editable memvet comes in
    wheel = next(wheels.glob("memvet-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    site, str(wheel)], check=True, timeout=300, capture_output=True)
    probe = ("import memvet.extraction.learned.model as m; model = m.ExtractorModel.load(); "
             "print(m.DEFAULT_MODEL_PATH); print(model.dimension)")
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    path, dimension = done.stdout.split()
    assert path.startswith(site) and dimension == "384"
