"""`ragq ledger job|batch [--json]` against a prepared SQLite ledger, found through RAGQ_ env."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragq.cli.main import app
from ragq.ledger import make_engine
from tests.ledger.report_rows import write_batch
from tests.ledger_template import migrated

runner = CliRunner()


@pytest.fixture
def prepared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict[str, str]]:
    """A ledger under $RAGQ_HOME holding the report test batch; returns its ids."""
    for key in [k for k in os.environ if k.startswith("RAGQ_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("RAGQ_HOME", str(tmp_path / "home"))
    url = f"sqlite:///{tmp_path / 'home' / 'ledger.db'}"
    return _write(url)


def _write(url: str) -> tuple[str, dict[str, str]]:
    migrated(url)
    engine = make_engine(url)
    try:
        return write_batch(engine)
    finally:
        engine.dispose()


def test_ledger_batch_json(prepared: tuple[str, dict[str, str]]) -> None:
    batch_id, _ = prepared
    result = runner.invoke(app, ["ledger", "batch", batch_id, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["batch_id"] == batch_id
    assert report["totals"]["cost_usd"] == 0.875
    assert report["totals"]["tokens"] == 715
    assert report["totals"]["budget_exhaustion_rate"] == 0.5
    assert sorted(report["routes"]) == ["full", "none", "simple"]
    assert report["routes"]["none"]["cost_per_completed_job"] is None


def test_ledger_job_json(prepared: tuple[str, dict[str, str]]) -> None:
    _, jobs = prepared
    result = runner.invoke(app, ["ledger", "job", jobs["full-exhausted"], "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [c["outcome"] for c in report["charges"]] == ["granted"] * 3 + ["refused"] * 2
    assert report["cost_usd"] == 0.5
    assert len(report["model_calls"]) == 2


def test_ledger_reads_the_database_url_setting(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    batch_id, _ = _write(url)
    monkeypatch.setenv("RAGQ_HOME", str(tmp_path / "unused"))
    monkeypatch.setenv("RAGQ_DATABASE_URL", url)
    result = runner.invoke(app, ["ledger", "batch", batch_id, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["totals"]["jobs"] == 5


def test_ledger_tables_for_people(prepared: tuple[str, dict[str, str]]) -> None:
    batch_id, jobs = prepared
    batch = runner.invoke(app, ["ledger", "batch", batch_id])
    assert batch.exit_code == 0, batch.output
    assert "simple" in batch.stdout and "retrieval_calls 1" in batch.stdout
    job = runner.invoke(app, ["ledger", "job", jobs["full-exhausted"]])
    assert job.exit_code == 0, job.output
    assert "budget charges" in job.stdout and "refused" in job.stdout


@pytest.mark.parametrize("kind", ["job", "batch"])
def test_an_unknown_id_fails_with_the_reason(prepared: tuple[str, dict[str, str]],
                                             kind: str) -> None:
    result = runner.invoke(app, ["ledger", kind, "nope_123"])
    assert result.exit_code == 1
    assert "nope_123" in result.stderr and not result.stdout
