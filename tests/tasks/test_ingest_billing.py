"""Ingest bills its embedding spend to the run: the tokens the embedder's provider
bills for what a batch embedded, priced by ``RAGQ_PRICES``. In-process: the real OpenAI-compatible
embedder against the loopback fake, Qdrant in memory, a SQLite ledger; no stack."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Engine

from ragq.ledger import create_ingest_run, get_ingest_run, make_engine, session_scope
from ragq.providers.openai import OpenAIEmbedder
from ragq.schemas.document import Document
from ragq.schemas.pricing import PriceTable
from ragq.settings import build_settings
from ragq.tasks.ingest import ingest_batch
from ragq.vectorstore import QdrantServerStore
from tests.fakes import FakeOpenAIServer
from tests.ledger_template import migrated

USD_PER_TOKEN = Decimal("0.001")
DOCS = [
    Document(id="refunds", title="Refunds", text="Refunds are paid within 14 days. " * 80),
    Document(id="shipping", title="", text="Parcels leave the warehouse every morning."),
]


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    migrated(url)
    built = make_engine(url)
    yield built
    built.dispose()


def run_spend(engine: Engine, run_id: str) -> tuple[int, Decimal]:
    with session_scope(engine, readonly=True) as session:
        run = get_ingest_run(session, run_id=run_id)
        assert run is not None
        return run.embedding_tokens, run.cost_usd


def test_a_batch_bills_the_tokens_it_embedded_and_a_repeat_bills_nothing(
    engine: Engine, fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    settings = build_settings(home=tmp_path, chunk_words=120, chunk_overlap_words=20,
                              prices=PriceTable(embedding_per_mtok=float(USD_PER_TOKEN) * 1e6))
    embedder = OpenAIEmbedder("text-embedding-3-small", fake_openai.dim, fake_openai.v1_url,
                              "sk-test", timeout_s=5.0)
    store = QdrantServerStore(":memory:")
    with session_scope(engine) as session:
        run_id = create_ingest_run(session, collection="kb", source_path="docs.jsonl").id

    counts = ingest_batch(DOCS, collection="kb", settings=settings, store=store,
                          embedder=embedder, engine=engine, run_id=run_id)
    sent = [text for request in fake_openai.requests for text in request.json()["input"]]
    billed = embedder.billed_tokens(sent)
    assert counts["new"] == 2 and counts["chunks"] > 2 and billed > 200
    assert counts["embedding_tokens"] == billed
    assert run_spend(engine, run_id) == (billed, billed * USD_PER_TOKEN)

    again = ingest_batch(DOCS, collection="kb", settings=settings, store=store,
                         embedder=embedder, engine=engine, run_id=run_id)
    assert again["skip"] == 2 and again["embedding_tokens"] == 0
    assert run_spend(engine, run_id) == (billed, billed * USD_PER_TOKEN)
