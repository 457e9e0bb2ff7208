"""The supervisor's resumption of stalled jobs (workers/stalls.py) on real brokers: an idle job
whose message still waits in a queue is left alone, one nothing carries gets its kept message
again, and on a running stack such a job then runs to its end."""

from __future__ import annotations

import gc
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery import Celery
from sqlalchemy import Engine

from ragq.ingestion.submit import ingest_path
from ragq.ledger import add_job, get_job, make_engine, session_scope
from ragq.ledger.jobs import set_job_status
from ragq.ledger.stalls import record_next_step
from ragq.orchestration.flow import EnqueueLayer
from ragq.schemas.statuses import TERMINAL_JOB_STATUSES, JobStatus
from ragq.settings import build_settings
from ragq.workers.app import create_app
from ragq.workers.broker_transport import priority_lists
from ragq.workers.client import client_app
from ragq.workers.readiness import node_prefix
from ragq.workers.stack_state import load_state
from ragq.workers.stalls import _outlived, queued_job_ids, resume_stalled_jobs
from ragq.workers.wiring import build_ledger_engine
from tests.conftest import Stack, inherited_settings
from tests.ledger_template import migrated

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
IDLE_S = 0.2


@pytest.fixture
def idle_broker(valkey: tuple[str, subprocess.Popen[bytes]], tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Celery, Engine]]:
    """A Celery app on a Valkey server of its own that no worker consumes, and a ledger of its
    own (not the one of a stack another test started in this session)."""
    for key in inherited_settings():
        monkeypatch.delenv(key)
    settings = build_settings(home=tmp_path / "home", broker_url=valkey[0])
    migrated(settings.ledger_url)
    engine = make_engine(settings.ledger_url)
    app = create_app(settings)
    yield app, engine
    _let_go_of_results(app)  # while the server still runs (the valkey fixture ends after)
    app.close()
    engine.dispose()


def _let_go_of_results(app: Celery) -> None:
    """Stop following the results of the chords a test sent while their server still runs: a
    client keeps each until it is ready, and lets go of it (over the network) at exit."""
    gc.collect()
    backend = app.backend
    for waiting in backend._pending_results:
        for waiters in list(waiting.values()):
            for result in list(waiters.values()):
                backend.remove_pending_result(result)


def started_job(engine: Engine, collection: str = "c") -> str:
    """A job whose route step began and whose message is nowhere (lost)."""
    with session_scope(engine) as session:
        job_id = add_job(session, batch_id=None, custom_id=None, position=None, tenant="t",
                         collection=collection, question="How do I rotate an API key?",
                         acl=["public"]).id
        set_job_status(session, job_id=job_id, status=JobStatus.ROUTING)
    time.sleep(IDLE_S * 2)
    return job_id


def resume(app: Celery, engine: Engine, workers: int = 0) -> list[str]:
    """One sweep's resumption; as the supervisor's next sweep would, tries again when the
    broker dropped a connection this client held (an earlier test restarted the broker)."""
    for attempt in range(3):
        try:
            return resume_stalled_jobs(app, engine, idle_s=IDLE_S, workers=workers,
                                       running_for_s=300)
        except app.connection().connection_errors:
            if attempt == 2:
                raise
            time.sleep(1)
    raise AssertionError("unreachable")


def test_a_task_reported_running_past_the_time_limit_carries_nothing():
    now = time.time()
    assert _outlived({"time_start": now - 301}, 300)
    assert not _outlived({"time_start": now - 10}, 300)
    assert not _outlived({"id": "reserved, not started"}, 300)


def test_a_job_with_a_message_in_a_queue_is_left_alone(idle_broker: tuple[Celery, Engine]):
    app, engine = idle_broker
    job_id = started_job(engine)
    assert resume(app, engine) == [job_id]
    assert queued_job_ids(app) == {job_id}  # its route step, sent again, waits in its queue
    time.sleep(IDLE_S * 2)
    assert resume(app, engine) == []
    with session_scope(engine, readonly=True) as session:
        assert get_job(session, job_id=job_id).resumed_at is not None


def test_a_resumed_layer_is_sent_again_whole(idle_broker: tuple[Celery, Engine]):
    app, engine = idle_broker
    job_id = started_job(engine)
    with session_scope(engine) as session:
        set_job_status(session, job_id=job_id, status=JobStatus.RETRIEVING)
        record_next_step(session, job_id, EnqueueLayer(0, 0, (0, 1)))
    assert resume(app, engine) == [job_id]
    with app.connection_for_write() as connection:
        client = connection.default_channel.client
        pipelines = [m for name in priority_lists("retrieval") for m in client.lrange(name, 0, -1)]
    assert len(pipelines) == 2 and all(job_id.encode() in m for m in pipelines)


def test_a_stranded_job_on_a_running_stack_is_resumed_and_ends(stack: Stack, collection: str):
    settings = stack.settings
    if stack.kind == "rabbitmq":
        pytest.skip("RabbitMQ requeues a dead consumer's messages itself: no sweep there")
    ingest_path(settings, EXAMPLES / "docs", collection=collection)
    engine = build_ledger_engine(settings)
    app = client_app(settings)
    state = load_state(settings)
    assert state is not None
    workers = sum(1 for p in state.processes if node_prefix(p) is not None)
    job_id = started_job(engine, collection)
    try:
        assert job_id in resume(app, engine, workers)  # (and any job another test left idle)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with session_scope(engine, readonly=True) as session:
                status = get_job(session, job_id=job_id).status
            if status in TERMINAL_JOB_STATUSES:
                break
            time.sleep(0.2)
        assert status in {JobStatus.COMPLETED, JobStatus.NEEDS_REVIEW,
                          JobStatus.INSUFFICIENT_EVIDENCE}
    finally:
        engine.dispose()
