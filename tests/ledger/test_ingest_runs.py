"""Ingest runs: counters and embedding spend bumped by parallel tasks are never lost; a run
finishes once."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import Engine

from ragq.ledger import (
    LedgerNotFoundError,
    add_ingest_counts,
    create_ingest_run,
    finish_ingest_run,
    get_ingest_run,
    session_scope,
)
from ragq.schemas.statuses import IngestStatus
from tests.ledger.conftest import Race


def _run(engine: Engine) -> str:
    with session_scope(engine) as session:
        return create_ingest_run(
            session, collection="kb", source_path="/data", documents_total=5
        ).id


def test_a_new_run_is_running_with_zero_counts(engine: Engine) -> None:
    run_id = _run(engine)
    assert run_id.startswith("ing_")
    with session_scope(engine, readonly=True) as session:
        run = get_ingest_run(session, run_id=run_id)
    assert run is not None
    assert run.status is IngestStatus.RUNNING
    assert (run.documents_total, run.documents_ingested, run.chunks, run.finished_at) == (
        5,
        0,
        0,
        None,
    )
    assert (run.embedding_tokens, run.cost_usd) == (0, Decimal(0))


def test_counts_add_up(engine: Engine) -> None:
    run_id = _run(engine)
    with session_scope(engine) as session:
        add_ingest_counts(session, run_id=run_id, documents_ingested=3, chunks=10, bad_lines=1)
        add_ingest_counts(session, run_id=run_id, documents_ingested=2, documents_replaced=1)
    with session_scope(engine, readonly=True) as session:
        run = get_ingest_run(session, run_id=run_id)
    assert run is not None
    assert (run.documents_ingested, run.documents_replaced, run.chunks, run.bad_lines) == (
        5,
        1,
        10,
        1,
    )


def test_embedding_spend_adds_up_to_the_cent(engine: Engine) -> None:
    """Money is summed exactly (0.1 three times is 0.3), floats from the price table included."""
    run_id = _run(engine)
    with session_scope(engine) as session:
        for _ in range(3):
            add_ingest_counts(session, run_id=run_id, embedding_tokens=5_000_000,
                              cost_usd=Decimal("0.1"))
        add_ingest_counts(session, run_id=run_id, embedding_tokens=1, cost_usd=0.00000002)
    with session_scope(engine, readonly=True) as session:
        run = get_ingest_run(session, run_id=run_id)
    assert run is not None
    assert (run.embedding_tokens, run.cost_usd) == (15_000_001, Decimal("0.30000002"))


def test_parallel_counts_are_never_lost(engine: Engine, race: Race) -> None:
    run_id = _run(engine)

    def bump(i: int) -> None:
        for _ in range(25):
            with session_scope(engine) as session:
                add_ingest_counts(session, run_id=run_id, documents_ingested=1, chunks=i + 1,
                                  embedding_tokens=100, cost_usd=Decimal("0.01"))

    race(20, bump)
    with session_scope(engine, readonly=True) as session:
        run = get_ingest_run(session, run_id=run_id)
    assert run is not None
    assert run.documents_ingested == 20 * 25
    assert run.chunks == 25 * sum(range(1, 21))
    assert (run.embedding_tokens, run.cost_usd) == (20 * 25 * 100, Decimal("5.00"))


def test_a_run_finishes_once(engine: Engine) -> None:
    run_id = _run(engine)
    with session_scope(engine) as session:
        assert finish_ingest_run(session, run_id=run_id, status=IngestStatus.FAILED, error="disk")
        assert not finish_ingest_run(session, run_id=run_id)
    with session_scope(engine, readonly=True) as session:
        run = get_ingest_run(session, run_id=run_id)
    assert run is not None
    assert (run.status, run.error) == (IngestStatus.FAILED, "disk")
    assert run.finished_at is not None and run.finished_at.utcoffset() is not None


def test_unknown_runs_are_reported(engine: Engine) -> None:
    with session_scope(engine) as session:
        assert get_ingest_run(session, run_id="ing_missing") is None
    for call in (
        lambda s: add_ingest_counts(s, run_id="ing_missing", chunks=1),
        lambda s: add_ingest_counts(s, run_id="ing_missing"),
        lambda s: finish_ingest_run(s, run_id="ing_missing"),
    ):
        with pytest.raises(LedgerNotFoundError) as caught, session_scope(engine) as session:
            call(session)
        assert caught.value.key == "ing_missing"


def test_running_is_not_a_final_status(engine: Engine) -> None:
    run_id = _run(engine)
    with pytest.raises(ValueError, match="final status"), session_scope(engine) as session:
        finish_ingest_run(session, run_id=run_id, status=IngestStatus.RUNNING)
