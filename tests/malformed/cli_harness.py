"""Running `ragq` in-process as its console script does (``ragq.cli.main:main``), against a
migrated SQLite ledger and an in-process broker: exit code, stdout, stderr."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragq.cli.main import main


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


def cli_env(home: Path) -> dict[str, str]:
    """The environment of a CLI run on ``home`` with no stack: an in-process broker."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("RAGQ_") or k.startswith("RAGQ_TEST")}
    return env | {"RAGQ_HOME": str(home), "RAGQ_BROKER_URL": "memory://",
                  "RAGQ_RESULT_BACKEND_URL": "cache+memory://", "COLUMNS": "200"}


def run_cli(args: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str]) -> Run:
    """Exit code and output of ``ragq *args``; an exception escaping ``main`` (a traceback
    for a person) fails the test by propagating."""
    with monkeypatch.context() as patch:
        for key in [k for k in os.environ if k.startswith("RAGQ_")]:
            patch.delenv(key)
        for key, value in env.items():
            patch.setenv(key, value)
        patch.setattr(sys, "argv", ["ragq", *args])
        capsys.readouterr()
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
    return Run(code, captured.out, captured.err)


def assert_clean_failure(run: Run, *needles: str) -> None:
    """A non-zero exit with a message on stderr naming the problem, and no traceback."""
    assert run.code != 0, (run.out, run.err)
    assert "Traceback" not in run.err + run.out and "error: unexpected" not in run.err, run.err
    text = " ".join(run.err.split())
    assert "error" in text.lower(), run.err
    for needle in needles:
        assert needle in text, (needle, run.err)
