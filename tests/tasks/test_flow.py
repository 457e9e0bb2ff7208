"""The agentic flow through real workers: hops, citations, redelivery, bad lines, cancel."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import func, select

from ragq.ingestion.submit import ingest_path
from ragq.ledger import session_scope
from ragq.ledger.models import (
    AnswerRow,
    BudgetChargeRow,
    CitationRow,
    EvidenceItemRow,
    JobBudgetRow,
    ModelCallRow,
    PlanRow,
    RetrievalRequestRow,
    SubQueryRow,
    SufficiencyCheckRow,
    VerificationRow,
)
from ragq.orchestration.routing import RoutePath, budget_for
from ragq.schemas.statuses import BudgetDimension, ChargeOutcome
from ragq.submission import describe, errors, results, submit_file, wait
from ragq.workers.client import client_app
from ragq.workers.wiring import build_evidence_cache, build_ledger_engine, build_plan_cache
from tests.tasks.carrying import wait_uncarried

BRIDGE_DOCS = [
    {"id": "zephyr", "title": "Zephyr camera",
     "text": "The Zephyr is a compact mirrorless camera. The Zephyr camera is made by Orion Labs, "
             "which released it in 2019."},
    {"id": "orion", "title": "Orion Labs",
     "text": "Orion Labs is an optics company based in Lyon. Orion Labs was founded in 1998 by "
             "Mara Quint, a former telescope engineer."},
    {"id": "nimbus", "title": "Nimbus drone",
     "text": "The Nimbus is a folding drone made by Skyward Systems, founded by Tom Reyes."},
    {"id": "lens", "title": "Camera lenses",
     "text": "Prime lenses have a fixed focal length. Zoom lenses trade sharpness for range."},
]
BRIDGE_QUESTION = "Who founded the company that makes the Zephyr camera?"


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def ledger_counts(settings, job_id: str) -> dict[str, int]:
    tables = [PlanRow, SubQueryRow, RetrievalRequestRow, EvidenceItemRow, SufficiencyCheckRow,
              VerificationRow, ModelCallRow, AnswerRow, BudgetChargeRow]
    with session_scope(build_ledger_engine(settings)) as session:
        counts = {t.__tablename__: session.scalar(
            select(func.count()).select_from(t).where(t.job_id == job_id)) for t in tables}
        counts["citations"] = session.scalar(
            select(func.count()).select_from(CitationRow).join(AnswerRow)
            .where(AnswerRow.job_id == job_id))
        budget = session.get(JobBudgetRow, job_id)  # none until the job starts
        counts.update({f"used_{d.value}": int(getattr(budget, f"used_{d.value}", 0))
                       for d in BudgetDimension if d is not BudgetDimension.LATENCY_MS})
    return counts


def test_a_bridge_question_runs_two_dependent_hops_and_cites_both(stack, collection, tmp_path):
    ingest_path(stack.settings, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS),
                collection=collection)
    tickets = write_jsonl(tmp_path / "t.jsonl", [{"custom_id": "b1", "question": BRIDGE_QUESTION}])
    sent = submit_file(stack.settings, tickets, collection=collection)
    assert wait(stack.settings, sent.batch_id, timeout_s=180)["status"] == "completed"
    (result,) = results(stack.settings, sent.batch_id)
    assert result["status"] == "completed" and result["route"] in {"full", "bounded"}
    with session_scope(build_ledger_engine(stack.settings)) as session:
        plan = session.scalars(select(PlanRow).where(PlanRow.job_id == result["job_id"])).one()
        subs = session.scalars(select(SubQueryRow).where(SubQueryRow.job_id == result["job_id"],
                                                         SubQueryRow.round == 0)
                               .order_by(SubQueryRow.index)).all()
    assert plan.strategy == "chain"
    assert len(plan.plan["sub_queries"]) == 2
    assert len(subs) == 3 and subs[1].depends_on == [0]
    assert subs[2].original_text == BRIDGE_QUESTION and subs[2].depends_on == []
    assert "{0}" in subs[1].original_text
    assert subs[0].finding and "Orion Labs" in subs[0].finding
    assert "Orion Labs" in subs[1].final_text  # the first hop's finding, substituted
    cited = {c["doc_id"] for c in result["citations"]}
    assert {"zephyr", "orion"} <= cited
    assert "Mara Quint" in result["answer"]
    assert result["extractive"] is True
    assert result["usage"]["retrieval_calls"] >= 2


def _forget_caches(settings, collection: str, question: str) -> None:
    """Let the next job of ``question`` plan and search afresh, like the first one did."""
    build_evidence_cache(settings).drop_collection(collection)
    plans = build_plan_cache(settings)
    for path in RoutePath:
        plans.delete(question, provider="offline",
                     max_sub_queries=budget_for(path).max_sub_queries)


def test_a_redelivered_step_adds_no_ledger_rows(stack, collection, tmp_path):
    """The first step delivered again while the job runs: it and every step it sends again run
    beside the originals, on other workers. The job ends once with one plan and one answer, and
    what its budget used is exactly what its granted charges add up to: no charge applied
    twice. Which verify rounds the two executions take is a matter of timing (each decides on
    its own snapshots, seen: one verification where an undisturbed job made two), so the rows
    are not compared with an undisturbed job (tests/tasks/test_flow_queue.py redelivers the
    steps of an ended job one at a time and compares every row)."""
    ingest_path(stack.settings, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS),
                collection=collection)
    _forget_caches(stack.settings, collection, BRIDGE_QUESTION)
    twice = submit_file(stack.settings, write_jsonl(tmp_path / "t2.jsonl", [
        {"custom_id": "twice", "question": BRIDGE_QUESTION}]), collection=collection)
    # Deliver the job's first step again: every step after it then runs twice too.
    client_app(stack.settings).send_task("ragq.models.route", args=(twice.job_ids[0],))
    view = wait(stack.settings, twice.batch_id, timeout_s=180)
    assert view["counts"]["completed"] == 1, results(stack.settings, twice.batch_id)
    counts = ledger_counts(stack.settings, twice.job_ids[0])
    assert counts["answers"] == 1 and counts["plans"] == 1
    assert counts["used_steps"] > 0 and counts["used_retrieval_calls"] > 0
    assert _used(counts) == paid(stack.settings, twice.job_ids[0])


def _used(counts: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in counts.items() if k.startswith("used_") and v}


def paid(settings, job_id: str) -> dict[str, int]:
    """What a job's granted charges add up to, per dimension (as ``ledger_counts`` reads the
    budget: whole units, latency aside)."""
    t = BudgetChargeRow
    with session_scope(build_ledger_engine(settings), readonly=True) as session:
        sums = session.execute(select(t.dimension, func.sum(t.amount))
                               .where(t.job_id == job_id, t.outcome == ChargeOutcome.GRANTED)
                               .group_by(t.dimension)).all()
    return {f"used_{d.value}": int(total) for d, total in sums
            if d is not BudgetDimension.LATENCY_MS and int(total)}


def test_one_malformed_ticket_in_fifty_leaves_49_results_and_1_error(stack, collection,
                                                                     tmp_path):
    ingest_path(stack.settings, Path(__file__).resolve().parents[2] / "examples" / "docs",
                collection=collection)
    questions = ["How do I rotate an API key?", "What is the rate limit on the Standard plan?",
                 "Which regions does Acme Cloud run in?", "When are invoices issued?",
                 "How are webhooks signed?"]
    lines = [json.dumps({"custom_id": f"q{i}", "question": questions[i % len(questions)]})
             for i in range(50)]
    lines[17] = '{"custom_id": "q17", "question": '  # truncated line
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join(lines) + "\n")
    sent = submit_file(stack.settings, path, collection=collection)
    view = wait(stack.settings, sent.batch_id, timeout_s=600)
    assert view["status"] == "completed"
    assert view["counts"]["total"] == 49 and view["counts"]["invalid"] == 1
    got = results(stack.settings, sent.batch_id)
    assert len(got) == 49
    assert {r["custom_id"] for r in got} == {f"q{i}" for i in range(50)} - {"q17"}
    assert all(r["status"] in {"completed", "insufficient_evidence"} for r in got)
    assert all(r["citations"] for r in got if r["status"] == "completed")
    (error,) = errors(stack.settings, sent.batch_id)
    assert error["line"] == 18 and error["error"]["code"] == "invalid_json"
    assert describe(stack.settings, sent.job_ids[0])["object"] == "job"


def test_cancelling_a_batch_stops_its_open_jobs_and_keeps_finished_results(stack, collection,
                                                                         tmp_path):
    ingest_path(stack.settings, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS),
                collection=collection)
    # Distinct questions: identical ones would share cached plans and evidence and race
    # through in a blink, leaving nothing open to cancel.
    # More tickets than the window of open jobs, so some wait in line: twice the window and
    # more, so the line cannot drain between the first job's end and the cancel (every ending
    # sends the next waiting job; with one window's worth waiting, a loaded machine sent them
    # all before the cancel landed).
    window = stack.settings.open_jobs_window
    assert window is not None
    count = 3 * window + 14
    tickets = write_jsonl(tmp_path / "t.jsonl", [
        {"custom_id": f"c{i}", "question": f"{BRIDGE_QUESTION[:-1]}, case {i}?"}
        for i in range(count)])
    sent = submit_file(stack.settings, tickets, collection=collection)
    wait(stack.settings, sent.job_ids[0], timeout_s=120)  # at least one finishes first
    from ragq.submission import cancel

    cancelled = cancel(stack.settings, sent.batch_id)
    view = wait(stack.settings, sent.batch_id, timeout_s=120)
    assert view["status"] == "cancelled"
    assert view["counts"]["cancelled"] == cancelled >= 1
    assert view["counts"]["completed"] + cancelled == count
    got = results(stack.settings, sent.batch_id)
    finished = [r for r in got if r["status"] == "completed"]
    assert finished and all(r["answer"] for r in finished)
    cancelled_ids = [r["job_id"] for r in got if r["status"] == "cancelled"]
    # Steps in flight at cancel time may finish; after them nothing new starts: nothing
    # carries the cancelled jobs any more (work that went on would keep them queued or held),
    # so their ledger is final.
    wait_uncarried(stack.settings, cancelled_ids, timeout_s=120)
    before = {j: ledger_counts(stack.settings, j) for j in cancelled_ids}
    assert any(c["answers"] == 0 for c in before.values())  # stopped before answering
    # The window kept the last of them waiting: those never started and spent nothing.
    assert any(c["model_calls"] == 0 and c["used_steps"] == 0 for c in before.values())
    # A cancelled job still returns what it had found, and says why it stopped.
    assert all(r["stop_reason"] == "cancelled" and "evidence_doc_ids" in r
               for r in got if r["status"] == "cancelled")
