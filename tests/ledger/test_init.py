"""The package's public map: one ``__all__`` that names every public name of its modules."""

from __future__ import annotations

import importlib

import pytest

from ragq import ledger

MODULES = [
    "ragq.ledger.budgets",
    "ragq.ledger.db",
    "ragq.ledger.documents",
    "ragq.ledger.errors",
    "ragq.ledger.ids",
    "ragq.ledger.ingest_runs",
    "ragq.ledger.jobs",
    "ragq.ledger.migrate",
    "ragq.ledger.models",
    "ragq.ledger.views",
    "ragq.ledger.webhooks",
]


def test_every_exported_name_exists_once() -> None:
    assert len(ledger.__all__) == len(set(ledger.__all__))
    for name in ledger.__all__:
        assert hasattr(ledger, name), name


@pytest.mark.parametrize("module", MODULES)
def test_public_names_of_each_module_are_exported(module: str) -> None:
    names = set(importlib.import_module(module).__all__)
    private = {"MIGRATIONS_DIR", "alembic_config"}  # tooling, reached through ledger.migrate
    assert names - private <= set(ledger.__all__)


def test_every_table_has_a_model_exported() -> None:
    exported_tables = {
        getattr(ledger, name).__tablename__
        for name in ledger.__all__
        if hasattr(getattr(ledger, name), "__tablename__")
    }
    assert exported_tables == set(ledger.Base.metadata.tables)
