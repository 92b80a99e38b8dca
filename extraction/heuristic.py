"""The default extractor: cue lexicons over the user's own sentences, no model server.

Per user message: cut code, traces, logs and quotes; split into sentences; drop questions,
hypotheticals, jokes, one-off instructions and anything the user took back; score the rest
against the cues for each kind; group neighbouring sentences into candidates (a reason or a
detail said right after a rule belongs to it); rephrase each as a standalone memory.
The agent's own words are only used when the user confirms a rule the agent proposed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from memvet.extraction import cues, phrasing
from memvet.extraction.segment import Sentence, sentences
from memvet.memory.kinds import Kind
from memvet.memory.namespaces import slugify
from memvet.memory.ports import ExtractedCandidate, ExtractionContext, Message

log = logging.getLogger(__name__)

# Bounds that keep one call in bounded time whatever it is handed (a 10,000-message
# compaction, a megabyte of binary junk).
MAX_MESSAGES_SCANNED = 10_000
MAX_CHARS_SCANNED = 500_000  # of user text: about 2 s at worst
MAX_CANDIDATES = 40
MAX_SENTENCES_PER_CANDIDATE = 4

START = 1.0  # a sentence starts a candidate on its own from this score on

_EMPHASIS = re.compile(r"\b(?:NEVER|ALWAYS|MUST|DO NOT|DON'T|NOT)\b")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


@dataclass
class _Sent:
    text: str
    probe: str
    status: str = "keep"  # keep | drop | short
    kind: Kind | None = None
    score: float = 0.0
    persona: bool = False


@dataclass
class _Group:
    kind: Kind
    persona: bool
    sents: list[_Sent] = field(default_factory=list)
    score: float = 0.0


@dataclass
class _Found:
    group: _Group
    message_index: int
    acknowledged: bool
    memory_request: bool
    confirmed_proposal: bool = False


def _probe(sentence: Sentence) -> str:
    return sentence.probe.translate(_APOSTROPHES).lower().strip()


def _classify(s: _Sent, next_probe: str) -> None:
    """Set `s.status`, `s.kind`, `s.score` and `s.persona` from the cues."""
    p = s.probe
    if len(p.split()) < 3:
        s.status = "short"
        return
    if (
        cues.QUESTION.search(p)
        or cues.HYPOTHETICAL.search(p)
        or cues.JOKE.search(p)
        or cues.AGENT_NARRATION.search(p)
    ):
        s.status = "drop"
        return

    scores: dict[tuple[Kind, bool], float] = {}
    pref = cues.score(p, cues.PREFERENCE)
    pattern = cues.score(p, cues.PATTERN)
    decision = cues.score(p, cues.DECISION)
    fact = cues.score(p, cues.FACT)
    pref_ws = cues.score(p, cues.PREFERENCE_WORKSPACE)
    if pref >= START and pattern >= START and not cues.PERSONA_SCOPE.search(p):
        pref = 0.0
    scores[(Kind.PREFERENCE, True)] = pref
    scores[(Kind.PREFERENCE, False)] = pref_ws
    scores[(Kind.PATTERN, False)] = pattern
    scores[(Kind.DECISION, False)] = decision
    scores[(Kind.FACT, False)] = fact
    if cues.PERSONA_FACT.search(p):
        scores[(Kind.FACT, True)] = 1.2
    dated = cues.DATE.search(p) or (
        next_probe.startswith(("that was", "this was", "it was")) and cues.DATE.search(next_probe)
    )
    if cues.EVENT_VERB.search(p) and dated and not cues.FUTURE.search(p):
        scores[(Kind.EVENT, False)] = 2.0
    if _EMPHASIS.search(s.text):  # NEVER / ALWAYS in capitals: the user means it as a rule
        for key in ((Kind.PATTERN, False), (Kind.FACT, False)):
            if scores[key] == max(scores[(Kind.PATTERN, False)], scores[(Kind.FACT, False)]):
                scores[key] += 0.3
                break

    imperative = cues.ONE_OFF_VERB.search(p) is not None
    if imperative and not cues.GENERAL.search(p):
        # "remove the logs before you commit": a task for now, whatever rule it mentions
        for key in ((Kind.PATTERN, False), (Kind.DECISION, False), (Kind.FACT, False)):
            scores[key] -= 0.5
    order = {k: i for i, k in enumerate(cues.KIND_PRIORITY)}
    (kind, persona), best = max(scores.items(), key=lambda kv: (kv[1], -order[kv[0][0]]))

    if imperative and not cues.GENERAL.search(p) and best < START:
        s.status = "drop"
        return
    if imperative and re.search(r"\bnow\W*$", p) and best < START:
        s.status = "drop"
        return
    if kind is not Kind.EVENT and cues.TEMPORARY.search(p) and not cues.GENERAL.search(p):
        s.status = "drop"
        return
    if best > 0:
        s.kind, s.score, s.persona = kind, best, persona


def _apply_retractions(sents: list[_Sent]) -> bool:
    """Drop what the user took back; True when the take-back opens the message."""
    retract_previous = False
    for j, s in enumerate(sents):
        if cues.RETRACTION.search(s.probe):
            earlier = [x for x in sents[:j] if x.status == "keep" and x.kind is not None]
            if not earlier:
                retract_previous = True
            for x in sents[: j + 1]:
                x.status = "drop"
        elif cues.JOKE_RETRACT.search(s.probe):
            for x in sents[max(0, j - 1) : j + 1]:
                x.status = "drop"
    return retract_previous


def _apply_option_pick(sents: list[_Sent], previous_assistant: str) -> None:
    """'b.' after the agent offered (a)/(b): the next statement is the decision."""
    if not previous_assistant or not cues.OPTIONS_OFFERED.search(previous_assistant):
        return
    for j, s in enumerate(sents[:2]):
        if cues.OPTION_PICK.match(s.probe):
            for x in sents[j + 1 :]:
                if x.status == "keep":
                    if x.kind is None or x.kind is Kind.FACT or x.score < START:
                        x.kind, x.persona = Kind.DECISION, False
                    x.score = max(x.score, 1.2)
                    return


def _group(sents: list[_Sent]) -> list[_Group]:
    groups: list[_Group] = []
    current: _Group | None = None
    context: _Sent | None = None  # an uncued statement right before a rule
    for s in sents:
        if s.status == "short":
            continue
        if s.status == "drop":
            current, context = None, None
            continue
        if s.kind is None or s.score < START:
            if current is not None and len(current.sents) < MAX_SENTENCES_PER_CANDIDATE:
                current.sents.append(s)
                # weak evidence adds up: three hints of the same thing make a statement
                current.score += (0.5 if current.score < START else 0.1) * s.score
            elif current is None:
                if s.kind is not None and s.score >= 0.6:
                    current = _Group(s.kind, s.persona, [s], s.score)
                    groups.append(current)
                elif not cues.FEEDBACK.search(s.probe):
                    context = s
            continue
        same = current is not None and (current.kind, current.persona) == (s.kind, s.persona)
        # what follows an event is usually its consequence ("the old host is read-only now")
        consequence = current is not None and current.kind is Kind.EVENT and s.kind is Kind.FACT
        if current is not None and (same or consequence):
            if len(current.sents) < MAX_SENTENCES_PER_CANDIDATE:
                current.sents.append(s)
            current.score = max(current.score, s.score) + 0.2
            continue
        if current is not None and current.score < START:
            # a weak opener joins the stronger statement that follows
            current.kind, current.persona = s.kind, s.persona
            current.sents.append(s)
            current.score = s.score
            continue
        current = _Group(s.kind, s.persona, [s], s.score)
        if context is not None:
            current.sents.insert(0, context)
        context = None
        groups.append(current)
    groups = [g for g in groups if g.score >= START]
    # one candidate per kind and namespace per message
    merged: dict[tuple[Kind, bool], _Group] = {}
    for g in groups:
        key = (g.kind, g.persona)
        if key in merged:
            merged[key].sents.extend(g.sents)
            merged[key].score = max(merged[key].score, g.score)
        else:
            merged[key] = g
    return list(merged.values())


def _postmortem(sents: list[_Sent], full_probe: str, groups: list[_Group]) -> list[_Group]:
    """A failure told together with its lesson is one postmortem, not several rules."""
    if not cues.FAILURE.search(full_probe):
        return groups
    if not (cues.LESSON.search(full_probe) or cues.CAUSE.search(full_probe)):
        return groups
    keep = [g for g in groups if g.kind is Kind.PREFERENCE and g.persona]
    taken = {id(s) for g in keep for s in g.sents}
    body = [
        s
        for s in sents
        if id(s) not in taken
        and (s.status == "keep" or (s.status != "short" and cues.FAILURE.search(s.probe)))
    ]
    if not body:
        return groups
    score = 1.2 + 0.3 * bool(re.search(r"\b(?:because|due to|caused|that's why)\b", full_probe))
    return [*keep, _Group(Kind.POSTMORTEM, False, body[:6], score)]


def _confirmed_proposal(previous_assistant: str) -> _Group | None:
    """The user said 'yes' to a rule the agent proposed ("Should I always ...?")."""
    question = sentences(previous_assistant)[-1:] if previous_assistant else []
    if not question:
        return None
    p = _probe(question[0])
    if not p.endswith("?") or not cues.GENERAL.search(p):
        return None
    stated = (
        re.sub(
            r"^(?:should i|shall i|do you want me to|want me to|should we|so i should)\s+", "", p
        )
        .rstrip("?")
        .strip()
    )
    if stated == p.rstrip("?").strip():
        return None
    s = _Sent(stated, stated)
    _classify(s, "")
    if s.status != "keep" or s.kind is None or s.score < 0.6:
        return None
    return _Group(s.kind, s.persona, [s], s.score)


class HeuristicExtractor:
    """Rule-based extraction: fast, offline, deterministic. Never raises."""

    name = "heuristic"
    background = False

    def extract(
        self, messages: Sequence[Message], context: ExtractionContext
    ) -> list[ExtractedCandidate]:
        try:
            return self._extract(messages, context)
        except Exception:  # odd input must never fail a turn
            log.exception("heuristic extraction failed; returning no candidates")
            return []

    def _extract(
        self, messages: Sequence[Message], context: ExtractionContext
    ) -> list[ExtractedCandidate]:
        found: list[_Found] = []
        last_user_index = -1
        budget = MAX_CHARS_SCANNED
        msgs = list(messages[:MAX_MESSAGES_SCANNED])
        for i, m in enumerate(msgs):
            if budget <= 0:
                break
            content = getattr(m, "content", None)
            if getattr(m, "role", None) != "user" or not isinstance(content, str):
                continue
            budget -= min(len(content), 6_000)
            prev = msgs[i - 1] if i > 0 else None
            previous_assistant = (
                prev.content
                if prev is not None and prev.role == "assistant" and isinstance(prev.content, str)
                else ""
            )
            nxt = msgs[i + 1] if i + 1 < len(msgs) else None
            acknowledged = bool(
                nxt is not None
                and nxt.role == "assistant"
                and isinstance(nxt.content, str)
                and cues.ACK.search(nxt.content[:80])
            )
            segs = sentences(content)
            sents = [_Sent(s.text, _probe(s)) for s in segs]
            if len(sents) == 1 and cues.CONFIRM.match(sents[0].probe):
                group = _confirmed_proposal(previous_assistant)
                if group is not None:
                    found.append(_Found(group, i, True, False, confirmed_proposal=True))
                last_user_index = i
                continue
            for j, s in enumerate(sents):
                _classify(s, sents[j + 1].probe if j + 1 < len(sents) else "")
            if _apply_retractions(sents):
                found = [f for f in found if f.message_index != last_user_index]
            _apply_option_pick(sents, previous_assistant)
            full_probe = " ".join(s.probe for s in sents)
            groups = _postmortem(sents, full_probe, _group(sents))
            request = bool(cues.MEMORY_REQUEST.search(full_probe))
            found.extend(_Found(g, i, acknowledged, request) for g in groups)
            last_user_index = i
        return self._candidates(found, context)[:MAX_CANDIDATES]

    def _candidates(
        self, found: list[_Found], context: ExtractionContext
    ) -> list[ExtractedCandidate]:
        workspace = slugify(context.workspace) if context.workspace else None
        persona_ns = f"persona:{slugify(context.persona or 'default')}"
        out: list[ExtractedCandidate] = []
        seen: set[tuple[str, str, str]] = set()
        for f in found:
            g = f.group
            persona_view = g.persona or workspace is None
            namespace = persona_ns if persona_view else f"workspace:{workspace}"
            texts = [s.text for s in g.sents]
            content = phrasing.render(
                texts, persona_view=g.persona, workspace=None if g.persona else workspace
            )
            if len(content) < 8:
                continue
            key = (g.kind.value, namespace, re.sub(r"\W+", " ", content.lower()).strip())
            if key in seen:
                continue
            seen.add(key)
            out.append(
                ExtractedCandidate(
                    content=content,
                    kind=g.kind,
                    namespace=namespace,
                    confidence=_confidence(f),
                    excerpt=" ".join(texts)[:1000],
                )
            )
        return out


def _confidence(f: _Found) -> float:
    """Cue strength, nudged by the agent acknowledging it and by an explicit 'remember'."""
    conf = 0.3 + 0.2 * min(f.group.score, 2.5)
    if f.acknowledged:
        conf += 0.08
    if f.memory_request:
        conf += 0.05
    if f.confirmed_proposal:
        conf -= 0.15
    if f.group.kind in (Kind.DECISION, Kind.POSTMORTEM) and len(f.group.sents) > 1:
        conf += 0.03  # said with a reason
    return round(max(0.05, min(conf, 0.95)), 2)
