"""Plans that follow every hop, judged by what reaches the answer's context: comparisons made
through a related entity ("Which film has the director who died earlier, A or B?") and nested
relations ("Where was the father of the director of X born?"), over an invented knowledge base
with distractors, through the real flow in process."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ragq.ledger.memory import MemoryLedger
from ragq.schemas.document import Document
from tests.tasks.hops_corpus import COMPARE, DOCS, NESTED
from tests.tasks.inprocess import Index, indexed


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    with indexed([Document(**d) for d in DOCS], tmp_path_factory.mktemp("hops")) as index:
        yield index


def _job(kb: Index, question: str) -> tuple[dict[str, Any], list[Any]]:
    ledger = MemoryLedger()
    result = kb.run(question, ledger)
    (job,) = ledger.jobs.values()
    first_round = sorted((s for s in job.sub_queries.values() if s.round == 0),
                         key=lambda s: s.index)
    return result, first_round


def _chain_depth(sub_queries: list[Any]) -> int:
    depth: dict[int, int] = {}
    for sq in sub_queries:  # indexes only ever depend on earlier ones
        depth[sq.index] = 1 + max((depth[d] for d in sq.depends_on), default=0)
    return max(depth.values())


@pytest.mark.parametrize(("question", "needed"), COMPARE, ids=[q for q, _ in COMPARE])
def test_a_comparison_through_related_entities_reaches_every_needed_document(kb, question,
                                                                             needed):
    result, plan = _job(kb, question)
    assert needed <= set(result["context_doc_ids"]), result["context_doc_ids"]
    # Each compared side got its own chain: the related entity, then its attribute.
    dependent = [sq for sq in plan if sq.depends_on]
    assert len(dependent) >= 2 and len({sq.depends_on for sq in dependent}) >= 2
    cited = {c["doc_id"] for c in result["citations"]}
    assert cited <= set(result["context_doc_ids"]) and cited & needed


@pytest.mark.parametrize(("question", "needed"), NESTED, ids=[q for q, _ in NESTED])
def test_a_nested_relation_is_followed_hop_by_hop(kb, question, needed):
    result, plan = _job(kb, question)
    assert result["route"] == "full"
    assert needed <= set(result["context_doc_ids"]), result["context_doc_ids"]
    assert _chain_depth(plan) >= len(needed)  # one dependent search per hop
