"""The sweeper's lease: several sweeper replicas may run (a compose service scaled out, the
embedded supervisor beside one), and exactly one acts per round.

A replica takes the lease with one conditional UPDATE — free (expired) or already its own —
so two replicas can never both win it: PostgreSQL locks the row, SQLite the whole database.
The holder renews it every round; a holder that dies lets it expire after ``term``, and
another replica takes over. The row also counts what the sweeps did, which is what the metrics
of a sweeper (and the alert "the sweeper has not run") read.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ragq.ledger.db import rows_changed
from ragq.ledger.models import SweeperLeaseRow, utcnow

__all__ = ["SWEEPER", "SweeperReport", "record_round", "sweeper_report", "take_lease"]

SWEEPER = "sweeper"
"""The name of the one lease the recovery sweep takes."""


@dataclass(frozen=True)
class SweeperReport:
    """What the sweeps have done: who holds the lease, the last round, and totals."""

    holder: str
    last_round_at: datetime | None
    rounds: int
    resumed_jobs: int
    joined_layers: int
    started_jobs: int


def take_lease(session: Session, *, holder: str, term: timedelta, name: str = SWEEPER,
               now: datetime | None = None) -> bool:
    """Take or renew the lease ``name`` for ``holder`` until now + ``term``; True when this
    holder has it (act this round), False when another holder's lease runs (skip it)."""
    now = now or utcnow()
    if session.get(SweeperLeaseRow, name) is None:
        try:
            with session.begin_nested():
                session.add(SweeperLeaseRow(name=name, holder=holder, expires_at=now + term,
                                            rounds=0, resumed_jobs=0, joined_layers=0,
                                            started_jobs=0))
            return True
        except IntegrityError:  # another replica created it first: compete below
            pass
    taken = session.execute(
        update(SweeperLeaseRow)
        .where(SweeperLeaseRow.name == name,
               (SweeperLeaseRow.holder == holder) | (SweeperLeaseRow.expires_at < now))
        .values(holder=holder, expires_at=now + term)
        .execution_options(synchronize_session=False))
    return bool(rows_changed(taken))


def record_round(session: Session, *, holder: str, resumed: int = 0, joined: int = 0,
                 started: int = 0, name: str = SWEEPER, now: datetime | None = None) -> None:
    """Count a round ``holder`` swept (its lease taken by :func:`take_lease`)."""
    session.execute(
        update(SweeperLeaseRow)
        .where(SweeperLeaseRow.name == name, SweeperLeaseRow.holder == holder)
        .values(last_round_at=now or utcnow(), rounds=SweeperLeaseRow.rounds + 1,
                resumed_jobs=SweeperLeaseRow.resumed_jobs + resumed,
                joined_layers=SweeperLeaseRow.joined_layers + joined,
                started_jobs=SweeperLeaseRow.started_jobs + started)
        .execution_options(synchronize_session=False))


def sweeper_report(session: Session, *, name: str = SWEEPER) -> SweeperReport | None:
    """The lease's record, or None when no sweeper ever ran against this ledger."""
    row = session.scalars(select(SweeperLeaseRow).where(SweeperLeaseRow.name == name)).first()
    if row is None:
        return None
    return SweeperReport(row.holder, row.last_round_at, row.rounds, row.resumed_jobs,
                         row.joined_layers, row.started_jobs)
