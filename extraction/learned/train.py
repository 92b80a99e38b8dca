"""Train the learned extractor on extraction/corpus/: `make train-extractor`.

1. The corpus (GUIDE.md beside it) becomes labelled statements (corpus.py). The domains
   listed in corpus/HOLDOUT are kept out of everything below: they are the held-out slice the
   shipped model is scored on (and the tests hold floors on).
2. Every statement's first `Recipe.embed_tokens` tokens are embedded once through the
   Embedder it is handed, as the extractor will embed them (cached on disk by model and text,
   so a re-run embeds nothing new).
3. Group k-fold twice, by domain (5 folds) and by writer (8 folds): each fold's linear heads
   are trained on the other domains (writers) and score the ones left out. The rescorer
   (rescore.py) is then fitted, fold by fold again, on the other folds' out-of-fold scores and
   rereads the fold left out; every case is decoded as the extractor decodes (same grouping,
   same phrasing) and scored the way the evaluation scorer scores (kind, namespace prefix, a
   required term in the content).
4. On the by-writer out-of-fold runs: the threshold per trigger (best F1 with at least 95 % of
   quiet excerpts silent), and the confidence calibration (Platt, on whether a candidate was
   right).
5. The final heads are trained on all training domains; the final rescorer on the by-writer
   out-of-fold scores of all of them (the scores it will see are those of a model that never
   saw the conversation). Both go to model.npz with those settings; the report
   (model-report.json) holds the cross-validation, per kind, the kind confusion matrix, and the
   held-out slice's score.

Deterministic: sorted vocabularies, lbfgs logistic regressions, a forest without subsampling,
fixed fold assignment.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from memvet.extraction.learned.corpus import CORPUS_DIR, Case, corpus_files, load_cases
from memvet.extraction.learned.evaluation import (
    Scored,
    by_kind,
    combined,
    context_of,
    folds_of,
    run,
    score_runs,
    writer_folds,
)
from memvet.extraction.learned.extractor import LearnedExtractor, Scores, embedding_texts
from memvet.extraction.learned.features import (
    Vocabulary,
    dense_block,
    neighbours,
    other_side,
    whole_message,
)
from memvet.extraction.learned.model import DEFAULT_MODEL_PATH, KINDS, ExtractorModel, Heads
from memvet.extraction.learned.rescore import Forest, context_features
from memvet.memory.kinds import Kind
from memvet.memory.ports import Embedder, ExtractedCandidate, TruncatingEmbedder

log = logging.getLogger(__name__)

REPORT_PATH = DEFAULT_MODEL_PATH.with_name("model-report.json")
FOLDS = 5
QUIET_FLOOR = 0.95
THRESHOLDS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7)


@dataclass(frozen=True)
class Recipe:
    """How the heads are fitted: inverse regularisation and the weight of each block."""

    memorable_c: float = 2.0
    kind_c: float = 4.0
    persona_c: float = 1.0
    other_weight: float = 0.5
    around_weight: float = 0.5
    around_weight_kind: float = 1.0
    message_weight: float = 2.0
    message_weight_kind: float = 4.0
    dense_weight: float = 1.0
    text_min_df: int = 2
    text_max_terms: int = 40_000
    context_min_df: int = 3
    context_max_terms: int = 12_000
    cap: int = 3
    rescore_trees: int = 200
    rescore_depth: int = 6
    rescore_rate: float = 0.05
    embed_tokens: int | None = 24  # of a statement, embedded (extractor.embedding_texts)

    def params(self) -> dict[str, Any]:
        """The decoding settings a model fitted with this recipe carries before train.py
        chooses the rest."""
        return {"cap": self.cap, "embed_tokens": self.embed_tokens}


# --------------------------------------------------------------------------- embedding
class CachedEmbedder:
    """The Embedder it wraps, remembering vectors on disk by model id and text."""

    def __init__(self, inner: Embedder, cache_dir: Path) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        key = hashlib.sha1(inner.model_id.encode()).hexdigest()[:12]
        self.path = cache_dir / f"vectors-{key}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        if self.path.is_file():
            with np.load(self.path, allow_pickle=False) as f:
                self.vectors = dict(zip([str(k) for k in f["keys"]], f["vectors"], strict=True))
        self.dirty = False

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def truncate(self, texts: Sequence[str], max_tokens: int) -> list[str]:
        if not isinstance(self.inner, TruncatingEmbedder):
            raise TypeError(f"{type(self.inner).__name__} cannot cut texts to tokens")
        return self.inner.truncate(texts, max_tokens)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = sorted({t for t in texts if self._key(t) not in self.vectors})
        if missing:
            for t, v in zip(missing, self.inner.embed(missing), strict=True):
                self.vectors[self._key(t)] = np.asarray(v, dtype=np.float32)
            self.dirty = True
        return [self.vectors[self._key(t)].tolist() for t in texts]

    def array(self, texts: Sequence[str]) -> np.ndarray:
        self.embed(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([self.vectors[self._key(t)] for t in texts])

    def save(self) -> None:
        if not self.dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted(self.vectors)
        np.savez(self.path, keys=np.array(keys),
                 vectors=np.vstack([self.vectors[k] for k in keys]))
        self.dirty = False


# --------------------------------------------------------------------------- data
@dataclass
class Matrix:
    """Feature blocks and labels of every statement of some cases."""

    text: list[str]
    other: list[str]
    around: list[str]
    message: list[str]
    dense: np.ndarray
    memorable: np.ndarray  # bool
    kind: np.ndarray  # index into KINDS, -1 for none
    persona: np.ndarray  # bool


def matrix(cases: Sequence[Case], embedder: CachedEmbedder, max_tokens: int | None) -> Matrix:
    text, other, around, message = [], [], [], []
    dense, mem, kind, persona = [], [], [], []
    for c in cases:
        st = c.statements
        if not st:
            continue
        vectors = embedder.array(embedding_texts(embedder, st, max_tokens))
        dense.append(dense_block(st, vectors, compaction=c.trigger == "compaction",
                                 workspace=c.workspace))
        for k, s in enumerate(st):
            text.append(s.text)
            other.append(other_side(s))
            around.append(neighbours(st, k))
            message.append(whole_message(st, k))
            item = c.item_of[k]
            mem.append(item >= 0)
            exp = c.expected[item] if item >= 0 else {}
            kind.append([k_.value for k_ in KINDS].index(exp["kind"]) if exp else -1)
            persona.append(exp.get("namespace") == "persona")
    return Matrix(text, other, around, message, np.vstack(dense), np.asarray(mem),
                  np.asarray(kind), np.asarray(persona))


# --------------------------------------------------------------------------- fitting
def fit(m: Matrix, recipe: Recipe, *, embedder_model_id: str, dimension: int,
        params: dict[str, Any]) -> ExtractorModel:
    """Vocabularies and the four heads on `m`; block weights folded into the coefficients."""
    from sklearn.linear_model import LogisticRegression  # training only

    text = Vocabulary.fit(m.text, ngram=2, min_df=recipe.text_min_df,
                          max_terms=recipe.text_max_terms)
    other = Vocabulary.fit(m.other, ngram=1, min_df=recipe.context_min_df,
                           max_terms=recipe.context_max_terms)
    around = Vocabulary.fit(m.around, ngram=1, min_df=recipe.context_min_df,
                            max_terms=recipe.context_max_terms)
    message = Vocabulary.fit(m.message, ngram=2, min_df=recipe.context_min_df,
                             max_terms=recipe.text_max_terms)
    blocks = [text.transform(m.text), other.transform(m.other), around.transform(m.around),
              message.transform(m.message), sparse.csr_matrix(m.dense)]

    def scaled(weights: Sequence[float]) -> tuple[sparse.csr_matrix, np.ndarray]:
        scale = np.concatenate([np.full(b.shape[1], w, dtype=np.float32)
                                for b, w in zip(blocks, weights, strict=True)])
        x = sparse.hstack(blocks).tocsr() @ sparse.diags(scale)
        return sparse.csr_matrix(x), scale

    det_w = (1.0, recipe.other_weight, recipe.around_weight, recipe.message_weight,
             recipe.dense_weight)
    kind_w = (1.0, recipe.other_weight, recipe.around_weight_kind, recipe.message_weight_kind,
              recipe.dense_weight)
    x_det, s_det = scaled(det_w)
    x_kind, s_kind = scaled(kind_w)
    x_pre, s_pre = scaled((*det_w[:4], 0.0))
    n_words = sum(b.shape[1] for b in blocks[:4])

    memorable = LogisticRegression(C=recipe.memorable_c, max_iter=2000).fit(x_det, m.memorable)
    pos = np.flatnonzero(m.memorable)
    kind = LogisticRegression(C=recipe.kind_c, max_iter=4000).fit(x_kind[pos], m.kind[pos])
    kind_w_full = np.zeros((len(KINDS), x_kind.shape[1]), dtype=np.float32)
    kind_b_full = np.full(len(KINDS), -30.0, dtype=np.float32)  # a kind never seen: never
    for row, cls in enumerate(kind.classes_):
        kind_w_full[cls] = kind.coef_[row] * s_kind
        kind_b_full[cls] = kind.intercept_[row]
    prefs = pos[m.kind[pos] == [k.value for k in KINDS].index(Kind.PREFERENCE.value)]
    persona = LogisticRegression(C=recipe.persona_c, max_iter=4000).fit(
        x_det[prefs], m.persona[prefs])
    pre = LogisticRegression(C=recipe.memorable_c, max_iter=2000).fit(
        x_pre[:, :n_words], m.memorable)
    heads = Heads(
        memorable_w=(memorable.coef_[0] * s_det).astype(np.float32),
        memorable_b=float(memorable.intercept_[0]),
        kind_w=kind_w_full, kind_b=kind_b_full,
        persona_w=(persona.coef_[0] * s_det).astype(np.float32),
        persona_b=float(persona.intercept_[0]),
        prefilter_w=(pre.coef_[0] * s_pre[:n_words]).astype(np.float32),
        prefilter_b=float(pre.intercept_[0]),
    )
    return ExtractorModel(embedder_model_id=embedder_model_id, dimension=dimension, text=text,
                          other=other, around=around, message=message, heads=heads,
                          params=dict(params))


def fit_rescorer(cases: Sequence[Case], first: dict[int, Scores | None], recipe: Recipe
                 ) -> Forest:
    """The rescorer on the first-stage scores of `first` (case index: that case's scores, from
    a model that never saw it), labelled by the corpus."""
    from sklearn.ensemble import HistGradientBoostingClassifier  # training only

    xs: list[np.ndarray] = []
    ys: list[bool] = []
    for i, scored in first.items():
        if scored is None:
            continue
        label = {(s.message, s.position): item >= 0
                 for s, item in zip(cases[i].statements, cases[i].item_of, strict=True)}
        xs.append(context_features(scored.statements, scored.memorable, scored.kinds,
                                   compaction=cases[i].trigger == "compaction"))
        ys.extend(label[(s.message, s.position)] for s in scored.statements)
    y = np.asarray(ys)
    forest = HistGradientBoostingClassifier(
        max_iter=recipe.rescore_trees, max_depth=recipe.rescore_depth,
        learning_rate=recipe.rescore_rate, max_leaf_nodes=31, l2_regularization=1.0,
        early_stopping=False, random_state=0)
    forest.fit(np.vstack(xs), y)
    return _flat(forest)


def _flat(forest: Any) -> Forest:
    """scikit-learn's fitted binary HistGradientBoostingClassifier as rescore.Forest."""
    trees = [predictors[0].nodes for predictors in forest._predictors]
    starts = np.cumsum([0] + [len(t) for t in trees[:-1]])
    nodes = np.concatenate(trees)
    offset = np.repeat(starts, [len(t) for t in trees])
    leaf = nodes["is_leaf"].astype(bool)
    return Forest(
        feature=np.where(leaf, 0, nodes["feature_idx"]).astype(np.int32),
        threshold=np.where(leaf, 0.0, nodes["num_threshold"]).astype(np.float64),
        left=np.where(leaf, 0, nodes["left"].astype(np.int64) + offset).astype(np.int32),
        right=np.where(leaf, 0, nodes["right"].astype(np.int64) + offset).astype(np.int32),
        value=np.where(leaf, nodes["value"], 0.0).astype(np.float64),
        leaf=leaf, roots=starts.astype(np.int32), depth=int(nodes["depth"].max()),
        baseline=float(np.ravel(forest._baseline_prediction)[0]))


# --------------------------------------------------------------------------- the whole run


def train(embedder: Embedder, *, corpus: Path = CORPUS_DIR, out: Path = DEFAULT_MODEL_PATH,
          report_path: Path = REPORT_PATH, folds: int = FOLDS, cache_dir: Path | None = None,
          recipe: Recipe = Recipe(), progress: Any = print) -> dict[str, Any]:
    started = time.monotonic()
    cached = CachedEmbedder(embedder, cache_dir or Path(".cache/extractor"))
    holdout_domains = _holdout(corpus)
    cases = load_cases(corpus_files(corpus))
    train_cases = [c for c in cases if c.domain not in holdout_domains]
    held_cases = [c for c in cases if c.domain in holdout_domains]
    progress(f"corpus: {len(cases)} excerpts, {len(train_cases)} for training and "
             f"cross-validation, {len(held_cases)} held out ({', '.join(sorted(holdout_domains))})")
    progress("embedding statements (cached) ...")
    cached.array(embedding_texts(cached, [s for c in cases for s in c.statements],
                                 recipe.embed_tokens))
    cached.save()
    base: dict[str, Any] = {"embedder_model_id": embedder.model_id,
                            "dimension": int(embedder.dimension)}

    # cross-validation, twice: by domain (k folds), and by writer (each fold's writers left
    # out: a writer's style is the shift a new user's conversations bring); thresholds and the
    # calibration come from the by-writer runs, the harder of the two
    domain_folds, by_writer_folds = folds_of(train_cases, folds), writer_folds(train_cases)
    first_by_domain = _out_of_fold(train_cases, domain_folds, cached, recipe, base, progress,
                                   "domain")
    first_by_writer = _out_of_fold(train_cases, by_writer_folds, cached, recipe, base, progress,
                                   "writer")
    progress("final heads; the rescorer, fold by fold on the out-of-fold scores ...")
    final = fit(matrix(train_cases, cached, recipe.embed_tokens), recipe, **base,
                params=recipe.params())
    decoder = LearnedExtractor(cached, final)  # decoding reads the cap and calibration (none)
    by_domain = _runs(decoder, _rescored(train_cases, domain_folds, first_by_domain, recipe))
    by_writer = _runs(decoder, _rescored(train_cases, by_writer_folds, first_by_writer, recipe))
    oof = {t: score_runs(train_cases, by_writer[t]) for t in THRESHOLDS}
    chosen = {trigger: _choose(oof, trigger) for trigger in ("turn", "compaction")}
    emitted = {i: by_writer[chosen[c.trigger]][i] for i, c in enumerate(train_cases)}
    points: list[tuple[float, bool]] = []
    for i, got in emitted.items():
        right = [False] * len(got)
        Scored().add(train_cases[i], got, right)
        points.extend((c.confidence, r) for c, r in zip(got, right, strict=True))
    platt_a, platt_b = _platt(points)
    cv_reports = {}
    for name, runs in (("by_domain", by_domain), ("by_writer", by_writer)):
        scored = {t: score_runs(train_cases, runs[t]) for t in THRESHOLDS}
        at = {i: runs[chosen[c.trigger]][i] for i, c in enumerate(train_cases)}
        per_kind, confusion = by_kind(train_cases, at)
        cv_reports[name] = {
            **combined(scored, chosen),
            "turn": scored[chosen["turn"]]["turn"].summary(),
            "compaction": scored[chosen["compaction"]]["compaction"].summary(),
            "per_kind": per_kind, "kind_confusion": confusion}
    cv_reports["by_domain"]["folds"] = folds
    cv_reports["by_writer"]["folds"] = len(by_writer_folds)

    params = {**recipe.params(), "threshold_turn": chosen["turn"],
              "threshold_compaction": chosen["compaction"], "platt_a": platt_a,
              "platt_b": platt_b}
    final = replace(final, params=params,
                    rescorer=fit_rescorer(train_cases, first_by_writer, recipe))
    final.save(out)
    shipped = ExtractorModel.load(out)
    held_score = Scored()
    extractor = LearnedExtractor(cached, shipped)
    for case in held_cases:
        held_score.add(case, run(extractor, case))
    cached.save()
    held_summary = held_score.summary()
    report: dict[str, Any] = {
        "corpus": {"excerpts": len(cases), "training": len(train_cases),
                   "held_out": len(held_cases), "held_out_domains": sorted(holdout_domains),
                   "domains": len({c.domain for c in cases}),
                   "quiet_share": round(sum(not c.expected for c in cases) / len(cases), 3)},
        "cross_validation": cv_reports,
        "held_out": held_summary,
        "params": params,
        "recipe": recipe.__dict__,
        "model_bytes": out.stat().st_size,
        "seconds": round(time.monotonic() - started, 1),
    }
    report_path.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    for name, cv in cv_reports.items():
        progress(f"cross-validation {name}: F1 {cv['f1']} (P {cv['precision']}, "
                 f"R {cv['recall']}, quiet {cv['quiet_silence']})")
    progress(f"held-out slice: F1 {held_summary['f1']}; wrote {out} "
             f"({report['model_bytes']:,} bytes) and {report_path}")
    return report


def _out_of_fold(cases: Sequence[Case], folds: list[list[int]], cached: CachedEmbedder,
                 recipe: Recipe, base: dict[str, Any], progress: Any, name: str
                 ) -> dict[int, Scores | None]:
    """Every case's first-stage scores, from linear heads that never saw its fold."""
    first: dict[int, Scores | None] = {}
    for f, held in enumerate(folds):
        held_set = set(held)
        fit_cases = [c for i, c in enumerate(cases) if i not in held_set]
        model = fit(matrix(fit_cases, cached, recipe.embed_tokens), recipe, **base,
                    params=recipe.params())
        extractor = LearnedExtractor(cached, model)
        for i in held:
            first[i] = extractor.score(cases[i].messages, context_of(cases[i]))
        progress(f"{name} fold {f + 1}/{len(folds)}: {len(held)} excerpts scored")
    return first


def _rescored(cases: Sequence[Case], folds: list[list[int]], first: dict[int, Scores | None],
              recipe: Recipe) -> dict[int, Scores | None]:
    """Every case's scores after the second look, by a rescorer fitted on the other folds."""
    out: dict[int, Scores | None] = {}
    for held in folds:
        held_set = set(held)
        forest = fit_rescorer(
            cases, {i: s for i, s in first.items() if i not in held_set}, recipe)
        for i in held:
            scored = first[i]
            out[i] = None if scored is None else replace(scored, memorable=forest.rescore(
                scored.statements, scored.memorable, scored.kinds,
                compaction=cases[i].trigger == "compaction"))
    return out


def _runs(decoder: LearnedExtractor, scores: dict[int, Scores | None]
          ) -> dict[float, dict[int, list[ExtractedCandidate]]]:
    """Every case decoded at every threshold."""
    return {t: {i: decoder.decode(s, t) if s is not None else [] for i, s in scores.items()}
            for t in THRESHOLDS}


def _holdout(corpus: Path) -> set[str]:
    path = corpus / "HOLDOUT"
    if not path.is_file():
        return set()
    return {line.split("#")[0].strip() for line in path.read_text().splitlines()} - {""}


def _choose(oof: dict[float, dict[str, Scored]], trigger: str) -> float:
    """The threshold with the best F1 whose quiet excerpts stay silent often enough."""
    ok = [t for t in THRESHOLDS if oof[t][trigger].summary()["quiet_silence"] >= QUIET_FLOOR]
    pool = ok or [max(THRESHOLDS)]
    return max(pool, key=lambda t: (oof[t][trigger].summary()["f1"], t))


def _platt(points: list[tuple[float, bool]]) -> tuple[float, float]:
    from sklearn.linear_model import LogisticRegression

    if len({r for _, r in points}) < 2:
        return 1.0, 0.0
    z = np.array([[np.log(max(p, 1e-6) / max(1 - p, 1e-6))] for p, _ in points])
    y = np.array([r for _, r in points])
    lr = LogisticRegression(C=100.0).fit(z, y)
    return round(float(lr.coef_[0][0]), 4), round(float(lr.intercept_[0]), 4)


