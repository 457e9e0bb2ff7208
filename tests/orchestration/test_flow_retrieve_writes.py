"""A retrieval's bookkeeping takes as few write transactions as it can: what an attempt
searches is recorded with the probe's answer, in the transaction that pays for the search, not
in one of its own before the query is embedded (the retrieval worker's writes queue behind
every other worker's for the ledger's one write lock)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pytest

from ragq.ledger.memory import MemoryLedger
from ragq.orchestration.flow import (
    LEDGER_WRITES,
    Action,
    Event,
    JobState,
    Probe,
    Probed,
    RetrieveDue,
    SetQueryText,
    SetStatus,
    decide,
)
from ragq.schemas.statuses import JobStatus, SubQueryStatus
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, config, seeded_world


@dataclass(frozen=True)
class WritesRunner(Runner):
    """Keeps, per decided event, the kinds of the ledger writes it asked for."""

    writes: list[tuple[str, list[str]]] = field(default_factory=list)

    def apply(self, state: JobState, event: Event, actions: Sequence[Action]) -> list[Action]:
        self.writes.append((type(event).__name__,
                            [type(a).__name__ for a in actions if isinstance(a, LEDGER_WRITES)]))
        return super().apply(state, event, actions)


def _run(seed: int) -> tuple[MemoryLedger, str, WritesRunner]:
    ledger = MemoryLedger()
    job_id = ledger.add_job("Who founded the company that makes the camera lens?",
                            collection=COLLECTION)
    runner = WritesRunner(ledger, seeded_world(seed), config())
    InlineDispatcher(runner).run(job_id)
    return ledger, job_id, runner


@pytest.mark.parametrize("seed", range(8))
def test_a_retrieval_writes_nothing_before_its_probe_and_records_the_search_with_it(
        seed: int) -> None:
    ledger, job_id, runner = _run(seed)
    due = [w for e, w in runner.writes if e == "RetrieveDue"]
    probed = [w for e, w in runner.writes if e == "Probed"]
    assert probed, "the seeded job searched"
    assert all(w == [] or "RecordRetrieval" in w for w in due)  # a probe, or a repeat answered
    assert all(w[:2] == ["SetStatus", "SetQueryText"] for w in probed)
    job = ledger.jobs[job_id]
    texts = {sq.id: sq.final_text for sq in job.sub_queries.values()}
    assert all(texts[r.sub_query_id] for r in job.requests.values())


def test_the_probes_answer_starts_with_the_status_and_the_searched_text() -> None:
    ledger, job_id, _ = _run(1)
    ended = ledger.snapshot(job_id, config())
    sq = replace(ended.sub_queries[0], status=SubQueryStatus.PENDING)
    state = replace(ended, status=JobStatus.PLANNING, sub_queries=(sq,), requests=(), evidence=())
    due = RetrieveDue(sq.round, sq.index, attempt=5)  # an attempt nothing searched yet
    first = decide(state, due)
    assert [type(a) for a in first] == [Probe]
    probe = first[0]
    assert isinstance(probe, Probe)
    answer = decide(state, Probed(due, probe.query, vector=[0.0] * 8))
    assert answer[:2] == [SetStatus(JobStatus.RETRIEVING), SetQueryText(sq.id, probe.query)]
