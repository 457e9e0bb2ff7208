"""What a job searches again, and what it does not: a dependent sub-query whose search did not
answer it tries the check's runner-up (a wrong bridge is the usual reason a hop finds nothing)
before any rewrite, never one it already searched; a verify round never re-asks a query the job
already searched. Through the real decisions and step runner, in process."""

from __future__ import annotations

from collections.abc import Sequence

from ragq.ledger.memory import MemoryJob, MemoryLedger
from ragq.schemas.flow import (
    Evidence,
    Finding,
    Plan,
    PlannedSubQuery,
    Rewrite,
    Strategy,
    SufficiencyVerdict,
    Usage,
)
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, config, seeded_world

MAKER = "the maker of the Orion lens"
HOME = "Where is {0} based?"


def _chain(question: str, *, max_sub_queries: int, context: str = "") -> tuple[Plan, Usage]:
    return Plan(sub_queries=[PlannedSubQuery(text=MAKER),
                             PlannedSubQuery(text=HOME, depends_on=[0])],
                strategy=Strategy.CHAIN), Usage(model="m")


def _run(finding: Finding, right: str, ledger: MemoryLedger | None = None
         ) -> tuple[MemoryJob, list[str]]:
    """One job of the chain; the maker's finding is ``finding``; a search of the second hop
    is sufficient only when it names ``right``. Returns the job and the roles called."""
    world = seeded_world(5)
    provider = world.provider
    roles: list[str] = []

    def plan(question: str, **kw: object) -> tuple[Plan, Usage]:
        return _chain(question, max_sub_queries=4)

    def check(sub_query: str, evidence: Sequence[Evidence], *, found: Sequence[Evidence] = (),
              attempt: int = 0, previous: Sequence[str] = ()
              ) -> tuple[SufficiencyVerdict, Usage]:
        roles.append("sufficiency")
        ok = sub_query == MAKER or right in sub_query
        rewrite = None if ok else Rewrite(text=f"{sub_query} rewritten {attempt}")
        return SufficiencyVerdict(sufficient=ok, score=0.9 if ok else 0.1,
                                  finding=finding if sub_query == MAKER else Finding(text="Jena"),
                                  rewrite=rewrite), Usage(model="m")

    provider.plan, provider.check_sufficiency = plan, check  # type: ignore[method-assign]
    ledger = ledger or MemoryLedger()
    job_id = ledger.add_job("Where is the maker of the Orion lens based?",
                            collection=COLLECTION, meta={"route": "full"})
    InlineDispatcher(Runner(ledger, world, config())).run(job_id)
    return ledger.jobs[job_id], roles


def _searched(job: MemoryJob, index: int) -> list[str]:
    sq = job.sub_queries[(0, index)]
    return [r.query for r in sorted(job.requests.values(), key=lambda r: r.attempt)
            if r.sub_query_id == sq.id]


def test_a_hop_that_found_nothing_searches_with_the_runner_up_and_settles_on_it():
    job, _ = _run(Finding(text="Vega Optics", alternatives=["Zeiss Works"]), "Zeiss Works")
    assert job.sub_queries[(0, 0)].alternatives == ("Zeiss Works",)
    assert _searched(job, 1) == ["Where is Vega Optics based?", "Where is Zeiss Works based?"]
    second = job.sub_queries[(0, 1)]
    assert second.status == "sufficient" and second.finding == "Jena"
    first_check = job.checks[(second.id, 0)]
    assert not first_check.sufficient and first_check.rewrite == "Where is Zeiss Works based?"
    assert "next candidate: 'Zeiss Works'" in first_check.reason
    # the candidate, not the check's rewrite of the wrong bridge
    assert not any("rewritten" in q for q in _searched(job, 1))


def test_candidates_are_tried_in_order_and_never_twice():
    job, _ = _run(Finding(text="Vega Optics", alternatives=["Vega Optics", "Lyra Glass",
                                                            "Zeiss Works"]), "Zeiss Works")
    # "Vega Optics" again would repeat the first search: skipped. The route's attempts (3)
    # then reach the third candidate.
    assert _searched(job, 1) == ["Where is Vega Optics based?", "Where is Lyra Glass based?",
                                 "Where is Zeiss Works based?"]
    assert job.sub_queries[(0, 1)].status == "sufficient"


def test_without_runners_up_a_hop_that_found_nothing_rewrites_as_before():
    job, _ = _run(Finding(text="Vega Optics"), "Zeiss Works")
    searched = _searched(job, 1)
    assert searched[0] == "Where is Vega Optics based?"
    assert all("Zeiss" not in q for q in searched)
    assert job.sub_queries[(0, 1)].status == "insufficient"
    assert all("rewritten" in q for q in searched[1:])  # any further attempt: a check's rewrite


def _verified(follow_ups: list[str], *, rewrites: bool = False) -> tuple[MemoryJob, list[str]]:
    """One single-search job whose check and verifier are never satisfied, the verifier asking
    ``follow_ups``; with ``rewrites``, every check gives a rewrite and every pass is weak."""
    from ragq.schemas.flow import Verification

    world = seeded_world(7)
    provider = world.provider
    roles: list[str] = []

    def plan(question: str, **kw: object) -> tuple[Plan, Usage]:
        return Plan(sub_queries=[PlannedSubQuery(text=MAKER)]), Usage(model="m")

    def verify(question: str, evidence: Sequence[Evidence], *, findings: Sequence[str],
               missing: Sequence[str] = ()) -> tuple[Verification, Usage]:
        roles.append("verifier")
        return Verification(sufficient=False, confidence=0.2,
                            follow_up_queries=follow_ups), Usage(model="m")

    def check(sub_query: str, evidence: Sequence[Evidence], **kw: object
              ) -> tuple[SufficiencyVerdict, Usage]:
        # never sufficient (no met contract to end the loop): the verifier asks
        rewrite = Rewrite(text=f"{sub_query} again") if rewrites else None
        return SufficiencyVerdict(sufficient=False, score=0.9, finding=Finding(text="Orion Labs"),
                                  rewrite=rewrite), Usage(model="m")

    provider.plan, provider.verify = plan, verify  # type: ignore[method-assign]
    provider.check_sufficiency = check  # type: ignore[method-assign]
    ledger = MemoryLedger()
    job_id = ledger.add_job("Who makes the Orion lens?", collection=COLLECTION,
                            meta={"route": "full"})
    weak = config(expansion_min_top_score=1.0) if rewrites else config()  # no pass is strong
    InlineDispatcher(Runner(ledger, world, weak)).run(job_id)
    return ledger.jobs[job_id], roles


def test_a_planned_sub_query_is_rewritten_and_a_follow_up_is_searched_once():
    job, _ = _verified(["Orion lens factory address"], rewrites=True)
    planned = _searched(job, 0)
    assert len(planned) == 3 and planned[1:] == [f"{planned[0]} again",
                                                 f"{planned[1]} again"]  # the route's attempts
    follow_ups = [sq for sq in job.sub_queries.values() if sq.round > 0]
    assert follow_ups
    for sq in follow_ups:
        searched = [r for r in job.requests.values() if r.sub_query_id == sq.id]
        assert len(searched) == 1  # the next verdict asks again, not a rewrite
        assert "a follow-up is searched once" in job.checks[(sq.id, 0)].reason


def test_a_follow_up_the_job_already_searched_starts_no_round():
    # Asked again in other case and spacing: the same normalized query, the same hits.
    job, roles = _verified(["THE maker of  the Orion lens?"])
    assert roles == ["verifier"]  # one verdict, no round to verify
    assert {sq.round for sq in job.sub_queries.values()} == {0}
    assert job.stop_reason == "no_follow_up"


def test_only_the_new_follow_ups_of_a_verdict_are_searched():
    job, _ = _verified(["the maker of the Orion lens", "Orion lens factory address"])
    asked = [sq.text for sq in job.sub_queries.values() if sq.round == 1]
    assert asked == ["Orion lens factory address"]


def test_a_redelivered_check_chooses_the_candidate_its_first_delivery_chose():
    from ragq.orchestration.flow.check import next_candidate

    ledger = MemoryLedger()
    job, _ = _run(Finding(text="Vega Optics", alternatives=["Zeiss Works"]), "Zeiss Works",
                  ledger)
    state = ledger.snapshot(job.id, config())
    second = state.sub_query(0, 1)
    # Attempt 1 already searched "Zeiss Works"; the check of attempt 0, delivered again,
    # still picks it (later attempts are not counted as tried), and attempt 1's has none left.
    assert next_candidate(state, second, 0) == ("Zeiss Works", "Where is Zeiss Works based?")
    assert next_candidate(state, second, 1) is None
