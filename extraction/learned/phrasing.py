"""A kept group of statements, as a memory that reads right on its own months later.

Light and rule-based, keeping every term the speaker used: discourse lead-ins go ("ok so",
"fyi", "heads up:", "remember:", "no,", "here's the thing, remember it:"), an "In <project>:"
or "in this repo," opener goes (the namespace says which project), "this repo"/"here" become
the project's name when the text does not name it already (so it is named once), a statement
that starts with a bare pronoun takes the sentence before it along (a user's answer that agrees
and goes on about the agent's finding takes the finding), an agent's hedge before what it found
goes ("looks like", "I checked the config:"), and a preference about the person reads in the
third person ("the user ..."). Sentences end with a full stop; the whole is capped in length.
"""

from __future__ import annotations

import re

from memvet.extraction.learned.statements import AGREE, words
from memvet.extraction.phrasing import persona_view, strip_filler

MAX_CHARS = 500
# an agreement that is a word of its own only before a stop ("exactly. it ...", "that's right,
# it ..."): "true by default" and "correct output" stay
_AGREEMENT = (r"(?:correct|exactly|indeed|true|precisely|absolutely|definitely|agreed|"
              r"confirmed|yup|that(?:'|’)?s\s+(?:right|correct|true|it|the one)|"
              r"that\s+is\s+(?:right|correct|true))")
# a lead-in word, never the first half of a hyphenated one ("well-known", "exactly-once")
_OPENER = re.compile(
    r"^(?:(?:remember|note|reminder|fyi|psa|for the record|context|important|also|and|so|"
    r"ok(?:ay)?|right|yeah|yes|yep|no|nope|nah|actually|btw|oh|ah|well)\b(?!-\w)[\s,.:;!-]*"
    r"|" + _AGREEMENT + r"(?:\s*[,.:;!]+|\s+[-–—]+)\s*)+", re.I)
_AGREES = re.compile(r"^" + _AGREEMENT + r"\b", re.I)
# an agent's hedge before what it found: "looks like", "it seems that", "I think"; "I found
# that", "I can confirm that" (never "I found the bug": that is what it found)
_HEDGE = re.compile(
    r"^(?:(?:it\s+)?(?:looks|seems)\s+(?:like|that|as if)|it\s+appears\s+that|"
    r"(?:so\s+)?(?:it\s+)?turns\s+out(?:\s+that)?|I\s+(?:think|believe|suspect|guess)"
    r"(?:\s+that)?|I\s+(?:found|noticed|confirmed|verified|can\s+confirm|see)\s+that)"
    r"\s*,?\s+(?=\S)", re.I)
# "I checked the scheduler config: <the finding>"
_LOOKED = re.compile(
    r"^I\s+(?:checked|looked\s+(?:at|into|through)|read|went\s+through|searched|grepped|"
    r"inspected|dug\s+into|traced)\b[^:]{0,80}:\s+(?P<rest>\S.*)$", re.I | re.S)
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
    if (not re.sub(r"['’-]", "", first).isalpha() or not first.islower()
            or (workspace and first == workspace)):
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
    """Starts with a bare pronoun (after its lead-in): the sentence before it says what it is
    about."""
    return bool(_PRONOUN_START.match(_OPENER.sub("", strip_filler(text)).strip(" ,;:-")))


def agrees_and_refers(text: str) -> bool:
    """An answer that agrees and goes on about what it agrees with: "correct, and it has to
    stay that way", "yes that's right, it moved last year" (not "no, it runs in UTC")."""
    first = words(text)[:1]
    return bool(first) and (first[0] in AGREE or bool(_AGREES.match(text))) \
        and needs_antecedent(text)


def bare_agreement(text: str) -> bool:
    """"Exactly.", "yes, right", "that's correct!": agreement and nothing else."""
    return bool(words(text)) and not _OPENER.sub("", strip_filler(text)).strip(" ,;:.!-")


def finding(text: str) -> str:
    """An agent's sentence without its hedge: "Looks like the db listens on 6543" is what the
    user confirmed as "the db listens on 6543"."""
    looked = _LOOKED.match(text)
    if looked and len(looked["rest"].split()) >= 4 and not _PRONOUN_START.match(looked["rest"]):
        text = looked["rest"]
    rest = _HEDGE.sub("", text, count=1)
    return rest if len(rest.split()) >= 3 else text


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
