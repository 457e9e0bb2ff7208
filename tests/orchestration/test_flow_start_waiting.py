"""A job's ending starts the waiting jobs its place was kept for (the ledger's claim), and a
claim that fails does not undo or fail the ending."""

from __future__ import annotations

from ragq.ledger import Claimed
from ragq.ledger.memory import MemoryLedger
from ragq.schemas.statuses import JobStatus
from ragq.schemas.tasks import Task
from ragq.schemas.ticket import Priority
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, config, seeded_world

QUESTION = "Who founded the company that makes the camera?"


class WaitingLedger(MemoryLedger):
    """A memory ledger whose waiting line holds ``waiting`` (a job each), or fails."""

    def __init__(self, waiting: list[Claimed] | None) -> None:
        super().__init__()
        self.waiting = waiting
        self.claims = 0

    def claim_next(self) -> list[Claimed]:
        self.claims += 1
        if self.waiting is None:
            raise ConnectionError("ledger unreachable")
        claimed, self.waiting = self.waiting, []
        return claimed


def run(ledger: WaitingLedger, priorities: tuple[Priority, Priority] = (Priority.BULK,) * 2
        ) -> tuple[list[str], InlineDispatcher]:
    ledger.documents.update({(COLLECTION, f"doc{i}"): "v1" for i in range(8)})
    ids = [ledger.add_job(QUESTION, collection=COLLECTION, acl=["public"], priority=p)
           for p in priorities]
    if ledger.waiting is not None:
        ledger.waiting = [Claimed(ids[1], priorities[1])]
    dispatcher = InlineDispatcher(Runner(ledger, seeded_world(7), config()))
    dispatcher.run(ids[0])
    return ids, dispatcher


def test_the_ending_of_one_job_starts_the_next_waiting_one():
    ledger = WaitingLedger([])
    (first, second), dispatcher = run(ledger)
    routes = [args[0] for task, args in dispatcher.sent if task == Task.ROUTE]
    assert routes == [first, second]  # the second was started by the first's ending
    assert ledger.jobs[second].status not in (JobStatus.QUEUED, JobStatus.FAILED)
    assert ledger.claims == 2  # once per ending


def test_a_claim_that_fails_leaves_the_ending_as_it_was():
    ledger = WaitingLedger(None)
    (first, second), _ = run(ledger)
    assert ledger.claims == 1
    assert ledger.jobs[first].status == JobStatus.COMPLETED
    assert ledger.jobs[second].status == JobStatus.QUEUED  # the supervisor's sweep's to start


def test_every_step_is_sent_with_its_jobs_priority():
    """A bulk job's ending starts an interactive one: the route step it sends, and every step
    of the interactive job after, go with the interactive priority; the bulk job's stay bulk."""
    ledger = WaitingLedger([])
    (bulk, interactive), dispatcher = run(ledger, (Priority.BULK, Priority.INTERACTIVE))
    sent = {job: {p for _, j, p in dispatcher.priorities[1:] if j == job}
            for job in (bulk, interactive)}
    assert sent == {bulk: {Priority.BULK}, interactive: {Priority.INTERACTIVE}}
    started = [(task, p) for task, job, p in dispatcher.priorities if job == interactive]
    assert started[0] == (Task.ROUTE, Priority.INTERACTIVE)  # sent by the bulk job's ending
    assert len(started) > 2  # its own steps after the route: plan, layers, synthesis
    assert ledger.jobs[interactive].status == JobStatus.COMPLETED
