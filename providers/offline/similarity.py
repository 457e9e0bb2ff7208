"""Cosine similarity through the embedder, with a bounded cache: the same evidence chunk is read
by several roles (sufficiency, verification) and embedding it once per process is enough."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from ragq.schemas.embedder import Embedder

CACHE_SIZE = 8192  # texts; ~12 MiB of 384-float vectors


class Similarity:
    """``best(query, texts)``: the highest cosine between the query and any text."""

    def __init__(self, embedder: Embedder, cache_size: int = CACHE_SIZE):
        self._embedder = embedder
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._size = cache_size

    def vectors(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors of ``texts``, embedding only those not cached."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            for text, vector in zip(todo, self._embedder.embed(todo), strict=True):
                self._cache[text] = vector
        out = []
        for text in texts:
            self._cache.move_to_end(text)
            out.append(self._cache[text])
        while len(self._cache) > self._size:
            self._cache.popitem(last=False)
        return out

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """Cosine of ``query`` with each text (vectors are unit length: a dot product)."""
        if not texts:
            return []
        q, *rest = self.vectors([query, *texts])
        return [sum(a * b for a, b in zip(q, v, strict=True)) for v in rest]

    def best(self, query: str, texts: Sequence[str]) -> float:
        """The highest cosine of ``query`` with any of ``texts`` (0.0 for none)."""
        return max(self.scores(query, texts), default=0.0)
