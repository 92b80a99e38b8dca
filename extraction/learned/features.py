"""What the model sees of a statement.

Blocks, in this order (model.py keeps their sizes, train.py fits the vocabularies):
1. its words: TF-IDF over unigrams and bigrams (sublinear tf, l2-normalised);
2. the other side of the exchange: the agent's message the user answered, or the user's
   answer to the agent (unigrams);
3. its neighbours: the sentences before and after it in the same message (unigrams), and its
   whole message (unigrams and bigrams: a story and its lesson decide the kind together);
4. vectors from the packaged MiniLM (handed in through the Embedder port) of each
   statement's first tokens (the model's `embed_tokens`, 24): the statement's, the previous
   sentence's, and the mean of the other side's message;
5. a few shape features (role, position, length, question, date, code, pronouns, whether the
   answer agrees, ...).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from memvet.extraction.learned.statements import AGREE, DISAGREE, Statement, words

_TOKEN = re.compile(r"(?u)\b\w[\w'.-]*\b")
_MONTHS = ("jan feb mar apr may jun jul aug sep sept oct nov dec january february march "
           "april june july august september october november december monday tuesday "
           "wednesday thursday friday saturday sunday yesterday today tonight")
_DATE = re.compile(r"\b(?:20\d\d-\d\d-\d\d|\d{1,2}/\d{1,2}|(?:" + "|".join(_MONTHS.split())
                   + r"))\b", re.I)
_CODE = re.compile(r"`|[\w-]+\.[a-z]{1,4}\b|/[\w.-]+|\w+_\w+|--\w+|\b\d+\.\d+")
_DIGIT = re.compile(r"\d")
_QUESTION_END = re.compile(r"\?\s*$")
_QUESTION_START = frozenset("what why how when where which who whom whose is are do does did can "
                            "could would should will shall may might isn't aren't don't "
                            "doesn't".split())
_ALWAYS = frozenset("always never every each whenever must should anymore".split())
_PAST = frozenset("was were had moved switched migrated broke went happened ago yesterday last "
                  "since".split())
_REASON = frozenset("because since so cause due".split())
_NEGATION = frozenset("not no never don't dont doesn't didn't won't can't isn't aren't "
                      "nothing".split())
_I = frozenset("i i'm i've i'd i'll my me myself mine".split())
_WE = frozenset("we we're we've our us ours".split())
_YOU = frozenset("you you're your yours".split())
_PLEASE = frozenset("please pls plz".split())
SHAPE_FEATURES = (
    "role_user", "role_assistant", "position", "first", "last", "alone", "length", "short",
    "long", "question_mark", "question_word", "date", "code", "digit", "first_person",
    "we", "you", "always", "past", "reason", "negation", "please", "from_now_on",
    "answer_agrees", "answer_disagrees", "answer_has_agree", "answer_has_disagree",
    "answers_question", "answers_agent", "short_answer", "exclaims", "compaction",
    "capitalised", "names_workspace",
)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def grams(text: str, n: int) -> list[str]:
    toks = tokens(text)
    out = list(toks)
    if n >= 2:
        out += [f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False)]
    return out


@dataclass
class Vocabulary:
    """Terms with their IDF, as scikit-learn's TfidfVectorizer(smooth_idf, sublinear_tf)."""

    terms: list[str]
    idf: np.ndarray
    ngram: int

    def __post_init__(self) -> None:
        self.index = {t: i for i, t in enumerate(self.terms)}

    @classmethod
    def fit(cls, docs: Sequence[str], *, ngram: int, min_df: int,
            max_terms: int) -> Vocabulary:
        df: Counter[str] = Counter()
        for doc in docs:
            df.update(set(grams(doc, ngram)))
        kept = sorted((t for t, n in df.items() if n >= min_df), key=lambda t: (-df[t], t))
        kept = sorted(kept[:max_terms])
        n_docs = len(docs)
        idf = np.array([math.log((1 + n_docs) / (1 + df[t])) + 1.0 for t in kept],
                       dtype=np.float32)
        return cls(kept, idf, ngram)

    def transform(self, docs: Sequence[str]) -> sparse.csr_matrix:
        data: list[float] = []
        cols: list[int] = []
        ptr = [0]
        for doc in docs:
            row = self._row(doc)
            for col in sorted(row):
                cols.append(col)
                data.append(row[col])
            ptr.append(len(cols))
        return sparse.csr_matrix((np.asarray(data, dtype=np.float32), cols, ptr),
                                 shape=(len(docs), len(self.terms)))

    def project(self, docs: Sequence[str], weights: np.ndarray) -> np.ndarray:
        """`transform(docs) @ weights` without the sparse matrix: the serving path, where a
        turn has a handful of documents and building scipy matrices costs more than the
        product (0.2 ms a block)."""
        out = np.zeros((len(docs), weights.shape[1]), dtype=np.float32)
        done: dict[str, int] = {}  # a message's statements share their whole-message document
        for i, doc in enumerate(docs):
            if doc in done:
                out[i] = out[done[doc]]
                continue
            done[doc] = i
            row = self._row(doc)
            if row:
                cols = np.fromiter(row.keys(), dtype=np.intp, count=len(row))
                vals = np.fromiter(row.values(), dtype=np.float32, count=len(row))
                out[i] = vals @ weights[cols]
        return out

    def _row(self, doc: str) -> dict[int, float]:
        """A document's l2-normalised sublinear TF-IDF weights by column."""
        counts = Counter(g for g in grams(doc, self.ngram) if g in self.index)
        row = {self.index[g]: (1.0 + math.log(c)) * float(self.idf[self.index[g]])
               for g, c in counts.items()}
        norm = math.sqrt(sum(v * v for v in row.values())) or 1.0
        return {col: v / norm for col, v in row.items()}


def other_side(s: Statement) -> str:
    return ("ANS " + s.answer[:120]) if s.role == "assistant" else ("PREV " + s.previous[-150:])


def neighbours(stmts: Sequence[Statement], k: int) -> str:
    s = stmts[k]
    around = [stmts[j].text for j in (k - 1, k + 1)
              if 0 <= j < len(stmts) and stmts[j].message == s.message]
    return " ".join(around)


def whole_message(stmts: Sequence[Statement], k: int) -> str:
    s = stmts[k]
    return " ".join(t.text for t in stmts if t.message == s.message)[:2000]


def shape(s: Statement, *, compaction: bool, workspace: str | None) -> np.ndarray:
    w = words(s.text)
    n = max(1, len(w))
    first = w[0] if w else ""
    answer = words(s.answer)[:4]
    lower = s.text.lower()
    ws_parts = [p for p in re.split(r"[-_./]", (workspace or "").lower()) if len(p) > 2]
    values = (
        s.role == "user", s.role == "assistant",
        s.position / max(1, s.count), s.position == 0, s.position == s.count - 1, s.count == 1,
        math.log1p(len(w)) / 4, len(w) <= 4, len(w) >= 25,
        bool(_QUESTION_END.search(s.text)), first in _QUESTION_START,
        bool(_DATE.search(s.text)), bool(_CODE.search(s.text)), bool(_DIGIT.search(s.text)),
        sum(x in _I for x in w) / n * 5, sum(x in _WE for x in w) / n * 5,
        sum(x in _YOU for x in w) / n * 5,
        any(x in _ALWAYS for x in w), any(x in _PAST for x in w), any(x in _REASON for x in w),
        any(x in _NEGATION for x in w), any(x in _PLEASE for x in w),
        "from now on" in lower or "going forward" in lower,
        bool(answer) and answer[0] in AGREE, bool(answer) and answer[0] in DISAGREE,
        any(x in AGREE for x in answer), any(x in DISAGREE for x in answer),
        "?" in s.previous, bool(s.previous), bool(s.previous) and len(w) <= 6,
        s.text.strip().endswith("!"), compaction, s.text[:1].isupper(),
        bool(ws_parts) and any(p in lower for p in ws_parts),
    )
    return np.asarray(values, dtype=np.float32)


def dense_block(stmts: Sequence[Statement], vectors: np.ndarray, *, compaction: bool,
                workspace: str | None) -> np.ndarray:
    """Blocks 4 and 5 for every statement of one conversation."""
    dim = vectors.shape[1] if len(vectors) else 0
    zero = np.zeros(dim, dtype=np.float32)
    by_message: dict[int, list[int]] = {}
    for i, s in enumerate(stmts):
        by_message.setdefault(s.message, []).append(i)
    means = {m: vectors[idx].mean(axis=0) for m, idx in by_message.items()}
    rows = []
    for i, s in enumerate(stmts):
        prev = vectors[i - 1] if i > 0 and stmts[i - 1].message == s.message else zero
        other = means.get(s.message + 1 if s.role == "assistant" else s.message - 1, zero)
        rows.append(np.concatenate([vectors[i], prev, other,
                                    shape(s, compaction=compaction, workspace=workspace)]))
    width = 3 * dim + len(SHAPE_FEATURES)
    return np.vstack(rows).astype(np.float32) if rows else np.zeros((0, width), np.float32)
