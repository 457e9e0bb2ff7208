"""Routing and reranking play in process by default: the job's route comes from the local
classifier and its context from the local scorer, and the ledger records no model call for
either, while ``RAGQ_ROUTER=model`` / ``RAGQ_RERANKER=model`` ask the provider as before.
Through the real decisions and step runner, in process."""

from __future__ import annotations

import pytest

from ragq.ledger.memory import MemoryJob, MemoryLedger
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, config, seeded_world

QUESTION = "How do I rotate the API key of the Orion camera?"


def _job(local: frozenset[str]) -> tuple[MemoryJob, list[str]]:
    world = seeded_world(11)
    ledger = MemoryLedger()
    job_id = ledger.add_job(QUESTION, collection=COLLECTION)
    InlineDispatcher(Runner(ledger, world, config(local_roles=local))).run(job_id)
    return ledger.jobs[job_id], world.provider.calls  # type: ignore[attr-defined]


def test_by_default_routing_and_reranking_cost_no_model_call():
    job, asked = _job(frozenset({"router", "reranker"}))
    recorded = [role for role, *_ in job.model_calls.values()]
    assert "router" not in asked and "reranker" not in asked
    assert "router" not in recorded and "reranker" not in recorded
    assert job.route_reason is not None and job.route_reason.startswith("local classifier:")
    assert job.route == "bounded"  # a how-to question, by its form
    assert job.result is not None and job.result["context_doc_ids"]  # the local ranking used


@pytest.mark.parametrize("role", ["router", "reranker"])
def test_a_role_set_to_model_is_asked_of_the_provider_and_recorded(role):
    other = {"router", "reranker"} - {role}
    job, asked = _job(frozenset(other))
    recorded = [r for r, *_ in job.model_calls.values()]
    assert asked.count(role) == 1 and recorded.count(role) == 1
    assert not any(r in asked for r in other)
