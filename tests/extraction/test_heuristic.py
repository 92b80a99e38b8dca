"""The heuristic extractor: what yields a memory, what yields nothing, and how it is phrased."""

from __future__ import annotations

import time

import pytest

from memvet.extraction.heuristic import HeuristicExtractor
from memvet.memory.kinds import Kind
from memvet.memory.ports import ExtractedCandidate, ExtractionContext, Extractor, Message

CTX = ExtractionContext(workspace="Shop API", persona="dana", trigger="turn")


def run(
    user: str, reply: str = "OK.", context: ExtractionContext = CTX
) -> list[ExtractedCandidate]:
    msgs = [Message("user", user), Message("assistant", reply)]
    return HeuristicExtractor().extract(msgs, context)


def one(user: str, reply: str = "Understood.") -> ExtractedCandidate:
    got = run(user, reply)
    assert len(got) == 1, got
    return got[0]


def test_satisfies_the_extractor_protocol() -> None:
    ex = HeuristicExtractor()
    assert isinstance(ex, Extractor)
    assert ex.name == "heuristic"
    assert ex.background is False


@pytest.mark.parametrize(
    ("user", "kind", "term"),
    [
        ("heads up: the billing service lives in services/billing", Kind.FACT, "services/billing"),
        ("we decided to use Postgres over MySQL because of JSONB", Kind.DECISION, "postgres"),
        ("every PR needs a changelog entry, no exceptions", Kind.PATTERN, "changelog"),
        ("we shipped 2.0 to production on march 3rd", Kind.EVENT, "2.0"),
        (
            "the deploy last friday took checkout down because the migration ran twice. "
            "from now on migrations must be idempotent",
            Kind.POSTMORTEM,
            "idempotent",
        ),
        ("from now on keep your answers short, I read the diff anyway", Kind.PREFERENCE, "short"),
    ],
)
def test_each_kind_has_cues(user: str, kind: Kind, term: str) -> None:
    got = one(user)
    assert got.kind is kind
    assert term in got.content.lower()
    assert 0.0 < got.confidence <= 1.0


def test_project_memories_go_to_the_workspace_and_preferences_to_the_persona() -> None:
    fact = one("fyi the API is served on port 8080 locally")
    pref = one("please no emojis in anything you write for me")
    assert fact.namespace == "workspace:shop-api"
    assert pref.namespace == "persona:dana"
    assert pref.kind is Kind.PREFERENCE


def test_without_a_workspace_everything_goes_to_the_persona() -> None:
    ctx = ExtractionContext(workspace=None, persona="default")
    (got,) = run("heads up: the billing service lives in services/billing", context=ctx)
    assert got.namespace == "persona:default"


@pytest.mark.parametrize(
    "user",
    [
        "should we maybe try bun at some point? just thinking out loud",  # hypothetical
        "what if we used graphql instead of rest?",  # question
        "how does the caching layer work",  # question without a question mark
        "run the tests now",  # one-off instruction
        "skip the tests this time, I need a build for the demo",  # one-off
        "remove the debug logs before you commit",  # a task, whatever rule it mentions
        "lol this code is a crime scene",  # joke
        "let's just put everything in public subnets. kidding. obviously",  # joke taken back
        "let's switch the registry to Horde. hm actually scratch that, leave it",  # retracted
        "set retries to 5 on that task. nah forget it",  # retracted
        "thanks, that works",
        "the staging deploy failed again",  # transient state, not a memory
        "morning! coffee hasn't kicked in yet so bear with me",
    ],
)
def test_things_that_yield_nothing(user: str) -> None:
    assert run(user) == []


def test_a_retraction_opening_a_message_takes_back_the_previous_one() -> None:
    msgs = [
        Message("user", "let's use zustand for the filters, it's lighter"),
        Message("assistant", "OK, I'll add zustand."),
        Message("user", "actually no, wait. the team knows redux toolkit, stick with RTK"),
        Message("assistant", "Makes sense."),
    ]
    got = HeuristicExtractor().extract(msgs, CTX)
    assert [c.kind for c in got] == [Kind.DECISION]
    assert "rtk" in got[0].content.lower()
    assert "zustand" not in got[0].content.lower()


def test_code_blocks_and_traces_yield_nothing() -> None:
    user = "why?\n```\n# we always use tabs, never spaces\nraise KeyError('x')\n```"
    assert run(user) == []
    trace = 'Traceback (most recent call last):\n  File "a.py", line 1\nValueError: never'
    assert run(trace) == []


def test_the_agents_own_plans_are_not_memories() -> None:
    msgs = [
        Message("user", "the card title overflows"),
        Message("assistant", "We should always use overflow-wrap: anywhere. I'll go with that."),
    ]
    assert HeuristicExtractor().extract(msgs, CTX) == []


def test_a_rule_the_agent_proposed_counts_once_the_user_confirms_it() -> None:
    msgs = [
        Message("user", "lint is failing again"),
        Message("assistant", "Fixed. Should I always run `pnpm lint` before pushing?"),
        Message("user", "yes"),
    ]
    (got,) = HeuristicExtractor().extract(msgs, CTX)
    assert got.kind is Kind.PATTERN
    assert "pnpm lint" in got.content


def test_picking_an_offered_option_is_a_decision() -> None:
    msgs = [
        Message("user", "the matchmaker fell over at 12k players"),
        Message("assistant", "Options: (a) shard by region, (b) shard by skill. Which one?"),
        Message("user", "a. one matchmaker per region, cross-region play isn't a thing for us"),
    ]
    (got,) = HeuristicExtractor().extract(msgs, CTX)
    assert got.kind is Kind.DECISION
    assert "per region" in got.content


def test_memories_are_phrased_to_stand_alone() -> None:
    got = one("ugh. we're on pnpm here, not npm")
    assert got.content.startswith("The shop-api project uses pnpm")
    assert " here" not in got.content
    pref = one("don't commit for me. i review and commit myself")
    assert "the user reviews" in pref.content.lower()
    assert " i " not in f" {pref.content.lower()} "
    assert pref.excerpt is not None and "i review" in pref.excerpt


def test_confidence_is_calibrated_by_strength() -> None:
    strong = one("from now on keep your answers short, no summary at the end", "Understood.")
    weak = one("heads up: billing lives in services/billing", "Hm.")
    assert 0.0 < weak.confidence < strong.confidence <= 0.95


def test_a_quiet_compaction_adds_nothing() -> None:
    msgs = [
        Message("user", "CI is taking forever today"),
        Message("assistant", "The job sat in the queue; it started 4 minutes ago."),
        Message("user", "in go, can a method have its own type param?"),
        Message("assistant", "No, only the receiver's."),
        Message("user", "meh. ok"),
        Message("assistant", "CI finished: all green."),
    ]
    ctx = ExtractionContext(workspace="payments", persona="default", trigger="compaction")
    assert HeuristicExtractor().extract(msgs, ctx) == []


def test_never_raises_and_stays_bounded_on_odd_input() -> None:
    junk = bytes(range(256)).decode("latin-1") * 400 + "\ud800\udfff"
    msgs = [Message("user", junk), Message("tool", junk)] * 5_000  # 10,000 messages
    msgs += [Message("user", None), Message("weird-role", 42)]  # type: ignore[arg-type]
    start = time.perf_counter()
    got = HeuristicExtractor().extract(msgs, CTX)
    assert time.perf_counter() - start < 5.0
    assert isinstance(got, list)
    assert HeuristicExtractor().extract([], CTX) == []


def test_a_normal_turn_is_fast() -> None:
    msgs = [
        Message(
            "user",
            "heads up: prod state lives in acme-tfstate-prod. never point prod at "
            "the staging bucket. " * 3,
        ),
        Message("assistant", "Noted. " * 50),
    ]
    ex = HeuristicExtractor()
    ex.extract(msgs, CTX)
    timings = []
    for _ in range(50):
        start = time.perf_counter()
        ex.extract(msgs, CTX)
        timings.append(time.perf_counter() - start)
    timings.sort()
    assert timings[len(timings) // 2] < 0.02  # generous: the bench checks the 5 ms p95


def test_a_resource_failure_with_its_lesson_is_one_postmortem() -> None:
    got = one("Last night the prod database ran out of disk because logs weren't rotated. "
              "Next time set up logrotate before launch.")
    assert got.kind is Kind.POSTMORTEM
    assert "logrotate" in got.content and got.namespace.startswith("workspace:")


def test_a_past_move_made_for_a_reason_is_a_decision() -> None:
    got = one("We moved the API from Flask to FastAPI last month because we needed async "
              "support.")
    assert got.kind is Kind.DECISION
    assert "FastAPI" in got.content and "we" not in got.content.split()


def test_thanks_is_not_context_for_the_rule_after_it() -> None:
    got = one("Thanks, that fixed the build. From now on always run the linter before "
              "committing.")
    assert "Thanks" not in got.content and "linter" in got.content


def test_remember_that_marks_a_fact_and_drops_from_the_phrasing() -> None:
    got = one("Remember that the mobile app still uses the v1 API, so don't remove those "
              "endpoints.")
    assert got.kind is Kind.FACT and got.content.startswith("In ")
    assert "Remember" not in got.content and "v1 API" in got.content
    assert run("remember to run the tests") == []
