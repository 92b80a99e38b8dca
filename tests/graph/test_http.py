"""The review workflow through the GraphQL API: intake, queue, approve/reject/edit, memories,
recall, settings and tokens, with union results asserted by __typename. Each test builds an app
of its own, in process (`app_client`): nothing here is about the transport."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.graph.support import REMEMBER, AppClient, GraphQLCalls, run_app, settings_for

CANDIDATE_FIELDS = """
  id content kind namespace source confidence observations status createdAt lastObservedAt
  origin { source conversationId turnId turnRef excerpt }
  transitions { action fromStatus toStatus actor reason }
"""
APPROVE = """
mutation Approve($id: ID!, $edit: CandidateEdit, $supersede: ID, $reason: String) {
  approveCandidate(id: $id, edit: $edit, supersede: $supersede, reason: $reason) {
    __typename
    ... on Memory { id content kind namespace observations approvedAt approvedBy
                    candidate { id status } }
    ... on UserError { code message }
  }
}
"""
REJECT = """
mutation Reject($id: ID!, $reason: String) {
  rejectCandidate(id: $id, reason: $reason) {
    __typename
    ... on Candidate { id status reviewReason reviewedBy }
    ... on UserError { code message }
  }
}
"""
RECALL = """
query Recall($q: String!, $ns: String, $nss: [String!], $kinds: [MemoryKind!], $limit: Int) {
  recall(query: $q, namespace: $ns, namespaces: $nss, kinds: $kinds, limit: $limit) {
    memory { id content namespace kind approvedBy } score dense lexical fused kindWeight
  }
}
"""


def ns() -> str:
    return f"workspace:t-{uuid.uuid4().hex[:8]}"


def remember(api: GraphQLCalls, content: str, namespace: str, *, kind: str = "FACT",
             as_: str = "agent", confidence: float = 0.8) -> dict[str, Any]:
    data = api.ok(REMEMBER, {"content": content, "kind": kind, "namespace": namespace,
                             "confidence": confidence}, as_=as_)
    result: dict[str, Any] = data["remember"]
    assert result["__typename"] == "Candidate", result
    return result


def approve(api: GraphQLCalls, cid: str, **variables: Any) -> dict[str, Any]:
    result: dict[str, Any] = api.ok(APPROVE, {"id": cid, **variables},
                                    as_="reviewer")["approveCandidate"]
    return result


def test_remember_queue_approve_recall_update_delete(app_client: AppClient) -> None:
    space = ns()
    cand = remember(app_client, "The shop API uses pnpm, not npm", space)
    assert cand["status"] == "PENDING" and cand["source"] == "EXPLICIT"
    # The same thing again merges: one row, two observations.
    again = remember(app_client, "The shop API uses pnpm, not npm", space, confidence=0.95)
    assert again["id"] == cand["id"] and again["observations"] == 2

    # Nothing pending is recallable.
    assert app_client.ok(RECALL, {"q": "pnpm", "ns": space}, as_="agent")["recall"] == []

    q = f"""query {{ candidates(status: PENDING, namespace: "{space}") {{
        totalCount edges {{ node {{ {CANDIDATE_FIELDS} }} }} }} }}"""
    page = app_client.ok(q, as_="reviewer")["candidates"]
    assert page["totalCount"] == 1
    node = page["edges"][0]["node"]
    assert node["confidence"] == 0.95 and node["origin"]["source"] == "EXPLICIT"
    assert [t["action"] for t in node["transitions"]] == ["CREATED", "MERGED"]

    memory = approve(app_client, cand["id"], edit={"content": "The shop API uses pnpm (never npm)"})
    assert memory["__typename"] == "Memory", memory
    assert memory["content"] == "The shop API uses pnpm (never npm)"
    assert memory["approvedBy"] == "reviewer:reviewer"
    assert memory["candidate"] == {"id": cand["id"], "status": "APPROVED"}

    hits = app_client.ok(RECALL, {"q": "pnpm", "nss": [space]}, as_="agent")["recall"]
    assert [h["memory"]["id"] for h in hits] == [memory["id"]]
    assert hits[0]["score"] > 0 and hits[0]["kindWeight"] == 1.0
    assert hits[0]["memory"]["approvedBy"] == "reviewer:reviewer"

    updated = app_client.ok("""mutation($id: ID!) { updateMemory(id: $id, edit: {kind: DECISION,
        content: "Use pnpm for the shop API, because of workspaces"}) {
        __typename ... on Memory { id kind content } } }""", {"id": memory["id"]},
                            as_="reviewer")["updateMemory"]
    assert updated == {"__typename": "Memory", "id": memory["id"], "kind": "DECISION",
                       "content": "Use pnpm for the shop API, because of workspaces"}
    hits = app_client.ok(RECALL, {"q": "workspaces", "ns": space, "kinds": ["DECISION"]},
                         as_="agent")["recall"]
    assert hits and hits[0]["kindWeight"] > 1.0

    gone = app_client.ok("""mutation($id: ID!) { deleteMemory(id: $id, reason: "obsolete") {
        __typename ... on Memory { id } } }""", {"id": memory["id"]},
                         as_="reviewer")["deleteMemory"]
    assert gone == {"__typename": "Memory", "id": memory["id"]}
    assert app_client.ok(RECALL, {"q": "pnpm", "ns": space}, as_="agent")["recall"] == []
    body = app_client.gql("query($id: ID!) { memory(id: $id) { id } }", {"id": memory["id"]})
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"

    trail = app_client.ok("query($id: ID!) { transitions(candidateId: $id) { action } }",
                          {"id": cand["id"]}, as_="reviewer")["transitions"]
    assert [t["action"] for t in trail] == [
        "CREATED", "MERGED", "APPROVED", "MEMORY_UPDATED", "MEMORY_DELETED"]


def test_reject_edit_and_invalid_transitions(app_client: AppClient) -> None:
    space = ns()
    cand = remember(app_client, "Deploys happen on Fridays", space, kind="EVENT")
    edited = app_client.ok("""mutation($id: ID!, $ns: String) { editCandidate(id: $id,
        edit: {content: "Deploys happen on Thursdays", kind: FACT, namespace: $ns}) {
        __typename ... on Candidate { content kind namespace status } } }""",
                           {"id": cand["id"], "ns": space}, as_="reviewer")["editCandidate"]
    assert edited == {"__typename": "Candidate", "content": "Deploys happen on Thursdays",
                      "kind": "FACT", "namespace": space, "status": "PENDING"}
    rejected = app_client.ok(REJECT, {"id": cand["id"], "reason": "not true"},
                             as_="reviewer")["rejectCandidate"]
    assert rejected["__typename"] == "Candidate" and rejected["status"] == "REJECTED"
    assert rejected["reviewReason"] == "not true"
    # Rejected means rejected: approving now is an invalid transition, as is rejecting twice.
    again = approve(app_client, cand["id"])
    assert again["__typename"] == "InvalidTransitionError" and again["code"] == (
        "INVALID_TRANSITION")
    twice = app_client.ok(REJECT, {"id": cand["id"]}, as_="reviewer")["rejectCandidate"]
    assert twice["__typename"] == "InvalidTransitionError"
    # An equivalent observation is counted on the rejected candidate and stays rejected.
    seen = remember(app_client, "Deploys happen on Thursdays", space)
    assert seen["id"] == cand["id"] and seen["status"] == "REJECTED"


def test_union_error_members(app_client: AppClient) -> None:
    missing = approve(app_client, "nope")
    assert missing["__typename"] == "NotFoundError" and missing["code"] == "NOT_FOUND"
    bad_ns = app_client.ok(REMEMBER, {"content": "x", "kind": "FACT", "namespace": "project:x"},
                           as_="agent")["remember"]
    assert bad_ns["__typename"] == "InvalidNamespaceError"
    assert bad_ns["code"] == "INVALID_NAMESPACE" and "workspace:" in bad_ns["message"]
    empty = app_client.ok(REMEMBER, {"content": "   ", "kind": "FACT"}, as_="agent")["remember"]
    assert empty["__typename"] == "ValidationError" and empty["code"] == "VALIDATION"
    huge = app_client.ok(REMEMBER, {"content": "x" * 20_000, "kind": "FACT"}, as_="agent")
    assert huge["remember"]["__typename"] == "ValidationError"
    agent_approves = app_client.ok(APPROVE, {"id": "anything"}, as_="agent")["approveCandidate"]
    assert agent_approves["__typename"] == "ForbiddenError"
    assert agent_approves["code"] == "FORBIDDEN"
    confident = app_client.ok(REMEMBER, {"content": "y", "kind": "FACT", "confidence": 7.0},
                              as_="agent")["remember"]
    assert confident["__typename"] == "ValidationError"
    empty_edit = app_client.ok("""mutation { editCandidate(id: "x", edit: {}) {
        __typename ... on UserError { code } } }""", as_="reviewer")["editCandidate"]
    assert empty_edit["__typename"] in {"ValidationError", "NotFoundError"}


def test_one_failure_has_one_code_through_queries_and_mutations(app_client: AppClient) -> None:
    """A missing id is NOT_FOUND whether a query or a mutation meets it, and a failure with no
    union member of its own keeps its code as a GraphQL error (never relabelled VALIDATION)."""
    from graphql import GraphQLError

    import memvet.memory.errors as core
    from memvet.graph.errors import ERROR_TYPES, user_error

    query = app_client.gql('{ candidate(id: "nope") { id } }', as_="reviewer")
    assert [e["extensions"]["code"] for e in query["errors"]] == ["NOT_FOUND"]
    assert approve(app_client, "nope")["code"] == "NOT_FOUND"
    for code in ERROR_TYPES:
        error = next(c for c in vars(core).values()
                     if isinstance(c, type) and getattr(c, "code", None) == code)
        assert user_error(error("x")).code == code
    for error in (core.Unauthenticated, core.ConfigurationError, core.DataDirLocked):
        with pytest.raises(GraphQLError) as raised:
            user_error(error("x"))
        assert raised.value.extensions == {"code": error.code}


def test_approve_with_supersede_retires_the_old_memory(app_client: AppClient) -> None:
    space = ns()
    old = approve(app_client, remember(app_client, "We deploy with Capistrano", space)["id"])
    new_cand = remember(app_client, "We deploy with Kamal", space)
    related = app_client.ok("""query($id: ID!) { candidate(id: $id) { related(limit: 3) {
        memory { id } } memory { id } } }""", {"id": new_cand["id"]},
                            as_="reviewer")["candidate"]
    assert [h["memory"]["id"] for h in related["related"]] == [old["id"]]
    assert related["memory"] is None
    top = app_client.ok("query($id: ID!) { related(candidateId: $id) { memory { id } } }",
                        {"id": new_cand["id"]}, as_="reviewer")["related"]
    assert top[0]["memory"]["id"] == old["id"]
    new = approve(app_client, new_cand["id"], supersede=old["id"], reason="moved to Kamal")
    assert new["__typename"] == "Memory"
    mems = app_client.ok(
        f'{{ memories(namespace: "{space}") {{ totalCount nodes {{ content }} }} }}',
        as_="reviewer")["memories"]
    assert mems == {"totalCount": 1, "nodes": [{"content": "We deploy with Kamal"}]}


def test_bulk_approve_and_reject_report_per_id(app_client: AppClient) -> None:
    space = ns()
    a = remember(app_client, "Bulk fact alpha", space)["id"]
    b = remember(app_client, "Bulk fact beta", space)["id"]
    c = remember(app_client, "Bulk fact gamma", space)["id"]
    out = app_client.ok("""mutation($ids: [ID!]!) { approveCandidates(ids: $ids) { id
        result { __typename ... on Memory { content } ... on UserError { code } } } }""",
                        {"ids": [a, b, "missing"]}, as_="reviewer")["approveCandidates"]
    assert [(o["id"], o["result"]["__typename"]) for o in out] == [
        (a, "Memory"), (b, "Memory"), ("missing", "NotFoundError")]
    out = app_client.ok("""mutation($ids: [ID!]!) { rejectCandidates(ids: $ids, reason: "dup") {
        id result { __typename ... on UserError { code } } } }""",
                        {"ids": [a, c]}, as_="reviewer")["rejectCandidates"]
    assert [o["result"]["__typename"] for o in out] == ["InvalidTransitionError", "Candidate"]
    too_many = app_client.gql("""mutation($ids: [ID!]!) { rejectCandidates(ids: $ids) { id } }""",
                              {"ids": [str(i) for i in range(201)]}, as_="reviewer")
    assert too_many["errors"][0]["extensions"]["code"] == "VALIDATION"


def test_pagination_with_cursors(app_client: AppClient) -> None:
    space = ns()
    made = [remember(app_client, f"Paged fact number {i}", space)["id"] for i in range(5)]
    seen: list[str] = []
    after = None
    pages = 0
    while True:
        page = app_client.ok("""query($ns: String, $after: String) {
            candidates(namespace: $ns, first: 2, after: $after, order: OLDEST) {
              totalCount edges { cursor node { id } }
              pageInfo { hasNextPage hasPreviousPage endCursor startCursor } } }""",
                             {"ns": space, "after": after}, as_="reviewer")["candidates"]
        pages += 1
        assert page["totalCount"] == 5
        assert page["pageInfo"]["hasPreviousPage"] == (after is not None)
        seen += [e["node"]["id"] for e in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == made and pages == 3
    for first in (0, 501):
        body = app_client.gql(f"{{ candidates(first: {first}) {{ totalCount }} }}")
        assert body["errors"][0]["extensions"]["code"] == "VALIDATION"
    body = app_client.gql('{ candidates(after: "not-a-cursor") { totalCount } }')
    assert body["errors"][0]["extensions"]["code"] == "VALIDATION"


def test_turns_compactions_and_jump_to_the_original_turn(app_client: AppClient) -> None:
    submit = """mutation($input: TurnInput!) { submitTurn(input: $input) {
        __typename ... on TurnResult { turnId queued duplicate
          candidates { id content kind namespace source origin { turnRef excerpt } } }
        ... on UserError { code message } } }"""
    turn = {"conversationId": f"c-{uuid.uuid4().hex[:6]}", "turnId": "t1",
            "workspace": "shop-api",
            "messages": [{"role": "user", "content":
                          "Remember: we always use pnpm in this repo, never npm."},
                         {"role": "assistant", "content": "Got it, pnpm from now on."}]}
    first = app_client.ok(submit, {"input": turn}, as_="agent")["submitTurn"]
    assert first["__typename"] == "TurnResult" and first["duplicate"] is False
    assert first["candidates"], first
    cand = first["candidates"][0]
    assert cand["source"] == "TURN" and cand["namespace"] == "workspace:shop-api"
    assert cand["origin"]["turnRef"] == first["turnId"]
    again = app_client.ok(submit, {"input": turn}, as_="agent")["submitTurn"]
    assert again["duplicate"] is True and again["turnId"] == first["turnId"]

    stored = app_client.ok("""query($id: ID!) { turn(id: $id) { conversationId turnId trigger
        workspace messages { role content } } }""", {"id": first["turnId"]},
                           as_="reviewer")["turn"]
    assert stored["turnId"] == "t1" and stored["trigger"] == "turn"
    assert stored["messages"][0]["role"] == "user"
    via_origin = app_client.ok("""query($id: ID!) { candidate(id: $id) { origins { turn {
        id } } } }""", {"id": cand["id"]}, as_="reviewer")["candidate"]
    assert via_origin["origins"][0]["turn"]["id"] == first["turnId"]

    compaction = app_client.ok("""mutation($input: TurnInput!) { submitCompaction(input: $input) {
        __typename ... on TurnResult { candidates { source } turn { trigger } } } }""",
                               {"input": {**turn, "turnId": "t2", "messages": [
                               {"role": "user", "content":
                                "We decided to use Tauri over Electron for bundle size."}]}},
                               as_="agent")["submitCompaction"]
    assert compaction["__typename"] == "TurnResult"
    assert compaction["turn"]["trigger"] == "compaction"
    assert all(c["source"] == "COMPACTION" for c in compaction["candidates"])
    bad = app_client.ok(submit, {"input": {**turn, "turnId": "t3", "messages": [
        {"role": "narrator", "content": "hi"}]}}, as_="agent")["submitTurn"]
    assert bad["__typename"] == "ValidationError"


def test_settings_policy_persona_archive_and_stats(app_client: AppClient) -> None:
    policy = app_client.ok("{ policy { enabled minObservations minConfidence description } }",
                           as_="reviewer")["policy"]
    assert policy["enabled"] is False and "off" in policy["description"]
    space = ns()
    cand = remember(app_client, "Auto approve me eventually", space, confidence=0.95)
    set_policy = """mutation($input: AutoApprovePolicyInput!) {
        setAutoApprovePolicy(input: $input) { __typename
          ... on AutoApprovePolicy { enabled description perKind { kind minObservations }
                                     excludedKinds }
          ... on UserError { code message } } }"""
    out = app_client.ok(set_policy, {"input": {
        "enabled": True, "minObservations": 1, "minConfidence": 0.9,
        "perKind": [{"kind": "POSTMORTEM", "minObservations": 5, "minConfidence": 0.99}],
        "excludedKinds": ["DECISION"]}})["setAutoApprovePolicy"]
    assert out["__typename"] == "AutoApprovePolicy" and out["enabled"] is True
    assert out["perKind"] == [{"kind": "POSTMORTEM", "minObservations": 5}]
    assert "decision" in out["description"]
    promoted = app_client.ok(
        "query($id: ID!) { candidate(id: $id) { status memory { approvedBy } } }",
        {"id": cand["id"]}, as_="reviewer")["candidate"]
    assert promoted == {"status": "APPROVED", "memory": {"approvedBy": "policy:auto-approve"}}
    bad = app_client.ok(set_policy, {"input": {"enabled": True, "minObservations": 0}})
    assert bad["setAutoApprovePolicy"]["__typename"] == "ValidationError"
    off = app_client.ok(set_policy, {"input": {"enabled": False}})["setAutoApprovePolicy"]
    assert off["enabled"] is False

    persona = app_client.ok("""mutation { setActivePersona(name: "ada") { __typename
        ... on ActivePersona { name namespace } } }""")["setActivePersona"]
    assert persona == {"__typename": "ActivePersona", "name": "ada", "namespace": "persona:ada"}
    assert app_client.ok("{ activePersona }", as_="agent")["activePersona"] == "ada"
    no_ns = app_client.ok(REMEMBER, {"content": "Prefers short answers", "kind": "PREFERENCE"},
                          as_="agent")["remember"]
    assert no_ns["namespace"] == "persona:ada"
    bad_persona = app_client.ok(
        'mutation { setActivePersona(name: "Ada Lovelace") { __typename } }')
    assert bad_persona["setActivePersona"]["__typename"] == "InvalidNamespaceError"

    days = app_client.ok("mutation { setArchiveDays(days: 45) { __typename ... on ArchiveWindow "
                         "{ days } } }")["setArchiveDays"]
    assert days == {"__typename": "ArchiveWindow", "days": 45}
    assert app_client.ok("{ archiveDays }", as_="reviewer")["archiveDays"] == 45
    assert app_client.ok("mutation { setArchiveDays(days: 0) { __typename } }")[
        "setArchiveDays"]["__typename"] == "ValidationError"
    swept = app_client.ok("""mutation { archiveStale(olderThanDays: 0) { __typename
        ... on ArchiveResult { count candidates { status } } } }""",
                          as_="reviewer")["archiveStale"]
    assert swept["__typename"] == "ArchiveResult" and swept["count"] >= 1
    assert {c["status"] for c in swept["candidates"]} == {"ARCHIVED"}

    stats = app_client.ok("""{ queueStats { pending approved rejected archived memories
        pendingByNamespace { namespace count } extractionBacklog } }""",
                          as_="reviewer")["queueStats"]
    assert stats["pending"] == 0 and stats["archived"] >= 1 and stats["memories"] >= 1
    groups = app_client.ok("{ memoryGroups { namespace count memories { id namespace } } }",
                           as_="reviewer")["memoryGroups"]
    assert space in {g["namespace"] for g in groups}
    assert all(m["namespace"] == g["namespace"] for g in groups for m in g["memories"])
    spaces = app_client.ok("{ namespaces }", as_="reviewer")["namespaces"]
    assert space in spaces and "persona:ada" in spaces


def test_tokens_created_listed_revoked(app_client: AppClient) -> None:
    made = app_client.ok("""mutation { createToken(role: REVIEWER, namespaces: ["workspace:x"],
        name: "ci") { __typename ... on CreatedToken { token info { id name role namespaces
        revokedAt } } } }""")["createToken"]
    assert made["__typename"] == "CreatedToken" and made["token"].startswith("mvt_")
    assert made["info"]["namespaces"] == ["workspace:x"] and made["info"]["role"] == "REVIEWER"
    token = made["token"]
    me = app_client.gql("{ viewer { name role namespaces } }", token=token)["data"]["viewer"]
    assert me == {"name": "ci", "role": "REVIEWER", "namespaces": ["workspace:x"]}
    listed = app_client.ok("{ tokens { id name revokedAt } }")["tokens"]
    assert made["info"]["id"] in {t["id"] for t in listed}
    assert all("token" not in t for t in listed)
    revoked = app_client.ok("mutation($id: ID!) { revokeToken(id: $id) { __typename "
                            "... on ApiToken { revokedAt } } }", {"id": made["info"]["id"]})
    assert revoked["revokeToken"]["revokedAt"] is not None
    response = app_client.post("{ viewer { name } }", token=token)
    assert response.status_code == 401
    bad_scope = app_client.ok("""mutation { createToken(role: AGENT, namespaces: ["nope"]) {
        __typename } }""")["createToken"]
    assert bad_scope["__typename"] == "InvalidNamespaceError"
    missing = app_client.ok('mutation { revokeToken(id: "nope") { __typename } }')
    assert missing["revokeToken"]["__typename"] == "NotFoundError"


def test_authentication_errors(app_client: AppClient) -> None:
    for token in (None, "mvt_not-a-real-token", "x" * 5000):
        response = app_client.post("{ viewer { name } }", token=token)
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        assert response.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"

    client = app_client.client
    basic = client.post("/graphql", json={"query": "{ viewer { name } }"},
                        headers={"Authorization": "Basic abc"})
    assert basic.status_code == 401
    # GraphiQL is off by default (it loads scripts from a CDN): no page, and no 500.
    page = client.get("/graphql", headers={"Accept": "text/html"})
    assert page.status_code < 500 and "graphiql" not in page.text.lower()


def test_graphiql_when_a_setting_turns_it_on(tmp_path: Path) -> None:
    with run_app(settings_for(tmp_path, graphiql=True), tokens={}) as app_client:
        # The page itself needs no token (it sends one as a header).
        page = app_client.client.get("/graphql", headers={"Accept": "text/html"})
        assert page.status_code == 200 and "graphiql" in page.text.lower()
