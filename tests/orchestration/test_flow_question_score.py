"""The job's question scored against its evidence in a whole job: a search the job pays for
scores its own question (``Evidence.question_score``); evidence the cache serves, filled by a
job asking another question, carries none, so the verifier embeds it again instead of reading
another question's cosine."""

from __future__ import annotations

from collections.abc import Sequence

from ragq.ledger.memory import MemoryLedger
from ragq.schemas.flow import Plan, PlannedSubQuery, Usage
from ragq.tasks.inline import InlineAdapters, InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, CORPUS, config, seeded_world

SUB_QUERY = "refund limit plan"  # both jobs' one planned sub-query: one cache key
FIRST = "What is the refund limit of the annual plan?"
SECOND = "Does a refund limit hold for every webhook plan?"


def _same_plan(question: str, *, max_sub_queries: int, context: str = "",
               **kw: object) -> tuple[Plan, Usage]:
    return Plan(sub_queries=[PlannedSubQuery(text=SUB_QUERY)]), Usage(model="m")


def _world() -> tuple[InlineAdapters, MemoryLedger, Runner]:
    world = seeded_world(3)
    world.provider.plan = _same_plan  # type: ignore[method-assign]
    ledger = MemoryLedger()
    ledger.documents.update({(COLLECTION, f"doc{i}"): "v1" for i in range(8)})
    return world, ledger, Runner(ledger, world, config())


def _job(ledger: MemoryLedger, runner: Runner, question: str) -> str:
    job_id = ledger.add_job(question, collection=COLLECTION, acl=["public"],
                            meta={"route": "full"})
    InlineDispatcher(runner).run(job_id)
    return job_id


def _first_request(ledger: MemoryLedger, job_id: str) -> tuple[bool, list]:
    """(cache hit, evidence) of the job's first retrieval, the planned sub-query's."""
    job = ledger.jobs[job_id]
    first = next(r for r in job.requests.values() if r.query == SUB_QUERY and r.attempt == 0)
    return first.cache_hit, [e.item for e in job.evidence if e.request_id == first.id]


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_a_paid_search_scores_the_jobs_own_question():
    world, ledger, runner = _world()
    cache_hit, evidence = _first_request(ledger, _job(ledger, runner, FIRST))
    assert not cache_hit and evidence
    (asked,) = world.embedder.embed([FIRST])
    texts = {chunk: text for _, chunk, text in CORPUS}
    for item in evidence:
        (chunk,) = world.embedder.embed([texts[item.chunk_id]])
        assert item.question_score is not None
        assert abs(item.question_score - _dot(asked, chunk)) < 1e-9


def test_evidence_from_the_cache_carries_no_other_jobs_question_score():
    world, ledger, runner = _world()
    _, searched = _first_request(ledger, _job(ledger, runner, FIRST))
    assert all(e.question_score is not None for e in searched)
    cache_hit, served = _first_request(ledger, _job(ledger, runner, SECOND))
    assert cache_hit, "the second job's sub-query was served from the cache"
    assert [e.chunk_id for e in served] == [e.chunk_id for e in searched]
    assert all(e.question_score is None for e in served)
    entries = world.evidence_cache.entries.values()  # type: ignore[attr-defined]
    assert entries and all(h.question_score is None for entry in entries for h in entry.hits)


def test_a_flow_whose_provider_reads_no_question_scores_embeds_no_question():
    world, ledger, _ = _world()
    runner = Runner(ledger, world, config(question_scores=False))
    _, evidence = _first_request(ledger, _job(ledger, runner, FIRST))
    assert evidence and all(e.question_score is None for e in evidence)
    assert FIRST not in world.query_vectors._vectors  # never embedded


def test_a_cache_entry_holding_question_scores_is_served_without_them():
    """Defence in depth: an entry written with scores (by another writer) is cleaned on use."""
    world, ledger, runner = _world()
    _job(ledger, runner, FIRST)
    entries = world.evidence_cache.entries  # type: ignore[attr-defined]
    for key, entry in entries.items():
        hits = [h.model_copy(update={"question_score": 0.99}) for h in entry.hits]
        entries[key] = entry.model_copy(update={"hits": hits})
    cache_hit, served = _first_request(ledger, _job(ledger, runner, SECOND))
    assert cache_hit and served
    assert all(e.question_score is None for e in served)
