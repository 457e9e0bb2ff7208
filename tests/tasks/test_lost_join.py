"""A layer whose chord join is lost (its counter in the result backend gone, as when the backend
restarts between the header's stores) is resumed by the sweeper from the ledger: every
sub-query of the layer ended, so it sends the layer's follow-up, and the job ends, paying
nothing twice. The join is dropped on purpose: the layer's pipelines are sent as a group with
no chord body. Real tasks on Celery's in-process worker (tests/tasks/conftest.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from celery import group
from sqlalchemy import Engine

from ragq.ingestion.submit import ingest_path
from ragq.ledger import get_job, session_scope
from ragq.ledger.stalls import ended_sub_queries, step_of
from ragq.orchestration.flow import EnqueueLayer
from ragq.schemas.statuses import TERMINAL_JOB_STATUSES, JobStatus
from ragq.schemas.tasks import Task
from ragq.schemas.ticket import Priority
from ragq.settings import Settings
from ragq.submission import submit_file
from ragq.tasks.dispatch import CeleryDispatcher, step_signature
from ragq.workers.client import client_app
from ragq.workers.resources import resources_for
from ragq.workers.sweeper import Sweeper, SweepRound
from tests.tasks.test_flow import _used, ledger_counts, paid, write_jsonl

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Two questions in one: the offline planner searches them side by side, in one layer.
QUESTION = ("What uptime does the Enterprise plan commit to, and how fast does Enterprise "
            "support answer urgent tickets?")


def test_a_layer_whose_chord_join_was_lost_is_joined_by_the_sweeper(
        queue: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dropped = threading.Event()
    chord_layer = CeleryDispatcher.enqueue_layer

    def without_join(self: CeleryDispatcher, job_id: str, round_: int, layer: int,
                     indexes: Sequence[int], priority: Priority = Priority.BULK) -> None:
        if len(indexes) < 2 or dropped.is_set():
            chord_layer(self, job_id, round_, layer, indexes, priority)
            return
        group(step_signature(self._app, Task.RETRIEVE, job_id, (round_, index))
              for index in indexes).apply_async()
        dropped.set()

    monkeypatch.setattr(CeleryDispatcher, "enqueue_layer", without_join)
    ingest_path(queue, EXAMPLES / "docs", collection="joins")
    sent = submit_file(queue, write_jsonl(tmp_path / "t.jsonl", [
        {"custom_id": "join", "question": QUESTION}]), collection="joins")
    (job_id,) = sent.job_ids
    engine = resources_for(queue).engine
    sweeper = Sweeper(client_app(queue), engine,
                      queue.model_copy(update={"stall_after_s": 1.0}), holder="test")

    deadline = time.monotonic() + 180
    while not _waits_for_its_join(engine, job_id):  # sweeping earlier could resend the layer
        assert time.monotonic() < deadline, "the layer's sub-queries did not all end"
        time.sleep(0.2)
    assert dropped.is_set()
    status, rounds = sweep_until_ended(engine, sweeper, job_id, deadline)

    assert {job for round_ in rounds for job in round_.joined} == {job_id}
    assert status in {JobStatus.COMPLETED, JobStatus.INSUFFICIENT_EVIDENCE,
                      JobStatus.NEEDS_REVIEW}
    counts = ledger_counts(queue, job_id)
    assert counts["answers"] == 1
    assert _used(counts) == paid(queue, job_id)


def sweep_until_ended(engine: Engine, sweeper: Sweeper, job_id: str, deadline: float
                      ) -> tuple[JobStatus, list[SweepRound]]:
    """Sweep every half second until the job ends or ``deadline`` (monotonic) passes; its
    last status and the rounds swept."""
    rounds: list[SweepRound] = []
    while True:
        with session_scope(engine, readonly=True) as session:
            status = get_job(session, job_id=job_id).status
        if status in TERMINAL_JOB_STATUSES or time.monotonic() >= deadline:
            return status, rounds
        rounds.append(sweeper.sweep())
        time.sleep(0.5)


def _waits_for_its_join(engine: Engine, job_id: str) -> bool:
    """The job's recorded next step is a layer whose every sub-query has ended."""
    with session_scope(engine, readonly=True) as session:
        job = get_job(session, job_id=job_id)
        if job.status in TERMINAL_JOB_STATUSES:
            raise AssertionError(f"job ended ({job.status}) with its layer's join dropped")
        step = step_of(job.next_step) if job.next_step else None
        if not isinstance(step, EnqueueLayer) or len(step.indexes) < 2:
            return False
        return set(step.indexes) <= ended_sub_queries(session, job_id, step.round)
