"""Escalation to a human: which endings go to the review queue, and why (pure decisions)."""

from __future__ import annotations

import pytest

from ragq.orchestration.flow import (
    CallRole,
    EvidenceState,
    FinishJob,
    FlowConfig,
    JobState,
    ReviewPolicy,
    RoleAnswered,
    VerificationState,
    escalation_reasons,
)
from ragq.orchestration.flow.actions import SynthesizeRequest
from ragq.orchestration.flow.answer import on_synthesizer
from ragq.orchestration.flow.review import unresolved
from ragq.schemas.flow import Citation, Contradiction, DraftAnswer, Evidence
from ragq.schemas.statuses import JobStatus

CONFLICT = Contradiction(topic="refund", statements=["Refunds within 14 days.",
                                                     "Refunds within 30 days."],
                         doc_ids=["a", "b"], chunk_ids=["a::0", "b::0"])
PLAIN = DraftAnswer(answer="Refunds within 14 days.",
                    citations=[Citation(doc_id="a", chunk_id="a::0")])
CONFLICTED = PLAIN.model_copy(update={"contradictions": [CONFLICT]})
DEFAULT = ReviewPolicy()


def reasons(*, policy: ReviewPolicy = DEFAULT, outcome: JobStatus = JobStatus.COMPLETED,
            route: str | None = "full", draft: DraftAnswer = PLAIN,
            tiers: dict[str, int] | None = None,
            confidences: tuple[float, ...] = ()) -> tuple[str, ...]:
    return escalation_reasons(policy=policy, outcome=outcome, route=route, draft=draft,
                              tiers=tiers if tiers is not None else {"a::0": 2, "b::0": 2},
                              confidences=confidences)


def test_a_plain_answer_on_an_ordinary_route_needs_no_review() -> None:
    assert reasons() == ()


def test_the_escalate_route_is_reviewed_by_default_and_other_routes_by_setting() -> None:
    assert reasons(route="escalate") == ("route:escalate",)
    assert reasons(route="full", policy=ReviewPolicy(routes=frozenset({"full"}))) == (
        "route:full",)
    assert reasons(route="escalate", policy=ReviewPolicy(routes=frozenset())) == ()


def test_a_contradiction_of_equal_authority_is_unresolved() -> None:
    assert reasons(draft=CONFLICTED) == ("contradictions",)
    assert reasons(draft=CONFLICTED, policy=ReviewPolicy(contradictions=False)) == ()


def test_a_contradiction_one_source_outranks_is_settled_by_it() -> None:
    assert reasons(draft=CONFLICTED, tiers={"a::0": 1, "b::0": 3}) == ()
    assert not unresolved(CONFLICT, {"a::0": 1, "b::0": 2})
    # a side whose authority is unknown settles nothing
    assert unresolved(CONFLICT, {"a::0": 1})
    three = CONFLICT.model_copy(update={"chunk_ids": ["a::0", "b::0", "c::0"],
                                        "statements": ["x", "y", "z"], "doc_ids": ["a", "b", "c"]})
    assert unresolved(three, {"a::0": 1, "b::0": 1, "c::0": 3})
    assert not unresolved(three, {"a::0": 1, "b::0": 2, "c::0": 2})


def test_a_contradiction_between_two_subjects_sends_nothing_to_review() -> None:
    catalogue = CONFLICT.model_copy(update={"subjects": ["Pro plan", "Team plan"]})
    one_plan = CONFLICT.model_copy(update={"subjects": ["Pro plan", "the pro plan"]})
    assert reasons(draft=PLAIN.model_copy(update={"contradictions": [catalogue]})) == ()
    assert reasons(draft=PLAIN.model_copy(update={"contradictions": [catalogue, one_plan]})
                   ) == ("contradictions",)


def test_the_last_verdict_below_the_threshold_is_low_confidence() -> None:
    policy = ReviewPolicy(min_confidence=0.5)
    assert reasons(policy=policy, confidences=(0.9, 0.4)) == ("low_confidence",)
    assert reasons(policy=policy, confidences=(0.2, 0.6)) == ()  # the last one counts
    assert reasons(policy=policy, confidences=()) == ()  # never verified: nothing to judge
    assert reasons(confidences=(0.1,)) == ()  # threshold 0: off


def test_every_reason_is_given_in_a_fixed_order() -> None:
    policy = ReviewPolicy(min_confidence=0.5)
    assert reasons(policy=policy, route="escalate", draft=CONFLICTED, confidences=(0.1,)) == (
        "route:escalate", "contradictions", "low_confidence")


@pytest.mark.parametrize("outcome", [JobStatus.BUDGET_EXHAUSTED, JobStatus.FAILED,
                                     JobStatus.CANCELLED])
def test_endings_that_already_say_why_are_never_escalated(outcome: JobStatus) -> None:
    assert reasons(outcome=outcome, route="escalate", draft=CONFLICTED) == ()


def test_an_answer_that_found_too_little_can_be_escalated() -> None:
    assert reasons(outcome=JobStatus.INSUFFICIENT_EVIDENCE, route="escalate") == (
        "route:escalate",)


def test_a_threshold_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match="min_confidence"):
        ReviewPolicy(min_confidence=1.5)


# --- the synthesizer's answer ends the job: needs_review when the policy says so ------------


def _evidence(chunk: str, tier: int) -> EvidenceState:
    doc = chunk.split("::")[0]
    return EvidenceState(id=f"ev_{doc}", request_id="req_1", sub_query_id=None,
                         item=Evidence(chunk_id=chunk, doc_id=doc, text=f"text of {doc}",
                                       score=0.9, authority_tier=tier))


def _end(draft: DraftAnswer, *, route: str = "full", tiers: tuple[int, int] = (2, 2),
         policy: ReviewPolicy = DEFAULT, confidence: float | None = None) -> FinishJob:
    evidence = (_evidence("a::0", tiers[0]), _evidence("b::0", tiers[1]))
    verdicts = () if confidence is None else (VerificationState(0, True, confidence, 2),)
    state = JobState(job_id="job_1", question="How long are refunds?", collection="c",
                     acl=("public",), status=JobStatus.SYNTHESIZING,
                     config=FlowConfig(review=policy), route=route, evidence=evidence,
                     verifications=verdicts)
    request = SynthesizeRequest(state.asked, tuple(e.item for e in evidence), "single", ())
    call = CallRole("synthesizer", "synthesize", 0, request,
                    {"stop_reason": "sufficient", "context_tokens": 40})
    actions = on_synthesizer(state, RoleAnswered(call=call, value=draft, usage=None))
    return next(a for a in actions if isinstance(a, FinishJob))


def test_an_investigative_job_ends_needs_review_with_its_reason_and_outcome() -> None:
    end = _end(PLAIN, route="escalate")
    assert end.status == JobStatus.NEEDS_REVIEW
    assert end.review is not None
    assert (end.review.reasons, end.review.outcome) == (("route:escalate",), JobStatus.COMPLETED)
    assert end.stop_reason == "sufficient"


def test_the_job_evidence_tiers_decide_whether_a_conflict_is_settled() -> None:
    assert _end(CONFLICTED).status == JobStatus.NEEDS_REVIEW
    settled = _end(CONFLICTED, tiers=(1, 2))
    assert (settled.status, settled.review) == (JobStatus.COMPLETED, None)


def test_low_final_confidence_sends_the_job_to_review() -> None:
    policy = ReviewPolicy(min_confidence=0.6)
    assert _end(PLAIN, policy=policy, confidence=0.3).status == JobStatus.NEEDS_REVIEW
    assert _end(PLAIN, policy=policy, confidence=0.8).status == JobStatus.COMPLETED


def test_an_insufficient_answer_keeps_that_outcome_in_its_escalation() -> None:
    empty = DraftAnswer(answer="The evidence found does not answer this question.",
                        insufficient=True)
    end = _end(empty, route="escalate")
    assert end.status == JobStatus.NEEDS_REVIEW
    assert end.review is not None and end.review.outcome == JobStatus.INSUFFICIENT_EVIDENCE
