"""Candidate statements: the sentences of a conversation a memory could come from.

Every prose sentence of a user message is one (code, logs, traces and quoted text are cut
first, by extraction/segment.py). So is every sentence of an agent message that a user message
answers: the agent's finding becomes a memory when the user confirms it, and the model learns
that from the answer. Tool and system messages carry none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memvet.extraction.segment import sentences
from memvet.memory.ports import Message

MAX_MESSAGES = 10_000
MAX_STATEMENTS = 6_000  # per call: about 10 s of embedding at worst on two cores
MAX_STATEMENTS_PER_MESSAGE = 40

_WORD = re.compile(r"[a-z0-9']+")
# The first words of an answer: does the user agree, or push back? (Features, not rules.)
AGREE = frozenset("yes yep yeah yup right correct exactly true indeed confirmed agreed "
                  "absolutely definitely sure ok okay k good perfect precisely".split())
DISAGREE = frozenset("no nope nah not wrong incorrect actually don't dont never "
                     "wait hmm but".split())


@dataclass(frozen=True)
class Statement:
    """One candidate sentence and where it sits."""

    text: str
    message: int  # index into the messages
    role: str  # user | assistant
    position: int  # sentence index within its message
    count: int  # sentences in its message
    answer: str  # for an agent's sentence: the start of the user's answer; else ""
    previous: str  # the agent's message the user answered, its start; else ""


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def statements(messages: Sequence[Message]) -> list[Statement]:
    """Every candidate statement of `messages`, in order, bounded in number."""
    out: list[Statement] = []
    msgs = list(messages[:MAX_MESSAGES])
    for i, m in enumerate(msgs):
        if m.role not in ("user", "assistant"):
            continue
        answer = previous = ""
        if m.role == "assistant":
            nxt = msgs[i + 1] if i + 1 < len(msgs) else None
            if nxt is None or nxt.role != "user":
                continue  # nobody answered it: the agent's own say-so is no memory
            answer = nxt.content[:300]
        else:
            prev = msgs[i - 1] if i > 0 else None
            previous = prev.content[:300] if prev is not None and prev.role == "assistant" else ""
        sents = sentences(m.content)[:MAX_STATEMENTS_PER_MESSAGE]
        for j, s in enumerate(sents):
            out.append(Statement(s.text, i, m.role, j, len(sents), answer, previous))
            if len(out) >= MAX_STATEMENTS:
                return out
    return out
