"""The access matrix: every query and mutation × agent/reviewer/admin, and namespace-scoped
tokens against foreign namespaces. The human gate lives in the server, whatever the client.

In process, through one app for the whole module (see `app_client` below)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.graph.support import REMEMBER, AppClient, run_app, settings_for


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppClient]:
    """One in-process app for the module, in place of conftest's app per test: the matrix is a
    hundred-odd cases of a request or two each, which an app start per case would outweigh, and
    the scoped-token tests check a database that the whole module has filled."""
    with run_app(settings_for(tmp_path_factory.mktemp("access"))) as client:
        yield client

ALL = {"agent", "reviewer", "admin"}
REVIEW = {"reviewer", "admin"}
ADMIN = {"admin"}


MINE = "workspace:mine"


def _ns() -> str:
    return f"workspace:m-{uuid.uuid4().hex[:8]}"


def _pending(app_client: AppClient, *, as_: str = "agent", namespace: str | None = None) -> str:
    data = app_client.ok(REMEMBER, {"content": f"matrix fact {uuid.uuid4().hex}", "kind": "FACT",
                                    "namespace": namespace or _ns()}, as_=as_)
    cid: str = data["remember"]["id"]
    return cid


def _memory(app_client: AppClient, namespace: str | None = None) -> str:
    cid = _pending(app_client, namespace=namespace)
    data = app_client.ok(
        'mutation($id: ID!) { approveCandidate(id: $id) { ... on Memory { id } } }',
        {"id": cid}, as_="admin")
    mid: str = data["approveCandidate"]["id"]
    return mid


def _turn(app_client: AppClient, as_: str) -> str:
    data = app_client.ok("""mutation($i: TurnInput!) { submitTurn(input: $i) {
        ... on TurnResult { turnId } } }""", {"i": {
        "conversationId": uuid.uuid4().hex, "turnId": "1",
        "messages": [{"role": "user", "content": "We always use pnpm here."}]}}, as_=as_)
    tid: str = data["submitTurn"]["turnId"]
    return tid


def outcome(body: dict[str, Any]) -> str:
    """'forbidden' when the answer is FORBIDDEN (error or union member), else 'ok'."""
    for error in body.get("errors") or []:
        code = error.get("extensions", {}).get("code")
        if code == "FORBIDDEN":
            return "forbidden"
        raise AssertionError(f"unexpected error: {error}")
    for value in (body.get("data") or {}).values():
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, dict):
                item = item.get("result", item)
                if item.get("__typename") == "ForbiddenError":
                    return "forbidden"
                assert not str(item.get("__typename", "")).endswith("Error"), item
    return "ok"


Op = Callable[[AppClient, str], dict[str, Any]]


def q(query: str, variables: Callable[[AppClient, str], dict[str, Any]] | None = None) -> Op:
    def run(app_client: AppClient, role: str) -> dict[str, Any]:
        return app_client.gql(query, variables(app_client, role) if variables else None, as_=role)
    return run


U = "__typename ... on UserError { code message }"

OPERATIONS: list[tuple[str, set[str], Op]] = [
    # queries
    ("viewer", ALL, q("{ viewer { role } }")),
    ("candidates", ALL, q("{ candidates { totalCount } }")),
    ("candidate", ALL, q("query($id: ID!) { candidate(id: $id) { id } }",
                         lambda s, r: {"id": _pending(s, as_=r)})),
    ("transitions", ALL, q("query($id: ID!) { transitions(candidateId: $id) { action } }",
                           lambda s, r: {"id": _pending(s, as_=r)})),
    ("turn", ALL, q("query($id: ID!) { turn(id: $id) { id } }",
                    lambda s, r: {"id": _turn(s, r)})),
    ("related", ALL, q("query($id: ID!) { related(candidateId: $id) { score } }",
                       lambda s, r: {"id": _pending(s, as_=r)})),
    ("recall", ALL, q('{ recall(query: "pnpm") { score } }')),
    ("briefing", ALL, q('{ briefing(workspace: "shop-api") { id } }')),
    ("activePersona", ALL, q("{ activePersona }")),
    ("namespaces", ALL, q("{ namespaces }")),
    ("memory", REVIEW, q("query($id: ID!) { memory(id: $id) { id } }",
                         lambda s, r: {"id": _memory(s)})),
    ("memories", REVIEW, q("{ memories { totalCount } }")),
    ("memoryGroups", REVIEW, q("{ memoryGroups { namespace } }")),
    ("policy", REVIEW, q("{ policy { enabled } }")),
    ("archiveDays", REVIEW, q("{ archiveDays }")),
    ("queueStats", REVIEW, q("{ queueStats { pending } }")),
    ("tokens", ADMIN, q("{ tokens { id } }")),
    # mutations
    ("remember", ALL, q(
        f'mutation {{ remember(content: "matrix remember", kind: FACT) {{ {U} }} }}')),
    ("submitTurn", ALL, q(f"""mutation($i: TurnInput!) {{ submitTurn(input: $i) {{ {U} }} }}""",
                          lambda s, r: {"i": {"conversationId": uuid.uuid4().hex, "turnId": "1",
                                              "messages": [{"role": "user",
                                                            "content": "hello there"}]}})),
    ("submitCompaction", ALL, q(
        f"""mutation($i: TurnInput!) {{ submitCompaction(input: $i) {{ {U} }} }}""",
        lambda s, r: {"i": {"conversationId": uuid.uuid4().hex, "turnId": "1",
                            "messages": [{"role": "user", "content": "hello there"}]}})),
    ("addCandidate", REVIEW, q(
        f'mutation {{ addCandidate(content: "typed by hand {uuid.uuid4().hex}", kind: FACT) '
        f'{{ {U} }} }}')),
    ("approveCandidate", REVIEW, q(f"mutation($id: ID!) {{ approveCandidate(id: $id) {{ {U} }} }}",
                                   lambda s, r: {"id": _pending(s)})),
    ("rejectCandidate", REVIEW, q(f"mutation($id: ID!) {{ rejectCandidate(id: $id) {{ {U} }} }}",
                                  lambda s, r: {"id": _pending(s)})),
    ("approveCandidates", REVIEW, q(
        f"mutation($id: ID!) {{ approveCandidates(ids: [$id]) {{ id result {{ {U} }} }} }}",
        lambda s, r: {"id": _pending(s)})),
    ("rejectCandidates", REVIEW, q(
        f"mutation($id: ID!) {{ rejectCandidates(ids: [$id]) {{ id result {{ {U} }} }} }}",
        lambda s, r: {"id": _pending(s)})),
    ("editCandidate", REVIEW, q(
        f'mutation($id: ID!) {{ editCandidate(id: $id, edit: {{content: "edited"}}) {{ {U} }} }}',
        lambda s, r: {"id": _pending(s)})),
    ("updateMemory", REVIEW, q(
        f'mutation($id: ID!) {{ updateMemory(id: $id, edit: {{content: "changed"}}) {{ {U} }} }}',
        lambda s, r: {"id": _memory(s)})),
    ("deleteMemory", REVIEW, q(f"mutation($id: ID!) {{ deleteMemory(id: $id) {{ {U} }} }}",
                               lambda s, r: {"id": _memory(s)})),
    ("archiveStale", REVIEW, q(f"mutation {{ archiveStale(olderThanDays: 3000) {{ {U} }} }}")),
    ("setAutoApprovePolicy", ADMIN, q(
        f"mutation {{ setAutoApprovePolicy(input: {{enabled: false}}) {{ {U} }} }}")),
    ("setActivePersona", ADMIN, q(f'mutation {{ setActivePersona(name: "default") {{ {U} }} }}')),
    ("setArchiveDays", ADMIN, q(f"mutation {{ setArchiveDays(days: 30) {{ {U} }} }}")),
    ("createToken", ADMIN, q(f"mutation {{ createToken(role: AGENT) {{ {U} }} }}")),
    ("revokeToken", ADMIN, q(
        f"mutation($id: ID!) {{ revokeToken(id: $id) {{ {U} }} }}",
        lambda s, r: {"id": s.ok("mutation { createToken(role: AGENT) { ... on CreatedToken "
                                 "{ info { id } } } }")["createToken"]["info"]["id"]})),
]


def test_the_matrix_covers_every_root_field(app_client: AppClient) -> None:
    from memvet.graph.schema import build_schema

    schema = build_schema()._schema
    assert schema.query_type and schema.mutation_type
    fields = set(schema.query_type.fields) | set(schema.mutation_type.fields)
    assert fields == {name for name, _, _ in OPERATIONS}


@pytest.mark.parametrize("role", ["agent", "reviewer", "admin"])
@pytest.mark.parametrize(("name", "allowed", "op"), OPERATIONS, ids=[o[0] for o in OPERATIONS])
def test_access_matrix(app_client: AppClient, name: str, allowed: set[str], op: Op,
                       role: str) -> None:
    expected = "ok" if role in allowed else "forbidden"
    assert outcome(op(app_client, role)) == expected, (name, role)


def test_an_agent_cannot_approve_anything_and_the_candidate_stays_pending(
        app_client: AppClient) -> None:
    cid = _pending(app_client)
    for mutation in ("approveCandidate(id: $id)",
                     'approveCandidate(id: $id, edit: {content: "sneaky"})'):
        body = app_client.gql(f"mutation($id: ID!) {{ {mutation} {{ {U} }} }}", {"id": cid},
                              as_="agent")
        assert body["data"]["approveCandidate"]["code"] == "FORBIDDEN"
    bulk = app_client.gql(
        f"mutation($id: ID!) {{ approveCandidates(ids: [$id]) {{ result {{ {U} }} }} }}",
        {"id": cid}, as_="agent")
    assert bulk["data"]["approveCandidates"][0]["result"]["code"] == "FORBIDDEN"
    policy = app_client.gql(f"mutation {{ setAutoApprovePolicy(input: {{enabled: true, "
                            f"minObservations: 1, minConfidence: 0}}) {{ {U} }} }}", as_="agent")
    assert policy["data"]["setAutoApprovePolicy"]["code"] == "FORBIDDEN"
    status = app_client.ok("query($id: ID!) { candidate(id: $id) { status } }", {"id": cid},
                           as_="reviewer")["candidate"]["status"]
    assert status == "PENDING"
    assert app_client.ok("{ policy { enabled } }", as_="reviewer")["policy"]["enabled"] is False


def test_agents_see_only_their_own_candidates(app_client: AppClient) -> None:
    space = _ns()
    mine = _pending(app_client, as_="agent", namespace=space)
    theirs = _pending(app_client, as_="agent2", namespace=space)
    q_list = "query($ns: String) { candidates(namespace: $ns) { totalCount nodes { id } } }"
    own = app_client.ok(q_list, {"ns": space}, as_="agent")["candidates"]["nodes"]
    assert [n["id"] for n in own] == [mine]
    assert app_client.ok(q_list, {"ns": space}, as_="reviewer")["candidates"]["totalCount"] == 2
    body = app_client.gql("query($id: ID!) { candidate(id: $id) { id } }", {"id": theirs},
                          as_="agent")
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    # A recalled memory's candidate is hidden from an agent that did not propose it.
    mid = _memory(app_client, namespace=space)
    hits = app_client.ok("query($ns: String) { recall(query: \"matrix fact\", namespace: $ns) "
                         "{ memory { id candidate { id } } } }", {"ns": space},
                         as_="agent2")["recall"]
    assert {h["memory"]["id"] for h in hits} >= {mid}
    assert all(h["memory"]["candidate"] is None for h in hits if h["memory"]["id"] == mid)


@pytest.fixture(scope="module")
def world(app_client: AppClient) -> dict[str, Any]:
    other = _ns()
    word = uuid.uuid4().hex[:10]
    foreign_cand = _pending(app_client, namespace=other)
    mine_cand = _pending(app_client, as_="scoped_agent", namespace=MINE)
    foreign_mem = app_client.ok(
        'mutation($c: String!, $ns: String) { addCandidate(content: $c, kind: FACT, '
        'namespace: $ns) { ... on Candidate { id } } }',
        {"c": f"secret {word} lives elsewhere", "ns": other})["addCandidate"]["id"]
    foreign_mem = app_client.ok('mutation($id: ID!) { approveCandidate(id: $id) '
                                '{ ... on Memory { id } } }', {"id": foreign_mem}
                                )["approveCandidate"]["id"]
    mine_mem = app_client.ok(
        'mutation($c: String!, $ns: String) { addCandidate(content: $c, kind: FACT, '
        'namespace: $ns) { ... on Candidate { id } } }',
        {"c": f"local {word} lives here", "ns": MINE})["addCandidate"]["id"]
    mine_mem = app_client.ok('mutation($id: ID!) { approveCandidate(id: $id) '
                             '{ ... on Memory { id } } }', {"id": mine_mem}
                             )["approveCandidate"]["id"]
    foreign_turn = app_client.ok("""mutation($i: TurnInput!) { submitTurn(input: $i) {
        ... on TurnResult { turnId } } }""", {"i": {
        "conversationId": uuid.uuid4().hex, "turnId": "1", "workspace": other[10:],
        "messages": [{"role": "user", "content": "We always deploy on Tuesdays."}]}},
        as_="agent")["submitTurn"]["turnId"]
    return {"other": other, "word": word, "foreign_cand": foreign_cand,
            "mine_cand": mine_cand, "foreign_mem": foreign_mem, "mine_mem": mine_mem,
            "foreign_turn": foreign_turn}


class TestScopedTokens:
    """A token scoped to workspace:mine never sees or touches anything elsewhere."""

    MINE = MINE

    @pytest.mark.parametrize("who", ["scoped_reviewer", "scoped_agent"])
    def test_lists_and_recall_never_show_foreign_namespaces(
            self, app_client: AppClient, world: dict[str, Any], who: str) -> None:
        nodes = app_client.ok("{ candidates(first: 500) { nodes { namespace } } }",
                              as_=who)["candidates"]["nodes"]
        assert {n["namespace"] for n in nodes} <= {self.MINE}
        assert set(app_client.ok("{ namespaces }", as_=who)["namespaces"]) <= {self.MINE}
        hits = app_client.ok('query($q: String!) { recall(query: $q, limit: 100) { memory { id '
                             'namespace } } }', {"q": f"{world['word']} lives"}, as_=who)["recall"]
        assert [h["memory"]["id"] for h in hits] == [world["mine_mem"]]
        body = app_client.gql('query($ns: String) { recall(query: "secret", namespace: $ns) '
                              '{ score } }', {"ns": world["other"]}, as_=who)
        assert body["errors"][0]["extensions"]["code"] == "FORBIDDEN"
        body = app_client.gql('query($ns: String) { candidates(namespace: $ns) { totalCount } }',
                              {"ns": world["other"]}, as_=who)
        assert body["errors"][0]["extensions"]["code"] == "FORBIDDEN"

    @pytest.mark.parametrize("who", ["scoped_reviewer", "scoped_agent"])
    def test_direct_access_to_foreign_ids_is_not_found(
            self, app_client: AppClient, world: dict[str, Any], who: str) -> None:
        for query, var in [
            ("query($id: ID!) { candidate(id: $id) { id } }", world["foreign_cand"]),
            ("query($id: ID!) { transitions(candidateId: $id) { action } }",
             world["foreign_cand"]),
            ("query($id: ID!) { related(candidateId: $id) { score } }", world["foreign_cand"]),
            ("query($id: ID!) { turn(id: $id) { id } }", world["foreign_turn"]),
        ]:
            body = app_client.gql(query, {"id": var}, as_=who)
            assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND", (query, body)
        body = app_client.gql("query($id: ID!) { memory(id: $id) { id } }",
                              {"id": world["foreign_mem"]}, as_=who)
        code = body["errors"][0]["extensions"]["code"]
        assert code == ("NOT_FOUND" if who == "scoped_reviewer" else "FORBIDDEN")

    def test_reviewer_views_are_scoped(self, app_client: AppClient, world: dict[str, Any]) -> None:
        who = "scoped_reviewer"
        mems = app_client.ok("{ memories(first: 500) { nodes { namespace } } }", as_=who)
        assert {n["namespace"] for n in mems["memories"]["nodes"]} == {self.MINE}
        groups = app_client.ok("{ memoryGroups { namespace } }", as_=who)["memoryGroups"]
        assert [g["namespace"] for g in groups] == [self.MINE]
        stats = app_client.ok("{ queueStats { pendingByNamespace { namespace } } }", as_=who)
        assert {p["namespace"] for p in stats["queueStats"]["pendingByNamespace"]} <= {self.MINE}

    def test_foreign_writes_are_refused_and_write_nothing(
            self, app_client: AppClient, world: dict[str, Any]) -> None:
        who = "scoped_reviewer"
        other = world["other"]
        # Records of another namespace, found by id, do not exist for this token: NOT_FOUND,
        # and the answer names no namespace.
        unseen = [
            ("mutation($id: ID!) { approveCandidate(id: $id) { %s } }",
             {"id": world["foreign_cand"]}),
            ("mutation($id: ID!) { rejectCandidate(id: $id) { %s } }",
             {"id": world["foreign_cand"]}),
            ('mutation($id: ID!) { editCandidate(id: $id, edit: {content: "x"}) { %s } }',
             {"id": world["foreign_cand"]}),
            ('mutation($id: ID!, $old: ID) { approveCandidate(id: $id, supersede: $old) { %s } }',
             {"id": world["mine_cand"], "old": world["foreign_mem"]}),
            ('mutation($id: ID!) { updateMemory(id: $id, edit: {content: "x"}) { %s } }',
             {"id": world["foreign_mem"]}),
            ("mutation($id: ID!) { deleteMemory(id: $id) { %s } }", {"id": world["foreign_mem"]}),
        ]
        for template, variables in unseen:
            body = app_client.gql(template % U, variables, as_=who)
            result = next(iter(body["data"].values()))
            assert result["__typename"] == "NotFoundError", (template, body)
            assert "workspace:" not in result["message"] and "persona:" not in result["message"]
        # A namespace the token names itself is refused by name.
        attempts = [
            ('mutation($id: ID!, $ns: String) { editCandidate(id: $id, edit: {namespace: $ns}) '
             '{ %s } }', {"id": world["mine_cand"], "ns": other}),
            ('mutation($id: ID!, $ns: String) { approveCandidate(id: $id, edit: {namespace: '
             '$ns}) { %s } }', {"id": world["mine_cand"], "ns": other}),
            ('mutation($id: ID!, $ns: String) { updateMemory(id: $id, edit: {namespace: $ns}) '
             '{ %s } }', {"id": world["mine_mem"], "ns": other}),
            ('mutation($ns: String) { remember(content: "x", kind: FACT, namespace: $ns) '
             '{ %s } }', {"ns": other}),
            ('mutation($ns: String) { addCandidate(content: "x", kind: FACT, namespace: $ns) '
             '{ %s } }', {"ns": other}),
        ]
        for template, variables in attempts:
            body = app_client.gql(template % U, variables, as_=who)
            result = next(iter(body["data"].values()))
            assert result["__typename"] == "ForbiddenError", (template, body)
        turn = app_client.gql(f"""mutation($i: TurnInput!) {{ submitTurn(input: $i) {{ {U} }} }}""",
                              {"i": {"conversationId": "c", "turnId": "1", "workspace": other[10:],
                                     "messages": [{"role": "user", "content": "hi"}]}},
                              as_="scoped_agent")
        assert turn["data"]["submitTurn"]["__typename"] == "ForbiddenError"
        # Nothing was half-written: the foreign candidate is pending, both memories intact,
        # and our own candidate did not get approved on the way to a forbidden supersede.
        check = app_client.ok("""query($a: ID!, $b: ID!, $m: ID!, $n: ID!) {
            a: candidate(id: $a) { status content namespace }
            b: candidate(id: $b) { status namespace }
            m: memory(id: $m) { content } n: memory(id: $n) { namespace } }""",
                              {"a": world["foreign_cand"], "b": world["mine_cand"],
                               "m": world["foreign_mem"], "n": world["mine_mem"]})
        assert check["a"]["status"] == "PENDING" and check["a"]["namespace"] == other
        assert check["b"] == {"status": "PENDING", "namespace": self.MINE}
        assert check["m"]["content"].startswith("secret")
        assert check["n"]["namespace"] == self.MINE

    def test_scoped_archive_sweep_stays_home(self, app_client: AppClient,
                                             world: dict[str, Any]) -> None:
        out = app_client.ok("mutation { archiveStale(olderThanDays: 0) { ... on ArchiveResult { "
                            "candidates { namespace } } } }", as_="scoped_reviewer")["archiveStale"]
        assert {c["namespace"] for c in out["candidates"]} <= {self.MINE}
        foreign = app_client.ok("query($id: ID!) { candidate(id: $id) { status } }",
                                {"id": world["foreign_cand"]})["candidate"]
        assert foreign["status"] == "PENDING"
