"""What a write path answers: only what the caller sent and may read (red-team regressions).

A turn replayed under another token's ids is a turn of its own and reveals nothing of the
first; a `remember` that merges into someone else's candidate answers with the caller's own
text, the outcome and the status, never a reviewer's edit, another agent's id or a reject
reason; selecting origins, transitions or memory on such a reply never nulls it out. Each test
has an app of its own, in process (`app_client`).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.graph.support import AppClient

U = "__typename ... on UserError { code message }"
CANDIDATE = ("id content kind namespace source confidence observations independentObservations "
             "status createdBy reviewedBy reviewReason origins { excerpt createdBy } "
             "transitions { action actor reason } memory { content }")
SUBMIT = f"""mutation($input: TurnInput!) {{ submitTurn(input: $input) {{ {U}
  ... on TurnResult {{ turnId duplicate turn {{ workspace messages {{ content }} }}
    candidates {{ {CANDIDATE} }} results {{ outcome candidate {{ id content status }} }} }} }} }}"""
REMEMBER = f"""mutation($c: String!, $ns: String) {{
  remember(content: $c, kind: FACT, namespace: $ns) {{ {U} ... on Candidate {{ {CANDIDATE} }} }}
}}"""


def _turn(conv: str, workspace: str, text: str) -> dict[str, Any]:
    return {"conversationId": conv, "turnId": "7", "workspace": workspace,
            "messages": [{"role": "user", "content": text},
                         {"role": "assistant", "content": "Noted."}]}


def test_a_replayed_turn_reveals_nothing_of_another_tokens_turn(app_client: AppClient) -> None:
    conv = f"conv-{uuid.uuid4().hex[:8]}"
    secret = "Remember: the staging PIN is 4711, we always use pnpm in this repo, never npm."
    first = app_client.ok(SUBMIT, {"input": _turn(conv, "alpha", secret)},
                          as_="agent")["submitTurn"]
    assert first["duplicate"] is False and first["candidates"]

    # A token scoped to workspace:mine replays alpha's ids in its own workspace: a new turn,
    # holding only what it sent.
    mine = _turn(conv, "mine", "Remember: we deploy with make ship, always.")
    replay = app_client.ok(SUBMIT, {"input": mine}, as_="scoped_agent")["submitTurn"]
    assert replay["__typename"] == "TurnResult", replay
    assert replay["duplicate"] is False and replay["turnId"] != first["turnId"]
    assert replay["turn"]["workspace"] == "mine"
    text = json.dumps(replay)
    assert "4711" not in text and "alpha" not in text and "pnpm" not in text
    # Naming alpha itself is refused by name, whether or not those ids exist there.
    for conv_id in (conv, f"never-{uuid.uuid4().hex[:8]}"):
        refused = app_client.gql(SUBMIT, {"input": _turn(conv_id, "alpha", "x y z")},
                                 as_="scoped_agent")["data"]["submitTurn"]
        assert refused["__typename"] == "ForbiddenError"
        assert conv_id not in refused["message"]

    # An unscoped agent replaying the same ids and text gets its own turn and receipts: the
    # observation from the same conversation is counted once on the shared candidate.
    again = app_client.ok(SUBMIT, {"input": _turn(conv, "alpha", secret)},
                          as_="agent2")["submitTurn"]
    assert again["duplicate"] is False and again["turnId"] != first["turnId"]
    assert again["candidates"] and {r["outcome"] for r in again["results"]} == {"DUPLICATE"}
    for cand in again["candidates"]:
        assert cand["createdBy"] is None  # another agent proposed it first
        assert cand["transitions"] == [] and cand["memory"] is None
        assert cand["origins"] == []  # counted once already: it made no observation of its own
        assert cand["observations"] == 0
    # The first agent's own resubmission is the duplicate, with its own receipts.
    dup = app_client.ok(SUBMIT, {"input": _turn(conv, "alpha", secret)}, as_="agent")["submitTurn"]
    assert dup["duplicate"] is True and dup["turnId"] == first["turnId"]
    assert [r["outcome"] for r in dup["results"]] == ["DUPLICATE"] * len(first["candidates"])
    assert [c["id"] for c in dup["candidates"]] == [c["id"] for c in first["candidates"]]


def test_a_merge_reply_carries_only_what_the_caller_sent(app_client: AppClient) -> None:
    ns = f"workspace:merge-{uuid.uuid4().hex[:6]}"
    made = app_client.ok(REMEMBER, {"c": "The merge demo cache is Redis 7", "ns": ns},
                         as_="agent")["remember"]
    app_client.ok('mutation($id: ID!) { editCandidate(id: $id, edit: {content: "REVIEWER EDIT: '
                  'the merge demo cache is Redis 7.2 on port 6380"}) { __typename } }',
                  {"id": made["id"]}, as_="reviewer")

    merged = app_client.ok(REMEMBER, {"c": "the merge demo cache is redis 7", "ns": ns},
                           as_="agent2")["remember"]
    assert merged["__typename"] == "Candidate" and merged["id"] == made["id"]
    assert merged["content"] == "the merge demo cache is redis 7"
    assert merged["createdBy"] is None and merged["reviewedBy"] is None
    assert merged["observations"] == 1 and merged["independentObservations"] == 1
    assert merged["transitions"] == [] and merged["memory"] is None
    assert len(merged["origins"]) == 1  # its own observation, not the first agent's
    assert "REVIEWER EDIT" not in json.dumps(merged)

    app_client.ok('mutation($id: ID!) { rejectCandidate(id: $id, reason: "secret reason: '
                  'we are dropping redis") { __typename } }', {"id": made["id"]}, as_="reviewer")
    counted = app_client.ok(REMEMBER, {"c": "The merge demo cache is Redis 7.", "ns": ns},
                            as_="agent2")["remember"]
    assert counted["status"] == "REJECTED" and counted["reviewReason"] is None
    assert counted["observations"] == 2
    assert "secret reason" not in json.dumps(counted)

    # The reviewer still sees everything on the candidate itself.
    full = app_client.ok("query($id: ID!) { candidate(id: $id) { observations "
                         "independentObservations reviewReason origins { createdBy } } }",
                         {"id": made["id"]}, as_="reviewer")["candidate"]
    assert full["observations"] == 3 and full["independentObservations"] == 2
    assert full["reviewReason"].startswith("secret reason")
    assert len(full["origins"]) == 3

