"""A job whose next message was lost is resumed by sending the message its ledger kept
(``next_step``), and ends as if nothing had been lost: the same end, the same spend, no model
called twice. In one process, on the memory ledger; the supervisor's sweep does the same on
the workers (tests/workers/test_stalls.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from ragq.ledger.memory import MemoryLedger
from ragq.orchestration.flow import Enqueue, EnqueueLayer, RetrieveDue
from ragq.schemas.statuses import TERMINAL_JOB_STATUSES, JobStatus
from ragq.schemas.tasks import Task
from ragq.schemas.ticket import Priority
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, config, seeded_world

QUESTION = "Who founded the company that makes the camera, and what is its refund limit?"
SEEDS = range(12)


@dataclass
class LosingDispatcher(InlineDispatcher):
    """Loses the ``lose``-th job-level message (a step or a layer's chord body) it is given."""

    lose: int = 0
    seen: int = 0
    lost: str = ""

    def _lost(self, what: str) -> bool:
        self.seen += 1
        if self.seen == self.lose:
            self.lost = what
            return True
        return False

    def enqueue(self, job_id: str, task: str, args: Sequence[Any],
                priority: Priority = Priority.BULK) -> None:
        if task == Task.ROUTE or not self._lost(task):
            super().enqueue(job_id, task, args, priority)

    def _layer(self, job_id: str, round_: int, layer: int, indexes: Sequence[int]) -> None:
        if not self._lost(Task.AFTER_LAYER):
            return super()._layer(job_id, round_, layer, indexes)
        for index in indexes:  # the pipelines ran; the chord's body never came
            self._pipeline(job_id, RetrieveDue(round_, index))
        return None


def run(seed: int, lose: int = 0) -> tuple[MemoryLedger, str, LosingDispatcher, list[str]]:
    ledger = MemoryLedger()
    ledger.documents.update({(COLLECTION, f"doc{i}"): "v1" for i in range(8)})
    job_id = ledger.add_job(QUESTION, collection=COLLECTION, acl=["public"],
                            meta={"route": "full"})
    world = seeded_world(seed)
    dispatcher = LosingDispatcher(Runner(ledger, world, config()), lose=lose)
    dispatcher.run(job_id)
    return ledger, job_id, dispatcher, world.provider.calls


def resume(ledger: MemoryLedger, job_id: str, dispatcher: InlineDispatcher) -> None:
    """What the supervisor's sweep does for an idle job nothing carries."""
    step = ledger.jobs[job_id].next_step
    assert step is not None
    if isinstance(step, EnqueueLayer):
        dispatcher.enqueue_layer(job_id, step.round, step.layer, step.indexes)
    else:
        dispatcher.enqueue(job_id, step.task, step.args)
    dispatcher.drain()


def books(ledger: MemoryLedger, job_id: str) -> dict[str, Any]:
    job = ledger.jobs[job_id]
    assert job.budget is not None
    return {"status": job.status, "used": dict(job.budget.used), "charges": sorted(job.charges),
            "answer": job.result and job.result.get("answer"),
            "sub_queries": sorted((s.round, s.index, str(s.status), s.finding)
                                  for s in job.sub_queries.values())}


@pytest.mark.parametrize("seed", SEEDS)
def test_the_last_message_a_job_was_handed_on_with_is_kept(seed: int) -> None:
    ledger, job_id, dispatcher, _ = run(seed)
    job_level = [s for s in dispatcher.sent if s[0] in (Task.PLAN, Task.VERIFY, Task.SYNTHESIZE)
                 or (s[0] == Task.AFTER_LAYER and len(s[1]) == 4)]
    kept = ledger.jobs[job_id].next_step
    task, args = job_level[-1]
    expected = (EnqueueLayer(args[1], args[2], tuple(args[3])) if task == Task.AFTER_LAYER
                else Enqueue(task, tuple(args[1:])))
    assert kept == expected


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("lose", [1, 2, 3, 4])
def test_a_job_whose_message_was_lost_ends_as_if_nothing_was_lost(seed: int, lose: int) -> None:
    clean, clean_id, _, clean_calls = run(seed)
    ledger, job_id, dispatcher, calls = run(seed, lose=lose)
    if not dispatcher.lost:
        pytest.skip(f"this job sends fewer than {lose} job-level messages")  # its books: clean
    assert ledger.jobs[job_id].status not in TERMINAL_JOB_STATUSES  # stranded
    resume(ledger, job_id, dispatcher)
    assert ledger.jobs[job_id].status == clean.jobs[clean_id].status != JobStatus.FAILED
    assert books(ledger, job_id) == books(clean, clean_id)
    assert calls == clean_calls  # nothing the job had done was asked of a model again


def test_a_layer_sent_again_replies_what_its_settled_sub_queries_found() -> None:
    ledger, job_id, dispatcher, calls = run(3)
    before = books(ledger, job_id)
    made = len(calls)
    resume(ledger, job_id, dispatcher)  # a duplicate of the last message of an ended job
    assert books(ledger, job_id) == before and len(calls) == made
