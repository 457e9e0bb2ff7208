"""Cost reports: exact totals from granted charges only, per-route splits, exhaustion rate."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, event

from ragq.ledger import LedgerNotFoundError, session_scope
from ragq.ledger.reports import batch_report, exhausted_dimension_of, job_ledger
from ragq.schemas.reports import BatchReport, JobLedger
from tests.ledger.report_rows import SPECS, JobSpec, write_batch


def _batch(engine: Engine, batch_id: str) -> BatchReport:
    with session_scope(engine, readonly=True) as session:
        return batch_report(session, batch_id)


def _job(engine: Engine, job_id: str) -> JobLedger:
    with session_scope(engine, readonly=True) as session:
        return job_ledger(session, job_id)


def test_job_ledger_lists_every_charge_in_the_order_it_was_made(engine: Engine) -> None:
    _, jobs = write_batch(engine)
    report = _job(engine, jobs["full-exhausted"])
    assert [(c.idempotency_key, c.step, c.dimension, c.amount, c.outcome)
            for c in report.charges] == [
        ("k0/retrieval_calls", "step0", "retrieval_calls", 1.0, "granted"),
        ("k1/cost_usd", "step1", "cost_usd", 0.5, "granted"),
        ("k2/retrieval_calls", "step2", "retrieval_calls", 1.0, "granted"),
        ("k3/retrieval_calls", "step3", "retrieval_calls", 1.0, "refused"),
        ("k4/cost_usd", "step4", "cost_usd", 0.6, "refused"),
    ]
    assert [c.at for c in report.charges] == sorted(c.at for c in report.charges)
    assert (report.status, report.route, report.stop_reason) == (
        "budget_exhausted", "full", "budget:retrieval_calls")


def test_job_ledger_totals_count_granted_charges_only_beside_the_limits(engine: Engine) -> None:
    _, jobs = write_batch(engine)
    report = _job(engine, jobs["full-exhausted"])
    dims = {d.dimension: (d.limit, d.granted, d.refused_charges) for d in report.dimensions}
    assert dims["retrieval_calls"] == (2.0, 2.0, 1)
    assert dims["cost_usd"] == (1.0, 0.5, 1)
    assert dims["steps"] == (None, 0.0, 0)
    assert len(dims) == 8
    assert report.cost_usd == 0.5
    assert report.profile == "full"


def test_job_ledger_includes_model_calls_and_retrieval_counts(engine: Engine) -> None:
    _, jobs = write_batch(engine)
    report = _job(engine, jobs["full-exhausted"])
    assert [(m.prompt_tokens, m.completion_tokens, m.cost_usd) for m in report.model_calls] == [
        (300, 50, 0.3), (200, 30, 0.1)]
    assert (report.retrieval_calls, report.retrieval_cache_hits) == (2, 0)
    assert report.model_dump(mode="json")["cost_usd"] == 0.5


def test_a_job_without_budget_or_work_has_an_empty_ledger(engine: Engine) -> None:
    specs = {"bare": JobSpec(None, SPECS["queued"].status, {}, [])}
    _, jobs = write_batch(engine, specs)
    report = _job(engine, jobs["bare"])
    assert report.charges == [] and report.model_calls == []
    assert all(d.limit is None and d.granted == 0 for d in report.dimensions)


def test_unknown_ids_raise_not_found(engine: Engine) -> None:
    with pytest.raises(LedgerNotFoundError):
        _job(engine, "job_nope")
    with pytest.raises(LedgerNotFoundError):
        _batch(engine, "bat_nope")


def test_batch_totals_are_exact(engine: Engine) -> None:
    batch_id, _ = write_batch(engine)
    totals = _batch(engine, batch_id).totals
    assert totals.jobs == 5
    assert totals.jobs_by_status == {"budget_exhausted": 2, "completed": 2, "queued": 1}
    assert totals.cost_usd == 0.875  # refused 0.6 and 0.01 are not counted
    assert totals.model_cost_usd == 0.61
    assert (totals.prompt_tokens, totals.completion_tokens, totals.tokens) == (610, 105, 715)
    assert (totals.model_calls, totals.retrieval_calls, totals.retrieval_cache_hits) == (4, 4, 1)
    assert totals.granted == {"steps": 1.0, "retrieval_calls": 3.0, "unique_queries": 0.0,
                              "rerank_calls": 0.0, "context_tokens": 0.0, "llm_tokens": 400.0,
                              "cost_usd": 0.875, "latency_ms": 0.0}


def test_batch_exhaustion_rate_and_costs_per_job(engine: Engine) -> None:
    batch_id, _ = write_batch(engine)
    totals = _batch(engine, batch_id).totals
    assert (totals.finished_jobs, totals.budget_exhausted_jobs) == (4, 2)
    assert totals.budget_exhaustion_rate == 0.5  # the queued job has not finished
    assert totals.exhausted_dimensions == {"retrieval_calls": 1, "cost_usd": 1}
    assert totals.cost_per_completed_job == 0.4375
    assert totals.cost_per_job_mean == 0.175


def test_batch_splits_by_route(engine: Engine) -> None:
    batch_id, _ = write_batch(engine)
    routes = _batch(engine, batch_id).routes
    assert list(routes) == ["full", "none", "simple"]
    full, simple, unrouted = routes["full"], routes["simple"], routes["none"]
    assert (full.jobs, full.cost_usd, full.model_calls, full.retrieval_calls) == (3, 0.625, 3, 3)
    assert full.budget_exhaustion_rate == 0.66666667
    assert (full.cost_per_completed_job, full.cost_per_job_mean) == (0.625, 0.20833333)
    assert (simple.jobs, simple.cost_usd, simple.tokens, simple.budget_exhaustion_rate) == (
        1, 0.25, 120, 0.0)
    assert simple.exhausted_dimensions == {}
    assert (unrouted.jobs, unrouted.finished_jobs, unrouted.cost_usd) == (1, 0, 0.0)
    assert unrouted.budget_exhaustion_rate is None
    assert unrouted.cost_per_completed_job is None
    assert unrouted.cost_per_job_mean == 0.0


def test_an_empty_batch_reports_zeros_and_no_rates(engine: Engine) -> None:
    batch_id, _ = write_batch(engine, {})
    report = _batch(engine, batch_id)
    assert report.routes == {}
    assert report.totals.jobs == 0 and report.totals.cost_usd == 0.0
    assert report.totals.budget_exhaustion_rate is None
    assert report.totals.cost_per_job_mean is None


def test_batch_report_uses_a_fixed_number_of_queries(engine: Engine) -> None:
    small_id, _ = write_batch(engine)
    specs = {f"j{n}": SPECS["full-ok"] for n in range(40)}
    big_id, _ = write_batch(engine, specs)
    counts = [_statements(engine, small_id), _statements(engine, big_id)]
    assert counts[0] == counts[1] <= 8
    assert _batch(engine, big_id).routes["full"].cost_usd == 40 * 0.125


def _statements(engine: Engine, batch_id: str) -> int:
    seen: list[str] = []

    def count(*args: object) -> None:
        seen.append(str(args[2]))

    event.listen(engine, "before_cursor_execute", count)
    try:
        _batch(engine, batch_id)
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return len([s for s in seen if s.lstrip().upper().startswith("SELECT")])


@pytest.mark.parametrize(("stop_reason", "column", "expected"), [
    ("budget:retrieval_calls", None, "retrieval_calls"),
    ("budget:cost_usd", "steps", "cost_usd"),
    (None, "llm_tokens", "llm_tokens"),
    ("diminishing_gain", None, "unknown"),
    ("budget:", None, "unknown"),
])
def test_exhausted_dimension_comes_from_the_stop_reason_first(
    stop_reason: str | None, column: str | None, expected: str
) -> None:
    assert exhausted_dimension_of(stop_reason, column) == expected
