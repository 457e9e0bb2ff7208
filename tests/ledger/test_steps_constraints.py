"""A ledger row that breaks a constraint (not a racing duplicate of itself) is refused as an
integrity error naming it, on SQLite (no savepoint) and PostgreSQL (savepoint) alike."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from ragq.ledger import LedgerIntegrityError, session_scope
from ragq.ledger.steps import record_plan
from tests.ledger.conftest import new_job


def test_a_plan_of_a_job_that_does_not_exist_is_refused_as_an_integrity_error(
        engine: Engine) -> None:
    with pytest.raises(LedgerIntegrityError, match=r"(?i)foreign key"), \
            session_scope(engine) as session:
        record_plan(session, job_id="no-such-job", round=0, plan={"sub_queries": []},
                    strategy="single", repair_reason=None)


def test_a_plan_recorded_twice_is_one_row(engine: Engine) -> None:
    job_id = new_job(engine)
    ids = []
    for _ in range(2):
        with session_scope(engine) as session:
            ids.append(record_plan(session, job_id=job_id, round=0, plan={"sub_queries": []},
                                   strategy="single", repair_reason=None).id)
    assert ids[0] == ids[1]
