"""The front door of ingest without a stack: a run is opened in the ledger and the documents
go out as a chord addressed by the registered task names (an in-process broker, no worker)."""

from __future__ import annotations

import json

import pytest

from ragq.errors import StackError
from ragq.ingestion.submit import ingest_path
from ragq.ledger import get_ingest_run, session_scope
from ragq.schemas.tasks import Queue, Task
from ragq.settings import Settings
from ragq.workers.resources import resources_for
from tests.fakes.broker import drain_messages


def test_the_chord_names_the_ingest_and_finish_tasks(memory_broker: Settings, tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": f"d{i}", "title": "T", "text": "Some text."}) + "\n"
                            for i in range(3)) + "{broken\n")
    with pytest.raises(StackError, match="did not finish"):  # no worker: nothing ever ends
        ingest_path(memory_broker, docs, collection="kb", timeout_s=0.3)
    ((headers, body),) = drain_messages(memory_broker, Queue.INGEST)
    assert headers["task"] == Task.INGEST_DOCUMENTS
    assert body[2]["chord"]["task"] == Task.FINISH_INGEST  # the body, run after them
    run_id, collection, sent = body[0]
    assert collection == "kb" and [d["id"] for d in sent] == ["d0", "d1", "d2"]
    with session_scope(resources_for(memory_broker).engine, readonly=True) as session:
        run = get_ingest_run(session, run_id=run_id)
        assert (run.documents_total, run.bad_lines) == (3, 1)
