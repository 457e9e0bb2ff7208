"""`ragq sources show NAME` shows a source's metadata schema; `ragq ledger job` shows each
search's metadata filters, kept or dropped and why (issue 37). Against a SQLite ledger under
RAGQ_HOME; the job is run in process."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragq.cli.main import app
from ragq.cli.output import console
from ragq.ledger import make_engine, register_source, session_scope
from ragq.ledger.jobs import add_job
from ragq.ledger.sql_flow import SqlFlowLedger
from ragq.schemas.metadata import FieldType, MetadataField, MetadataSchema
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, config, seeded_world
from tests.ledger_template import migrated

runner = CliRunner(env={"COLUMNS": "240"})
SCHEMA = MetadataSchema(fields=(
    MetadataField(name="product", type=FieldType.ENUM, description="what the page is about",
                  values=("camera", "drone")),))


@pytest.fixture
def job_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A finished job of the local tenant over a source with a schema."""
    for key in [k for k in os.environ if k.startswith("RAGQ_")]:
        monkeypatch.delenv(key)
    # The tables' content is checked, not their folding: the console was sized when the CLI
    # was first imported (80 columns under xdist), so COLUMNS above comes too late for it.
    monkeypatch.setattr(console, "width", 240)
    monkeypatch.setenv("RAGQ_HOME", str(tmp_path / "home"))
    url = f"sqlite:///{tmp_path / 'home' / 'ledger.db'}"
    migrated(url)
    ledger = SqlFlowLedger(make_engine(url))
    with session_scope(ledger.engine) as session:
        register_source(session, tenant="local", name=COLLECTION, description="gadgets",
                        metadata_schema=SCHEMA.model_dump(mode="json"))
        register_source(session, tenant="local", name="plain")
        found = add_job(session, batch_id=None, custom_id=None, position=None, tenant="local",
                        collection=COLLECTION, acl=["public"],
                        question="Which drone does the company sell, and the camera lens?").id
    InlineDispatcher(Runner(ledger, seeded_world(3), config())).run(found)
    ledger.engine.dispose()
    return found


def test_sources_show_prints_the_schema(job_id: str) -> None:
    shown = runner.invoke(app, ["sources", "show", COLLECTION, "--json"])
    assert shown.exit_code == 0, shown.output
    detail = json.loads(shown.stdout)
    assert MetadataSchema.model_validate(detail["metadata_schema"]) == SCHEMA
    table = runner.invoke(app, ["sources", "show", COLLECTION])
    assert "product" in table.stdout and "camera, drone" in table.stdout
    plain = runner.invoke(app, ["sources", "show", "plain"])
    assert "no metadata schema" in plain.stdout
    missing = runner.invoke(app, ["sources", "show", "nowhere"])
    assert missing.exit_code != 0 and "no source 'nowhere'" in missing.output


def test_ledger_job_shows_each_filter_and_why(job_id: str) -> None:
    report = json.loads(runner.invoke(app, ["ledger", "job", job_id, "--json"]).stdout)
    assert report["metadata_filters"]
    table = runner.invoke(app, ["ledger", "job", job_id])
    assert table.exit_code == 0, table.output
    assert "metadata filters" in table.stdout
    assert "valid under the schema" in table.stdout


INFERRED = MetadataSchema(fields=(
    MetadataField(name="region", type=FieldType.ENUM, values=("EU", "US"), inferred=True),
    MetadataField(name="tier", type=FieldType.KEYWORD, values=("gold",), inferred=True)))


def test_sources_confirm_turns_an_inferred_field_into_one_filtered_on(job_id: str) -> None:
    url = f"sqlite:///{Path(os.environ['RAGQ_HOME']) / 'ledger.db'}"
    with session_scope(make_engine(url)) as session:
        register_source(session, tenant="local", name="guessed",
                        metadata_schema=INFERRED.model_dump(mode="json"))
    table = runner.invoke(app, ["sources", "show", "guessed"])
    assert table.stdout.count("no: inferred") == 2
    confirmed = runner.invoke(app, ["sources", "confirm", "guessed", "region", "--json"])
    assert confirmed.exit_code == 0, confirmed.output
    fields = {f["name"]: f for f in json.loads(confirmed.stdout)["metadata_schema"]["fields"]}
    assert not fields["region"]["inferred"] and fields["tier"]["inferred"]
    shown = json.loads(runner.invoke(app, ["sources", "show", "guessed", "--json"]).stdout)
    assert [f["inferred"] for f in shown["metadata_schema"]["fields"]] == [False, True]  # kept
    wrong = runner.invoke(app, ["sources", "confirm", "guessed", "colour"])
    assert wrong.exit_code != 0 and "cannot confirm ['colour']" in wrong.output
    assert "'region'" in wrong.output  # what may be confirmed
    none = runner.invoke(app, ["sources", "confirm", "plain"])
    assert none.exit_code != 0 and "no metadata field to confirm" in none.output
    every = json.loads(runner.invoke(app, ["sources", "confirm", "guessed", "--json"]).stdout)
    assert not any(f["inferred"] for f in every["metadata_schema"]["fields"])
