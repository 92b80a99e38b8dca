"""`memvet hook claude-code`: Claude Code's hook events, read as JSON on stdin.

- SessionStart: print the approved memories worth knowing for this workspace and persona
  (decisions and postmortems first) as `hookSpecificOutput.additionalContext`, when the
  context starts empty (`source` startup, clear or compact); a resumed session has it already.
- Stop: hand the last exchange to the server as a turn (extraction runs there); print nothing.
- PreCompact: hand everything since the previous compaction in as a compaction pass.

Whatever happens (server down, bad payload, slow server) the hook exits 0 within two seconds
and leaves one line in the hook log: memory must never break the agent.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from memvet.api.client import Client, ClientError
from memvet.api.hooks import transcript
from memvet.api.hooks.context import find_workspace, log_line, persona

BUDGET_S = 1.8  # every HTTP call shares this; the watchdog fires just before 2 s
WATCHDOG_S = 1.95
MAX_PAYLOAD = 1024 * 1024
MAX_CONTEXT_CHARS = 10_000

# (kind, heading) in the order they are shown: decisions and postmortems first.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("decision", "Decisions"),
    ("postmortem", "Postmortems (mistakes not to repeat)"),
    ("preference", "The user's preferences"),
    ("fact", "Facts"),
    ("pattern", "Patterns and conventions"),
    ("event", "Events"),
)
BRIEFING_LIMIT = 200  # more than fits in 10,000 characters of short statements
BRIEFING_QUERY = (
    "query Briefing($workspace: String, $persona: String, $limit: Int!) {\n"
    "  activePersona\n"
    "  briefing(workspace: $workspace, persona: $persona, limit: $limit) "
    "{ id content kind namespace }\n}"
)


class HookError(Exception):
    """The payload is not something this hook can act on."""


Deadline = Callable[[], float]


def main(stdin: IO[bytes] | None = None, stdout: IO[str] | None = None,
         client: Client | None = None, *, watchdog: bool = False) -> int:
    """Run one hook event. Always returns 0. `watchdog` (the CLI's way) hard-exits at 2 s."""
    started = time.monotonic()
    if watchdog:
        _arm_watchdog()
    event = "?"
    try:
        raw = (stdin or sys.stdin.buffer).read(MAX_PAYLOAD + 1)
        if len(raw) > MAX_PAYLOAD:
            raise HookError("hook payload is over 1 MB")
        try:
            payload = json.loads(raw or b"{}")
        except ValueError as err:
            raise HookError(f"hook payload is not JSON ({err})") from None
        if not isinstance(payload, dict):
            raise HookError("hook payload is not a JSON object")
        event = str(payload.get("hook_event_name") or "?")
        handler = HANDLERS.get(event)
        if handler is None:
            raise HookError(f"nothing to do for hook event {event!r}")

        def remaining() -> float:
            return max(0.05, BUDGET_S - (time.monotonic() - started))

        output = handler(payload, client or Client(), remaining)
        if output is not None:
            out = stdout or sys.stdout
            out.write(json.dumps(output, ensure_ascii=False))
            out.flush()
    except (ClientError, HookError, OSError) as err:
        log_line(f"claude-code {event}: {err}")
    except Exception as err:  # noqa: BLE001  (the agent must never see a hook crash)
        log_line(f"claude-code {event}: unexpected {type(err).__name__}: {err}")
    finally:
        if watchdog:
            _disarm_watchdog()
    return 0


# ---------------------------------------------------------------------- SessionStart
def session_start(payload: dict[str, Any], client: Client, remaining: Deadline
                  ) -> dict[str, Any] | None:
    if payload.get("source") == "resume":  # the resumed transcript holds the briefing already
        return None
    workspace = find_workspace(payload.get("cwd") or os.getcwd())
    who = persona()
    data = client.execute(BRIEFING_QUERY, {"workspace": workspace, "persona": who,
                                           "limit": BRIEFING_LIMIT},
                          timeout=remaining(), partial=True)
    if who is None and isinstance(data.get("activePersona"), str):
        who = data["activePersona"]
    text = briefing(data.get("briefing") or [], workspace, who)
    if text is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


def briefing(memories: list[dict[str, Any]], workspace: str | None, who: str | None
             ) -> str | None:
    """The approved memories as plain statements, grouped by kind, at most 10,000 chars."""
    seen: set[str] = set()
    groups: dict[str, list[str]] = {kind: [] for kind, _heading in SECTIONS}
    for memory in memories:
        mid, content = (memory or {}).get("id"), (memory or {}).get("content")
        kind = str((memory or {}).get("kind") or "").lower()
        if (not isinstance(content, str) or not content.strip() or mid in seen
                or kind not in groups):
            continue
        seen.add(str(mid))
        groups[kind].append(" ".join(content.split()))
    if not seen:
        return None
    where = [w for w in (f"workspace '{workspace}'" if workspace else None,
                         f"persona '{who}'" if who else None) if w]
    head = ("Memory from memvet (approved by a person)"
            + (" for " + " and ".join(where) if where else "")
            + ". Treat these as established facts unless the user says otherwise; use the "
              "memvet `recall` tool for more and `remember` to propose new ones.")
    more = "\n(More memories exist than fit here; use the memvet `recall` tool.)"
    budget = MAX_CONTEXT_CHARS - len(more)
    parts, size, cut = [head], len(head), False
    for kind, heading in SECTIONS:
        for i, item in enumerate(groups[kind]):
            piece = (f"\n\n{heading}:" if i == 0 else "") + f"\n- {item}"
            if size + len(piece) > budget:
                cut = True
                break
            parts.append(piece)
            size += len(piece)
        if cut:
            break
    return ("".join(parts) + (more if cut else ""))[:MAX_CONTEXT_CHARS]


# ---------------------------------------------------------------------- Stop / PreCompact
def _turn(payload: dict[str, Any], messages: list[transcript.Said], turn_id: str
          ) -> dict[str, Any]:
    session = payload.get("session_id")
    if not isinstance(session, str) or not session.strip():
        raise HookError("hook payload has no session_id")
    turn: dict[str, Any] = {
        "conversationId": session.strip()[:200], "turnId": turn_id,
        "messages": [{"role": m.role, "content": m.text} for m in messages],
        "workspace": find_workspace(payload.get("cwd") or os.getcwd()),
    }
    who = persona()
    if who:
        turn["persona"] = who
    return turn


def _transcript(payload: dict[str, Any], tail_bytes: int | None) -> list[dict[str, Any]]:
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path:
        return []
    try:
        return transcript.read_entries(os.path.expanduser(path), tail_bytes=tail_bytes)
    except OSError as err:
        log_line(f"claude-code: cannot read the transcript ({err.strerror or err})")
        return []


def stop(payload: dict[str, Any], client: Client, remaining: Deadline) -> None:
    entries = _transcript(payload, transcript.STOP_TAIL_BYTES)
    last = payload.get("last_assistant_message")
    messages, turn_id = transcript.last_exchange(entries, last if isinstance(last, str) else None)
    if not messages:
        raise HookError("no exchange to submit (empty transcript and no last_assistant_message)")
    client.submit_turn(_turn(payload, messages, turn_id), timeout=remaining())
    return None


def pre_compact(payload: dict[str, Any], client: Client, remaining: Deadline) -> None:
    entries = _transcript(payload, None)
    words, span_id = transcript.since_compaction(entries)
    if not words:
        return None  # a quiet stretch adds nothing
    parts = list(transcript.chunks(words))
    for i, part in enumerate(parts):
        part_id = span_id if len(parts) == 1 else f"{span_id}#{i + 1}"
        client.submit_turn(_turn(payload, part, part_id), compaction=True, timeout=remaining())
    return None


HANDLERS: dict[str, Callable[[dict[str, Any], Client, Deadline], dict[str, Any] | None]] = {
    "SessionStart": session_start,
    "Stop": stop,
    "PreCompact": pre_compact,
}


# ---------------------------------------------------------------------- the 2-second promise
def _on_alarm(signum: int, frame: Any) -> None:
    log_line("claude-code: gave up after 2 s (server too slow?)")
    os._exit(0)


def _arm_watchdog() -> None:
    if hasattr(signal, "setitimer"):
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, WATCHDOG_S)


def _disarm_watchdog() -> None:
    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, 0)
