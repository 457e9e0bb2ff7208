"""Several sources through real workers: two collections registered at ingest with their
descriptions, a batch over all of them answered from both, a batch restricted to one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

from sqlalchemy import select

from ragq.ingestion.submit import ingest_path
from ragq.ledger import session_scope
from ragq.ledger.models import EvidenceItemRow, SubQueryRow
from ragq.submission import (
    BatchOptions,
    caller_of,
    errors,
    results,
    source_list,
    submit_file,
    wait,
)
from ragq.workers.wiring import build_ledger_engine
from tests.tasks.test_flow import write_jsonl
from tests.tasks.test_sources import CORPUS, DESCRIPTIONS, QUESTION

BILLING, API = "billing-policy", "api-reference"


def ragq(*args: str) -> str:
    """Run the `ragq` command against the running stack (its settings are in the
    environment); its stdout."""
    proc = subprocess.run([sys.executable, "-m", "ragq.cli", *args], env=dict(os.environ),
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_batch_over_two_sources_is_answered_from_both(stack, tmp_path):
    tag = uuid.uuid4().hex[:6]  # sources of this test only, however often the stack is reused
    names = {BILLING: f"{BILLING}-{tag}", API: f"{API}-{tag}"}
    ingest_path(stack.settings, write_jsonl(tmp_path / "billing.jsonl", CORPUS[BILLING]),
                collection=names[BILLING], description=DESCRIPTIONS[BILLING])
    # as a user registers one: `ragq ingest … --source-description`, then `ragq sources list`
    ragq("ingest", str(write_jsonl(tmp_path / "api.jsonl", CORPUS[API])),
         "--collection", names[API], "--source-description", DESCRIPTIONS[API], "--json")
    listed = {s["name"]: s for s in json.loads(ragq("sources", "list", "--json"))["data"]}
    assert listed[names[API]]["description"] == DESCRIPTIONS[API]
    assert listed[names[API]]["documents"] == 2
    assert listed == {s["name"]: s for s in source_list(stack.settings,
                                                        caller=caller_of(stack.settings))}

    tickets = write_jsonl(tmp_path / "t.jsonl", [
        {"custom_id": "both", "question": QUESTION,
         "sources": [names[BILLING], names[API]]}])
    sent = submit_file(stack.settings, tickets, collection=names[BILLING])
    assert wait(stack.settings, sent.batch_id, timeout_s=180)["status"] == "completed"
    (result,) = results(stack.settings, sent.batch_id)
    assert result["status"] == "completed", result
    cited = {(c["doc_id"], c["source"]) for c in result["citations"]}
    assert {("refunds", names[BILLING]), ("search-endpoint", names[API])} <= cited
    with session_scope(build_ledger_engine(stack.settings)) as session:
        routed = session.execute(select(SubQueryRow.original_text, SubQueryRow.sources)
                                 .where(SubQueryRow.job_id == result["job_id"])).all()
    by_text = {text: sources for text, sources in routed}
    assert [names[BILLING]] in by_text.values() and [names[API]] in by_text.values()

    restricted = write_jsonl(tmp_path / "r.jsonl", [{"custom_id": "api", "question": QUESTION}])
    sent = submit_file(stack.settings, restricted, collection=names[BILLING],
                       options=BatchOptions(sources=(names[API],)))
    wait(stack.settings, sent.batch_id, timeout_s=180)
    (result,) = results(stack.settings, sent.batch_id)
    with session_scope(build_ledger_engine(stack.settings)) as session:
        sources = set(session.scalars(select(EvidenceItemRow.source)
                                      .where(EvidenceItemRow.job_id == result["job_id"])))
    assert sources == {names[API]}
    assert "refunds" not in result["evidence_doc_ids"]


def test_a_ticket_naming_no_source_searches_every_source_of_its_tenant(stack, tmp_path):
    """Issue 31: customers do not know collections. Two collections ingested, none the default
    one: a ticket naming no source completes, citing the collection that holds its answer; a
    ticket naming a collection that holds nothing is refused at submission, in the errors
    file, with a message naming no server path."""
    tag = uuid.uuid4().hex[:6]
    # a tenant of this test alone, so no other test's default collection is its default
    settings = stack.settings.model_copy(update={"tenant": f"tenant-{tag}"})
    policies, runbooks = f"policies-{tag}", f"runbooks-{tag}"
    ingest_path(settings, write_jsonl(tmp_path / "p.jsonl", CORPUS[BILLING]),
                collection=policies)
    ingest_path(settings, write_jsonl(tmp_path / "r.jsonl", CORPUS[API]), collection=runbooks)
    tickets = write_jsonl(tmp_path / "t.jsonl", [
        {"custom_id": "refunds", "question": "How many days after purchase can annual plans "
                                             "be refunded?"}])
    sent = submit_file(settings, tickets, collection=None)
    assert wait(settings, sent.batch_id, timeout_s=180)["status"] == "completed"
    (result,) = results(settings, sent.batch_id)
    assert result["status"] == "completed", result
    assert ("refunds", policies) in {(c["doc_id"], c["source"]) for c in result["citations"]}

    refused = submit_file(settings, tickets, collection=f"nothing-here-{tag}")
    (error,) = errors(settings, refused.batch_id)
    assert error["error"]["code"] == "unknown_collection" and error["line"] == 1
    assert policies in error["error"]["message"] and "/" not in error["error"]["message"]
    assert str(settings.home) not in error["error"]["message"]
