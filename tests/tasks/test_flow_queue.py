"""The job flow through a real Celery queue in this process (no stack): chords per layer,
pipelines that replace their tasks, a redelivered first step."""

from __future__ import annotations

from sqlalchemy import select

from ragq.ingestion.submit import ingest_path
from ragq.ledger import session_scope
from ragq.ledger.models import PlanRow, SubQueryRow
from ragq.submission import results, submit_file, wait
from ragq.workers.client import client_app
from ragq.workers.resources import resources_for
from tests.tasks.test_flow import BRIDGE_DOCS, BRIDGE_QUESTION, ledger_counts, write_jsonl


def test_a_bridge_question_runs_its_two_hops_through_the_queue(queue, tmp_path):
    ingest_path(queue, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS), collection="q")
    sent = submit_file(queue, write_jsonl(tmp_path / "t.jsonl", [
        {"custom_id": "b1", "question": BRIDGE_QUESTION}]), collection="q")
    assert wait(queue, sent.batch_id, timeout_s=120, poll_s=0.05)["status"] == "completed"
    (result,) = results(queue, sent.batch_id)
    assert result["status"] == "completed"
    with session_scope(resources_for(queue).engine, readonly=True) as session:
        plan = session.scalars(select(PlanRow).where(PlanRow.job_id == result["job_id"])).one()
        subs = session.scalars(select(SubQueryRow).where(
            SubQueryRow.job_id == result["job_id"], SubQueryRow.round == 0)
            .order_by(SubQueryRow.index)).all()
    assert plan.strategy == "chain" and subs[1].depends_on == [0]
    assert subs[0].finding and subs[0].finding in (subs[1].final_text or "")
    assert {"zephyr", "orion"} <= {c["doc_id"] for c in result["citations"]}


def test_a_redelivered_first_step_adds_no_ledger_rows(queue, tmp_path):
    ingest_path(queue, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS), collection="q")
    twice = submit_file(queue, write_jsonl(tmp_path / "t2.jsonl", [
        {"custom_id": "twice", "question": BRIDGE_QUESTION}]), collection="q")
    client_app(queue).send_task("ragq.models.route", args=(twice.job_ids[0],))
    assert wait(queue, twice.batch_id, timeout_s=120, poll_s=0.05)["counts"]["completed"] == 1
    once = submit_file(queue, write_jsonl(tmp_path / "t1.jsonl", [
        {"custom_id": "once", "question": BRIDGE_QUESTION}]), collection="q")
    assert wait(queue, once.batch_id, timeout_s=120, poll_s=0.05)["counts"]["completed"] == 1
    counts_once, counts_twice = (ledger_counts(queue, sent.job_ids[0]) for sent in (once, twice))
    assert counts_once == counts_twice
    assert counts_once["answers"] == 1 and counts_once["used_retrieval_calls"] > 0

