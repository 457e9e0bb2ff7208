"""Lean checks (``RAGQ_LEAN_CHECKS``, on by default): a sufficiency check whose verdict cannot
change what the job does next is decided by the local rules, recorded as a check with no model
call; every check whose verdict can steer the job (a search may follow it, a dependent waits
for its finding, the contract may stop on it, it is a key's first verdict) asks the provider.
Through the real decisions and step runner, in process."""

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
    Verification,
)
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, config, seeded_world

LENS = "Who makes the Orion lens?"
MOUNT = "Which mount does the Orion camera use?"
QUESTION = "Who makes the Orion lens and which mount does the Orion camera use"


def _job(parts: list[PlannedSubQuery], *, lean: bool = True,
         follow_ups: Sequence[str] = ()) -> tuple[MemoryJob, list[tuple[str, int]]]:
    """One job planned as ``parts``, its checks never satisfied and every pass weak (so each
    sub-query uses the route's three attempts), the verifier asking ``follow_ups`` once.
    Returns the job and the (sub-query, attempt) of every check of a planned part (not of the
    whole question, searched beside them) the provider was asked."""
    world = seeded_world(13)
    provider = world.provider
    asked: list[tuple[str, int]] = []
    verdicts: list[int] = []

    def plan(question: str, **kw: object) -> tuple[Plan, Usage]:
        return Plan(sub_queries=parts, strategy=Strategy.AGGREGATE), Usage(model="m")

    def check(sub_query: str, evidence: Sequence[Evidence], *, found: Sequence[Evidence] = (),
              attempt: int = 0, previous: Sequence[str] = ()
              ) -> tuple[SufficiencyVerdict, Usage]:
        if not sub_query.startswith(QUESTION):  # nor a rewrite of it
            asked.append((sub_query, attempt))
        return SufficiencyVerdict(sufficient=False, score=0.1, finding=Finding(text="Vega"),
                                  rewrite=Rewrite(text=f"{sub_query} #{attempt}")), Usage(model="m")

    def verify(question: str, evidence: Sequence[Evidence], *, findings: Sequence[str],
               missing: Sequence[str] = ()) -> tuple[Verification, Usage]:
        verdicts.append(1)
        return Verification(sufficient=False, confidence=0.2,
                            follow_up_queries=list(follow_ups) if len(verdicts) == 1 else []
                            ), Usage(model="m")

    provider.plan, provider.verify = plan, verify  # type: ignore[method-assign]
    provider.check_sufficiency = check  # type: ignore[method-assign]
    ledger = MemoryLedger()
    job_id = ledger.add_job(QUESTION, collection=COLLECTION, meta={"route": "full"})
    weak = config(expansion_min_top_score=1.0, lean_checks=lean)  # no pass is strong
    InlineDispatcher(Runner(ledger, world, weak)).run(job_id)
    return ledger.jobs[job_id], asked


def _checks(job: MemoryJob, round_: int, index: int) -> list[tuple[int, str]]:
    sq = job.sub_queries[(round_, index)]
    return sorted((attempt, check.reason) for (sq_id, attempt), check in job.checks.items()
                  if sq_id == sq.id)


def _check_calls(job: MemoryJob, *indexes: int) -> list[str]:
    """The keys of the recorded model calls that checked the round-0 sub-queries ``indexes``."""
    return [key for key, (role, *_) in job.model_calls.items() if role.startswith("sufficiency")
            and any(key.startswith(f"check:0.{index}.") for index in indexes)]


def test_the_last_rewrite_of_an_independent_part_is_checked_locally():
    job, asked = _job([PlannedSubQuery(text=LENS), PlannedSubQuery(text=MOUNT)])
    for index in (0, 1):
        checks = _checks(job, 0, index)
        assert [a for a, _ in checks] == [0, 1, 2]  # every attempt still has its check
        assert not checks[0][1].startswith("local check:")
        assert not checks[1][1].startswith("local check:")
        assert checks[2][1].startswith("local check:")  # its verdict could steer nothing
        assert job.sub_queries[(0, index)].status == "insufficient"
    # the provider saw the first pass and the first rewrite of each part, nothing else
    assert sorted(attempt for _, attempt in asked) == [1, 1, 2, 2]
    assert len(_check_calls(job, 0, 1)) == len(asked)


def test_with_lean_checks_off_every_check_asks_the_provider():
    job, asked = _job([PlannedSubQuery(text=LENS), PlannedSubQuery(text=MOUNT)], lean=False)
    assert sorted(attempt for _, attempt in asked) == [1, 1, 2, 2, 3, 3]
    assert not any(reason.startswith("local check:")
                   for index in (0, 1) for _, reason in _checks(job, 0, index))
    lean, _ = _job([PlannedSubQuery(text=LENS), PlannedSubQuery(text=MOUNT)])
    assert len(_check_calls(job, 0, 1)) - len(_check_calls(lean, 0, 1)) == 2  # one per part


def test_a_plan_of_one_part_keeps_every_check_with_the_provider():
    # Its check may stop the job on the evidence contract, whatever the attempt.
    job, asked = _job([PlannedSubQuery(text=LENS)])
    assert [attempt for _, attempt in asked] == [1, 2, 3]
    assert not any(reason.startswith("local check:") for _, reason in _checks(job, 0, 0))


def test_every_hop_of_a_chain_and_its_dependency_keep_their_checks_with_the_provider():
    job, _ = _job([PlannedSubQuery(text="the maker of the Orion lens"),
                       PlannedSubQuery(text="Where is {0} based?", depends_on=[0]),
                       PlannedSubQuery(text=MOUNT)])
    for index in (0, 1):
        assert not any(reason.startswith("local check:") for _, reason in _checks(job, 0, index))
    assert _checks(job, 0, 2)[-1][1].startswith("local check:")  # the independent part's last


def test_a_verifier_follow_up_is_checked_locally_and_searched_once():
    job, asked = _job([PlannedSubQuery(text=LENS), PlannedSubQuery(text=MOUNT)],
                      follow_ups=["Orion lens factory address"])
    follow_up = next(sq for sq in job.sub_queries.values() if sq.round == 1)
    (attempt, reason), = _checks(job, 1, follow_up.index)
    assert attempt == 0 and reason.startswith("local check:")
    assert "a follow-up is searched once" in reason
    assert all(sub_query != follow_up.text for sub_query, _ in asked)
