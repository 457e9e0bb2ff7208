"""A backlog larger than the window of open jobs, through the real tasks: the rest waits unsent,
each ending starts the next, every job ends answered, and a waiting job's latency budget opens
only when it starts."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from ragq.ingestion.submit import ingest_path
from ragq.ledger import add_job, session_scope
from ragq.ledger.models import JobBudgetRow, JobRow
from ragq.submission import results, submit_file, wait
from ragq.workers.healing import sweep_waiting
from ragq.workers.resources import resources_for
from tests.tasks.test_flow import BRIDGE_DOCS, BRIDGE_QUESTION, write_jsonl

TICKETS = 6


def most_open_at_once(spans: list[tuple[datetime, datetime]]) -> int:
    """The largest number of [sent, ended] spans that overlap at one instant."""
    edges = sorted([(sent, 1) for sent, _ in spans] + [(ended, -1) for _, ended in spans],
                   key=lambda edge: (edge[0], edge[1]))  # an ending before a send at a tie
    peak = now = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


def test_a_backlog_runs_two_jobs_at_a_time_and_every_job_ends(narrow_queue, tmp_path):
    ingest_path(narrow_queue, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS), collection="q")
    sent = submit_file(narrow_queue, write_jsonl(tmp_path / "t.jsonl", [
        {"custom_id": f"t{n}", "question": BRIDGE_QUESTION} for n in range(TICKETS)]),
        collection="q")
    assert wait(narrow_queue, sent.batch_id, timeout_s=180, poll_s=0.05)["status"] == "completed"
    assert [r["status"] for r in results(narrow_queue, sent.batch_id)] == ["completed"] * TICKETS
    with session_scope(resources_for(narrow_queue).engine, readonly=True) as session:
        jobs = {j.id: j for j in session.scalars(select(JobRow).where(
            JobRow.batch_id == sent.batch_id))}
        budgets = {b.job_id: b for b in session.scalars(select(JobBudgetRow))}
    spans = [(j.dispatched_at, j.finished_at) for j in jobs.values()]
    assert all(sent_at is not None and ended is not None for sent_at, ended in spans)
    assert most_open_at_once(spans) == 2  # type: ignore[arg-type]
    ends = sorted(j.finished_at for j in jobs.values() if j.finished_at)
    waited = [j for j in jobs.values() if j.dispatched_at and j.dispatched_at >= ends[0]]
    assert len(waited) == TICKETS - 2  # sent only once a job had ended
    for job in waited:  # the budget (and its deadline) opened when the job started
        assert budgets[job.id].created_at >= job.dispatched_at
        assert job.started_at is not None and job.started_at >= job.dispatched_at


def test_the_supervisors_sweep_starts_jobs_nobody_started(narrow_queue, tmp_path):
    """Jobs left waiting (their starter died between the claim and the send, or never ran)
    are started by the sweep alone, and answered."""
    ingest_path(narrow_queue, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS), collection="q")
    engine = resources_for(narrow_queue).engine
    with session_scope(engine) as session:
        ids = [add_job(session, batch_id=None, custom_id=None, position=None, tenant="default",
                       collection="q", question=BRIDGE_QUESTION, acl=["public"]).id
               for _ in range(3)]
    sweep_waiting(narrow_queue)  # what the supervisor runs every few seconds
    for job_id in ids:
        assert wait(narrow_queue, job_id, timeout_s=120, poll_s=0.05)["status"] == "completed"
