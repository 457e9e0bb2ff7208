"""`ragq … --help` reads like docs/cli.md, and a command checks what it is given before it
looks for the stack: the user's own mistake is the first thing they are told."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from ragq.cli.main import app
from tests.cli.test_stack_commands import ragq

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
TYPE_MARK = re.compile(r"<(bool|str|int|float|path|int range|float range)>")


def _commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name, command in getattr(group, "commands", {}).items():
        yield from _commands(command, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


def _help(path: tuple[str, ...]) -> str:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "ragq")
def test_help_names_values_not_types(path: tuple[str, ...]) -> None:
    text = _help(path)
    assert not TYPE_MARK.search(text), text
    usage = next(line for line in text.splitlines() if "Usage:" in line)
    assert "{" not in usage and "<" not in usage, usage
    arguments = usage.split("[OPTIONS]", 1)[1].split()
    assert all(a.strip("[].") == a.strip("[].").upper() for a in arguments), usage


def test_arguments_and_options_carry_the_readme_names() -> None:
    usage = {" ".join(path): next(line for line in _help(path).splitlines() if "Usage:" in line)
             for path in [("submit",), ("eval",), ("status",), ("results",), ("ledger", "job")]}
    assert usage["submit"].rstrip().endswith("ragq submit [OPTIONS] TICKETS")
    assert usage["eval"].rstrip().endswith("ragq eval [OPTIONS] DATASET_DIR")
    assert usage["status"].rstrip().endswith("ragq status [OPTIONS] [ID]")
    assert usage["results"].rstrip().endswith("ragq results [OPTIONS] BATCH")
    assert usage["ledger job"].rstrip().endswith("ragq ledger job [OPTIONS] JOB_ID")
    eval_help = _help(("eval",))
    assert re.search(r"--json\s+FILE", eval_help) and re.search(r"--limit\s+N", eval_help)
    submit_help = _help(("submit",))
    assert re.search(r"--collection\s+-c\s+NAME", submit_help)
    assert re.search(r"--wait\s+Wait", submit_help)  # a flag shows no value


def test_submit_names_a_missing_file_before_the_stopped_stack(tmp_path) -> None:
    proc = ragq(tmp_path / "home", "submit", str(tmp_path / "missing.jsonl"), check=False)
    assert proc.returncode == 1
    assert "missing.jsonl: no such file" in proc.stderr and "ragq up" not in proc.stderr


def test_ingest_of_a_missing_path_prints_the_error_alone(tmp_path) -> None:
    proc = ragq(tmp_path / "home", "ingest", str(tmp_path / "nosuch"), check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip().startswith("error:") and "no such file" in proc.stderr
    assert "ingesting" not in proc.stderr and proc.stdout == ""


def test_eval_checks_the_dataset_folder_then_names_the_stack(tmp_path) -> None:
    empty = tmp_path / "set"
    empty.mkdir()
    proc = ragq(tmp_path / "home", "eval", str(empty), check=False)
    assert proc.returncode == 1 and "corpus.jsonl and questions.jsonl" in proc.stderr
    proc = ragq(tmp_path / "home", "eval", str(ROOT / "examples" / "eval"), check=False)
    assert proc.returncode == 1 and "ragq up" in proc.stderr and "schema" not in proc.stderr
    assert proc.stdout == ""  # no progress before the error
