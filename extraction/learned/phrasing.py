"""A kept group of statements, as a memory that reads right on its own months later.

Light and rule-based, keeping every term the speaker used: discourse lead-ins go ("ok so",
"fyi", "heads up:", "remember:", "no,"), an "In <project>:" or "in this repo," opener goes (the
namespace says which project), "this repo"/"here" become the project's name when the text
does not name it already (so it is named once), a statement that starts with a bare pronoun
takes the sentence before it along, and a preference about the person reads in the third
person ("the user ..."). Sentences end with a full stop; the whole is capped in length.
"""

from __future__ import annotations

import re

from memvet.extraction.phrasing import persona_view, strip_filler

MAX_CHARS = 500
_OPENER = re.compile(
    r"^(?:(?:remember|note|reminder|fyi|psa|for the record|context|important|also|and|so|"
    r"ok(?:ay)?|right|yeah|yes|yep|no|nope|nah|actually|btw|oh|ah|well)\b[\s,.:;!-]*)+", re.I)
_PROJECT_OPENER = (r"^(?:in|for|on)\s+(?:this\s+(?:repo|project|codebase|service|library)|{ws})"
                   r"\s*[,:]\s*")
_THIS_REPO = re.compile(r"\b(?:this\s+(?:repo|project|codebase)|our\s+(?:repo|project|codebase))\b",
                        re.I)
_PRONOUN_START = re.compile(r"^(?:it|this|that|they|these|those)\b", re.I)


def _capitalised(text: str, workspace: str | None) -> str:
    """Capitalise an ordinary first word; leave names, paths and code as they are written."""
    first = text.split(" ", 1)[0]
    if not first.isalpha() or not first.islower() or (workspace and first == workspace):
        return text
    return text[0].upper() + text[1:]


def needs_antecedent(text: str) -> bool:
    """Starts with a bare pronoun: the sentence before it says what it is about."""
    return bool(_PRONOUN_START.match(strip_filler(text)))


def render(sentences: list[str], *, persona: bool, workspace: str | None) -> str:
    """One standalone memory from the group's sentences (in order)."""
    parts = []
    for raw in sentences:
        text = strip_filler(raw).strip()
        text = _OPENER.sub("", text).strip(" ,;:-")
        if workspace:
            text = re.sub(_PROJECT_OPENER.format(ws=re.escape(workspace)), "", text,
                          flags=re.I)
        if persona:
            text = persona_view(text)
        if text:
            parts.append(_capitalised(text, workspace)
                         + ("" if text[-1] in ".!?)`'\"" else "."))
    out = " ".join(parts)
    if not persona and workspace and workspace.lower() not in out.lower():
        out = _THIS_REPO.sub(workspace, out, count=1)
    out = re.sub(r"\s{2,}", " ", out).strip()
    if len(out) > MAX_CHARS:
        out = out[: MAX_CHARS - 1].rstrip() + "…"
    return out
