"""The sweeper's lease (ragq.ledger.sweeper_lease): of several replicas, exactly one acts per
round; a holder renews its own lease, a dead holder's lease expires and another takes it; the
rounds are counted for the operator's metrics (both backends)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import Engine

from ragq.ledger import session_scope
from ragq.ledger.models import utcnow
from ragq.ledger.sweeper_lease import record_round, sweeper_report, take_lease
from tests.ledger.conftest import Race

TERM = timedelta(seconds=15)


def take(engine: Engine, holder: str, after_s: float = 0.0) -> bool:
    with session_scope(engine) as session:
        return take_lease(session, holder=holder, term=TERM,
                          now=utcnow() + timedelta(seconds=after_s))


def test_one_holder_acts_until_its_lease_expires_then_another_takes_over(engine: Engine):
    assert take(engine, "a")
    assert not take(engine, "b")
    assert take(engine, "a", after_s=10)  # renewed: runs until 25 s from now
    assert not take(engine, "b", after_s=20)
    assert take(engine, "b", after_s=30)  # a stopped renewing: b takes over
    assert not take(engine, "a", after_s=31)


def test_replicas_racing_for_a_fresh_lease_leave_exactly_one_acting(engine: Engine, race: Race):
    won = race(8, lambda i: take(engine, f"replica-{i}"))
    assert sum(won) == 1
    won_again = race(8, lambda i: take(engine, f"replica-{i}"))
    assert won_again == won  # the winner renews, the others still wait


def test_rounds_are_counted_for_the_holder_only(engine: Engine):
    with session_scope(engine, readonly=True) as session:
        assert sweeper_report(session) is None
    assert take(engine, "a")
    with session_scope(engine) as session:
        record_round(session, holder="a", resumed=2, joined=1, started=3)
        record_round(session, holder="b", resumed=5)  # not its lease: not counted
        record_round(session, holder="a")
    with session_scope(engine, readonly=True) as session:
        report = sweeper_report(session)
    assert report is not None
    assert (report.holder, report.rounds, report.resumed_jobs, report.joined_layers,
            report.started_jobs) == ("a", 2, 2, 1, 3)
    assert report.last_round_at is not None
    assert abs((utcnow() - report.last_round_at).total_seconds()) < 600
