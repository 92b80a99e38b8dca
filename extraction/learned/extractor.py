"""LearnedExtractor: statements in, the trained model's decision, memories out.

For one turn or compacted stretch: cut the statements (statements.py); on a very long stretch,
let the word-only prefilter pick which ones are worth embedding; embed the first
`embed_tokens` tokens of each (the model's setting, `embedding_texts`) through the Embedder
port in one call; score them (model.py's linear heads, then rescore.py's second look
at each beside the rest); keep those over the threshold for the trigger; a user's bare "yes,
right" hands its weight to the agent's finding it confirms, and an answer that agrees and goes
on about the finding ("correct, and it has to stay that way") takes it along; the kept
statements of one message make one candidate (its kind and scope the probability-weighted vote
of its statements); at most `cap` candidates, the surest first; each phrased as a standalone
memory (phrasing.py) with a calibrated confidence.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from memvet.extraction.learned import phrasing
from memvet.extraction.learned.model import KINDS, ExtractorModel, ExtractorModelError
from memvet.extraction.learned.statements import AGREE, Statement, statements, words
from memvet.memory.kinds import Kind
from memvet.memory.namespaces import slugify
from memvet.memory.ports import (
    Embedder,
    ExtractedCandidate,
    ExtractionContext,
    Message,
    TruncatingEmbedder,
)

log = logging.getLogger(__name__)

PREFILTER_AT = 300  # statements: past this many, only the prefilter's best are embedded
EMBED_BUDGET = 1500  # statements embedded at most per call (~5 s on two cores)


@dataclass(frozen=True)
class Scores:
    """The model's reading of one turn: per statement, P(memorable) (after the rescorer's
    second look: which messages hold a memory), P(kind), P(persona), and the linear heads' own
    P(memorable) (`first`: which sentences of such a message say it; None: `memorable`)."""

    statements: list[Statement]
    memorable: np.ndarray
    kinds: np.ndarray
    persona: np.ndarray
    context: ExtractionContext
    workspace: str | None
    first: np.ndarray | None = None


@dataclass
class _Group:
    message: int
    members: list[int] = field(default_factory=list)
    score: float = 0.0


class LearnedExtractor:
    """The default extractor (MEMVET_EXTRACTOR=learned)."""

    name = "learned"

    def __init__(self, embedder: Embedder, model: ExtractorModel | None = None) -> None:
        self.model = model or ExtractorModel.load()
        if (embedder.model_id != self.model.embedder_model_id
                or embedder.dimension != self.model.dimension):
            raise ExtractorModelError(
                f"the learned extractor was trained on {self.model.embedder_model_id} vectors "
                f"({self.model.dimension} dimensions) and was handed {embedder.model_id} "
                f"({embedder.dimension}); give it the packaged model's embedder")
        if self.model.embed_tokens and not isinstance(embedder, TruncatingEmbedder):
            raise ExtractorModelError(
                f"the learned extractor embeds each statement's first {self.model.embed_tokens} "
                "tokens, and its embedder cannot cut texts to tokens; give it the packaged "
                "model's embedder")
        self.embedder = embedder

    def extract(self, messages: Sequence[Message], context: ExtractionContext
                ) -> list[ExtractedCandidate]:
        try:
            return self._extract(messages, context)
        except Exception:  # odd input must never fail a turn
            log.exception("learned extraction failed; returning no candidates")
            return []

    def _extract(self, messages: Sequence[Message], context: ExtractionContext
                 ) -> list[ExtractedCandidate]:
        scored = self.score(messages, context)
        return self.decode(scored) if scored is not None else []

    def score(self, messages: Sequence[Message], context: ExtractionContext) -> Scores | None:
        """What the model makes of each statement (None: nothing to read)."""
        stmts = statements(messages)
        if not stmts:
            return None
        compaction = context.trigger == "compaction"
        workspace = slugify(context.workspace) if context.workspace else None
        stmts = self._worth_embedding(stmts)
        vectors = np.asarray(self.embedder.embed(
            embedding_texts(self.embedder, stmts, self.model.embed_tokens)), dtype=np.float32)
        first, kinds, persona = self.model.predict_statements(
            stmts, vectors, compaction=compaction, workspace=workspace)
        memorable = self.model.rescore(stmts, first, kinds, compaction=compaction)
        return Scores(stmts, memorable, kinds, persona, context, workspace, first)

    def decode(self, scored: Scores, threshold: float | None = None
               ) -> list[ExtractedCandidate]:
        """Scored statements to candidates, at the model's threshold for the trigger (or
        `threshold`)."""
        model, params, stmts = self.model, self.model.params, scored.statements
        compaction = scored.context.trigger == "compaction"
        if threshold is None:
            threshold = float(params["threshold_compaction" if compaction else "threshold_turn"])
        groups = _with_findings(stmts, _groups(stmts, scored.memorable, threshold, scored.first),
                                scored.memorable)
        # 0-3 durable items in a stretch of 10-40 messages; a very long one may hold more
        cap = max(int(params.get("cap", 3)), len({s.message for s in stmts}) // 20)
        groups = sorted(groups, key=lambda g: -g.score)
        out: list[ExtractedCandidate] = []
        said: set[str] = set()
        for g in groups:
            weights = np.maximum(scored.memorable[g.members], 0.05)
            votes = (scored.kinds[g.members] * weights[:, None]).sum(axis=0)
            kind = KINDS[int(np.argmax(votes))]
            about_person = kind is Kind.PREFERENCE and float(
                (scored.persona[g.members] * weights).sum() / weights.sum()) > 0.5
            content = phrasing.render(_sentences(stmts, g), persona=about_person,
                                      workspace=scored.workspace)
            key = " ".join(content.lower().split())
            if not content or key in said:  # a remark repeated in a long stretch: once
                continue
            said.add(key)
            if len(out) >= cap:
                break
            ctx = scored.context
            namespace = (f"persona:{slugify(ctx.persona or 'default')}"
                         if about_person or scored.workspace is None
                         else f"workspace:{scored.workspace}")
            out.append(ExtractedCandidate(
                content=content, kind=kind, namespace=namespace,
                confidence=round(model.confidence(g.score), 3),
                excerpt=" ".join(stmts[i].text for i in sorted(g.members))[:4000]))
        return out

    def _worth_embedding(self, stmts: list[Statement]) -> list[Statement]:
        """All of them, unless there are many: then the prefilter's best and their context."""
        if len(stmts) <= PREFILTER_AT:
            return stmts
        scores = self.model.prefilter(self.model.word_features(stmts))
        best = set(np.argsort(-scores)[: EMBED_BUDGET // 3].tolist())
        keep = set(best)
        for i in best:
            s = stmts[i]
            if i > 0:
                keep.add(i - 1)
            other = s.message + 1 if s.role == "assistant" else s.message - 1
            keep.update(j for j, t in enumerate(stmts) if t.message == other)
            if len(keep) >= EMBED_BUDGET:
                break
        return [stmts[i] for i in sorted(keep)]


def embedding_texts(embedder: Embedder, stmts: Sequence[Statement], max_tokens: int | None
                    ) -> list[str]:
    """What is embedded of each statement: its first `max_tokens` tokens (None: all of it).
    The vector carries a statement's gist, which its first words hold; its words all count
    in the word blocks. On the 2-core machine a token costs ~0.35 ms, and a turn's statements
    hold up to ~80 of them."""
    texts = [s.text for s in stmts]
    if not max_tokens:
        return texts
    assert isinstance(embedder, TruncatingEmbedder)  # LearnedExtractor checks it up front
    return embedder.truncate(texts, max_tokens)


def _is_confirmation(s: Statement) -> bool:
    w = words(s.text)
    return s.role == "user" and s.position == 0 and 0 < len(w) <= 10 and w[0] in AGREE


def _groups(stmts: list[Statement], memorable: np.ndarray, threshold: float,
            first: np.ndarray | None = None) -> list[_Group]:
    """Kept statements by message; a confirmation speaks for the agent's finding before it.

    With `first` (the linear heads' own scores): a message that holds a memory by `memorable`
    also takes its other statements whose first score passes the threshold. The rescorer
    judges whether a message holds a memory against the rest of the excerpt and so marks
    down a second sentence beside a sure one, which may still be the one that names the thing
    ("You bumped numpy to 2.1 again. Keep it below 2, scipy 1.9 breaks.")."""
    groups: dict[int, _Group] = {}
    for i, s in enumerate(stmts):
        score = float(memorable[i])
        if score < threshold:
            continue
        member = i
        if _is_confirmation(s):
            agent = [j for j, t in enumerate(stmts) if t.message == s.message - 1]
            if not agent:
                continue
            member = max(agent, key=lambda j: float(memorable[j]))
        g = groups.setdefault(stmts[member].message, _Group(stmts[member].message))
        if member not in g.members:
            g.members.append(member)
        g.score = max(g.score, score)
    if first is not None:
        for i, s in enumerate(stmts):
            owner = groups.get(s.message)
            if (owner is not None and i not in owner.members and float(first[i]) >= threshold
                    and not _is_confirmation(s)):
                owner.members.append(i)
    return list(groups.values())


def _with_findings(stmts: list[Statement], groups: list[_Group], memorable: np.ndarray
                   ) -> list[_Group]:
    """A user's answer that agrees and goes on about the agent's finding ("correct, and it has
    to stay that way because ...") takes the finding along, the agent's likeliest sentence:
    one candidate that says what "it" is, not two halves. The finding's own group, if it was
    kept too, joins it."""
    by_message = {g.message: g for g in groups}
    for g in list(by_message.values()):
        if not _goes_on_about_the_finding(stmts, min(g.members)):
            continue
        agent = [j for j, t in enumerate(stmts)
                 if t.message == g.message - 1 and t.role == "assistant"]
        if not agent:
            continue
        found = by_message.pop(g.message - 1, None)
        extra = [max(agent, key=lambda j: float(memorable[j]))] + (found.members if found else [])
        g.members += [j for j in dict.fromkeys(extra) if j not in g.members]
        g.score = max(g.score, found.score if found else 0.0)
    return list(by_message.values())


def _goes_on_about_the_finding(stmts: list[Statement], i: int) -> bool:
    """The user's answer opens with statement i, which agrees and refers back ("correct, and
    it has to ..."), or refers back after a bare agreement ("Exactly. It happens when ...")."""
    s = stmts[i]
    if s.role != "user":
        return False
    if s.position == 0:
        return phrasing.agrees_and_refers(s.text)
    return phrasing.needs_antecedent(s.text) and all(
        phrasing.bare_agreement(stmts[j].text) for j in range(i - s.position, i))


def _sentences(stmts: list[Statement], g: _Group) -> list[str]:
    """The group's sentences in order (an agent's without its hedge, `phrasing.finding`); one
    that opens with a bare pronoun brings the sentence before it (same message) when that one
    is not a question."""
    chosen = set(g.members)
    for i in sorted(g.members):
        if phrasing.needs_antecedent(stmts[i].text) and i > 0:
            prev = stmts[i - 1]
            if prev.message == stmts[i].message and not prev.text.rstrip().endswith("?"):
                chosen.add(i - 1)
    return [phrasing.finding(stmts[i].text) if stmts[i].role == "assistant" else stmts[i].text
            for i in sorted(chosen)]

