"""The SQL ledger keeps a source's metadata schema, gives it to the flow, and records each
search's filters as the in-memory ledger does, for ``ragq ledger job`` to show (issue 37)."""

from __future__ import annotations

import uuid
from pathlib import Path

from ragq.ledger import make_engine, register_source, session_scope, source_schema
from ragq.ledger.flow_state import load_state
from ragq.ledger.jobs import add_job
from ragq.ledger.memory import MemoryLedger
from ragq.ledger.reports import job_ledger
from ragq.ledger.sql_flow import SqlFlowLedger
from ragq.schemas.metadata import FieldType, MetadataField, MetadataSchema
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, config, seeded_world
from tests.ledger_template import migrated

SCHEMA = MetadataSchema(fields=(
    MetadataField(name="product", type=FieldType.ENUM, values=("camera", "drone")),))
QUESTION = "Which drone does the company sell, and the camera lens?"


def test_a_schema_is_stored_kept_and_replaced(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    migrated(url)
    engine = make_engine(url)
    with session_scope(engine) as session:
        register_source(session, tenant="t", name="kb")
        assert source_schema(session, tenant="t", name="kb") is None
        register_source(session, tenant="t", name="kb",
                        metadata_schema=SCHEMA.model_dump(mode="json"))
        register_source(session, tenant="t", name="kb", description="kept")  # schema stays
        assert MetadataSchema.model_validate(
            source_schema(session, tenant="t", name="kb")) == SCHEMA
        assert source_schema(session, tenant="other", name="kb") is None


def test_the_sql_ledger_records_filters_as_memory_does_and_the_report_shows_them(
        tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    migrated(url)
    ledger = SqlFlowLedger(make_engine(url))
    tenant = uuid.uuid4().hex
    with session_scope(ledger.engine) as session:
        register_source(session, tenant=tenant, name=COLLECTION,
                        metadata_schema=SCHEMA.model_dump(mode="json"))
        job_id = add_job(session, batch_id=None, custom_id=None, position=None, tenant=tenant,
                         collection=COLLECTION, question=QUESTION, acl=["public"]).id
    with ledger.engine.connect() as conn:
        assert load_state(conn, job_id=job_id, config=config()).schemas == {COLLECTION: SCHEMA}
    InlineDispatcher(Runner(ledger, seeded_world(3), config())).run(job_id)

    memory = MemoryLedger()
    memory.schemas[COLLECTION] = SCHEMA
    memory_job = memory.add_job(QUESTION, collection=COLLECTION)
    InlineDispatcher(Runner(memory, seeded_world(3), config())).run(memory_job)

    with session_scope(ledger.engine, readonly=True) as session:
        report = job_ledger(session, job_id)
    assert report.metadata_filters, "the job's queries name a declared product"
    assert [(e.query, e.decisions, e.fallback) for e in report.metadata_filters] == [
        (r["query"], r["decisions"], r.get("fallback")) for r in memory.filter_log]
    for entry in report.metadata_filters:
        assert all(d["kept"] and d["reason"] == "valid under the schema" for d in entry.decisions)
