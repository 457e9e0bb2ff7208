"""Model calls recorded once per (job, call key), whoever records them first: a redelivered
step and two racing deliveries leave one row, with the first recording's figures. Every test
runs on SQLite and, with ``RAGQ_TEST_POSTGRES_URL`` set, on PostgreSQL."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import Engine, select

from ragq.ledger import session_scope
from ragq.ledger.models import ModelCallRow
from ragq.ledger.steps import record_model_call
from tests.ledger.conftest import Race, new_job


def _record(engine: Engine, job_id: str | None, key: str, tokens: int) -> bool:
    with session_scope(engine) as session:
        return record_model_call(session, job_id=job_id, role="router", provider="fake",
                                 model="m", call_key=key, prompt_tokens=tokens,
                                 completion_tokens=1, latency_ms=3, cost_usd=0.0125)


def _rows(engine: Engine, key: str) -> list[tuple[str | None, int, Decimal]]:
    with session_scope(engine, readonly=True) as session:
        return [tuple(r) for r in session.execute(
            select(ModelCallRow.job_id, ModelCallRow.prompt_tokens, ModelCallRow.cost_usd)
            .where(ModelCallRow.call_key == key))]


def test_a_call_is_recorded_once_per_job_and_key_with_its_first_figures(engine):
    job_id, other = new_job(engine), new_job(engine)
    assert _record(engine, job_id, "route", 10) is True
    assert _record(engine, job_id, "route", 99) is False  # a redelivery: nothing added
    assert _record(engine, other, "route", 7) is True  # the same key in another job
    assert sorted(_rows(engine, "route")) == sorted(
        [(job_id, 10, Decimal("0.0125")), (other, 7, Decimal("0.0125"))])


def test_a_call_outside_any_job_is_recorded_once_per_key(engine):
    assert _record(engine, None, "baseline", 4) is True
    assert _record(engine, None, "baseline", 5) is False
    assert _rows(engine, "baseline") == [(None, 4, Decimal("0.0125"))]


def test_racing_deliveries_of_one_call_record_it_once(engine, race: Race):
    job_id = new_job(engine)
    created = race(8, lambda n: _record(engine, job_id, "verify:0", n))
    assert created.count(True) == 1
    ((_, tokens, _),) = _rows(engine, "verify:0")
    assert tokens == created.index(True)
