"""Both priorities in flight through a real stack (embedded, Redis and PostgreSQL, RabbitMQ and
PostgreSQL): an interactive job asked while a bulk backlog fills the window and the queues
ends, answered, ahead of the backlog's last job, and every job of both ends answered: the
brokers take both priorities' messages (docs/fair-share.md#priority)."""

from __future__ import annotations

from sqlalchemy import select

from ragq.ingestion.submit import ingest_path
from ragq.ledger import session_scope
from ragq.ledger.models import JobRow
from ragq.submission import ask, results, submit_file, wait
from ragq.workers.wiring import build_ledger_engine
from tests.tasks.test_flow import BRIDGE_DOCS, BRIDGE_QUESTION, write_jsonl

BACKLOG = 40


def test_an_interactive_job_goes_ahead_of_a_bulk_backlog_already_sent(stack, collection,
                                                                      tmp_path):
    settings = stack.settings
    ingest_path(settings, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS),
                collection=collection)
    backlog = submit_file(settings, write_jsonl(tmp_path / "bulk.jsonl", [
        {"custom_id": f"b{n}", "question": BRIDGE_QUESTION} for n in range(BACKLOG)]),
        collection=collection)
    single = ask(settings, {"question": BRIDGE_QUESTION, "custom_id": "single"},
                 collection=collection)
    assert wait(settings, single, timeout_s=300, poll_s=0.05)["status"] == "completed"
    assert wait(settings, backlog.batch_id, timeout_s=300, poll_s=0.1)["status"] == "completed"
    assert [r["status"] for r in results(settings, backlog.batch_id)] == ["completed"] * BACKLOG
    with session_scope(build_ledger_engine(settings), readonly=True) as session:
        jobs = list(session.scalars(select(JobRow).where(
            (JobRow.batch_id == backlog.batch_id) | (JobRow.id == single))))
    by_id = {job.id: job for job in jobs}
    assert by_id[single].priority == "interactive"
    bulk = [job for job in jobs if job.id != single]
    assert {job.priority for job in bulk} == {"bulk"}
    # Sent ahead of the waiting bulk jobs, its steps ahead of the open ones' on the broker.
    assert by_id[single].finished_at < max(job.finished_at for job in bulk)
