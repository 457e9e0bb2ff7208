"""A ledger out of reach for a while delays a job's steps; it does not fail the job."""

from __future__ import annotations

import time

from ragq.ingestion.submit import ingest_path
from ragq.ledger import session_scope
from ragq.ledger.models import JobRow
from ragq.submission import results, submit_file, wait
from ragq.workers.resources import resources_for
from tests.tasks.test_flow import BRIDGE_DOCS, BRIDGE_QUESTION, write_jsonl


def test_a_step_that_finds_no_ledger_connection_runs_again_later(tight_queue, tmp_path):
    client = tight_queue.model_copy(update={"ledger_pool_size": 5})  # the client's own engine
    ingest_path(client, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS), collection="q")
    workers = resources_for(tight_queue).engine
    held = [workers.connect() for _ in range(3)]  # every connection the workers may open
    try:
        sent = submit_file(client, write_jsonl(tmp_path / "t.jsonl", [
            {"custom_id": "held", "question": BRIDGE_QUESTION}]), collection="q")
        time.sleep(1.0)  # several checkouts time out meanwhile (0.2 s each)
        with session_scope(resources_for(client).engine, readonly=True) as session:
            job = session.get(JobRow, sent.job_ids[0])
            assert job is not None and job.status.value == "queued"  # its route never ran
    finally:
        for connection in held:
            connection.close()
    assert wait(client, sent.batch_id, timeout_s=120, poll_s=0.05)["status"] == "completed"
    (result,) = results(client, sent.batch_id)
    assert result["status"] == "completed" and result["error"] is None
    assert {"zephyr", "orion"} <= {c["doc_id"] for c in result["citations"]}
