"""What calls cost: one price table for model calls, retrieval, reranking and embeddings.

A value object, read from ``RAGQ_PRICES`` (JSON) by the settings, so the provider that meters a
call and the budget that charges it read the same prices. Prices are US dollars.
"""

from __future__ import annotations

import logging

from pydantic import BaseModel, ConfigDict, Field

log = logging.getLogger(__name__)


class ModelPrice(BaseModel):
    """The price of one chat model, in USD per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: float = Field(0.0, ge=0.0)
    output_per_mtok: float = Field(0.0, ge=0.0)


DEFAULT_MODEL_PRICES: dict[str, ModelPrice] = {
    # OpenAI list prices (standard tier), USD per 1M tokens.
    "gpt-4o-mini": ModelPrice(input_per_mtok=0.15, output_per_mtok=0.60),
    "gpt-4o": ModelPrice(input_per_mtok=2.50, output_per_mtok=10.00),
    "gpt-4.1-mini": ModelPrice(input_per_mtok=0.40, output_per_mtok=1.60),
    "gpt-4.1-nano": ModelPrice(input_per_mtok=0.10, output_per_mtok=0.40),
    "gpt-4.1": ModelPrice(input_per_mtok=2.00, output_per_mtok=8.00),
}

_warned: set[str] = set()


class PriceTable(BaseModel):
    """Prices per model (matched exactly, else by the longest key that prefixes the model name,
    so ``gpt-4o-mini-2024-07-18`` pays ``gpt-4o-mini``), per retrieval and rerank call, and per
    million embedded tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    models: dict[str, ModelPrice] = Field(default_factory=lambda: dict(DEFAULT_MODEL_PRICES))
    retrieval_call_usd: float = Field(0.0, ge=0.0)
    rerank_call_usd: float = Field(0.0, ge=0.0)
    embedding_per_mtok: float = Field(0.02, ge=0.0)

    def __hash__(self) -> int:  # the settings holding the table must stay hashable
        return hash(self.model_dump_json())

    def price_of(self, model: str) -> ModelPrice | None:
        """The price of ``model``, or None when the table does not know it."""
        if model in self.models:
            return self.models[model]
        prefixes = [key for key in self.models if model.startswith(key)]
        return self.models[max(prefixes, key=len)] if prefixes else None

    def cost_of(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        """USD of one call. An unknown model costs 0, logged once per model so it is seen."""
        price = self.price_of(model)
        if price is None:
            if model not in _warned:
                _warned.add(model)
                log.warning("model=%s has no price in RAGQ_PRICES; its calls are costed at 0",
                            model)
            return 0.0
        return (prompt_tokens * price.input_per_mtok
                + completion_tokens * price.output_per_mtok) / 1_000_000

    def embedding_cost(self, tokens: int) -> float:
        """USD of embedding ``tokens`` tokens."""
        return tokens * self.embedding_per_mtok / 1_000_000
