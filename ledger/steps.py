"""What each step of a job writes: plan, sub-queries, retrievals and their evidence, checks,
verdicts, model calls, the answer.

Every writer is idempotent on the step's natural key (job, round, index, attempt …): a task
delivered twice finds its first write and returns it, so the ledger never holds duplicates.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from functools import cache
from typing import Any

from sqlalchemy import Select, Table, bindparam, insert, select, update
from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from ragq.ledger.db import race_guard
from ragq.ledger.models import (
    AnswerRow,
    AskRow,
    Base,
    CitationRow,
    EvidenceItemRow,
    JobRow,
    ModelCallRow,
    ModelCallStatus,
    PlanRow,
    RetrievalRequestRow,
    SubQueryRow,
    SubQueryStatus,
    SufficiencyCheckRow,
    VerificationRow,
    table_of,
    utcnow,
)
from ragq.ledger.models.base import ID_FACTORY
from ragq.orchestration.flow import NewSubQuery
from ragq.schemas.cache import CachedHit

__all__ = [
    "finish_sub_query",
    "insert_once",
    "job_evidence",
    "job_sub_queries",
    "mark_in_context",
    "record_answer",
    "record_check",
    "record_model_call",
    "record_plan",
    "record_reading",
    "record_retrieval",
    "record_sub_queries",
    "record_verification",
    "update_ask",
]

_MODEL_CALLS = table_of(ModelCallRow)
_EVIDENCE = table_of(EvidenceItemRow)
_CITATIONS = table_of(CitationRow)
_CALL_KEY = [_MODEL_CALLS.c.job_id, _MODEL_CALLS.c.call_key]
# Built once per dialect. SQLite's rowcount is changes() (RETURNING would need SQLite 3.35);
# psycopg reports a row for a conflicting insert too, so PostgreSQL asks for the inserted id.
_RECORD_CALL = {
    "sqlite": sqlite.insert(_MODEL_CALLS).on_conflict_do_nothing(index_elements=_CALL_KEY),
    "postgresql": postgresql.insert(_MODEL_CALLS).on_conflict_do_nothing(
        index_elements=_CALL_KEY).returning(_MODEL_CALLS.c.id),
}
COST_QUANTUM = Decimal("0.00000001")  # the ledger's money precision (8 decimals)


@cache
def _lookup(table: Table, keys: tuple[tuple[str, bool], ...]) -> Select[str]:
    """The id of the row whose key columns are the bound ``k_<name>`` (or NULL where the key
    is None), built once per table and key shape."""
    query = select(table.c.id)
    for name, is_null in keys:
        column = table.c[name]
        query = query.where(column.is_(None) if is_null else column == bindparam(f"k_{name}"))
    return query.limit(1)


def insert_once(session: Session, model: type[Base], key: dict[str, Any],
                values: dict[str, Any]) -> tuple[str, bool]:
    """The id of the row with ``key``, inserted with ``values`` if missing; True when this call
    inserted it.

    Core statements on the session's connection: every step of every job writes a few such
    rows inside the write transaction, which on SQLite holds the database's one write lock,
    and the ORM's look-up, unit of work and flush cost several times the statements. A
    concurrent duplicate (two deliveries racing, PostgreSQL) loses on the unique constraint
    inside a savepoint and gets the winner's id."""
    table = table_of(model)
    lookup = _lookup(table, tuple((name, value is None) for name, value in key.items()))
    bound = {f"k_{name}": value for name, value in key.items() if value is not None}
    found = session.connection().execute(lookup, bound).scalar()
    if found is not None:
        return found, False
    row_id: str = table.c.id.info[ID_FACTORY]()
    try:
        with race_guard(session):
            session.connection().execute(insert(table), {"id": row_id, **key, **values})
        return row_id, True
    except sa_exc.IntegrityError:
        found = session.connection().execute(lookup, bound).scalar()
        if found is None:  # not a racing duplicate: another constraint failed
            raise
        return found, False


def record_reading(session: Session, *, job_id: str, reading: dict[str, Any],
                   asks: Sequence[tuple[str, str]]) -> None:
    """What the ticket reader found (its context and noise on the job) and one row per ask
    (text, why the reader took it), once."""
    session.connection().execute(update(JobRow)
                                 .where(JobRow.id == job_id, JobRow.reading.is_(None))
                                 .values(reading=reading))
    for index, (text, reason) in enumerate(asks):
        insert_once(session, AskRow, {"job_id": job_id, "index": index},
                    {"text": text, "reason": reason})


def update_ask(session: Session, *, job_id: str, index: int, **values: Any) -> None:
    """Record what was decided for one ask (its route, its plan)."""
    session.connection().execute(update(AskRow)
                                 .where(AskRow.job_id == job_id, AskRow.index == index)
                                 .values(**values))


def record_plan(session: Session, *, job_id: str, round: int, plan: dict[str, Any],
                strategy: str, repair_reason: str | None, cache_hit: bool = False) -> str:
    """The round's plan, once; its id."""
    plan_id, _ = insert_once(session, PlanRow, {"job_id": job_id, "round": round},
                             {"plan": plan, "strategy": strategy, "repair_reason": repair_reason,
                              "cache_hit": cache_hit})
    return plan_id


def record_sub_queries(session: Session, *, job_id: str, round: int,
                       items: Sequence[NewSubQuery]) -> list[str]:
    """The round's sub-queries, created once, in index order; their ids."""
    ids = []
    for item in items:
        sub_query_id, _ = insert_once(
            session, SubQueryRow, {"job_id": job_id, "round": round, "index": item.index},
            {"origin": item.origin, "original_text": item.text, "reason": item.reason,
             "depends_on": list(item.depends_on), "status": SubQueryStatus.PENDING,
             "ask": item.ask},
        )
        ids.append(sub_query_id)
    return ids


def job_sub_queries(session: Session, *, job_id: str, round: int | None = None
                    ) -> list[SubQueryRow]:
    query = select(SubQueryRow).where(SubQueryRow.job_id == job_id)
    if round is not None:
        query = query.where(SubQueryRow.round == round)
    return list(session.scalars(query.order_by(SubQueryRow.round, SubQueryRow.index)))


def record_retrieval(
    session: Session, *, job_id: str, sub_query_id: str | None, attempt: int, query_text: str,
    normalized_key: str, top_k: int, filters: dict[str, Any], hits: Sequence[CachedHit],
    latency_ms: int, dedup_of: str | None = None, cache_hit: bool = False,
) -> tuple[str, bool]:
    """A retrieval request and its hits as evidence; True when this call recorded it.
    ``dedup_of`` names the earlier request of the job whose hits these are (nothing was
    searched); ``cache_hit`` says they came from the evidence cache."""
    top = max((h.score for h in hits), default=None)
    request_id, created = insert_once(
        session, RetrievalRequestRow,
        {"job_id": job_id, "sub_query_id": sub_query_id, "attempt": attempt},
        {"query_text": query_text, "normalized_key": normalized_key, "top_k": top_k,
         "filters": filters, "hit_count": len(hits), "top_score": top, "latency_ms": latency_ms,
         "dedup_of": dedup_of, "cache_hit": cache_hit},
    )
    if created and hits:
        session.connection().execute(insert(_EVIDENCE), [
            {"job_id": job_id, "retrieval_request_id": request_id,
             "sub_query_id": sub_query_id, "doc_id": h.doc_id, "chunk_id": h.chunk_id,
             "score": h.score, "text_score": h.text_score, "question_score": h.question_score,
             "rank": rank, "source_version": h.source_version, "authority_tier": h.authority_tier,
             "title": h.title, "text": h.text, "source": h.source or None}
            for rank, h in enumerate(hits)])
    return request_id, created


def job_evidence(session: Session, *, job_id: str, sub_query_id: str | None = None,
                 retrieval_request_id: str | None = None) -> list[EvidenceItemRow]:
    """Evidence of a job (or of one sub-query / request), oldest request first, best rank first."""
    query = select(EvidenceItemRow).where(EvidenceItemRow.job_id == job_id)
    if sub_query_id is not None:
        query = query.where(EvidenceItemRow.sub_query_id == sub_query_id)
    if retrieval_request_id is not None:
        query = query.where(EvidenceItemRow.retrieval_request_id == retrieval_request_id)
    return list(session.scalars(query.order_by(EvidenceItemRow.created_at, EvidenceItemRow.rank)))


def record_check(session: Session, *, job_id: str, sub_query_id: str,
                 retrieval_request_id: str | None, attempt: int, sufficient: bool, score: float,
                 reason: str, rewrite: str | None) -> str:
    check_id, _ = insert_once(
        session, SufficiencyCheckRow, {"sub_query_id": sub_query_id, "attempt": attempt},
        {"job_id": job_id, "retrieval_request_id": retrieval_request_id,
         "sufficient": sufficient, "score": score, "reason": reason, "rewrite": rewrite},
    )
    return check_id


def finish_sub_query(session: Session, *, sub_query_id: str, status: SubQueryStatus,
                     finding: str | None, alternatives: Sequence[str] = ()) -> None:
    session.connection().execute(
        update(SubQueryRow).where(SubQueryRow.id == sub_query_id)
        .values(status=status, finding=finding, finding_alternatives=list(alternatives) or None,
                finished_at=utcnow()))


def record_verification(session: Session, *, job_id: str, round: int, sufficient: bool,
                        confidence: float, missing_info: Sequence[str],
                        follow_up_queries: Sequence[str], reason: str,
                        new_evidence_count: int) -> str:
    verification_id, _ = insert_once(
        session, VerificationRow, {"job_id": job_id, "round": round},
        {"sufficient": sufficient, "confidence": confidence, "missing_info": list(missing_info),
         "follow_up_queries": list(follow_up_queries), "reason": reason,
         "new_evidence_count": new_evidence_count},
    )
    return verification_id


def record_model_call(session: Session, *, job_id: str | None, role: str, provider: str,
                      model: str, call_key: str, prompt_tokens: int, completion_tokens: int,
                      latency_ms: int, status: ModelCallStatus = ModelCallStatus.OK,
                      error: str | None = None, attempt: int = 0,
                      cost_usd: float | Decimal = 0) -> bool:
    """One request to a model (``cost_usd`` in US dollars), recorded once per ``call_key``;
    True when this call recorded it (False: a redelivery found it recorded).

    A job's calls are one ``INSERT … ON CONFLICT DO NOTHING`` on the unique (job, call key):
    every model call of every job writes one, and the ORM's look-up, savepoint and flush cost
    several times the insert itself. A call outside a job (no job id, which the unique key
    does not cover) is looked up first."""
    values = {"role": role, "provider": provider, "model": model, "attempt": attempt,
              "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
              "latency_ms": latency_ms, "status": status, "error": error,
              "cost_usd": Decimal(str(cost_usd)).quantize(COST_QUANTUM)}
    if job_id is None:
        _, created = insert_once(session, ModelCallRow, {"job_id": None, "call_key": call_key},
                                 values)
        return created
    dialect = session.get_bind().dialect.name
    done = session.connection().execute(_RECORD_CALL[dialect],
                                        {"job_id": job_id, "call_key": call_key, **values})
    if dialect == "sqlite":
        return bool(done.rowcount)
    return done.first() is not None


def mark_in_context(session: Session, *, job_id: str, evidence_ids: Sequence[str]) -> None:
    """Flag the evidence that reached the answer model (and only it)."""
    in_context = EvidenceItemRow.id.in_(list(evidence_ids) or [""])
    session.connection().execute(update(EvidenceItemRow).where(EvidenceItemRow.job_id == job_id)
                                 .values(in_context=in_context))


def record_answer(session: Session, *, job_id: str, text: str, extractive: bool,
                  contradictions: list[Any], citations: Sequence[dict[str, Any]],
                  asks: list[Any] | None = None) -> str:
    """The job's answer once, its id; ``asks`` holds a ticket's per-ask answers (JSON)."""
    answer_id, created = insert_once(
        session, AnswerRow, {"job_id": job_id},
        {"text": text, "extractive": extractive, "contradictions": contradictions,
         "asks": asks or []},
    )
    if created and citations:
        session.connection().execute(insert(_CITATIONS), [
            {"answer_id": answer_id, "position": i, "doc_id": c["doc_id"],
             "chunk_id": c["chunk_id"], "quote": c.get("quote"),
             "evidence_item_id": c.get("evidence_item_id")}
            for i, c in enumerate(citations)])
    return answer_id
