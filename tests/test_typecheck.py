"""mypy over the library, as pyproject.toml configures it (strict on orchestration and schemas),
inside the suite: CI runs the README's test command, so a type error fails CI like any test.
The checker's cache (.mypy_cache at the repository root) keeps a rerun to a second or two."""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parents[1]


def test_the_library_type_checks_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # mypy reads [tool.mypy] and resolves ragq/<folder> from the root
    report, errors, status = api.run(["--config-file", str(ROOT / "pyproject.toml")])
    assert status == 0, f"mypy found type errors:\n{report}{errors}"
    assert "Success: no issues found" in report
