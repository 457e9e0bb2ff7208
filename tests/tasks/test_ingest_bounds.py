"""An ingest task keeps its bound (``ragq.deadlines``): it stops before an embedding batch that
would end past it, naming where, and what it upserted before stays (a redelivery rewrites the
same point ids)."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest

from ragq import deadlines
from ragq.errors import TaskDeadlineError
from ragq.schemas.document import Chunk
from ragq.tasks.ingest import _write_chunks
from tests.fakes.flow_world import HashEmbedder


class SlowEmbedder(HashEmbedder):
    """A loaded machine: each embedding call takes ``seconds``."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        time.sleep(self.seconds)
        return super().embed(texts)


class RecordingStore:
    def __init__(self) -> None:
        self.upserted: list[str] = []

    def upsert(self, collection: str, points: Sequence[object]) -> None:
        self.upserted.extend(str(getattr(p, "payload", {}).get("chunk_id")) for p in points)


def _chunks(n: int) -> list[Chunk]:
    return [Chunk(chunk_id=f"d::{i}", doc_id="d", chunk_index=i, title="", text=f"text {i}",
                  source_version="v1", acl=("public",), authority_tier=2) for i in range(n)]


def test_ingest_stops_before_a_batch_that_would_end_past_the_bound() -> None:
    store = RecordingStore()
    deadlines.start(1.0)
    try:  # the first batch takes 0.6 s, so a second one would end past the bound
        with pytest.raises(TaskDeadlineError, match="ingest into c at chunk 2 of 12"):
            _write_chunks(store, SlowEmbedder(0.6), "c", _chunks(12), batch=2)  # type: ignore[arg-type]
    finally:
        deadlines.clear()
    assert store.upserted == ["d::0", "d::1"]  # what fitted stays written


def test_without_a_bound_every_batch_is_written() -> None:
    store = RecordingStore()
    _write_chunks(store, SlowEmbedder(0.0), "c", _chunks(5), batch=2)  # type: ignore[arg-type]
    assert len(store.upserted) == 5
