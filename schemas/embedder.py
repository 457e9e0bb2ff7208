"""The embedder contract: texts in, unit-length vectors out.

A contract, not an adapter: the local model (:mod:`ragq.embedding`), the OpenAI-compatible
embedder (:mod:`ragq.providers.openai`) and the offline provider, which embeds with whichever it
is given, all meet here without importing each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors of a fixed dimension."""

    @property
    def dim(self) -> int:
        """Length of every vector this embedder returns."""

    @property
    def model_id(self) -> str:
        """Identifies the model, so a collection is never searched with another model's vectors."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` in order; raise ``EmbeddingError`` on failure."""

    def billed_tokens(self, texts: Sequence[str]) -> int:
        """The tokens a provider bills for embedding ``texts`` (0 when embedding is free), so
        embedding spend is priced like model calls (``PriceTable.embedding_cost``). Counted
        offline, without embedding anything."""
