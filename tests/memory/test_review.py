"""The human gate on a real store: lifecycle + audit, archive, auto-approve, access, tokens."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from memvet.memory.access import Principal, Role
from memvet.memory.errors import Forbidden, NotFound
from memvet.memory.kinds import Kind
from memvet.memory.policy import POLICY_ACTOR, AutoApprovePolicy, Threshold
from memvet.memory.records import (
    Action,
    CandidateEdit,
    CandidateInput,
    OriginInput,
    Outcome,
    Source,
    Status,
)
from memvet.memory.service import MemoryService
from memvet.memory.store import tables
from tests.memory.support import (
    ADMIN,
    AGENT,
    OTHER_AGENT,
    REVIEWER,
    SHOP_AGENT,
    SHOP_REVIEWER,
    FakeClock,
    dump,
)

NS = "workspace:shop"


def remember(svc: MemoryService, content: str, *, kind: str = "fact", ns: str = NS,
             confidence: float = 0.5, who: Principal = AGENT):
    return svc.submit(CandidateInput(content, kind, ns, Source.EXPLICIT, confidence), who)


def outbox(svc: MemoryService) -> list[tuple[str, str, str]]:
    o = tables.index_outbox.c
    with svc.engine.connect() as conn:
        return [(r.memory_id, r.namespace, r.op)
                for r in conn.execute(select(tables.index_outbox).order_by(o.id))]


# --------------------------------------------------------------------------- lifecycle


def test_approve_writes_memory_and_audit_row(service: MemoryService, clock: FakeClock) -> None:
    c = remember(service, "use pnpm").candidate
    clock.advance(minutes=5)
    mem = service.approve(c.id, REVIEWER)
    assert (mem.content, mem.kind, mem.namespace, mem.candidate_id, mem.approved_by,
            mem.approved_at) == ("use pnpm", Kind.FACT, NS, c.id, REVIEWER.actor, clock.now)
    cand = service.get_candidate(c.id, REVIEWER)
    assert cand.status is Status.APPROVED
    assert (cand.reviewed_by, cand.reviewed_at) == (REVIEWER.actor, clock.now)
    t = service.transitions(c.id, REVIEWER)[-1]
    assert (t.action, t.from_status, t.to_status, t.actor, t.at, t.memory_id) == (
        Action.APPROVED, Status.PENDING, Status.APPROVED, REVIEWER.actor, clock.now, mem.id)
    assert t.changes is not None and t.changes["content"]["to"] == "use pnpm"
    assert service.memory_of(c.id, REVIEWER) == mem
    assert outbox(service) == [(mem.id, NS, "upsert")]  # no index: it stays owed


def test_approve_with_edit_approves_the_edit(service: MemoryService) -> None:
    c = remember(service, "we use pnpm I guess", kind="preference").candidate
    edit = CandidateEdit(content="The shop uses pnpm, not npm.", kind="FACT",
                         namespace="workspace:shop-api")
    mem = service.approve(c.id, REVIEWER, edit=edit)
    assert (mem.content, mem.kind, mem.namespace) == (
        "The shop uses pnpm, not npm.", Kind.FACT, "workspace:shop-api")
    cand = service.get_candidate(c.id, REVIEWER)
    assert (cand.content, cand.kind, cand.namespace) == (
        mem.content, mem.kind, mem.namespace)
    t = service.transitions(c.id, REVIEWER)[-1]
    assert t.changes == {
        "content": {"from": "we use pnpm I guess", "to": "The shop uses pnpm, not npm."},
        "kind": {"from": "preference", "to": "fact"},
        "namespace": {"from": NS, "to": "workspace:shop-api"},
    }


def test_approve_superseding_a_memory(service: MemoryService) -> None:
    old = service.approve(remember(service, "use npm").candidate.id, REVIEWER)
    new_c = remember(service, "use pnpm, not npm").candidate
    new = service.approve(new_c.id, REVIEWER, supersede=old.id)
    assert [m.id for m in service.list_memories(REVIEWER).items] == [new.id]
    old_c = service.get_candidate(old.candidate_id, REVIEWER)
    assert old_c.status is Status.REJECTED
    t = service.transitions(old_c.id, REVIEWER)[-1]
    assert (t.action, t.from_status, t.to_status, t.memory_id) == (
        Action.MEMORY_DELETED, Status.APPROVED, Status.REJECTED, old.id)
    assert new.id in (t.reason or "")
    assert outbox(service)[-2:] == [(new.id, NS, "upsert"), (old.id, NS, "delete")]


def test_supersede_unknown_memory_rolls_back_the_approval(service: MemoryService) -> None:
    c = remember(service, "use pnpm").candidate
    before = dump(service.engine)
    with pytest.raises(NotFound):
        service.approve(c.id, REVIEWER, supersede="nope")
    assert dump(service.engine) == before


def test_reject(service: MemoryService, clock: FakeClock) -> None:
    c = remember(service, "use yarn").candidate
    cand = service.reject(c.id, REVIEWER, reason="  we moved off yarn ")
    assert cand.status is Status.REJECTED
    assert (cand.review_reason, cand.reviewed_by, cand.reviewed_at) == (
        "we moved off yarn", REVIEWER.actor, clock.now)
    t = service.transitions(c.id, REVIEWER)[-1]
    assert (t.action, t.from_status, t.to_status, t.actor, t.reason) == (
        Action.REJECTED, Status.PENDING, Status.REJECTED, REVIEWER.actor, "we moved off yarn")
    assert service.memory_of(c.id, REVIEWER) is None


def test_edit_in_queue(service: MemoryService, clock: FakeClock) -> None:
    c = remember(service, "use pnpm maybe").candidate
    clock.advance(days=3)
    cand = service.edit_candidate(c.id, CandidateEdit(content="Use pnpm.", kind="decision"),
                                  REVIEWER)
    assert (cand.content, cand.kind, cand.status, cand.touched_at) == (
        "Use pnpm.", Kind.DECISION, Status.PENDING, clock.now)
    t = service.transitions(c.id, REVIEWER)[-1]
    assert (t.action, t.from_status, t.to_status, t.actor) == (
        Action.EDITED, Status.PENDING, Status.PENDING, REVIEWER.actor)
    assert t.changes == {"content": {"from": "use pnpm maybe", "to": "Use pnpm."},
                         "kind": {"from": "fact", "to": "decision"}}
    # the edited text is what an equivalent now merges into; so is the original wording
    assert remember(service, "use pnpm", kind="decision").candidate.id == c.id
    assert remember(service, "USE PNPM MAYBE", kind="decision").candidate.id == c.id


def test_update_memory(service: MemoryService, clock: FakeClock) -> None:
    mem = service.approve(remember(service, "use pnpm").candidate.id, REVIEWER)
    service.drain_index_outbox()
    clock.advance(days=1)
    updated = service.update_memory(mem.id, CandidateEdit(content="Use pnpm 9."), REVIEWER)
    assert (updated.content, updated.updated_at, updated.approved_at) == (
        "Use pnpm 9.", clock.now, mem.approved_at)
    t = service.transitions(mem.candidate_id, REVIEWER)[-1]
    assert (t.action, t.memory_id, t.changes) == (
        Action.MEMORY_UPDATED, mem.id, {"content": {"from": "use pnpm", "to": "Use pnpm 9."}})
    moved = service.update_memory(mem.id, CandidateEdit(namespace="workspace:web"), REVIEWER)
    assert moved.namespace == "workspace:web"
    assert outbox(service)[-3:] == [(mem.id, NS, "upsert"), (mem.id, NS, "delete"),
                                     (mem.id, "workspace:web", "upsert")]


def test_delete_memory(service: MemoryService) -> None:
    mem = service.approve(remember(service, "use pnpm").candidate.id, REVIEWER)
    gone = service.delete_memory(mem.id, REVIEWER, reason="obsolete")
    assert gone.id == mem.id
    with pytest.raises(NotFound):
        service.get_memory(mem.id, REVIEWER)
    cand = service.get_candidate(mem.candidate_id, REVIEWER)
    assert cand.status is Status.REJECTED and cand.review_reason == "obsolete"
    assert outbox(service) == [(mem.id, NS, "upsert"), (mem.id, NS, "delete")]
    # rejected means don't ask again
    assert remember(service, "use pnpm").outcome is Outcome.REINFORCED
    assert service.queue_stats(REVIEWER).pending == 0


# --------------------------------------------------------------------------- archive


def test_archive_window(service: MemoryService, clock: FakeClock) -> None:
    old = remember(service, "old one").candidate
    clock.advance(days=10)
    young = remember(service, "young one").candidate
    clock.advance(days=20, seconds=1)  # old: 30 days + 1 s; young: 20 days
    archived = service.archive_stale(REVIEWER)
    assert [c.id for c in archived] == [old.id]
    assert service.get_candidate(old.id, REVIEWER).status is Status.ARCHIVED
    t = service.transitions(old.id, REVIEWER)[-1]
    assert (t.action, t.from_status, t.to_status, t.actor, t.at) == (
        Action.ARCHIVED, Status.PENDING, Status.ARCHIVED, REVIEWER.actor, clock.now)
    # on demand with a narrower window
    assert [c.id for c in service.archive_stale(REVIEWER, older_than_days=7)] == [young.id]


def test_archive_window_is_configurable(service: MemoryService, clock: FakeClock) -> None:
    assert service.archive_days(REVIEWER) == 30
    c = remember(service, "x").candidate
    clock.advance(days=8)
    assert service.archive_stale(REVIEWER) == []
    service.set_archive_days(7, ADMIN)
    assert service.archive_days(REVIEWER) == 7
    assert [a.id for a in service.archive_stale(REVIEWER)] == [c.id]


def test_observation_and_edit_reset_the_archive_clock(service: MemoryService,
                                                       clock: FakeClock) -> None:
    seen = remember(service, "seen again").candidate
    edited = remember(service, "edited later").candidate
    untouched = remember(service, "untouched").candidate
    approved = remember(service, "approved one").candidate
    service.approve(approved.id, REVIEWER)
    clock.advance(days=25)
    remember(service, "Seen again!")
    service.edit_candidate(edited.id, CandidateEdit(content="edited later, fixed"), REVIEWER)
    clock.advance(days=6)
    assert [c.id for c in service.archive_stale(REVIEWER)] == [untouched.id]
    assert service.get_candidate(approved.id, REVIEWER).status is Status.APPROVED
    clock.advance(days=25)
    assert {c.id for c in service.archive_stale(REVIEWER)} == {seen.id, edited.id}


def test_scoped_reviewer_archives_only_its_namespaces(service: MemoryService,
                                                      clock: FakeClock) -> None:
    mine = remember(service, "a", ns="workspace:shop").candidate
    other = remember(service, "b", ns="workspace:web").candidate
    clock.advance(days=40)
    assert [c.id for c in service.archive_stale(SHOP_REVIEWER)] == [mine.id]
    assert service.get_candidate(other.id, REVIEWER).status is Status.PENDING


# --------------------------------------------------------------------------- auto-approve


def test_auto_approve_is_off_by_default(service: MemoryService) -> None:
    assert service.policy(REVIEWER) == AutoApprovePolicy()
    for _ in range(10):
        r = remember(service, "use pnpm", confidence=1.0)
    assert not r.auto_approved and r.candidate.status is Status.PENDING


THIRD_AGENT = Principal(id="agent-3", name="aider", role=Role.AGENT)


def test_auto_approve_min_observations_and_confidence(service: MemoryService) -> None:
    service.set_policy(AutoApprovePolicy(enabled=True, min_observations=3, min_confidence=0.8),
                       ADMIN)
    assert remember(service, "use pnpm", confidence=0.9).candidate.status is Status.PENDING
    r = remember(service, "Use pnpm", confidence=0.5, who=OTHER_AGENT)
    assert r.candidate.status is Status.PENDING and r.candidate.observations == 2
    r = remember(service, "use pnpm.", confidence=0.1, who=THIRD_AGENT)  # max 0.9 counts
    assert r.auto_approved and r.candidate.status is Status.APPROVED
    mem = service.memory_of(r.candidate.id, REVIEWER)
    assert mem is not None and mem.approved_by == POLICY_ACTOR and mem.observations == 3
    t = service.transitions(r.candidate.id, REVIEWER)[-1]
    assert (t.action, t.actor, t.from_status, t.to_status) == (
        Action.APPROVED, POLICY_ACTOR, Status.PENDING, Status.APPROVED)
    # low confidence never qualifies however often it is seen
    for who in (AGENT, OTHER_AGENT, THIRD_AGENT, REVIEWER, ADMIN):
        low = remember(service, "maybe yarn", confidence=0.79, who=who)
    assert low.candidate.status is Status.PENDING and low.candidate.observations == 5


def test_one_agent_repeating_itself_is_one_observation(service: MemoryService) -> None:
    """The red-team reproduction: three remembers at confidence 1.0 from one token."""
    service.set_policy(AutoApprovePolicy(enabled=True, min_observations=3, min_confidence=0.8),
                       ADMIN)
    for _ in range(5):
        r = remember(service, "deploys go through the red button", confidence=1.0)
    assert not r.auto_approved and r.candidate.status is Status.PENDING
    assert (r.candidate.observations, r.candidate.independent_observations) == (5, 1)
    # the same conversation turn after turn is one observation too...
    for turn in ("t1", "t2", "t3"):
        r = service.submit(CandidateInput(
            "deploys go through the red button", "fact", NS, Source.TURN, 1.0,
            OriginInput("conv-1", turn)), AGENT)
    assert r.candidate.status is Status.PENDING and r.candidate.independent_observations == 2
    # ...and a third separate conversation makes three
    r = service.submit(CandidateInput(
        "deploys go through the red button", "fact", NS, Source.TURN, 1.0,
        OriginInput("conv-2", "t1")), AGENT)
    assert r.auto_approved and r.candidate.independent_observations == 3
    assert r.receipt.observations == 9 and r.receipt.independent_observations == 3


def test_auto_approve_overrides_and_exclusions(service: MemoryService) -> None:
    service.set_policy(AutoApprovePolicy(
        enabled=True, min_observations=2, min_confidence=0.5,
        per_kind={Kind.DECISION: Threshold(4, 0.5)},
        per_namespace={"workspace:trusted": Threshold(1, 0.5)},
        excluded_kinds=frozenset({Kind.POSTMORTEM}),
    ), ADMIN)
    agents = [Principal(id=f"agent-{i}", name=f"a{i}", role=Role.AGENT) for i in range(5)]
    assert remember(service, "a", ns="workspace:trusted").auto_approved
    for i in range(3):
        assert not remember(service, "d", kind="decision", who=agents[i]).auto_approved, i
    assert remember(service, "d", kind="decision", who=agents[3]).auto_approved
    for who in agents:
        assert not remember(service, "p", kind="postmortem", confidence=1.0,
                            who=who).auto_approved
    remember(service, "f", who=agents[0])
    assert not remember(service, "f", who=agents[0]).auto_approved
    assert remember(service, "f", who=agents[1]).auto_approved


def test_turning_the_policy_on_promotes_qualifying_pending(service: MemoryService) -> None:
    ready = remember(service, "ready", confidence=0.95).candidate
    remember(service, "ready", confidence=0.95, who=OTHER_AGENT)
    remember(service, "ready", confidence=0.95, who=THIRD_AGENT)
    repeated = remember(service, "repeated", confidence=0.95).candidate
    for _ in range(3):
        remember(service, "repeated", confidence=0.95)
    not_ready = remember(service, "not ready", confidence=0.95).candidate
    rejected = remember(service, "rejected", confidence=1.0).candidate
    for who in (OTHER_AGENT, THIRD_AGENT, REVIEWER):
        remember(service, "rejected", confidence=1.0, who=who)
    service.reject(rejected.id, REVIEWER)
    service.set_policy(AutoApprovePolicy(enabled=False, min_observations=1), ADMIN)
    assert service.get_candidate(not_ready.id, REVIEWER).status is Status.PENDING
    service.set_policy(AutoApprovePolicy(enabled=True), ADMIN)
    assert service.get_candidate(ready.id, REVIEWER).status is Status.APPROVED
    assert service.get_candidate(repeated.id, REVIEWER).status is Status.PENDING
    assert service.get_candidate(not_ready.id, REVIEWER).status is Status.PENDING
    assert service.get_candidate(rejected.id, REVIEWER).status is Status.REJECTED
    assert service.memory_of(ready.id, REVIEWER).approved_by == POLICY_ACTOR  # type: ignore[union-attr]


# --------------------------------------------------------------------------- access control


def test_agent_cannot_review_or_set_policy(service: MemoryService) -> None:
    c = remember(service, "use pnpm").candidate
    mem = service.approve(remember(service, "other").candidate.id, REVIEWER)
    before = dump(service.engine)
    calls = [
        lambda: service.approve(c.id, AGENT),
        lambda: service.reject(c.id, AGENT),
        lambda: service.edit_candidate(c.id, CandidateEdit(content="x"), AGENT),
        lambda: service.update_memory(mem.id, CandidateEdit(content="x"), AGENT),
        lambda: service.delete_memory(mem.id, AGENT),
        lambda: service.archive_stale(AGENT),
        lambda: service.set_policy(AutoApprovePolicy(enabled=True), AGENT),
        lambda: service.set_policy(AutoApprovePolicy(enabled=True), REVIEWER),
        lambda: service.set_archive_days(1, REVIEWER),
        lambda: service.set_active_persona("x", AGENT),
        lambda: service.create_token("admin", AGENT),
        lambda: service.create_token("admin", REVIEWER),
        lambda: service.list_memories(AGENT),
        lambda: service.get_memory(mem.id, AGENT),
        lambda: service.policy(AGENT),
        lambda: service.queue_stats(AGENT),
    ]
    for call in calls:
        with pytest.raises(Forbidden) as err:
            call()
        assert err.value.code == "FORBIDDEN"
    assert dump(service.engine) == before


def test_agent_reads_only_its_own_candidates(service: MemoryService) -> None:
    mine = remember(service, "mine").candidate
    theirs = remember(service, "theirs", who=OTHER_AGENT).candidate
    assert [c.id for c in service.list_candidates(AGENT).items] == [mine.id]
    assert service.get_candidate(mine.id, AGENT).id == mine.id
    with pytest.raises(NotFound):
        service.get_candidate(theirs.id, AGENT)
    with pytest.raises(NotFound):
        service.origins(theirs.id, AGENT)
    assert {c.id for c in service.list_candidates(REVIEWER).items} == {mine.id, theirs.id}


def test_scoped_tokens_stay_in_their_namespaces(service: MemoryService) -> None:
    shop = remember(service, "shop fact", ns="workspace:shop", who=REVIEWER).candidate
    web = remember(service, "web fact", ns="workspace:web", who=REVIEWER).candidate
    web_mem = service.approve(remember(service, "web memory", ns="workspace:web",
                                       who=REVIEWER).candidate.id, REVIEWER)
    before = dump(service.engine)
    # A namespace the caller names itself is refused by name...
    forbidden = [
        lambda: remember(service, "x", ns="workspace:web", who=SHOP_AGENT),
        lambda: remember(service, "x", ns="workspace:web", who=SHOP_REVIEWER),
        lambda: service.approve(shop.id, SHOP_REVIEWER,
                                edit=CandidateEdit(namespace="workspace:web")),
        lambda: service.list_candidates(SHOP_REVIEWER, namespaces=["workspace:web"]),
        lambda: service.recall("web", SHOP_AGENT, namespaces=["workspace:web"]),
    ]
    for call in forbidden:
        with pytest.raises(Forbidden):
            call()
    # ...but a record outside its scope, found by id, does not exist for it, and the answer
    # names no namespace.
    unseen = [
        lambda: service.approve(web.id, SHOP_REVIEWER),
        lambda: service.reject(web.id, SHOP_REVIEWER),
        lambda: service.edit_candidate(web.id, CandidateEdit(content="x"), SHOP_REVIEWER),
        lambda: service.update_memory(web_mem.id, CandidateEdit(content="x"), SHOP_REVIEWER),
        lambda: service.delete_memory(web_mem.id, SHOP_REVIEWER),
        lambda: service.approve(shop.id, SHOP_REVIEWER, supersede=web_mem.id),
        lambda: service.origins(web.id, SHOP_REVIEWER),
        lambda: service.transitions(web.id, SHOP_REVIEWER),
    ]
    for call in unseen:
        with pytest.raises(NotFound) as err:
            call()
        assert "workspace:" not in err.value.message
    assert dump(service.engine) == before
    with pytest.raises(NotFound):
        service.get_candidate(web.id, SHOP_REVIEWER)
    with pytest.raises(NotFound):
        service.get_memory(web_mem.id, SHOP_REVIEWER)
    assert [c.id for c in service.list_candidates(SHOP_REVIEWER).items] == [shop.id]
    assert service.list_memories(SHOP_REVIEWER).items == []
    assert service.namespaces(SHOP_REVIEWER) == ["workspace:shop"]
    assert service.queue_stats(SHOP_REVIEWER).pending == 1
    assert service.queue_stats(SHOP_REVIEWER).memories == 0
    # inside its scope it works
    assert service.approve(shop.id, SHOP_REVIEWER).namespace == "workspace:shop"


def test_an_empty_namespace_list_narrows_nothing_everywhere(
        indexed_service: MemoryService) -> None:
    """`namespaces=[]` means what leaving it out means, in the queue, the memory list and
    recall alike (it once meant nothing in one and everything in the other), for a scoped
    caller and an unscoped one."""
    svc = indexed_service
    shop = svc.approve(remember(svc, "the shop deploys with helm", ns="workspace:shop",
                                who=REVIEWER).candidate.id, REVIEWER)
    web = svc.approve(remember(svc, "the web app deploys with helm", ns="workspace:web",
                               who=REVIEWER).candidate.id, REVIEWER)
    remember(svc, "pending in the shop", ns="workspace:shop", who=REVIEWER)
    remember(svc, "pending on the web", ns="workspace:web", who=REVIEWER)
    for who, expected in ((REVIEWER, {shop.id, web.id}), (SHOP_REVIEWER, {shop.id})):
        queue = {c.id for c in svc.list_candidates(who).items}
        assert {c.id for c in svc.list_candidates(who, namespaces=[]).items} == queue
        assert {m.id for m in svc.list_memories(who, namespaces=[]).items} == expected
        assert {m.id for m in svc.list_memories(who).items} == expected
        hits = {h.memory.id for h in svc.recall("deploys with helm", who, namespaces=[])}
        assert hits == {h.memory.id for h in svc.recall("deploys with helm", who)} == expected


# --------------------------------------------------------------------------- tokens


def test_tokens_are_stored_hashed_and_revocable(service: MemoryService) -> None:
    info, plaintext = service.create_token("reviewer", ADMIN, namespaces=["workspace:shop"],
                                           name="ci")
    assert plaintext.startswith("mvt_") and len(plaintext) > 30
    assert (info.role, info.namespaces, info.name) == (Role.REVIEWER, ("workspace:shop",), "ci")
    everything = repr(dump(service.engine))
    assert plaintext not in everything
    assert plaintext[4:] not in everything
    who = service.authenticate(plaintext)
    assert who is not None and who.role is Role.REVIEWER and who.id == info.id
    assert who.namespaces == frozenset({"workspace:shop"})
    assert service.has_tokens()
    assert service.authenticate(plaintext + "x") is None
    assert service.authenticate("") is None
    assert service.authenticate("not-a-token") is None
    revoked = service.revoke_token(info.id, ADMIN)
    assert revoked.revoked_at is not None
    assert service.authenticate(plaintext) is None
    assert not service.has_tokens()
    assert [t.id for t in service.list_tokens(ADMIN)] == [info.id]
    with pytest.raises(NotFound):
        service.revoke_token("nope", ADMIN)


def test_bad_token_requests(service: MemoryService) -> None:
    from memvet.memory.errors import InvalidNamespace, ValidationError

    before = dump(service.engine)
    with pytest.raises(ValidationError):
        service.create_token("root", ADMIN)
    with pytest.raises(InvalidNamespace):
        service.create_token("agent", ADMIN, namespaces=["shop"])
    assert dump(service.engine) == before
