"""Budget charges: atomic under racing threads, idempotent under redelivery (SPEC C9)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from sqlalchemy import Engine, func, select

from ragq.ledger import (
    BudgetChargeRow,
    BudgetDimension,
    ChargeOutcome,
    ChargeResult,
    JobRow,
    LedgerNotFoundError,
    charge_budget,
    charge_many,
    create_job_budget,
    get_job_budget,
    session_scope,
)
from ragq.ledger.budgets import MultiCharge, ensure_job_budget
from tests.ledger.conftest import Race


def _job_with_budget(engine: Engine, **limits: int | Decimal | None) -> str:
    with session_scope(engine) as session:
        job = JobRow(tenant="t", collection="c", question="q")
        session.add(job)
        session.flush()
        create_job_budget(session, job_id=job.id, limits=limits, profile="test")
        return job.id


def _charge(engine: Engine, job_id: str, key: str, **kwargs: object) -> ChargeResult:
    options: dict[str, object] = {"dimension": "steps", "amount": 1}
    options.update(kwargs)
    with session_scope(engine) as session:
        return charge_budget(session, job_id=job_id, idempotency_key=key, **options)  # type: ignore[arg-type]


def _count(engine: Engine, outcome: ChargeOutcome) -> int:
    with session_scope(engine, readonly=True) as session:
        query = select(func.count()).where(BudgetChargeRow.outcome == outcome)
        return int(session.scalar(query.select_from(BudgetChargeRow)) or 0)


def test_charges_are_granted_until_the_limit_then_refused(engine: Engine) -> None:
    job_id = _job_with_budget(engine, steps=3)
    outcomes = [_charge(engine, job_id, f"s{i}").outcome for i in range(5)]
    assert outcomes == ["granted"] * 3 + ["refused"] * 2
    with session_scope(engine, readonly=True) as session:
        budget = get_job_budget(session, job_id=job_id)
        assert budget is not None
        assert (budget.limit_steps, budget.used_steps) == (3, 3)
    assert _count(engine, ChargeOutcome.REFUSED) == 2


def test_a_charge_that_would_overshoot_is_refused_whole(engine: Engine) -> None:
    job_id = _job_with_budget(engine, llm_tokens=1000)
    assert _charge(engine, job_id, "a", dimension="llm_tokens", amount=900).granted
    assert not _charge(engine, job_id, "b", dimension="llm_tokens", amount=200).granted
    assert _charge(engine, job_id, "c", dimension="llm_tokens", amount=100).granted


def test_a_dimension_without_a_limit_is_unlimited(engine: Engine) -> None:
    job_id = _job_with_budget(engine, steps=1)
    results = [_charge(engine, job_id, f"r{i}", dimension="retrieval_calls") for i in range(20)]
    assert all(result.granted for result in results)


def test_a_redelivered_charge_never_pays_twice(engine: Engine) -> None:
    job_id = _job_with_budget(engine, steps=5)
    first = _charge(engine, job_id, "retrieve:sq_1:0")
    again = _charge(engine, job_id, "retrieve:sq_1:0")
    assert first.granted and not first.replayed
    assert again.replayed and again.charge_id == first.charge_id and again.granted
    with session_scope(engine, readonly=True) as session:
        assert get_job_budget(session, job_id=job_id).used_steps == 1  # type: ignore[union-attr]


def test_a_refusal_is_replayed_as_a_refusal(engine: Engine) -> None:
    job_id = _job_with_budget(engine, steps=0)
    assert not _charge(engine, job_id, "k").granted
    replay = _charge(engine, job_id, "k")
    assert replay.replayed and replay.outcome is ChargeOutcome.REFUSED


def test_twenty_threads_never_take_more_than_the_limit(engine: Engine, race: Race) -> None:
    job_id = _job_with_budget(engine, retrieval_calls=37)

    def spend(i: int) -> int:
        granted = 0
        for n in range(5):
            result = _charge(engine, job_id, f"t{i}:{n}", dimension="retrieval_calls")
            granted += result.granted
        return granted

    assert sum(race(20, spend)) == 37
    with session_scope(engine, readonly=True) as session:
        assert get_job_budget(session, job_id=job_id).used_retrieval_calls == 37  # type: ignore[union-attr]
    assert _count(engine, ChargeOutcome.GRANTED) == 37
    assert _count(engine, ChargeOutcome.REFUSED) == 100 - 37


def test_racing_cost_charges_stop_exactly_at_the_dollar_limit(engine: Engine, race: Race) -> None:
    job_id = _job_with_budget(engine, cost_usd=Decimal("0.07"))

    def spend(i: int) -> bool:
        return _charge(
            engine, job_id, f"c{i}", dimension="cost_usd", amount=Decimal("0.01")
        ).granted

    assert sum(race(20, spend)) == 7
    with session_scope(engine, readonly=True) as session:
        assert get_job_budget(session, job_id=job_id).used_cost_usd == Decimal("0.07")  # type: ignore[union-attr]


def test_racing_redeliveries_of_one_task_pay_once(engine: Engine, race: Race) -> None:
    job_id = _job_with_budget(engine, steps=100)
    results = race(10, lambda i: _charge(engine, job_id, "same-task"))
    assert len({result.charge_id for result in results}) == 1
    assert sum(not result.replayed for result in results) == 1
    with session_scope(engine, readonly=True) as session:
        assert get_job_budget(session, job_id=job_id).used_steps == 1  # type: ignore[union-attr]


def test_charging_a_job_without_budget_names_the_fix(engine: Engine) -> None:
    with pytest.raises(LedgerNotFoundError, match="create_job_budget") as caught:
        _charge(engine, "job_nobudget", "k")
    assert (caught.value.table, caught.value.key) == ("job_budgets", "job_nobudget")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dimension": "tokens"}, "valid: steps, retrieval_calls"),
        ({"amount": -1}, ">= 0"),
        ({"amount": Decimal("1.5")}, "whole number"),
    ],
)
def test_bad_charges_fail_early(engine: Engine, kwargs: dict[str, object], message: str) -> None:
    job_id = _job_with_budget(engine, steps=5)
    with pytest.raises(ValueError, match=message):
        _charge(engine, job_id, "k", **kwargs)


def test_budget_limits_reject_unknown_dimensions(engine: Engine) -> None:
    with pytest.raises(ValueError, match="unknown budget dimension 'max_steps'"):
        _job_with_budget(engine, max_steps=3)


def test_every_dimension_has_a_limit_and_used_column() -> None:
    from ragq.ledger import JobBudgetRow

    columns = set(JobBudgetRow.__table__.c.keys())
    for dimension in BudgetDimension:
        assert {f"limit_{dimension}", f"used_{dimension}"} <= columns


def _many(engine: Engine, job_id: str, key: str, **kwargs: object) -> MultiCharge:
    with session_scope(engine) as session:
        return charge_many(session, job_id=job_id, idempotency_key=key, **kwargs)  # type: ignore[arg-type]


def _used(engine: Engine, job_id: str) -> tuple[int, int]:
    with session_scope(engine, readonly=True) as session:
        b = get_job_budget(session, job_id=job_id)
        assert b is not None
        return b.used_steps, b.used_retrieval_calls


def test_a_multi_charge_pays_every_dimension_or_none(engine: Engine) -> None:
    job_id = _job_with_budget(engine, steps=10, retrieval_calls=1)
    amounts = {"steps": 1, "retrieval_calls": 1}
    assert _many(engine, job_id, "a", amounts=amounts).granted
    second = _many(engine, job_id, "b", amounts=amounts)
    assert second.refused is BudgetDimension.RETRIEVAL_CALLS
    assert _used(engine, job_id) == (1, 1)  # the step of the refused work was not taken
    with session_scope(engine, readonly=True) as session:
        keys = session.scalars(select(BudgetChargeRow.idempotency_key).where(
            BudgetChargeRow.outcome == ChargeOutcome.REFUSED)).all()
    assert keys == ["b/retrieval_calls"]


def test_twenty_threads_of_multi_charges_never_overshoot(engine: Engine, race: Race) -> None:
    job_id = _job_with_budget(engine, steps=13, retrieval_calls=100)
    granted = race(20, lambda i: _many(engine, job_id, f"r{i}",
                                       amounts={"steps": 1, "retrieval_calls": 1}).granted)
    assert sum(granted) == 13
    assert _used(engine, job_id) == (13, 13)


def test_a_redelivered_multi_charge_pays_once_and_reports_the_first_outcome(
    engine: Engine, race: Race
) -> None:
    job_id = _job_with_budget(engine, steps=5)
    results = race(8, lambda i: _many(engine, job_id, "same", amounts={"steps": 2}))
    assert sum(not r.replayed for r in results) == 1
    assert all(r.granted for r in results)
    assert _used(engine, job_id) == (2, 0)


def test_a_forced_settlement_may_overshoot_and_then_refuses_the_next_charge(
    engine: Engine,
) -> None:
    job_id = _job_with_budget(engine, llm_tokens=100)
    assert _many(engine, job_id, "settle", amounts={"llm_tokens": 150}, force=True).granted
    refused = _many(engine, job_id, "next", amounts={"llm_tokens": 0})
    assert refused.refused is BudgetDimension.LLM_TOKENS


def test_a_passed_deadline_refuses_with_latency(engine: Engine) -> None:
    with session_scope(engine) as session:
        job = JobRow(tenant="t", collection="c", question="q")
        session.add(job)
        session.flush()
        create_job_budget(session, job_id=job.id, limits={},
                          deadline_at=datetime.now(UTC) - timedelta(seconds=1))
        job_id = job.id
    assert _many(engine, job_id, "late", amounts={"steps": 1}).refused \
        is BudgetDimension.LATENCY_MS
    assert _used(engine, job_id) == (0, 0)


def test_racing_deliveries_ensure_one_budget(engine: Engine, race: Race) -> None:
    with session_scope(engine) as session:
        job = JobRow(tenant="t", collection="c", question="q")
        session.add(job)
        session.flush()
        job_id = job.id

    def ensure(i: int) -> bool:
        with session_scope(engine) as session:
            _row, created = ensure_job_budget(session, job_id=job_id, limits={"steps": 3 + i})
            return created

    assert sum(race(8, ensure)) == 1
    with session_scope(engine, readonly=True) as session:
        assert get_job_budget(session, job_id=job_id) is not None


def test_multi_charge_keys_are_matched_literally(engine: Engine) -> None:
    job_id = _job_with_budget(engine, steps=10)
    assert _many(engine, job_id, "stepx1", amounts={"steps": 1}).replayed is False
    # "_" is a LIKE wildcard: "step_1" must not be taken for a replay of "stepx1"
    assert _many(engine, job_id, "step_1", amounts={"steps": 1}).replayed is False
    assert _used(engine, job_id) == (2, 0)


def test_a_zero_amount_checks_a_dimension_without_recording_a_charge(engine: Engine) -> None:
    job_id = _job_with_budget(engine, steps=5, cost_usd=Decimal("0.01"))
    assert _many(engine, job_id, "k", amounts={"steps": 1, "cost_usd": 0}).granted
    with session_scope(engine, readonly=True) as session:
        keys = session.scalars(select(BudgetChargeRow.idempotency_key)).all()
    assert keys == ["k/steps"]
