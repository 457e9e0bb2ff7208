"""`ragq ingest`'s summary: what the workers did, and what embedding it cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragq.cli import documents
from ragq.ingestion.submit import IngestReport
from ragq.schemas.pricing import PriceTable
from ragq.settings import Settings, build_settings

COUNTS = {"new": 3, "replace": 1, "skip": 2, "repair": 0, "chunks": 40,
          "embedding_tokens": 250_000}


REPORT = IngestReport("ing_1", "kb", 6, counts=dict(COUNTS))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return build_settings(home=tmp_path, prices=PriceTable(embedding_per_mtok=0.13))


def test_the_summary_names_the_embedding_tokens_and_their_cost(settings, capsys):
    documents.summarize(REPORT, settings, collection="kb", as_json=False)
    out = " ".join(capsys.readouterr().out.split())
    assert "3 new, 1 replaced, 2 unchanged" in out
    assert "embeddings billed 250000 tokens, $0.032500" in out


def test_the_json_summary_carries_tokens_and_cost(settings, capsys):
    documents.summarize(REPORT, settings, collection="kb", as_json=True)
    data = json.loads(capsys.readouterr().out)
    assert data["counts"] == COUNTS
    assert (data["embedding_tokens"], data["cost_usd"]) == (250_000, pytest.approx(0.0325))
