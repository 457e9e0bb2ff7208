"""A ticket's and a batch's ``sources`` at submission (SQLite ledger, in-process broker): names
must be the tenant's registered sources, "all" stands for every one, a batch's selection
restricts each ticket, and the job records the sources it may search."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from ragq import submission
from ragq.api import create_api
from ragq.errors import InputError
from ragq.ledger import (
    batch_jobs,
    create_api_key,
    get_job,
    register_source,
    session_scope,
)
from ragq.schemas.ticket import Ticket
from ragq.settings import Settings
from ragq.submission import BatchOptions
from ragq.workers.resources import resources_for

BILLING, API = "billing-policy", "api-reference"


@pytest.fixture
def settings(memory_broker: Settings) -> Settings:
    with session_scope(resources_for(memory_broker).engine) as session:
        register_source(session, tenant=memory_broker.tenant, name=BILLING,
                        description="Plans, invoices and refunds.")
        register_source(session, tenant=memory_broker.tenant, name=API)
        register_source(session, tenant=memory_broker.tenant, name=API,
                        description="Endpoints and rate limits.")
        register_source(session, tenant="someone-else", name="their-docs")
    return memory_broker


def _submit(settings: Settings, tickets: list[dict[str, Any]], sources: Any = None
            ) -> submission.Submitted:
    lines = [json.dumps(t) for t in tickets]
    parsed = submission.read_tickets(lines, limits=submission.limits_of(settings), source="t")
    return submission.submit_tickets(settings, parsed, collection=None, source=None,
                                     options=BatchOptions(sources=sources))


def _jobs(settings: Settings, job_ids: list[str]) -> list[tuple[str, list[str] | None]]:
    with session_scope(resources_for(settings).engine) as session:
        rows = [get_job(session, job_id=j) for j in job_ids]
        return [(r.collection, r.meta.get("sources")) for r in rows]


def test_ticket_sources_are_names_or_all():
    assert Ticket(custom_id="a", question="q?", sources=["x", "y"]).sources == ("x", "y")
    assert Ticket(custom_id="a", question="q?", sources="all").sources == "all"
    for bad in ([], ["x", "x"], [" "], "some"):
        with pytest.raises(ValidationError):
            Ticket(custom_id="a", question="q?", sources=bad)


def test_a_ticket_names_its_sources_or_all_of_the_tenants(settings):
    sent = _submit(settings, [
        {"custom_id": "both", "question": "q?", "sources": [API, BILLING]},
        {"custom_id": "all", "question": "q?", "sources": "all"},
        {"custom_id": "none", "question": "q?"},
        {"custom_id": "unknown", "question": "q?", "sources": ["their-docs"]},
    ])
    assert _jobs(settings, sent.job_ids) == [
        (API, [API, BILLING]), (API, [API, BILLING]), ("default", None)]
    (error,) = submission.errors(settings, sent.batch_id)
    assert error["custom_id"] == "unknown" and error["error"]["code"] == "invalid_sources"
    assert "their-docs" in error["error"]["message"]
    assert f"registered: {API}, {BILLING}" in error["error"]["message"]


def test_a_batch_restricted_to_one_source_restricts_every_ticket(settings):
    sent = _submit(settings, [
        {"custom_id": "plain", "question": "q?"},
        {"custom_id": "all", "question": "q?", "sources": "all"},
        {"custom_id": "same", "question": "q?", "sources": [API]},
        {"custom_id": "outside", "question": "q?", "sources": [BILLING]},
    ], sources=(API,))
    assert _jobs(settings, sent.job_ids) == [(API, [API])] * 3
    (error,) = submission.errors(settings, sent.batch_id)
    assert error["custom_id"] == "outside"
    assert "outside the batch's sources: api-reference" in error["error"]["message"]


def test_a_batch_naming_an_unknown_source_is_refused_whole(settings):
    with pytest.raises(InputError, match=r"unknown source.*nowhere.*registered: api-reference"):
        _submit(settings, [{"custom_id": "a", "question": "q?"}], sources=("nowhere",))


def test_the_tenants_sources_are_listed_with_their_descriptions(settings):
    listed = submission.source_list(settings, caller=submission.caller_of(settings))
    assert [(s["name"], s["description"]) for s in listed] == [
        (API, "Endpoints and rate limits."), (BILLING, "Plans, invoices and refunds.")]
    assert all(s["documents"] == 0 and s["hits"] == 0 for s in listed)


def test_get_sources_lists_the_callers_tenants_sources(settings):
    with session_scope(resources_for(settings).engine) as session:
        _, key = create_api_key(session, tenant="someone-else", acl=["public"])
    with TestClient(create_api(settings)) as client:
        answer = client.get("/v1/sources", headers={"Authorization": f"Bearer {key}"})
        assert answer.status_code == 200, answer.text
        assert [s["name"] for s in answer.json()["data"]] == ["their-docs"]
        assert client.get("/v1/sources").status_code == 401


def test_get_source_shows_its_schema_and_post_confirm_confirms_inferred_fields(settings):
    from ragq.schemas.metadata import FieldType, MetadataField, MetadataSchema

    guessed = MetadataSchema(fields=(
        MetadataField(name="region", type=FieldType.ENUM, values=("EU", "US"), inferred=True),
        MetadataField(name="plan", type=FieldType.KEYWORD, inferred=True)))
    with session_scope(resources_for(settings).engine) as session:
        register_source(session, tenant=settings.tenant, name=BILLING,
                        metadata_schema=guessed.model_dump(mode="json"))
        _, key = create_api_key(session, tenant=settings.tenant, acl=["public"])
        _, other = create_api_key(session, tenant="someone-else", acl=["public"])
    auth, theirs = ({"Authorization": f"Bearer {k}"} for k in (key, other))
    with TestClient(create_api(settings)) as client:
        shown = client.get(f"/v1/sources/{BILLING}", headers=auth)
        assert shown.status_code == 200, shown.text
        assert MetadataSchema.model_validate(shown.json()["metadata_schema"]) == guessed
        assert shown.json()["description"] == "Plans, invoices and refunds."
        path = f"/v1/sources/{BILLING}/confirm"
        confirmed = client.post(path, headers=auth, json={"fields": ["region"]})
        assert confirmed.status_code == 200, confirmed.text
        fields = confirmed.json()["metadata_schema"]["fields"]
        assert [(f["name"], f["inferred"]) for f in fields] == [("region", False),
                                                                 ("plan", True)]
        wrong = client.post(path, headers=auth, json={"fields": ["colour"]})
        assert wrong.status_code == 422 and "cannot confirm ['colour']" in wrong.text
        # another tenant's key sees no such source, and changes nothing
        assert client.get(f"/v1/sources/{BILLING}", headers=theirs).status_code == 404
        assert client.post(path, headers=theirs, json={}).status_code == 404
        assert client.post(path, json={}).status_code == 401
        every = client.post(path, headers=auth, json={}).json()["metadata_schema"]["fields"]
        assert not any(f["inferred"] for f in every)


def test_the_http_api_takes_a_batchs_sources_as_json_or_as_an_upload_field(settings):
    with session_scope(resources_for(settings).engine) as session:
        _, key = create_api_key(session, tenant=settings.tenant, acl=["public"])
    auth = {"Authorization": f"Bearer {key}"}
    ticket = {"custom_id": "a", "question": "q?"}
    with TestClient(create_api(settings)) as client:
        made = client.post("/v1/batches", headers=auth,
                           json={"tickets": [ticket], "sources": [API]})
        assert made.status_code == 201, made.text
        uploaded = client.post("/v1/batches?sources=all", headers={
            **auth, "content-type": "application/jsonl"}, content=json.dumps(ticket) + "\n")
        assert uploaded.status_code == 201, uploaded.text
        refused = client.post("/v1/batches", headers=auth,
                              json={"tickets": [ticket], "sources": ["nowhere"]})
        assert refused.status_code == 422 and "nowhere" in refused.text
    with session_scope(resources_for(settings).engine) as session:
        job_ids = [j.id for batch in (made, uploaded)
                   for j in batch_jobs(session, batch_id=batch.json()["id"])]
    assert _jobs(settings, job_ids) == [(API, [API]), (API, [API, BILLING])]
