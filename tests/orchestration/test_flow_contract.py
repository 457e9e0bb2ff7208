"""The evidence contract in the flow: a job whose planned sub-queries were all answered from a
cited source stops with no verifier call, and the ledger says why; one with a key unanswered
asks the verifier. Through the real decisions and step runner, in process."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from ragq.ledger.memory import MemoryJob, MemoryLedger
from ragq.schemas.flow import (
    Evidence,
    Finding,
    Plan,
    PlannedSubQuery,
    Strategy,
    SufficiencyVerdict,
    Usage,
    Verification,
)
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, config, seeded_world

PARTS = ["Who makes the Orion lens?", "Who makes the Vega lens?", "Who makes the Lyra lens?"]


def _job(answered: Sequence[bool]) -> tuple[MemoryJob, list[str]]:
    """A job planned as ``len(answered)`` parallel parts; part ``i``'s check is sufficient when
    ``answered[i]``. Returns the job and the roles the provider was asked."""
    world = seeded_world(3)
    provider = world.provider
    roles: list[str] = []
    parts = PARTS[: len(answered)]

    def plan(question: str, **kw: object) -> tuple[Plan, Usage]:
        roles.append("planner")
        return Plan(sub_queries=[PlannedSubQuery(text=p) for p in parts],
                    strategy=Strategy.AGGREGATE), Usage(model="m")

    def check(sub_query: str, evidence: Sequence[Evidence], **kw: object
              ) -> tuple[SufficiencyVerdict, Usage]:
        roles.append("sufficiency")
        ok = sub_query in parts and answered[parts.index(sub_query)]
        return SufficiencyVerdict(sufficient=ok, score=0.9 if ok else 0.2,
                                  finding=Finding(text="Orion Labs")), Usage(model="m")

    def verify(question: str, evidence: Sequence[Evidence], *, findings: Sequence[str]
               ) -> tuple[Verification, Usage]:
        roles.append("verifier")
        return Verification(sufficient=True, confidence=0.9), Usage(model="m")

    provider.plan, provider.check_sufficiency = plan, check  # type: ignore[method-assign]
    provider.verify = verify  # type: ignore[method-assign]
    ledger = MemoryLedger()
    job_id = ledger.add_job(" and ".join(parts), collection=COLLECTION, meta={"route": "full"})
    InlineDispatcher(Runner(ledger, world, config(adaptive_expansion=False))).run(job_id)
    return ledger.jobs[job_id], roles


@settings(max_examples=12, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=3))
def test_the_verifier_is_asked_exactly_when_a_planned_key_is_unanswered(answered):
    job, roles = _job(answered)
    assert job.status in ("completed", "insufficient_evidence")
    first = job.verifications[0]
    if all(answered):
        assert "verifier" not in roles and job.stop_reason == "sufficient"
        assert "evidence contract met" in first.reason and "no verifier call" in first.reason
        assert all(p in first.reason for p in PARTS[: len(answered)])  # the contract, recorded
    else:
        assert roles.count("verifier") == 1 and "evidence contract" not in first.reason
