"""The cost figures of `ragq eval`: per question, per correct answer, tokens, exhaustion rate."""

from __future__ import annotations

from typing import Any

import pytest

from ragq.evaluation.metrics import question_row, summarize
from ragq.evaluation.run import EvalQuestion, _agentic_row, _by_route
from ragq.schemas.ticket import Ticket


def _row(*, found: list[str], cost: float, status: str = "completed", tokens: int = 0,
         route: str = "simple") -> dict[str, Any]:
    return question_row(["d1"], [], evidence=found, context=found, answer="",
                        retrieval_calls=1, model_calls=2, latency_ms=10.0, cost_usd=cost,
                        route=route, status=status, tokens=tokens)


def test_cost_per_correct_answer_divides_total_cost_by_all_gold_questions() -> None:
    rows = [_row(found=["d1"], cost=0.3), _row(found=["d1"], cost=0.1),
            _row(found=["d2"], cost=0.2)]
    figures = summarize(rows)
    assert figures["cost_usd_total"] == pytest.approx(0.6)
    assert figures["cost_usd_mean"] == pytest.approx(0.2)  # cost per question
    assert figures["correct"] == 2
    assert figures["cost_per_correct_answer"] == pytest.approx(0.3)


def test_cost_per_correct_answer_is_none_when_nothing_is_correct() -> None:
    figures = summarize([_row(found=[], cost=0.5), _row(found=["d2"], cost=0.5)])
    assert figures["correct"] == 0
    assert figures["cost_per_correct_answer"] is None


def test_free_correct_answers_cost_zero_per_correct_answer() -> None:
    assert summarize([_row(found=["d1"], cost=0.0)])["cost_per_correct_answer"] == 0.0


def test_budget_exhaustion_rate_counts_budget_exhausted_status() -> None:
    rows = [_row(found=["d1"], cost=0, status="budget_exhausted"),
            _row(found=["d1"], cost=0, status="completed"),
            _row(found=["d1"], cost=0, status="insufficient_evidence"),
            _row(found=["d1"], cost=0, status="budget_exhausted")]
    assert summarize(rows)["budget_exhaustion_rate"] == 0.5


def test_tokens_mean_is_prompt_plus_completion_per_question() -> None:
    rows = [_row(found=[], cost=0, tokens=100), _row(found=[], cost=0, tokens=300)]
    assert summarize(rows)["tokens_mean"] == 200


def test_no_rows_give_no_figures() -> None:
    assert summarize([]) == {"questions": 0}


def test_cost_figures_split_by_route() -> None:
    rows = [_row(found=["d1"], cost=0.4, route="full", status="budget_exhausted"),
            _row(found=[], cost=0.2, route="full"),
            _row(found=[], cost=0.1, route="simple")]
    report = _by_route(rows)
    assert report["full"]["cost_per_correct_answer"] == pytest.approx(0.6)
    assert report["full"]["budget_exhaustion_rate"] == 0.5
    assert report["simple"]["cost_per_correct_answer"] is None
    assert report["overall"]["cost_per_correct_answer"] == pytest.approx(0.7)
    assert report["overall"]["budget_exhaustion_rate"] == pytest.approx(1 / 3)


def test_an_agentic_row_reads_status_and_tokens_from_the_result_line() -> None:
    question = EvalQuestion(Ticket(custom_id="q1", question="?", gold_doc_ids=["d1"]))
    result = {"custom_id": "q1", "status": "budget_exhausted", "route": "full",
              "evidence_doc_ids": ["d1"], "context_doc_ids": ["d1"],
              "usage": {"prompt_tokens": 120, "completion_tokens": 30, "cost_usd": 0.0042,
                        "retrieval_calls": 3, "llm_calls": 4, "latency_ms": 900}}
    row = _agentic_row(question, result)
    assert (row["status"], row["tokens"], row["cost_usd"], row["route"]) == (
        "budget_exhausted", 150, 0.0042, "full")
    assert row["all_gold"] == 1.0


def test_a_result_without_usage_counts_as_free_and_unrouted() -> None:
    question = EvalQuestion(Ticket(custom_id="q1", question="?", gold_doc_ids=["d1"]))
    row = _agentic_row(question, {"custom_id": "q1", "status": "failed"})
    assert (row["status"], row["tokens"], row["cost_usd"], row["route"]) == (
        "failed", 0, 0.0, "none")


def test_the_escalation_rate_counts_jobs_that_went_to_review_resolved_or_not() -> None:
    question = EvalQuestion(Ticket(custom_id="q1", question="?", gold_doc_ids=["d1"]))
    base = {"custom_id": "q1", "route": "escalate", "evidence_doc_ids": ["d1"],
            "context_doc_ids": ["d1"], "usage": {}}
    waiting = {**base, "status": "needs_review",
               "review": {"reasons": ["route:escalate"], "outcome": "completed"}}
    resolved = {**waiting, "status": "completed", "reviewed": {"decision": "answered"}}
    plain = {**base, "status": "completed"}
    rows = [_agentic_row(question, r) for r in (waiting, resolved, plain, plain)]
    assert [r["escalated"] for r in rows] == [True, True, False, False]
    assert summarize(rows)["escalation_rate"] == 0.5
    assert summarize([_row(found=["d1"], cost=0)])["escalation_rate"] == 0.0


def test_the_review_rate_and_its_share_for_contradictions_read_the_review_reasons() -> None:
    question = EvalQuestion(Ticket(custom_id="q1", question="?", gold_doc_ids=["d1"]))
    base = {"custom_id": "q1", "route": "full", "evidence_doc_ids": ["d1"],
            "context_doc_ids": ["d1"], "usage": {}, "status": "needs_review"}
    conflict = {**base, "review": {"reasons": ["contradictions"], "outcome": "completed"}}
    both = {**base, "review": {"reasons": ["route:escalate", "contradictions"],
                               "outcome": "insufficient_evidence"}}
    routed = {**base, "review": {"reasons": ["route:escalate"], "outcome": "completed"}}
    plain = {**base, "status": "completed"}
    rows = [_agentic_row(question, r) for r in (conflict, both, routed, plain)]
    assert rows[1]["review_reasons"] == ["route:escalate", "contradictions"]
    figures = summarize(rows)
    assert (figures["escalation_rate"], figures["contradiction_review_rate"]) == (0.75, 0.5)
