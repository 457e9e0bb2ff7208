"""Answers to the sample batch, as a user reads them: conflicts in the knowledge base flagged
on the stored chunks with both sides cited, and extractive answers that lead with the sentence
that answers, quote only the context and carry no keyword lists. The real flow in process over
the sample documents of ``examples/``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragq.ingestion.sources import read_documents
from ragq.schemas.document import Document
from tests.tasks.inprocess import Index, indexed

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SAMPLE = [json.loads(line) for line in (EXAMPLES / "tickets.jsonl").read_text().splitlines()
          if line.strip()]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    docs = [d for d in read_documents(EXAMPLES / "docs") if isinstance(d, Document)]
    with indexed(docs, tmp_path_factory.mktemp("examples")) as index:
        yield index


def test_the_refund_conflict_is_flagged_with_both_citations(kb):
    result = kb.run("Within how many days can unused prepaid credits be refunded?")
    (conflict,) = result["contradictions"]
    assert set(conflict["doc_ids"]) == {"billing.md", "refund-policy.txt"}
    assert {"14 days", "30 days"} <= {
        d for s in conflict["statements"] for d in ("14 days", "30 days") if d in s}
    for doc, chunk, statement in zip(conflict["doc_ids"], conflict["chunk_ids"],
                                     conflict["statements"], strict=True):
        assert chunk.startswith(doc) and statement in kb.texts[chunk]
    cited = {(c["doc_id"], c["chunk_id"]) for c in result["citations"]}
    assert set(zip(conflict["doc_ids"], conflict["chunk_ids"], strict=True)) <= cited
    assert "disagree" in result["answer"]
    assert "14 days" in result["answer"] and "30 days" in result["answer"]
    # two sources of equal authority disagree: the draft waits for a reviewer
    assert result["status"] == "needs_review"
    assert result["review"] == {"reasons": ["contradictions"], "outcome": "completed"}


@pytest.mark.parametrize("ticket", SAMPLE, ids=[t["custom_id"] for t in SAMPLE])
def test_an_extractive_answer_leads_with_a_cited_sentence_of_the_context(kb, ticket):
    result = kb.run(ticket["question"])
    assert result["status"] in {"completed", "insufficient_evidence", "needs_review"}, result
    drafted = (result.get("review") or {}).get("outcome", result["status"])
    if drafted != "completed":
        return
    answer, citations = result["answer"], result["citations"]
    assert not answer.startswith("Found") and "Found (" not in answer
    for citation in citations:  # quoted as stored, from the context only
        assert citation["quote"] in kb.texts[citation["chunk_id"]]
        assert citation["doc_id"] in result["context_doc_ids"]
    flat = " ".join(citations[0]["quote"].split())
    assert answer.startswith(flat) or (result.get("asks") and flat in answer)
