"""A small batch written straight into a ledger, with known totals, for the report tests.

Route ``simple``: one completed job. Route ``full``: one completed job and two that ran out of
budget (one by ``stop_reason``, one only by ``exhausted_dimension``). One job was never routed and
is still queued. A job of another batch spends money that must not leak into this batch's report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from ragq.ledger import add_job, create_batch, session_scope
from ragq.ledger.budgets import charge_many, create_job_budget
from ragq.ledger.models import RetrievalRequestRow
from ragq.ledger.steps import record_model_call
from ragq.schemas.statuses import JobStatus

Charge = tuple[str, int | Decimal]  # (dimension, amount)


@dataclass
class JobSpec:
    """What to write for one job."""

    route: str | None
    status: JobStatus
    limits: dict[str, int | Decimal | None]
    charges: list[Charge]
    calls: list[tuple[int, int, str]] = field(default_factory=list)  # prompt, completion, cost
    retrievals: list[bool] = field(default_factory=list)  # cache_hit per request
    stop_reason: str | None = None
    exhausted_dimension: str | None = None


SPECS: dict[str, JobSpec] = {
    "simple-ok": JobSpec(
        "simple", JobStatus.COMPLETED, {"steps": 10, "cost_usd": Decimal("1")},
        [("steps", 1), ("retrieval_calls", 1), ("cost_usd", Decimal("0.25"))],
        calls=[(100, 20, "0.2")], retrievals=[True]),
    "full-exhausted": JobSpec(
        "full", JobStatus.BUDGET_EXHAUSTED, {"retrieval_calls": 2, "cost_usd": Decimal("1")},
        [("retrieval_calls", 1), ("cost_usd", Decimal("0.5")), ("retrieval_calls", 1),
         ("retrieval_calls", 1), ("cost_usd", Decimal("0.6"))],
        calls=[(300, 50, "0.3"), (200, 30, "0.1")], retrievals=[False, False],
        stop_reason="budget:retrieval_calls"),
    "full-ok": JobSpec(
        "full", JobStatus.COMPLETED, {}, [("cost_usd", Decimal("0.125")), ("llm_tokens", 400)],
        calls=[(10, 5, "0.01")], retrievals=[False]),
    "full-cost": JobSpec(
        "full", JobStatus.BUDGET_EXHAUSTED, {"cost_usd": Decimal("0")},
        [("cost_usd", Decimal("0.01"))], exhausted_dimension="cost_usd"),
    "queued": JobSpec(None, JobStatus.QUEUED, {}, []),
}


def _write_job(session: Session, batch_id: str, custom_id: str, spec: JobSpec) -> str:
    job = add_job(session, batch_id=batch_id, custom_id=custom_id, position=None, tenant="t",
                  collection="c", question=f"question {custom_id}", acl=["public"])
    job.route, job.status = spec.route, spec.status
    job.stop_reason, job.exhausted_dimension = spec.stop_reason, spec.exhausted_dimension
    create_job_budget(session, job_id=job.id, limits=spec.limits, profile=spec.route)
    for n, (dimension, amount) in enumerate(spec.charges):
        charge_many(session, job_id=job.id, amounts={dimension: amount},
                    idempotency_key=f"k{n}", step=f"step{n}")
    for n, (prompt, completion, cost) in enumerate(spec.calls):
        record_model_call(session, job_id=job.id, role="synthesizer", provider="fake",
                          model="m", call_key=f"c{n}", prompt_tokens=prompt,
                          completion_tokens=completion, latency_ms=5, cost_usd=Decimal(cost))
    for n, hit in enumerate(spec.retrievals):
        session.add(RetrievalRequestRow(job_id=job.id, attempt=n, query_text="q",
                                        normalized_key=f"q{n}", top_k=5, cache_hit=hit))
    session.flush()
    return job.id


def write_batch(engine: Engine, specs: dict[str, JobSpec] | None = None
                ) -> tuple[str, dict[str, str]]:
    """Write a batch of ``specs`` (default :data:`SPECS`) plus one foreign batch; returns the
    batch id and the job id of each custom id."""
    jobs: dict[str, str] = {}
    with session_scope(engine) as session:
        batch_id = create_batch(session, tenant="t", collection="c", input_filename=None).id
        for custom_id, spec in (SPECS if specs is None else specs).items():
            jobs[custom_id] = _write_job(session, batch_id, custom_id, spec)
        other = create_batch(session, tenant="t", collection="c", input_filename=None).id
        _write_job(session, other, "elsewhere", SPECS["simple-ok"])
    return batch_id, jobs
