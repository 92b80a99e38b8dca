"""The learned extractor's parts on their own: statements, grouping, phrasing, the model file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memvet.extraction.learned.extractor import _groups, _sentences
from memvet.extraction.learned.model import DEFAULT_MODEL_PATH, ExtractorModel, ExtractorModelError
from memvet.extraction.learned.phrasing import needs_antecedent, render
from memvet.extraction.learned.rescore import RESCORE_FEATURES, Forest, context_features
from memvet.extraction.learned.statements import statements
from memvet.memory.errors import ConfigurationError
from memvet.memory.ports import Message


def test_statements_are_the_users_sentences_and_the_agents_answered_ones() -> None:
    msgs = [
        Message("user", "we use pnpm here. ```\nnpm install\n``` the lockfile is in the root"),
        Message("assistant", "The CI image pins node 20. Shall I add a check?"),
        Message("user", "yes, right"),
        Message("tool", "ERROR something failed"),
        Message("assistant", "Done. All 214 tests pass."),
    ]
    got = [(s.role, s.message, s.text) for s in statements(msgs)]
    assert ("user", 0, "we use pnpm here.") in got
    assert ("user", 0, "the lockfile is in the root") in got
    assert not any("npm install" in t for _, _, t in got)  # code is cut
    # the agent's message answered by the user is in, with the answer beside it...
    agent = [s for s in statements(msgs) if s.role == "assistant"]
    assert [s.text for s in agent] == ["The CI image pins node 20.", "Shall I add a check?"]
    assert agent[0].answer.startswith("yes, right")
    # ...the last one, which nobody answered, and the tool output are not
    assert not any(m in (3, 4) for _, m, _ in got)
    user = next(s for s in statements(msgs) if s.message == 2)
    assert user.previous.startswith("The CI image")


def test_a_confirmation_speaks_for_the_agents_finding_before_it() -> None:
    msgs = [Message("user", "why does the deploy take 9 minutes?"),
            Message("assistant", "The image is rebuilt from scratch on every deploy. "
                                 "Layer caching is off in deploy.yml."),
            Message("user", "yes exactly, that's deliberate")]
    stmts = statements(msgs)
    memorable = np.array([0.05 if s.role == "assistant" and s.position == 0 else 0.02
                          for s in stmts])
    memorable[[i for i, s in enumerate(stmts) if s.message == 1][1]] = 0.3
    memorable[len(stmts) - 1] = 0.9  # the user's "yes exactly"
    groups = _groups(stmts, memorable, threshold=0.5)
    assert len(groups) == 1 and groups[0].message == 1  # the agent's message, not the "yes"
    assert _sentences(stmts, groups[0]) == ["Layer caching is off in deploy.yml."]
    assert groups[0].score == pytest.approx(0.9)
    # a "yes" with nothing before it to confirm yields nothing
    alone = statements([Message("user", "yes exactly")])
    assert _groups(alone, np.array([0.9]), threshold=0.5) == []


def test_kept_statements_of_one_message_make_one_candidate() -> None:
    stmts = statements([Message("user", "We moved off Celery last spring. It leaked memory "
                                        "under load. Anyway, run the tests."),
                        Message("assistant", "ok")])
    groups = _groups(stmts, np.array([0.8, 0.6, 0.1]), threshold=0.5)
    assert len(groups) == 1 and groups[0].members == [0, 1]
    assert _sentences(stmts, groups[0]) == ["We moved off Celery last spring.",
                                            "It leaked memory under load."]


def test_a_bare_pronoun_brings_its_antecedent() -> None:
    stmts = statements([Message("user", "The nightly export runs at 02:00 UTC. It writes to "
                                        "s3://acme-exports. Thanks!")])
    groups = _groups(stmts, np.array([0.2, 0.9, 0.1]), threshold=0.5)
    assert needs_antecedent("It writes to s3://acme-exports.")
    assert _sentences(stmts, groups[0]) == ["The nightly export runs at 02:00 UTC.",
                                            "It writes to s3://acme-exports."]


@pytest.mark.parametrize(("sentences", "persona", "workspace", "expected"), [
    (["Remember: we deploy on Tuesdays only"], False, "shop-api", "We deploy on Tuesdays only."),
    (["ok so fyi the bucket is in eu-central-1"], False, "shop-api",
     "The bucket is in eu-central-1."),
    (["no, the bucket is in eu-central-1, not us-east-1"], False, "infra",
     "The bucket is in eu-central-1, not us-east-1."),
    (["In shop-api: the API listens on 4001"], False, "shop-api", "The API listens on 4001."),
    (["in this repo, migrations need a down step"], False, "shop-api",
     "Migrations need a down step."),
    (["this repo uses pnpm"], False, "shop-api", "shop-api uses pnpm."),
    (["shop-api uses pnpm, this repo never npm"], False, "shop-api",
     "shop-api uses pnpm, this repo never npm."),
    (["`make ship` deploys to fly"], False, "shop-api", "`make ship` deploys to fly."),
    (["I review and commit myself, never commit for me"], True, None,
     "The user reviews and commits themselves, never commit for the user."),
])
def test_phrasing(sentences: list[str], persona: bool, workspace: str | None,
                  expected: str) -> None:
    assert render(sentences, persona=persona, workspace=workspace) == expected


def test_the_shipped_model_loads_and_fits_the_packaged_embedder() -> None:
    model = ExtractorModel.load(DEFAULT_MODEL_PATH)
    assert model.embedder_model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert model.dimension == 384
    assert {"threshold_turn", "threshold_compaction", "platt_a", "platt_b"} <= set(model.params)
    assert DEFAULT_MODEL_PATH.stat().st_size < 8 * 1024 * 1024  # a small file


def test_scoring_block_by_block_equals_the_whole_feature_matrix() -> None:
    """The turn pass scores each feature block against its slice of the heads; training and
    evaluation use the assembled matrix. Both must give the same probabilities."""
    model = ExtractorModel.load(DEFAULT_MODEL_PATH)
    stmts = statements([
        Message("user", "the staging db is on port 6543. we moved off celery last spring "
                        "because it leaked memory. thanks!"),
        Message("assistant", "Noted. The worker pool now runs on arq; 12 jobs migrated."),
        Message("user", "yes, and never restart the billing worker during business hours"),
    ])
    vectors = np.random.default_rng(3).normal(size=(len(stmts), model.dimension))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    whole = model.predict(model.features(stmts, vectors, compaction=False, workspace="shop"))
    blocks = model.predict_statements(stmts, vectors, compaction=False, workspace="shop")
    for a, b in zip(whole, blocks, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, atol=1e-5)
    assert np.allclose(blocks[1].sum(axis=1), 1.0)


def test_a_missing_or_broken_model_file_is_a_clear_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ExtractorModelError, match="missing"):
        ExtractorModel.load(tmp_path / "none.npz")
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(DEFAULT_MODEL_PATH.read_bytes()[:5000])
    with pytest.raises(ExtractorModelError, match="cannot be read"):
        ExtractorModel.load(truncated)
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, format=np.array(1), kinds=np.array([object()], dtype=object))
    with pytest.raises(ExtractorModelError):
        ExtractorModel.load(pickled)  # object arrays need pickle: refused
    model = ExtractorModel.load(DEFAULT_MODEL_PATH)
    model.heads.memorable_w = model.heads.memorable_w[:10]
    shrunk = tmp_path / "shrunk.npz"
    model.save(shrunk)
    with pytest.raises(ExtractorModelError, match="do not fit"):
        ExtractorModel.load(shrunk)
    model = ExtractorModel.load(DEFAULT_MODEL_PATH)
    with np.load(DEFAULT_MODEL_PATH, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    lost = tmp_path / "lost-rescorer.npz"
    np.savez(lost, **{k: v for k, v in arrays.items() if not k.startswith("rescore_")})
    with pytest.raises(ExtractorModelError, match="not a usable model"):
        ExtractorModel.load(lost)
    model.rescorer = None
    with pytest.raises(ValueError, match="rescorer"):
        model.save(tmp_path / "first-stage-only.npz")
    assert issubclass(ExtractorModelError, ConfigurationError)


def test_the_rescorer_reads_each_score_beside_the_rest_of_its_conversation() -> None:
    stmts = statements([
        Message("user", "we moved off celery last spring. it leaked memory. thanks!"),
        Message("assistant", "Noted. The worker pool now runs on arq."),
        Message("user", "yes"),
    ])
    assert [(s.message, s.role) for s in stmts] == [
        (0, "user"), (0, "user"), (0, "user"), (1, "assistant"), (1, "assistant"), (2, "user")]
    memorable = np.array([0.9, 0.6, 0.1, 0.2, 0.7, 0.3])
    kinds = np.tile(np.eye(6)[2], (6, 1))
    kinds[1] = np.eye(6)[4]
    x = context_features(stmts, memorable, kinds, compaction=False)
    col = {name: x[:, i] for i, name in enumerate(RESCORE_FEATURES)}
    assert x.shape == (6, len(RESCORE_FEATURES))
    np.testing.assert_allclose(col["message_others_max"], [0.6, 0.9, 0.9, 0.7, 0.2, 0.0])
    np.testing.assert_allclose(col["message_others_mean"][:3], [0.35, 0.5, 0.75])
    np.testing.assert_allclose(col["message_others"], [2, 2, 2, 1, 1, 0])
    # a user's sentence looks at the agent message before it; an agent's, at the answer
    np.testing.assert_allclose(col["other_side_max"], [0.0, 0.0, 0.0, 0.3, 0.3, 0.7])
    np.testing.assert_allclose(col["previous"], [0.0, 0.9, 0.6, 0.0, 0.2, 0.0])
    np.testing.assert_allclose(col["next"], [0.6, 0.1, 0.0, 0.7, 0.0, 0.0])
    np.testing.assert_allclose(col["rank"], [0, 2, 5, 4, 1, 3])
    np.testing.assert_allclose(col["share_of_max"], memorable / 0.9)
    assert set(col["excerpt_max"]) == {0.9} and set(col["over_half"]) == {3.0}
    # the message's kind: its statements' kinds weighted by their memorable scores
    message_kind = x[0, RESCORE_FEATURES.index("message_kind_0"):][:6]
    np.testing.assert_allclose(message_kind[4], 0.6 / 1.6)
    np.testing.assert_allclose(message_kind[2], 1.0 / 1.6)
    assert context_features([], np.zeros(0), np.zeros((0, 6)), compaction=True).shape == (
        0, len(RESCORE_FEATURES))


def test_the_rescorer_walks_its_trees_as_scikit_learn_does() -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier

    from memvet.extraction.learned.train import _flat

    rng = np.random.default_rng(0)
    x = rng.normal(size=(2000, len(RESCORE_FEATURES)))
    y = (x[:, 0] + x[:, 3] * x[:, 7] + rng.normal(scale=0.5, size=2000)) > 0
    fitted = HistGradientBoostingClassifier(max_iter=40, max_depth=4, early_stopping=False,
                                            random_state=0).fit(x, y)
    forest = _flat(fitted)
    np.testing.assert_allclose(forest.probability(x), fitted.predict_proba(x)[:, 1], atol=1e-12)
    again = Forest.from_arrays(forest.arrays("r"), "r")
    np.testing.assert_array_equal(again.probability(x), forest.probability(x))
    broken = forest.arrays("r") | {"r_left": np.full_like(forest.left, 10**6)}
    with pytest.raises(ValueError, match="outside"):
        Forest.from_arrays(broken, "r")
    with pytest.raises(ValueError, match="other features"):
        Forest.from_arrays(forest.arrays("r") | {"r_features": np.array(["logit"])}, "r")


def test_the_shipped_model_rescores_what_its_heads_scored() -> None:
    model = ExtractorModel.load(DEFAULT_MODEL_PATH)
    assert model.rescorer is not None and model.rescorer.depth <= 6
    stmts = statements([
        Message("user", "the staging db is on port 6543. thanks! we moved off celery last "
                        "spring because it leaked memory."),
        Message("assistant", "Noted."),
    ])
    vectors = np.random.default_rng(5).normal(size=(len(stmts), model.dimension))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    first, kinds, _ = model.predict_statements(stmts, vectors, compaction=False, workspace=None)
    final, kinds_again, _ = model.score(stmts, vectors, compaction=False, workspace=None)
    np.testing.assert_array_equal(kinds, kinds_again)  # the second look is at memorable only
    np.testing.assert_allclose(final, model.rescorer.rescore(stmts, first, kinds,
                                                             compaction=False))
    assert not np.allclose(final, first) and ((final > 0) & (final < 1)).all()


def test_cross_validation_folds_never_split_a_domain_or_a_writer() -> None:
    from memvet.extraction.learned.corpus import CORPUS_DIR, corpus_files, load_cases
    from memvet.extraction.learned.evaluation import folds_of, writer_folds

    cases = load_cases(corpus_files(CORPUS_DIR))
    for folds, group in ((folds_of(cases, 5), lambda c: c.domain),
                         (writer_folds(cases, 8), lambda c: c.id.rstrip("0123456789"))):
        assert sorted(i for f in folds for i in f) == list(range(len(cases)))  # each case once
        owner: dict[str, int] = {}
        for f, fold in enumerate(folds):
            for i in fold:
                assert owner.setdefault(group(cases[i]), f) == f  # a group sits in one fold
        sizes = [len(f) for f in folds]
        assert len(folds) >= 5 and max(sizes) < 2 * min(sizes)  # dealt evenly enough


def test_training_is_deterministic(tmp_path: Path) -> None:
    """Two runs of the training on the same corpus give the same model, array for array, and
    the same report (its timing aside). A small corpus of five writers' domains and a
    deterministic stand-in embedder keep it quick; the recipe is the shipped one."""
    import json
    import shutil

    from memvet.embeddings.fake import FakeEmbedder
    from memvet.extraction.learned.corpus import CORPUS_DIR
    from memvet.extraction.learned.train import train

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("p-elixir-nerves-iot", "s-rust-bevy-game", "t-python-scraping-playwright",
                 "k-analytics-clickhouse", "x-keycloak-identity"):
        shutil.copy(CORPUS_DIR / f"{name}.jsonl", corpus)
    runs = []
    for n in (1, 2):
        out = tmp_path / f"run{n}" / "model.npz"
        report = train(FakeEmbedder(), corpus=corpus, out=out, folds=2,
                       report_path=out.with_suffix(".json"), cache_dir=tmp_path / f"cache{n}",
                       progress=lambda line: None)
        report.pop("seconds")
        with np.load(out, allow_pickle=False) as arrays:
            runs.append((report, {k: arrays[k] for k in arrays.files}))
        assert json.loads(out.with_suffix(".json").read_text())["corpus"]["excerpts"] == 150
    (first_report, first), (second_report, second) = runs
    assert first_report == second_report
    assert first.keys() == second.keys()
    for key in first:
        assert np.array_equal(first[key], second[key]), key
    assert ExtractorModel.load(tmp_path / "run1" / "model.npz").params == first_report["params"]
