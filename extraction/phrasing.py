"""Rephrase what a user said into a memory that still reads right months later.

"we're on pnpm here" said in the shop-api workspace becomes "shop-api uses pnpm"; "don't
commit for me, I review and commit myself" becomes "... for the user, the user reviews and
commits themselves". Light, rule-based rewriting: every term the user wrote is kept.
"""

from __future__ import annotations

import re

MAX_CONTENT_CHARS = 600

_FILLER_FREE = (
    r"ok|okay|so|and|also|oh|ah|yeah|yep|ugh|argh|hmm+|hm|well|honestly|btw|fyi|heads up|"
    r"pls|plz|please|alright|and for the record|for the record|just so you know|oh right|"
    r"oh god|good catch|write this down|note for the future|important|careful|note|"
    r"(?:please )?(?:remember|keep in mind|don't forget|never forget) that"
)
_FILLER_PUNCT = (
    r"yes|no|right|wait|good|cool|nice|fine|k|sure|final answer|always|then|nah|ty|stop|listen|"
    r"look|one more thing|one last thing|quick note|side note|reminder|for context|"
    r"before (?:we|you) (?:continue|start|go on|move on|proceed)"
)
_LEADING_FILLER = re.compile(
    r"^(?:(?:(?:" + _FILLER_FREE + r")\b(?!-\w)[,.:;!\-]*|(?:" + _FILLER_PUNCT
    + r")(?!-\w)[,.:;!\-]+)\s*)+",
    re.I,
)

_NO_S = {
    "is",
    "was",
    "has",
    "can",
    "could",
    "will",
    "would",
    "should",
    "must",
    "might",
    "may",
    "does",
    "did",
    "doesn't",
    "didn't",
    "isn't",
    "wasn't",
    "won't",
    "can't",
    "cannot",
    "shall",
    "had",
    "needs",
    "uses",
    "wants",
    "hit",
    "cut",
    "put",
    "set",
    "let",
    "shut",
    "quit",
    "read",
    "spread",
    "cost",
    "hurt",
    "split",
    "got",
    "went",
    "made",
    "said",
    "ran",
    "found",
}
_ADVERBS = {
    "just",
    "also",
    "only",
    "always",
    "never",
    "really",
    "usually",
    "already",
    "still",
    "generally",
    "often",
    "mostly",
    "rarely",
    "sometimes",
    "actually",
    "anyway",
    "all",
    "normally",
    "typically",
    "strongly",
    "much",
}
_SPECIAL = {
    "don't": "doesn't",
    "dont": "doesn't",
    "do": "does",
    "have": "has",
    "am": "is",
    "are": "is",
    "were": "was",
    "'m": "is",
    "haven't": "hasn't",
    "aren't": "isn't",
}


def _third_person(verb: str) -> str:
    low = verb.lower()
    if low in _SPECIAL:
        return _SPECIAL[low]
    if low in _NO_S or not low.isalpha() or low.endswith(("ed", "s")):
        return verb
    if low.endswith(("sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 2 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


_CLAUSE_START = (
    r"(?:^|[,.;:!?(]\s*|\b(?:and|but|so|because|since|that|when|if|as|anyway|assume)\s+)"
)


def _agree(subject: str, text: str) -> str:
    """Make the verb after a clause-initial `subject` third person ("the user review")."""
    rx = re.compile("(" + _CLAUSE_START + re.escape(subject) + r" )((?:[a-z']+ ?){1,3})", re.I)

    def fix(m: re.Match[str]) -> str:
        words = m.group(2).split(" ")
        for i, w in enumerate(words):
            if w.lower() in _ADVERBS:
                continue
            if w:
                words[i] = _third_person(w)
            break
        return m.group(1) + " ".join(words)

    return rx.sub(fix, text)


def persona_view(text: str) -> str:
    """First person becomes "the user", its verbs agreeing ("I review" -> "the user reviews")."""
    rules = [
        (r"(?<![\w./-])i'?m(?![\w/-])", "the user is"),
        (r"(?<![\w./-])i'?ve(?![\w/-])", "the user has"),
        (r"(?<![\w./-])i'?d(?![\w/-])", "the user would"),
        (r"(?<![\w./-])i'?ll(?![\w/-])", "the user will"),
        (r"(?<![\w./-])myself(?![\w/-])", "themselves"),
        (r"(?<![\w./-])mine(?![\w/-])", "the user's"),
        (r"(?<![\w./-])my(?![\w/-])", "the user's"),
        (r"(?<![\w./-])me(?![\w/-])", "the user"),
        (r"(?<![\w./-])i(?![\w/-])", "the user"),
    ]
    for pattern, repl in rules:
        text = re.sub(pattern, repl, text, flags=re.I)
    text = _agree("the user", text)
    # "the user reviews and commit" -> "... and commits": a second verb shares the subject
    return re.sub(r"\b(the user (?:[a-z']+ )?[a-z']+s) and ([a-z']+)\b",
                  lambda m: f"{m.group(1)} and {_third_person(m.group(2))}", text, flags=re.I)


def _workspace_view(text: str, workspace: str) -> str:
    ws = workspace
    rules = [
        (r"(?<![\w./-])(?:we're|we are) (?:on|using)(?![\w/-])", f"the {ws} project uses"),
        (r"(?<![\w./-])(?:in )?this (?:repo|project|codebase)(?![\w/-])", f"in {ws}"),
        (r"(?<![\w./-])our(?![\w/-])", f"the {ws}"),
        (r"(?<![\w./-])we're\b|(?<![\w./-])we are(?![\w/-])", f"the {ws} team is"),
        (r"(?<![\w./-])we've\b|\bwe have(?![\w/-])", f"the {ws} team has"),
        (r"(?<![\w./-])we'll(?![\w/-])", f"the {ws} team will"),
        (r"(?<![\w./-])we(?![\w/-])", f"the {ws} team"),
        (r"(?<![\w-])us(?![\w-])", "the team"),
    ]
    for pattern, repl in rules:
        text = re.sub(pattern, repl, text, flags=re.I)
    text = _agree(f"the {ws} team", text)
    if ws.lower() in text.lower():
        text = re.sub(r"\s*\bhere\b(?!')", "", text, flags=re.I)
    else:
        text = re.sub(r"(?<![\w./-])here\b(?!')", f"in {ws}", text, count=1, flags=re.I)
    if ws.lower() not in text.lower():
        text = f"In {ws}: {text}"
    return text


_user_view = persona_view  # render()'s keyword argument shadows the name


def strip_filler(sentence: str) -> str:
    """Drop leading discourse filler ("ok so", "btw", "heads up:", "remember that")."""
    return _LEADING_FILLER.sub("", sentence).strip(" ,;:-")


def _finish(sentence: str) -> str:
    sentence = strip_filler(sentence)
    if not sentence:
        return ""
    sentence = sentence[0].upper() + sentence[1:]
    if sentence[-1] not in ".!?)\"'`":
        sentence += "."
    return sentence


def render(texts: list[str], *, persona_view: bool, workspace: str | None) -> str:
    """One standalone memory from the source sentences (in order)."""
    parts = [p for p in (_finish(t) for t in texts) if p]
    text = " ".join(parts)
    if persona_view:
        text = _user_view(text)
    elif workspace:
        text = _workspace_view(text, workspace)
    text = re.sub(r"\s{2,}", " ", text).strip()
    text = re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
    if len(text) > MAX_CONTENT_CHARS:
        text = text[: MAX_CONTENT_CHARS - 1].rstrip() + "…"
    return text
