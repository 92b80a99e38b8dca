"""Lexical side of recall: a tokeniser that keeps exact names, and an in-memory BM25 index.

Tokens are lowercased words. A compound such as `orders.int.spec.ts`, `shop-api` or
`@scope/pkg` is kept whole *and* split into its parts, so both the exact name and its pieces
match. Stop words are dropped; plain alphabetic words get a light suffix-stripping stem
(`deployments` -> `deployment`, `painted` -> `paint`) so inflections meet.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

# a run of word characters joined by . _ - / @ + # (code names, paths, versions, handles)
_TOKEN_RE = re.compile(r"[@#]?[\w]+(?:[._\-/@+#:][\w]+)*[+#]*", re.UNICODE)
_PART_RE = re.compile(r"[^\W_]+", re.UNICODE)

STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each else ever few for from further get gets got had hadn't
    has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself
    his how how's however i i'd i'll i'm i've if in into is isn't it it's its itself just let's
    like me more most much must mustn't my myself no nor not now of off on once only or other
    ought our ours ourselves out over own really same shan't she she'd she'll she's should
    shouldn't so some such than that that's the their theirs them themselves then there
    there's these they they'd they'll they're they've this those through to too under until up
    upon us very was wasn't we we'd we'll we're we've were weren't what what's when when's
    where where's whether which while who who's whom whose why why's will with won't would
    wouldn't yes yet you you'd you'll you're you've your yours yourself yourselves
    s t d ll m re ve oh yeah hey hi
    """.split()
)


def stem(word: str) -> str:
    """A light English stemmer: plural, -ing, -ed and -ly suffixes; leaves short words alone."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix, min_len in (("ing", 6), ("ed", 5)):
        if word.endswith(suffix) and len(word) >= min_len:
            base = word[: -len(suffix)]
            if len(base) >= 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # running -> run, stopped -> stop
            elif base.endswith(("at", "bl", "iz")):
                base += "e"  # created -> create
            return base if any(c in "aeiouy" for c in base) else word
    if word.endswith("ly") and len(word) >= 6:
        return word[:-2]
    return word


def tokenize(text: str) -> list[str]:
    """Lowercased, stop-worded, lightly stemmed tokens; compounds kept whole and split."""
    out: list[str] = []
    for match in _TOKEN_RE.finditer(text.lower().replace("\u2019", "'")):
        token = match.group(0)
        parts = _PART_RE.findall(token)
        if len(parts) > 1 or token != (parts[0] if parts else ""):
            whole = token.strip("._-/:")
            if whole and whole not in STOP_WORDS:
                out.append(whole)  # the exact name: `orders.int.spec.ts`, `c++`, `@org/pkg`
        for part in parts:
            if part in STOP_WORDS:
                continue
            out.append(stem(part))
    return out


@dataclass(frozen=True)
class LexicalHit:
    """A document id and its BM25 score."""

    doc_id: str
    score: float


class BM25Index:
    """Okapi BM25 over an in-memory inverted index, scored with numpy; thread-safe.

    Documents live in integer slots; each term's postings are turned into (slots, tfs) arrays
    on first use after a change, so a query costs a few vector operations per query term
    rather than a Python loop over every matching document (~1 ms at 100k documents).
    Each document may carry a small integer `group` (the index uses the memory kind) that a
    search can be restricted to.
    """

    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._postings: dict[str, dict[int, int]] = {}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._slot_of: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._free: list[int] = []
        self._lengths = np.zeros(64, dtype=np.float32)
        self._groups = np.zeros(64, dtype=np.int16)
        self._doc_terms: dict[int, tuple[str, ...]] = {}
        self._total_length = 0
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._slot_of

    def add(self, doc_id: str, text: str, *, group: int = 0) -> None:
        """Index `text` under `doc_id` (in `group`), replacing what was there."""
        counts = Counter(tokenize(text))
        with self._lock:
            self._discard(doc_id)
            slot = self._free.pop() if self._free else len(self._ids)
            if slot == len(self._ids):
                self._ids.append(doc_id)
                if slot >= len(self._lengths):
                    self._lengths = np.resize(self._lengths, 2 * len(self._lengths))
                    self._groups = np.resize(self._groups, 2 * len(self._groups))
            else:
                self._ids[slot] = doc_id
            self._slot_of[doc_id] = slot
            length = sum(counts.values())
            self._lengths[slot] = length
            self._groups[slot] = group
            self._total_length += length
            self._doc_terms[slot] = tuple(counts)
            for term, tf in counts.items():
                self._postings.setdefault(term, {})[slot] = tf
                self._arrays.pop(term, None)

    def add_many(self, items: Iterable[tuple[str, str]]) -> None:
        """Index several (doc_id, text) pairs."""
        for doc_id, text in items:
            self.add(doc_id, text)

    def remove(self, doc_ids: Iterable[str]) -> None:
        """Forget the given documents (unknown ids are ignored)."""
        with self._lock:
            for doc_id in doc_ids:
                self._discard(doc_id)

    def _discard(self, doc_id: str) -> None:
        slot = self._slot_of.pop(doc_id, None)
        if slot is None:
            return
        self._total_length -= int(self._lengths[slot])
        self._lengths[slot] = 0
        self._ids[slot] = None
        self._free.append(slot)
        for term in self._doc_terms.pop(slot, ()):
            self._arrays.pop(term, None)
            posting = self._postings.get(term)
            if posting is not None:
                posting.pop(slot, None)
                if not posting:
                    del self._postings[term]

    def _term_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        arrays = self._arrays.get(term)
        if arrays is None:
            posting = self._postings.get(term)
            if not posting:
                return None
            slots = np.fromiter(posting.keys(), dtype=np.int64, count=len(posting))
            tfs = np.fromiter(posting.values(), dtype=np.float32, count=len(posting))
            arrays = self._arrays[term] = (slots, tfs)
        return arrays

    def search(
        self,
        query_tokens: Sequence[str],
        *,
        limit: int,
        allow: Collection[str] | None = None,
        groups: Collection[int] | None = None,
    ) -> list[LexicalHit]:
        """Top `limit` documents by BM25; `allow` (ids) or `groups` restrict the candidates."""
        with self._lock:
            n_docs = len(self._slot_of)
            if not n_docs or not query_tokens or limit <= 0:
                return []
            avg_len = self._total_length / n_docs or 1.0
            scores = np.zeros(len(self._ids), dtype=np.float32)
            touched = False
            for term, qtf in Counter(query_tokens).items():
                arrays = self._term_arrays(term)
                if arrays is None:
                    continue
                slots, tfs = arrays
                df = len(slots)
                idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
                norm = self.k1 * (1.0 - self.b + self.b * self._lengths[slots] / avg_len)
                scores[slots] += qtf * idf * tfs * (self.k1 + 1.0) / (tfs + norm)
                touched = True
            if not touched:
                return []
            if groups is not None:
                keep = np.isin(self._groups[: len(scores)], np.fromiter(groups, dtype=np.int16))
                scores[~keep] = 0.0
            hits = np.flatnonzero(scores > 0.0)
            ids = self._ids
            if allow is not None:
                hits = np.array([h for h in hits if ids[h] in allow], dtype=np.int64)
            if len(hits) > limit:
                hits = hits[np.argpartition(-scores[hits], limit - 1)[:limit]]
            ranked = sorted(((ids[h], float(scores[h])) for h in hits), key=lambda t: (-t[1], t[0]))
        return [LexicalHit(str(doc_id), score) for doc_id, score in ranked]
