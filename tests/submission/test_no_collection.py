"""A ticket that names no collection (issue 31): it searches the default collection when that
holds documents, else every source of its tenant that holds documents (routed per sub-query);
with nothing ingested at all it is still accepted into the default collection."""

from __future__ import annotations

import json

from ragq import submission
from ragq.ledger import get_job, register_source, session_scope
from ragq.settings import Settings
from ragq.workers.resources import resources_for
from tests.fakes.broker import hold_documents


def _stored(settings: Settings, ticket: dict[str, object]) -> tuple[str, list[str] | None]:
    parsed = submission.read_tickets([json.dumps(ticket)], limits=submission.limits_of(settings),
                                     source="t")
    sent = submission.submit_tickets(settings, parsed, collection=None, source=None)
    assert sent.errors == 0
    with session_scope(resources_for(settings).engine, readonly=True) as session:
        job = get_job(session, job_id=sent.job_ids[0])
        return job.collection, job.meta.get("sources")


TICKET = {"custom_id": "t", "question": "How long is the refund window?"}


def test_with_no_default_it_searches_every_source_that_holds_documents(memory_broker):
    hold_documents(memory_broker, "policies")
    hold_documents(memory_broker, "runbooks")
    hold_documents(memory_broker, "someone-elses", tenant="another-tenant")
    with session_scope(resources_for(memory_broker).engine) as session:
        register_source(session, tenant=memory_broker.tenant, name="empty-one")
    assert _stored(memory_broker, TICKET) == ("policies", ["policies", "runbooks"])


def test_a_default_collection_that_holds_documents_is_searched_alone(memory_broker):
    hold_documents(memory_broker, "policies")
    hold_documents(memory_broker, memory_broker.collection)
    assert _stored(memory_broker, TICKET) == (memory_broker.collection, None)


def test_one_source_holding_documents_is_searched_as_the_collection(memory_broker):
    hold_documents(memory_broker, "policies")
    assert _stored(memory_broker, TICKET) == ("policies", None)


def test_with_nothing_ingested_the_ticket_still_goes_to_the_default(memory_broker):
    assert _stored(memory_broker, TICKET) == (memory_broker.collection, None)


def test_a_ticket_naming_sources_keeps_them(memory_broker):
    hold_documents(memory_broker, "policies")
    hold_documents(memory_broker, "runbooks")
    assert _stored(memory_broker, {**TICKET, "sources": ["runbooks"]}) == (
        "runbooks", ["runbooks"])
