"""Embeddings cached on disk between bench runs, keyed by model and text.

Embedding a corpus with MiniLM takes minutes on a small machine while a store built from the
vectors takes seconds; caching the vectors lets a bench compare store variants without paying
for the model each time. The cache is a plain ``.npz`` per model under ``/tmp``; delete it to
start over.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragq.schemas.embedder import Embedder

CACHE_ROOT = Path("/tmp/ragq_bench_embeddings")


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class CachedEmbeddings:
    """An :class:`~schemas.embedder.Embedder` that computes with ``embedder`` only the texts not
    seen in earlier runs, so ingest code can run on it unchanged."""

    def __init__(self, embedder: Embedder, root: Path = CACHE_ROOT, batch: int = 64):
        self._embedder = embedder
        self._path = root / f"{embedder.model_id}.npz"
        self._batch = batch
        self._vectors: dict[str, np.ndarray] = {}
        if self._path.is_file():
            with np.load(self._path) as saved:
                self._vectors = dict(zip(saved["keys"].tolist(), saved["vectors"], strict=True))

    @property
    def dim(self) -> int:
        return self._embedder.dim

    @property
    def model_id(self) -> str:
        return self._embedder.model_id

    def billed_tokens(self, texts: Sequence[str]) -> int:
        """What the wrapped embedder's provider would bill for ``texts`` (a bench pays nothing
        for cached vectors, but measures what a real run would)."""
        return self._embedder.billed_tokens(texts)

    def embed(self, texts: Sequence[str], label: str = "texts") -> list[list[float]]:
        """Vectors for ``texts`` in order; new ones are embedded, saved, and reported on stderr."""
        todo = sorted({_key(t): t for t in texts if _key(t) not in self._vectors}.items())
        started = time.perf_counter()
        for start in range(0, len(todo), self._batch):
            part = todo[start : start + self._batch]
            vectors = self._embedder.embed([text for _, text in part])
            for (key, _), vector in zip(part, vectors, strict=True):
                self._vectors[key] = np.asarray(vector, dtype=np.float32)
            print(f"embedded {label}: {start + len(part)}/{len(todo)} "
                  f"{time.perf_counter() - started:.0f}s", file=sys.stderr, flush=True)
            if (start // self._batch) % 8 == 7:
                self._save()  # an interrupted run keeps what it paid for
        if todo:
            self._save()
        return [self._vectors[_key(t)].tolist() for t in texts]

    def _save(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self._vectors)
        tmp = self._path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), vectors=np.stack([self._vectors[k] for k in keys]))
        tmp.replace(self._path)
