"""A step cut off from its broker mid-step (the connection reset as the broker is killed) does
not fail its job: the job stays open and the sweeper sends its due step again from the ledger,
and it ends paying nothing twice. Seen in the Valkey kill drills (`bench/recovery.py`): one job
in ten runs ended failed with "Connection reset by peer" from a check step. Real tasks on
Celery's in-process worker (tests/tasks/conftest.py); the outage is the first layer's send
raising the error the redis client raises."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from ragq.ingestion.submit import ingest_path
from ragq.schemas.statuses import JobStatus
from ragq.schemas.ticket import Priority
from ragq.settings import Settings
from ragq.submission import submit_file
from ragq.tasks.dispatch import CeleryDispatcher
from ragq.tasks.flow import is_outage
from ragq.workers.client import client_app
from ragq.workers.resources import resources_for
from ragq.workers.sweeper import Sweeper
from tests.tasks.test_flow import _used, ledger_counts, paid, write_jsonl
from tests.tasks.test_lost_join import sweep_until_ended

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_step_cut_off_from_its_broker_leaves_its_job_to_the_sweeper(
        queue: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ingest_path(queue, EXAMPLES / "docs", collection="outage")
    cut = threading.Event()
    enqueue_layer = CeleryDispatcher.enqueue_layer

    def cut_off(self: CeleryDispatcher, job_id: str, round_: int, layer: int,
                indexes: Sequence[int], priority: Priority = Priority.BULK) -> None:
        if not cut.is_set():
            cut.set()
            raise RedisConnectionError(
                "Error while reading from 127.0.0.1:6379 : (104, 'Connection reset by peer')")
        enqueue_layer(self, job_id, round_, layer, indexes, priority)

    monkeypatch.setattr(CeleryDispatcher, "enqueue_layer", cut_off)
    sent = submit_file(queue, write_jsonl(tmp_path / "t.jsonl", [
        {"custom_id": "outage", "question": "How fast does Enterprise support answer urgent "
                                            "tickets?"}]), collection="outage")
    (job_id,) = sent.job_ids
    engine = resources_for(queue).engine
    sweeper = Sweeper(client_app(queue), engine,
                      queue.model_copy(update={"stall_after_s": 1.0}), holder="test")

    deadline = time.monotonic() + 180
    assert cut.wait(timeout=120), "no layer was sent"
    status, rounds = sweep_until_ended(engine, sweeper, job_id, deadline)

    assert status != JobStatus.FAILED, "the broker's outage failed the job"
    assert job_id in {job for round_ in rounds for job in round_.resumed}
    assert status in {JobStatus.COMPLETED, JobStatus.INSUFFICIENT_EVIDENCE,
                      JobStatus.NEEDS_REVIEW}
    counts = ledger_counts(queue, job_id)
    assert counts["answers"] == 1
    assert _used(counts) == paid(queue, job_id)


@pytest.mark.parametrize(("exc", "outage"), [
    (RedisConnectionError("Connection reset by peer"), True),
    (ConnectionResetError(104, "Connection reset by peer"), True),
    (ValueError("a plan with no sub-queries"), False),
    (KeyError("evidence"), False),
])
def test_only_a_lost_connection_counts_as_an_outage(exc: BaseException, outage: bool) -> None:
    assert is_outage(exc) is outage
