"""Budget charges through the live ``charge_many``: atomic under racing threads, idempotent under
redelivery, money included, for one dimension and several at once. Every test runs on
SQLite and, with ``RAGQ_TEST_POSTGRES_URL`` set, on PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from sqlalchemy import Engine, event, func, select

from ragq.ledger import JobRow, LedgerNotFoundError, session_scope
from ragq.ledger.budgets import (
    MultiCharge,
    charge_many,
    create_job_budget,
    get_job_budget,
    open_job_budget,
)
from ragq.ledger.models import BudgetChargeRow, JobBudgetRow
from ragq.schemas.statuses import BudgetDimension, ChargeOutcome
from tests.ledger.conftest import Race, new_job

CENT = Decimal("0.01")


def _job_with_budget(engine: Engine, **limits: int | Decimal | None) -> str:
    with session_scope(engine) as session:
        job = JobRow(tenant="t", collection="c", question="q")
        session.add(job)
        session.flush()
        create_job_budget(session, job_id=job.id, limits=limits, profile="test")
        return job.id


def _many(engine: Engine, job_id: str, key: str, **kwargs: object) -> MultiCharge:
    with session_scope(engine) as session:
        return charge_many(session, job_id=job_id, idempotency_key=key, **kwargs)  # type: ignore[arg-type]


def _charge(engine: Engine, job_id: str, key: str, dimension: str = "steps",
            amount: int | Decimal = 1) -> MultiCharge:
    """A single-dimension charge, as the steps that pay one thing make it."""
    return _many(engine, job_id, key, amounts={dimension: amount})


def _budget(engine: Engine, job_id: str) -> JobBudgetRow:
    with session_scope(engine, readonly=True) as session:
        budget = get_job_budget(session, job_id=job_id)
        assert budget is not None
        return budget


def _used(engine: Engine, job_id: str) -> tuple[int, int]:
    budget = _budget(engine, job_id)
    return budget.used_steps, budget.used_retrieval_calls


def _count(engine: Engine, outcome: ChargeOutcome, dimension: str | None = None) -> int:
    query = select(func.count()).select_from(BudgetChargeRow).where(
        BudgetChargeRow.outcome == outcome)
    if dimension is not None:
        query = query.where(BudgetChargeRow.dimension == dimension)
    with session_scope(engine, readonly=True) as session:
        return int(session.scalar(query) or 0)


# one dimension


def test_charges_are_granted_until_the_limit_then_refused(engine: Engine) -> None:
    job_id = _job_with_budget(engine, steps=3)
    results = [_charge(engine, job_id, f"s{i}") for i in range(5)]
    assert [r.granted for r in results] == [True] * 3 + [False] * 2
    assert {r.refused for r in results[3:]} == {BudgetDimension.STEPS}
    budget = _budget(engine, job_id)
    assert (budget.limit_steps, budget.used_steps) == (3, 3)
    assert _count(engine, ChargeOutcome.REFUSED) == 2


def test_a_charge_that_would_overshoot_is_refused_whole(engine: Engine) -> None:
    job_id = _job_with_budget(engine, llm_tokens=1000)
    assert _charge(engine, job_id, "a", "llm_tokens", 900).granted
    assert not _charge(engine, job_id, "b", "llm_tokens", 200).granted
    assert _charge(engine, job_id, "c", "llm_tokens", 100).granted
    assert _budget(engine, job_id).used_llm_tokens == 1000


def test_a_dimension_without_a_limit_is_unlimited(engine: Engine) -> None:
    job_id = _job_with_budget(engine, steps=1)
    results = [_charge(engine, job_id, f"r{i}", "retrieval_calls") for i in range(20)]
    assert all(result.granted for result in results)


def test_a_redelivered_charge_never_pays_twice(engine: Engine) -> None:
    job_id = _job_with_budget(engine, steps=5)
    first = _charge(engine, job_id, "retrieve:sq_1:0")
    again = _charge(engine, job_id, "retrieve:sq_1:0")
    assert first.granted and not first.replayed
    assert again.granted and again.replayed
    assert _used(engine, job_id) == (1, 0)
    assert _count(engine, ChargeOutcome.GRANTED) == 1


def test_a_refusal_is_replayed_as_a_refusal(engine: Engine) -> None:
    job_id = _job_with_budget(engine, steps=0)
    assert _charge(engine, job_id, "k").refused is BudgetDimension.STEPS
    replay = _charge(engine, job_id, "k")
    assert replay.replayed and replay.refused is BudgetDimension.STEPS


def test_twenty_threads_never_take_more_than_the_limit(engine: Engine, race: Race) -> None:
    job_id = _job_with_budget(engine, retrieval_calls=37)

    def spend(i: int) -> int:
        return sum(_charge(engine, job_id, f"t{i}:{n}", "retrieval_calls").granted
                   for n in range(5))

    assert sum(race(20, spend)) == 37
    assert _used(engine, job_id) == (0, 37)
    assert _count(engine, ChargeOutcome.GRANTED) == 37
    assert _count(engine, ChargeOutcome.REFUSED) == 100 - 37


def test_racing_cost_charges_stop_exactly_at_the_dollar_limit(engine: Engine, race: Race) -> None:
    job_id = _job_with_budget(engine, cost_usd=Decimal("0.07"))
    granted = race(20, lambda i: _charge(engine, job_id, f"c{i}", "cost_usd", CENT).granted)
    assert sum(granted) == 7
    assert _budget(engine, job_id).used_cost_usd == Decimal("0.07")
    assert _count(engine, ChargeOutcome.REFUSED, "cost_usd") == 13


def test_money_adds_up_exactly_to_its_limit(engine: Engine) -> None:
    """0.1 + 0.1 + 0.1 is 0.3 in money, though not in binary floats (SQLite's storage)."""
    job_id = _job_with_budget(engine, cost_usd=Decimal("0.3"))
    tenth = Decimal("0.1")
    assert [_charge(engine, job_id, f"m{i}", "cost_usd", tenth).granted for i in range(4)] == [
        True, True, True, False]
    assert _budget(engine, job_id).used_cost_usd == Decimal("0.3")


def test_racing_redeliveries_of_one_task_pay_once(engine: Engine, race: Race) -> None:
    job_id = _job_with_budget(engine, steps=100)
    results = race(10, lambda i: _charge(engine, job_id, "same-task"))
    assert sum(not result.replayed for result in results) == 1
    assert all(result.granted for result in results)
    assert _used(engine, job_id) == (1, 0)
    assert _count(engine, ChargeOutcome.GRANTED) == 1


def test_charging_a_job_without_budget_names_the_fix(engine: Engine) -> None:
    with pytest.raises(LedgerNotFoundError, match="create_job_budget") as caught:
        _charge(engine, "job_nobudget", "k")
    assert (caught.value.table, caught.value.key) == ("job_budgets", "job_nobudget")


@pytest.mark.parametrize(
    ("amounts", "message"),
    [
        ({"tokens": 1}, "valid: steps, retrieval_calls"),
        ({"steps": -1}, ">= 0"),
        ({"steps": Decimal("1.5")}, "whole number"),
        ({"cost_usd": Decimal("-0.01")}, ">= 0"),
    ],
)
def test_bad_charges_fail_early(engine: Engine, amounts: dict[str, object], message: str) -> None:
    job_id = _job_with_budget(engine, steps=5)
    with pytest.raises(ValueError, match=message):
        _many(engine, job_id, "k", amounts=amounts)
    assert _count(engine, ChargeOutcome.GRANTED) == _count(engine, ChargeOutcome.REFUSED) == 0


def test_budget_limits_reject_unknown_dimensions(engine: Engine) -> None:
    with pytest.raises(ValueError, match="unknown budget dimension 'max_steps'"):
        _job_with_budget(engine, max_steps=3)


def test_every_dimension_has_a_limit_and_used_column() -> None:
    columns = set(JobBudgetRow.__table__.c.keys())
    for dimension in BudgetDimension:
        assert {f"limit_{dimension}", f"used_{dimension}"} <= columns


# several dimensions at once


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


def test_money_refuses_a_multi_charge_whole(engine: Engine) -> None:
    job_id = _job_with_budget(engine, steps=10, cost_usd=Decimal("0.05"))
    amounts = {"steps": 1, "cost_usd": Decimal("0.03")}
    assert _many(engine, job_id, "a", amounts=amounts).granted
    assert _many(engine, job_id, "b", amounts=amounts).refused is BudgetDimension.COST_USD
    budget = _budget(engine, job_id)
    assert (budget.used_steps, budget.used_cost_usd) == (1, Decimal("0.03"))
    assert _count(engine, ChargeOutcome.REFUSED, "cost_usd") == 1
    assert _count(engine, ChargeOutcome.REFUSED, "steps") == 0


def test_twenty_threads_of_multi_charges_never_overshoot(engine: Engine, race: Race) -> None:
    job_id = _job_with_budget(engine, steps=13, retrieval_calls=100)
    granted = race(20, lambda i: _many(engine, job_id, f"r{i}",
                                       amounts={"steps": 1, "retrieval_calls": 1}).granted)
    assert sum(granted) == 13
    assert _used(engine, job_id) == (13, 13)


def test_racing_multi_charges_with_money_stop_at_the_dollar_limit_and_are_never_half_paid(
    engine: Engine, race: Race
) -> None:
    job_id = _job_with_budget(engine, steps=100, cost_usd=Decimal("0.07"))
    granted = race(20, lambda i: _many(engine, job_id, f"m{i}",
                                       amounts={"steps": 1, "cost_usd": CENT}).granted)
    assert sum(granted) == 7
    budget = _budget(engine, job_id)
    assert (budget.used_steps, budget.used_cost_usd) == (7, Decimal("0.07"))
    assert _count(engine, ChargeOutcome.GRANTED, "steps") == 7
    assert _count(engine, ChargeOutcome.GRANTED, "cost_usd") == 7
    assert _count(engine, ChargeOutcome.REFUSED, "cost_usd") == 13


def test_a_redelivered_multi_charge_pays_once_and_reports_the_first_outcome(
    engine: Engine, race: Race
) -> None:
    job_id = _job_with_budget(engine, steps=5, cost_usd=Decimal("1"))
    amounts = {"steps": 2, "cost_usd": Decimal("0.25")}
    results = race(8, lambda i: _many(engine, job_id, "same", amounts=amounts))
    assert sum(not r.replayed for r in results) == 1
    assert all(r.granted for r in results)
    budget = _budget(engine, job_id)
    assert (budget.used_steps, budget.used_cost_usd) == (2, Decimal("0.25"))


def test_a_forced_settlement_may_overshoot_and_then_refuses_the_next_charge(
    engine: Engine,
) -> None:
    job_id = _job_with_budget(engine, llm_tokens=100, cost_usd=CENT)
    settle = {"llm_tokens": 150, "cost_usd": Decimal("0.02")}
    assert _many(engine, job_id, "settle", amounts=settle, force=True).granted
    assert _budget(engine, job_id).used_cost_usd == Decimal("0.02")
    refused = _many(engine, job_id, "next", amounts={"llm_tokens": 0})
    assert refused.refused is BudgetDimension.LLM_TOKENS
    assert _charge(engine, job_id, "money", "cost_usd", 0).refused is BudgetDimension.COST_USD


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


def test_the_deadline_is_compared_as_an_instant_whatever_offset_set_it(engine: Engine) -> None:
    """The conditional UPDATE checks the deadline itself: an hour ahead written at UTC+05:00
    still pays, a second ago written at UTC-03:00 refuses with latency, a forced settle pays."""
    job_id = new_job(engine)
    ahead = datetime.now(timezone(timedelta(hours=5))) + timedelta(hours=1)
    with session_scope(engine) as session:
        create_job_budget(session, job_id=job_id, limits={"steps": 5}, deadline_at=ahead)
    assert _charge(engine, job_id, "early").granted
    with session_scope(engine) as session:
        budget = get_job_budget(session, job_id=job_id)
        assert budget is not None
        budget.deadline_at = datetime.now(timezone(timedelta(hours=-3))) - timedelta(seconds=1)
    assert _charge(engine, job_id, "late").refused is BudgetDimension.LATENCY_MS
    assert _many(engine, job_id, "settle", amounts={"steps": 1}, force=True).granted
    assert _used(engine, job_id) == (2, 0)


def test_racing_deliveries_ensure_one_budget(engine: Engine, race: Race) -> None:
    with session_scope(engine) as session:
        job = JobRow(tenant="t", collection="c", question="q")
        session.add(job)
        session.flush()
        job_id = job.id

    def ensure(i: int) -> bool:
        with session_scope(engine) as session:
            return open_job_budget(session, job_id=job_id, profile="bounded",
                                   limits={BudgetDimension.STEPS: 3 + i},
                                   deadline=lambda _now: None)

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
    job_id = _job_with_budget(engine, steps=5, cost_usd=CENT)
    assert _many(engine, job_id, "k", amounts={"steps": 1, "cost_usd": 0}).granted
    with session_scope(engine, readonly=True) as session:
        keys = session.scalars(select(BudgetChargeRow.idempotency_key)).all()
    assert keys == ["k/steps"]


def test_a_charge_takes_a_savepoint_only_where_another_writer_can_race_it(engine: Engine) -> None:
    # PostgreSQL lets a racing delivery insert the same charge between the read and the
    # insert: the savepoint is what the loser rolls back. A SQLite write transaction holds
    # the database's one write lock from BEGIN IMMEDIATE on, so there the savepoint is skipped.
    job_id = _job_with_budget(engine, steps=3)
    statements: list[str] = []

    def seen(conn: object, cursor: object, statement: str, *args: object) -> None:
        statements.append(statement.split()[0].upper())

    event.listen(engine, "before_cursor_execute", seen)
    try:
        assert _charge(engine, job_id, "s0").granted
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    expected = 0 if engine.dialect.name == "sqlite" else 1
    assert statements.count("SAVEPOINT") == expected
    assert _budget(engine, job_id).used_steps == 1
