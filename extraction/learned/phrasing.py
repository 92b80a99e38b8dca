"""A kept group of statements, as a memory that reads right on its own months later.

Light and rule-based, keeping every term the speaker used: discourse lead-ins go ("ok so",
"fyi", "heads up:", "remember:", "no,", "here's the thing, remember it:"), an "In <project>:"
or "in this repo," opener goes (the namespace says which project), "this repo"/"here" become
the project's name when the text does not name it already (so it is named once), a statement
that starts with a bare pronoun takes the sentence before it along, and a preference about the
person reads in the third person ("the user ..."). Sentences end with a full stop; the whole is
capped in length.
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
# "here's the thing, and remember it:", "writing this down for the team:", "please know:": a
# short clause before a colon that says "take note", not what (no numbers, code or paths in it)
_NOTE_LEAD = re.compile(
    r"^(?P<lead>[^:\d`/]{0,80}?\b(?:remember|keep in mind|know|note|noting|"
    r"writing (?:this|it) down|for (?:the team|future reference|the record|later)|"
    r"here['’]?s the thing|heads[- ]up|fyi|psa|for context)\b"
    r"[^:\d`/]{0,40}?):\s+(?P<rest>\S.*)$", re.I | re.S)
_PRONOUN_START = re.compile(r"^(?:it|this|that|they|these|those)\b", re.I)


def _capitalised(text: str, workspace: str | None) -> str:
    """Capitalise an ordinary first word; leave names, paths and code as they are written."""
    first = text.split(" ", 1)[0]
    if not first.isalpha() or not first.islower() or (workspace and first == workspace):
        return text
    return text[0].upper() + text[1:]


def _without_note_lead(text: str) -> str:
    """Drop a short "mind this:" clause before the colon when a full statement follows it (one
    that does not lean on the clause for what it is about)."""
    lead = _NOTE_LEAD.match(text)
    if (lead and len(lead["lead"].split()) <= 10 and len(lead["rest"].split()) >= 4
            and not _PRONOUN_START.match(lead["rest"])):
        return lead["rest"]
    return text


def needs_antecedent(text: str) -> bool:
    """Starts with a bare pronoun: the sentence before it says what it is about."""
    return bool(_PRONOUN_START.match(strip_filler(text)))


def render(sentences: list[str], *, persona: bool, workspace: str | None) -> str:
    """One standalone memory from the group's sentences (in order)."""
    parts = []
    for raw in sentences:
        text = strip_filler(raw).strip()
        text = _OPENER.sub("", text).strip(" ,;:-")
        text = _without_note_lead(text)
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
