"""The front door of ingest without a stack: a run is opened in the ledger and the documents
go out as a chord addressed by the registered task names (an in-process broker, no worker)."""

from __future__ import annotations

import json

import pytest

from ragq.errors import StackError
from ragq.ingestion.submit import batches, estimated_chunks, ingest_path
from ragq.ledger import get_ingest_run, session_scope
from ragq.schemas.document import Document
from ragq.schemas.tasks import Queue, Task
from ragq.settings import Settings, build_settings
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
        assert str(run.status) == "failed" and "did not finish" in run.error  # not left running


def test_a_run_nobody_follows_is_closed_by_the_next_ingest(memory_broker: Settings, tmp_path,
                                                           monkeypatch):
    from datetime import UTC, datetime, timedelta

    from ragq.ledger import close_stale_ingest_runs, create_ingest_run

    engine = resources_for(memory_broker).engine
    with session_scope(engine) as session:
        old = create_ingest_run(session, collection="kb", source_path="x.jsonl").id
    with session_scope(engine) as session:  # a fresh run is not stale yet
        assert close_stale_ingest_runs(session, started_before=datetime.now(UTC)
                                       - timedelta(hours=1), reason="abandoned") == 0
    with session_scope(engine) as session:
        assert close_stale_ingest_runs(session, started_before=datetime.now(UTC)
                                       + timedelta(seconds=1), reason="abandoned") == 1
        run = get_ingest_run(session, run_id=old)
        assert (str(run.status), run.error) == ("failed", "abandoned")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with session_scope(engine) as session:
        stale = create_ingest_run(session, collection="kb", source_path="y.jsonl").id
    monkeypatch.setattr("ragq.ingestion.submit.FOLLOW_TIMEOUT_S", -5)  # every run is old now
    report = ingest_path(memory_broker, empty, collection="kb", timeout_s=-5)
    with session_scope(engine, readonly=True) as session:
        assert str(get_ingest_run(session, run_id=stale).status) == "failed"
        assert get_ingest_run(session, run_id=report.run_id).error == report.error
    assert report.error and "empty" in report.error


def test_an_invalid_collection_opens_no_run(memory_broker: Settings, tmp_path):
    from ragq.errors import InputError

    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": "d", "text": "t"}) + "\n")
    with pytest.raises(InputError, match="invalid collection name"):
        ingest_path(memory_broker, docs, collection="../kb")


def _doc(i: int, words: int) -> Document:
    return Document(id=f"d{i}", title="t", text=" ".join(["word"] * words))


def test_ingest_tasks_are_sized_by_chunks_as_well_as_documents() -> None:
    settings = build_settings(chunk_words=100, chunk_overlap_words=20, ingest_batch_docs=64,
                              ingest_batch_chunks=10)
    docs = [_doc(i, 400) for i in range(6)]  # 5 chunks each (400 words, stride 80)
    assert estimated_chunks(docs[0], size_words=100, overlap_words=20) == 5
    parts = batches(docs, settings)
    assert [len(p) for p in parts] == [2, 2, 2]
    assert [d.id for p in parts for d in p] == [d.id for d in docs]  # order kept, none lost


def test_a_document_longer_than_a_task_travels_alone() -> None:
    settings = build_settings(chunk_words=100, chunk_overlap_words=20, ingest_batch_chunks=10)
    parts = batches([_doc(0, 50), _doc(1, 5000), _doc(2, 50)], settings)
    assert [[d.id for d in p] for p in parts] == [["d0"], ["d1"], ["d2"]]


def test_the_document_count_still_caps_a_task() -> None:
    settings = build_settings(ingest_batch_docs=3, ingest_batch_chunks=1000)
    assert [len(p) for p in batches([_doc(i, 10) for i in range(7)], settings)] == [3, 3, 1]


def test_a_run_the_workers_ended_whose_result_never_arrives_fails_fast_and_says_why(
        memory_broker: Settings, tmp_path, monkeypatch):
    """Workers storing results in another backend than the front door's: the ledger says the
    run ended, the front door's backend never hears of it. Before, the front door waited out
    its whole timeout (an hour by default) and said only "are workers up?"."""
    import threading
    import time

    from ragq.ledger import finish_ingest_run
    from ragq.ledger.models import IngestRunRow

    monkeypatch.setattr("ragq.ingestion.submit.RESULT_GRACE_S", 0.5)
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": "d", "title": "T", "text": "Some text."}) + "\n")
    engine = resources_for(memory_broker).engine
    stop = threading.Event()

    def worker_elsewhere() -> None:  # ends the run in the ledger, its result stored elsewhere
        while not stop.is_set():
            with session_scope(engine) as session:
                running = session.query(IngestRunRow).filter_by(status="running").all()
                for run in running:
                    finish_ingest_run(session, run_id=run.id)
                if running:
                    return
            time.sleep(0.05)

    thread = threading.Thread(target=worker_elsewhere)
    thread.start()
    try:
        with pytest.raises(StackError) as refused:
            ingest_path(memory_broker, docs, collection="kb", timeout_s=120)
    finally:
        stop.set()
        thread.join()
    message = str(refused.value)
    # the ledger's word ended the wait, not the 120 s timeout ("did not finish within")
    assert "completed in the ledger" in message and "RAGQ_RESULT_BACKEND_URL" in message
    assert "did not finish" not in message


def test_a_backend_address_in_an_error_hides_its_password():
    from ragq.ingestion.submit import without_password

    assert without_password("redis://:s3cret@10.0.0.5:6379/1") == "redis://:***@10.0.0.5:6379/1"
    assert without_password("amqp://guest:pw@host//") == "amqp://guest:***@host//"
    assert without_password("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
