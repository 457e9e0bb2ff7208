"""The evidence cache through real workers: shared across jobs, never across ACLs,
never past a re-ingest."""

from __future__ import annotations

from sqlalchemy import select

from ragq.ingestion.submit import ingest_path
from ragq.ledger import session_scope
from ragq.ledger.models import EvidenceItemRow, RetrievalRequestRow
from ragq.submission import results, submit_file, wait
from ragq.workers.wiring import build_ledger_engine
from tests.tasks.test_flow import write_jsonl

QUESTION = "What is the refund window for annual plans?"
PUBLIC = {"id": "refunds-public", "title": "Refunds", "acl": ["public"],
          "source_version": "v1",
          "text": "Customers may ask for a refund. Refunds are handled by the billing team."}
STAFF = {"id": "refunds-staff", "title": "Refund window for annual plans (internal)",
         "acl": ["staff"], "source_version": "v1",
         "text": "Internal: the refund window for annual plans is 45 days, never advertise it."}


def _ask(stack, collection, tmp_path, acl: list[str], name: str) -> dict:
    ticket = {"custom_id": name, "question": QUESTION, "route": "simple", "acl": acl}
    sent = submit_file(stack.settings, write_jsonl(tmp_path / f"{name}.jsonl", [ticket]),
                       collection=collection)
    wait(stack.settings, sent.batch_id, timeout_s=120)
    (result,) = results(stack.settings, sent.batch_id)
    return result


def _requests(stack, job_id: str) -> list[tuple[bool, list[tuple[str, str]]]]:
    """(cache_hit, [(doc_id, source_version) of its evidence]) per retrieval request."""
    with session_scope(build_ledger_engine(stack.settings)) as session:
        rows = session.scalars(select(RetrievalRequestRow)
                               .where(RetrievalRequestRow.job_id == job_id)).all()
        return [(r.cache_hit, [(e.doc_id, e.source_version) for e in session.scalars(
            select(EvidenceItemRow).where(EvidenceItemRow.retrieval_request_id == r.id))])
            for r in rows]


def _question_scored(stack, job_id: str) -> list[bool]:
    """Whether each evidence item of the job has a question score, as the ledger keeps it."""
    with session_scope(build_ledger_engine(stack.settings), readonly=True) as session:
        scores = session.scalars(select(EvidenceItemRow.question_score)
                                 .where(EvidenceItemRow.job_id == job_id)).all()
        return [s is not None for s in scores]


def test_a_public_requester_never_gets_staff_chunks_from_the_cache(stack, collection, tmp_path):
    ingest_path(stack.settings, write_jsonl(tmp_path / "docs.jsonl", [PUBLIC, STAFF]),
                collection=collection)
    staff = _ask(stack, collection, tmp_path, ["public", "staff"], "staff1")
    assert "refunds-staff" in staff["evidence_doc_ids"]
    again = _ask(stack, collection, tmp_path, ["public", "staff"], "staff2")
    assert [hit for hit, _ in _requests(stack, again["job_id"])] == [True]  # the cache works
    public = _ask(stack, collection, tmp_path, ["public"], "public")
    assert public["evidence_doc_ids"] == ["refunds-public"]
    assert "45 days" not in (public["answer"] or "")
    [(hit, docs)] = _requests(stack, public["job_id"])
    assert not hit and docs == [("refunds-public", "v1")]


def test_re_ingesting_a_new_version_makes_cached_evidence_miss(stack, collection, tmp_path):
    ingest_path(stack.settings, write_jsonl(tmp_path / "v1.jsonl", [PUBLIC]),
                collection=collection)
    first = _ask(stack, collection, tmp_path, ["public"], "first")
    cached = _ask(stack, collection, tmp_path, ["public"], "cached")
    assert [hit for hit, _ in _requests(stack, cached["job_id"])] == [True]
    # the search scored the job's question; the cache keeps no question's score
    assert _question_scored(stack, first["job_id"]) == [True]
    assert _question_scored(stack, cached["job_id"]) == [False]
    newer = {**PUBLIC, "source_version": "v2",
             "text": "Annual plans can be refunded within 30 days of purchase."}
    ingest_path(stack.settings, write_jsonl(tmp_path / "v2.jsonl", [newer]),
                collection=collection)
    after = _ask(stack, collection, tmp_path, ["public"], "after")
    [(hit, docs)] = _requests(stack, after["job_id"])
    assert not hit and docs == [("refunds-public", "v2")]
    assert "30 days" in after["answer"]
