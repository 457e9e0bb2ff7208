"""Migrations: a fresh database reaches head with no drift, repeatably and from racing processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from ragq.ledger import (
    LedgerMigrationError,
    current_revision,
    head_revision,
    is_up_to_date,
    make_engine,
    session_scope,
    upgrade,
)
from ragq.ledger.migrate import MIGRATIONS_DIR, alembic_config
from ragq.ledger.models import Base, IngestRunRow

REPO_ROOT = Path(__file__).resolve().parents[2]


def _diff(url: str, metadata: sa.MetaData) -> list[Any]:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            return list(compare_metadata(context, metadata))
    finally:
        engine.dispose()


def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return set(sa.inspect(connection).get_table_names())
    finally:
        engine.dispose()


def test_migrations_ship_inside_the_package() -> None:
    assert (MIGRATIONS_DIR / "env.py").is_file()
    assert list((MIGRATIONS_DIR / "versions").glob("*.py"))
    assert not (MIGRATIONS_DIR.parent / "alembic.ini").exists()
    revisions = sorted(p.stem.split("_")[0] for p in (MIGRATIONS_DIR / "versions").glob("0*.py"))
    assert head_revision() == revisions[-1]  # one linear history, numbered in order


def test_fresh_database_gets_every_table(ledger_url: str) -> None:
    assert current_revision(ledger_url) is None
    assert not is_up_to_date(ledger_url)
    upgrade(ledger_url)
    assert _tables(ledger_url) == set(Base.metadata.tables) | {"alembic_version"}
    assert current_revision(ledger_url) == head_revision()
    assert is_up_to_date(ledger_url)


def test_migrated_schema_matches_the_models(migrated_url: str) -> None:
    assert _diff(migrated_url, Base.metadata) == []


def test_drift_would_be_detected(migrated_url: str) -> None:
    # Guards the test above: a model change without a migration must show up in the diff.
    drifted = sa.MetaData(naming_convention=Base.metadata.naming_convention)
    for table in Base.metadata.tables.values():
        table.to_metadata(drifted)
    drifted.tables["jobs"].append_column(sa.Column("surprise", sa.Integer))
    assert any(item[0] == "add_column" for item in _diff(migrated_url, drifted))


def test_constraints_are_named_by_the_convention(migrated_url: str) -> None:
    engine = make_engine(migrated_url)
    try:
        with engine.connect() as connection:
            inspector = sa.inspect(connection)
            checks = {c["name"] for c in inspector.get_check_constraints("jobs")}
            uniques = {c["name"] for c in inspector.get_unique_constraints("budget_charges")}
    finally:
        engine.dispose()
    assert "ck_jobs_job_status" in checks
    assert uniques == {"uq_budget_charges_job_id_idempotency_key"}


def test_upgrade_is_idempotent_and_keeps_data(migrated_url: str) -> None:
    engine = make_engine(migrated_url)
    with session_scope(engine) as session:
        session.add(IngestRunRow(id="ing_keep", collection="c", source_path="p"))
    upgrade(migrated_url)
    upgrade(migrated_url)
    with session_scope(engine, readonly=True) as session:
        assert session.get(IngestRunRow, "ing_keep") is not None
    engine.dispose()
    assert current_revision(migrated_url) == head_revision()


def test_runs_recorded_before_ingest_billing_read_as_free(ledger_url: str) -> None:
    """0003 adds NOT NULL spend columns to ingest_runs; rows already there get zero."""
    upgrade(ledger_url, "0002")
    engine = make_engine(ledger_url)
    try:
        with engine.begin() as connection:
            connection.execute(sa.text(
                "INSERT INTO ingest_runs (id, collection, source_path, status, documents_total,"
                " documents_ingested, documents_unchanged, documents_replaced, chunks, bad_lines,"
                " created_at) VALUES ('ing_old', 'c', 'p', 'completed', 1, 1, 0, 0, 3, 0,"
                " CURRENT_TIMESTAMP)"))
        upgrade(ledger_url)
        with session_scope(engine, readonly=True) as session:
            run = session.get(IngestRunRow, "ing_old")
            assert run is not None and (run.embedding_tokens, run.cost_usd) == (0, 0)
    finally:
        engine.dispose()
    assert _diff(ledger_url, Base.metadata) == []


def test_downgrade_to_base_removes_every_table(migrated_url: str) -> None:
    engine = make_engine(migrated_url, sqlite_foreign_keys=False)
    try:
        with engine.begin() as connection:
            config = alembic_config(migrated_url)
            config.attributes["connection"] = connection
            command.downgrade(config, "base")
    finally:
        engine.dispose()
    assert _tables(migrated_url) <= {"alembic_version"}
    upgrade(migrated_url)  # and back up again
    assert is_up_to_date(migrated_url)


def test_unknown_revision_is_a_migration_error(sqlite_url: str) -> None:
    with pytest.raises(LedgerMigrationError, match="nonexistent"):
        upgrade(sqlite_url, "nonexistent")


_UPGRADER = textwrap.dedent(
    """
    import sys, time
    from ragq.ledger import upgrade
    url, start = sys.argv[1], float(sys.argv[2])
    time.sleep(max(0.0, start - time.time()))
    upgrade(url)
    """
)


@pytest.mark.parametrize("processes", [4])
def test_concurrent_upgrades_from_separate_processes(
    ledger_url: str, processes: int, tmp_path: Path
) -> None:
    start = time.time() + 2.0  # all interpreters are up by then, so the upgrades really race
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _UPGRADER, ledger_url, str(start)],
            cwd=tmp_path,  # no alembic.ini anywhere near: the config is built in code
            env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    errors = [proc.communicate(timeout=120)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * processes, errors
    assert is_up_to_date(ledger_url)
    assert _tables(ledger_url) == set(Base.metadata.tables) | {"alembic_version"}
    assert _diff(ledger_url, Base.metadata) == []


def test_review_statuses_arrive_with_0005_and_leave_with_its_downgrade(ledger_url: str) -> None:
    """0005 replaces the job_status CHECK constraint: a job may then wait for review; jobs
    recorded before it keep their status, and a downgrade returns waiting jobs to completed."""
    upgrade(ledger_url, "0004")
    engine = make_engine(ledger_url, sqlite_foreign_keys=False)
    insert = sa.text("INSERT INTO jobs (id, tenant, collection, question, acl, status, metadata,"
                     " created_at) VALUES (:id, 't', 'c', 'q', '[]', :status, '{}',"
                     " CURRENT_TIMESTAMP)")
    set_status = sa.text("UPDATE jobs SET status = :status WHERE id = 'job_old'")
    try:
        with engine.begin() as connection:
            connection.execute(insert, {"id": "job_old", "status": "completed"})
        with pytest.raises(sa.exc.IntegrityError), engine.begin() as connection:
            connection.execute(set_status, {"status": "needs_review"})
        upgrade(ledger_url)
        with engine.begin() as connection:
            connection.execute(set_status, {"status": "needs_review"})
            connection.execute(insert, {"id": "job_new", "status": "rejected"})
        with pytest.raises(sa.exc.IntegrityError), engine.begin() as connection:
            connection.execute(set_status, {"status": "bogus"})
        with engine.begin() as connection:
            config = alembic_config(ledger_url)
            config.attributes["connection"] = connection
            command.downgrade(config, "0004")
        with engine.connect() as connection:
            statuses = dict(connection.execute(sa.text("SELECT id, status FROM jobs")).all())
        assert statuses == {"job_old": "completed", "job_new": "completed"}
    finally:
        engine.dispose()
