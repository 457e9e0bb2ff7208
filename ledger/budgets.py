"""Budget rows and atomic, idempotent charges against them.

A charge is made before the work it pays for. It is one conditional ``UPDATE`` over every
dimension it pays (the database row lock decides which of two racing tasks takes the last unit)
plus one ``budget_charges`` row per dimension, keyed ``{idempotency_key}/{dimension}``, whose
``UNIQUE(job_id, idempotency_key)`` makes a redelivered task get its first answer back instead of
paying twice. Both happen in one savepoint, so a charge is never half recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import cache
from typing import Any

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Update,
    bindparam,
    func,
    insert,
    select,
    update,
)
from sqlalchemy import exc as sa_exc
from sqlalchemy.orm import Session

from ragq.ledger.db import race_guard
from ragq.ledger.errors import LedgerNotFoundError
from ragq.ledger.models import (
    BudgetChargeRow,
    BudgetDimension,
    ChargeOutcome,
    JobBudgetRow,
    table_of,
)
from ragq.ledger.models.base import utcnow

__all__ = [
    "MultiCharge",
    "charge_many",
    "create_job_budget",
    "open_job_budget",
    "get_job_budget",
]

Amount = int | Decimal

_BUDGETS = table_of(JobBudgetRow)
_CHARGES = table_of(BudgetChargeRow)
_MONEY_DIMENSIONS = frozenset({BudgetDimension.COST_USD})
_MONEY_QUANTUM = 10**8  # compare money in 1e-8 USD units: SQLite stores it as a float


def _dimension(value: BudgetDimension | str) -> BudgetDimension:
    try:
        return BudgetDimension(value)
    except ValueError:
        valid = ", ".join(member.value for member in BudgetDimension)
        raise ValueError(f"unknown budget dimension {value!r}; valid: {valid}") from None


def _checked_amount(dimension: BudgetDimension, amount: Amount) -> Amount:
    """The amount as the column stores it: Decimal USD, int for every counted dimension."""
    value = Decimal(amount)
    if value < 0:
        raise ValueError(f"budget amount for {dimension} must be >= 0, got {amount}")
    if dimension in _MONEY_DIMENSIONS:
        return value
    if value != value.to_integral_value():
        raise ValueError(f"budget amount for {dimension} must be a whole number, got {amount}")
    return int(value)


def create_job_budget(
    session: Session,
    *,
    job_id: str,
    limits: Mapping[BudgetDimension | str, Amount | None],
    profile: str | None = None,
    deadline_at: datetime | None = None,
) -> JobBudgetRow:
    """Insert the budget row of ``job_id`` with every used counter at zero.

    Dimensions missing from ``limits`` (or given as ``None``) are unlimited. Raises ``ValueError``
    for an unknown dimension or a negative limit; :class:`LedgerIntegrityError` (at flush or
    commit) when the job already has a budget or does not exist.
    """
    row = JobBudgetRow(job_id=job_id, profile=profile, deadline_at=deadline_at,
                       **_limit_values(limits))
    session.add(row)
    session.flush()
    return row


_OPENED = select(_BUDGETS.c.profile, _BUDGETS.c.created_at).where(
    _BUDGETS.c.job_id == bindparam("job_id"))


def open_job_budget(session: Session, *, job_id: str,
                    limits: Mapping[BudgetDimension, Amount | None], profile: str,
                    deadline: Callable[[datetime], datetime | None]) -> bool:
    """Create the budget of ``job_id`` under ``profile`` (its deadline ``deadline(now)``), or
    move an existing one to ``profile``: its limits, and its deadline counted from when it was
    first opened; True when this call created it. Every job opens its budget twice (started,
    then routed), inside the step's write transaction: Core statements, no ORM row."""
    conn = session.connection()
    opened = conn.execute(_OPENED, {"job_id": job_id}).first()
    if opened is None:
        if _insert_budget(session, job_id, limits, profile, deadline(utcnow())):
            return True
        # A racing delivery opened it first (PostgreSQL): moved below like any other.
        opened = conn.execute(_OPENED, {"job_id": job_id}).one()
    if opened.profile == profile:
        return False
    conn.execute(
        update(_BUDGETS).where(_BUDGETS.c.job_id == job_id).values(
            profile=profile, deadline_at=deadline(opened.created_at), **_limit_values(limits)))
    return False


def _insert_budget(session: Session, job_id: str,
                   limits: Mapping[BudgetDimension, Amount | None], profile: str,
                   deadline_at: datetime | None) -> bool:
    """Insert the budget row, as :func:`create_job_budget` does, with one Core statement; False
    when a racing delivery of the same step inserted it first."""
    try:
        with race_guard(session):
            session.connection().execute(_INSERT_BUDGET, {
                "job_id": job_id, "profile": profile, "deadline_at": deadline_at,
                **dict.fromkeys(_LIMITS, None), **_limit_values(limits)})
    except sa_exc.IntegrityError:
        return False
    return True


def _limit_values(limits: Mapping[Any, Amount | None]) -> dict[str, Amount | None]:
    """The ``limit_<dimension>`` columns of ``limits`` (keyed by dimension or its name; None:
    unlimited), each checked."""
    values: dict[str, Amount | None] = {}
    for key, limit in limits.items():
        dimension = _dimension(key)
        values[f"limit_{dimension.value}"] = (
            None if limit is None else _checked_amount(dimension, limit))
    return values


_LIMITS = tuple(f"limit_{dim.value}" for dim in BudgetDimension)
_INSERT_BUDGET = insert(_BUDGETS)


def get_job_budget(session: Session, *, job_id: str) -> JobBudgetRow | None:
    """The budget row of ``job_id`` as the database has it now, or ``None``."""
    return session.get(JobBudgetRow, job_id, populate_existing=True)


def _new_used(dimension: BudgetDimension) -> ColumnElement[Any]:
    used = _BUDGETS.c[f"used_{dimension.value}"]
    # Bind with the column's own type, whose processor converts Decimal for SQLite's driver.
    return used + bindparam(f"amount_{dimension.value}", type_=used.type)


def _fits(dimension: BudgetDimension, new_used: ColumnElement[Any]) -> ColumnElement[bool]:
    limit = _BUDGETS.c[f"limit_{dimension.value}"]
    if dimension in _MONEY_DIMENSIONS:
        within = func.round(new_used * _MONEY_QUANTUM) <= func.round(limit * _MONEY_QUANTUM)
    else:
        within = new_used <= limit
    return limit.is_(None) | within


@dataclass(frozen=True)
class MultiCharge:
    """What :func:`charge_many` did: ``refused`` names the first dimension that did not fit (or
    ``latency_ms`` when the job's deadline had passed); None when everything was paid."""

    refused: BudgetDimension | None
    replayed: bool

    @property
    def granted(self) -> bool:
        return self.refused is None


_KEY_PATTERN: BindParameter[str] = bindparam("pattern")
_JOB_ID: BindParameter[str] = bindparam("job_id")
_EARLIER = select(_CHARGES.c.dimension, _CHARGES.c.outcome).where(
    _CHARGES.c.job_id == _JOB_ID, _CHARGES.c.idempotency_key.like(_KEY_PATTERN, escape="\\"))
_DEADLINE = select(_BUDGETS.c.deadline_at).where(_BUDGETS.c.job_id == _JOB_ID)
_ROW = select(_BUDGETS).where(_BUDGETS.c.job_id == _JOB_ID)
_RECORD = insert(_CHARGES)


def _first_refusal(session: Session, job_id: str, key: str) -> MultiCharge | None:
    """What the first delivery of this charge decided, or None (never charged).

    Every charge asks this first, so it is one prebuilt statement on the connection: no ORM
    row is built, the read sees the database as it is now."""
    rows = session.connection().execute(
        _EARLIER, {"job_id": job_id, "pattern": f"{_escape_like(key)}/%"}).all()
    if not rows:
        return None
    refused = [r for r in rows if r.outcome == ChargeOutcome.REFUSED]
    return MultiCharge(BudgetDimension(refused[0].dimension) if refused else None, True)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _blocking(session: Session, job_id: str, values: Mapping[BudgetDimension, Amount],
              now: datetime) -> BudgetDimension | None:
    """Which dimension stops this charge, read from the row after the conditional UPDATE
    failed (the deadline first), or the deadline alone for a charge of nothing."""
    conn = session.connection()
    row = conn.execute(_ROW if values else _DEADLINE, {"job_id": job_id}).first()
    if row is None:
        raise LedgerNotFoundError(
            f"job {job_id} has no budget; create it with create_job_budget() first",
            table="job_budgets", key=job_id)
    if row.deadline_at is not None and now >= row.deadline_at:
        return BudgetDimension.LATENCY_MS
    for dim, amount in values.items():
        limit = row._mapping[f"limit_{dim.value}"]
        if limit is not None and Decimal(row._mapping[f"used_{dim.value}"]) + Decimal(amount) \
                > Decimal(limit):
            return dim
    return None


def charge_many(
    session: Session,
    *,
    job_id: str,
    amounts: Mapping[BudgetDimension, Amount] | Mapping[str, Amount],
    idempotency_key: str,
    step: str | None = None,
    attempt: int = 0,
    force: bool = False,
    now: datetime | None = None,
) -> MultiCharge:
    """Pay every dimension of ``amounts`` at once, or none of them.

    One conditional ``UPDATE`` covers all dimensions, so a piece of work that costs a step, a
    retrieval call and a unique query is never half paid. Each dimension gets its own
    ``budget_charges`` row keyed ``{idempotency_key}/{dimension}``; a refusal records only the
    dimension that did not fit. ``force`` pays without checking limits: it settles what work
    already spent (a model call's real tokens), so the ledger holds the truth and the next
    charge is refused. A passed deadline refuses everything with ``latency_ms``.
    """
    values = {_dimension(k): _checked_amount(_dimension(k), v) for k, v in amounts.items()}
    earlier = _first_refusal(session, job_id, idempotency_key)
    if earlier is not None:
        return earlier
    now = now or utcnow()
    try:
        with race_guard(session):
            # The conditional UPDATE checks the deadline itself; a charge of nothing has none.
            refused = None if force or values else _blocking(session, job_id, {}, now)
            if refused is None:
                refused = _pay(session, job_id, values, force, now)
            _record(session, job_id, values, refused, idempotency_key, step, attempt)
    except sa_exc.IntegrityError:
        earlier = _first_refusal(session, job_id, idempotency_key)
        if earlier is None:
            raise
        return earlier
    return MultiCharge(refused, False)


def _pay(session: Session, job_id: str, values: Mapping[BudgetDimension, Amount], force: bool,
         now: datetime) -> BudgetDimension | None:
    if not values:
        return None
    paid = session.connection().execute(
        _pay_statement(tuple(values), force),
        {"b_job_id": job_id, "now": now, **{f"amount_{d.value}": a for d, a in values.items()}})
    if paid.rowcount == 1:
        return None
    refused = _blocking(session, job_id, values, now)
    return refused or next(iter(values))


@cache
def _pay_statement(dimensions: tuple[BudgetDimension, ...], force: bool) -> Update:
    """The conditional UPDATE paying ``dimensions`` (amounts bound as ``amount_<dim>``), built
    once per set of dimensions: a job pays a handful of kinds of charge, each many times."""
    new = {dim: _new_used(dim) for dim in dimensions}
    query = update(_BUDGETS).where(_BUDGETS.c.job_id == bindparam("b_job_id"))
    if not force:
        deadline = _BUDGETS.c.deadline_at
        query = query.where(deadline.is_(None) | (deadline > bindparam("now", type_=deadline.type)))
        for dim, used in new.items():
            query = query.where(_fits(dim, used))
    return query.values({_BUDGETS.c[f"used_{d.value}"]: u for d, u in new.items()})


def _record(session: Session, job_id: str, values: Mapping[BudgetDimension, Amount],
            refused: BudgetDimension | None, key: str, step: str | None, attempt: int) -> None:
    if refused is not None:
        values = {refused: values.get(refused, 0)}
    else:  # a zero amount only asked "is this dimension still open?": nothing to record
        values = {dim: amount for dim, amount in values.items() if amount}
    if not values:
        return
    outcome = ChargeOutcome.REFUSED if refused else ChargeOutcome.GRANTED
    session.connection().execute(_RECORD, [
        {"job_id": job_id, "dimension": dim, "amount": amount,
         "idempotency_key": f"{key}/{dim.value}", "step": step, "attempt": attempt,
         "outcome": outcome} for dim, amount in values.items()])
