"""Adapters a process holds for its lifetime, built once from settings on first use.

Worker processes, the API and the CLI all borrow them through :func:`resources_for`, keyed by
the settings' value: a front door that builds its settings again on every call (or a poll loop)
still gets the one engine and sender of its process instead of a new pool each time.

In the embedded topology the vector store is owned by exactly one process; opening it lazily
means a worker that never serves a retrieval or ingest task never takes the ownership lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from ragq.schemas.tasks import Queue
from ragq.settings import Settings
from ragq.workers.wiring import (
    build_embedder,
    build_evidence_cache,
    build_flow_config,
    build_ledger_engine,
    build_plan_cache,
    build_provider,
    build_token_counter,
    build_vector_store,
    build_webhook_sender,
    waiting_line,
)

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from ragq.caches import EvidenceCache, PlanCache
    from ragq.orchestration.context import TokenCounter
    from ragq.providers.base import ModelProvider
    from ragq.schemas.embedder import Embedder
    from ragq.tasks.runner import Runner
    from ragq.tasks.turns import StepTurns
    from ragq.tasks.work import QueryVectors
    from ragq.vectorstore.base import VectorStore
    from ragq.webhooks import WebhookSender

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class WorkerResources:
    """Lazily-built adapters of one process, safe to share across its threads."""

    settings: Settings
    # Re-entrant: building one adapter may need another (the runner needs the engine).
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _engine: Engine | None = None
    _store: VectorStore | None = None
    _embedder: Embedder | None = None
    _provider: ModelProvider | None = None
    _count_tokens: TokenCounter | None = None
    _evidence_cache: EvidenceCache | None = None
    _plan_cache: PlanCache | None = None
    _query_vectors: QueryVectors | None = None
    _step_turns: StepTurns | None = None
    _runner: Runner | None = None
    _webhook_sender: WebhookSender | None = None

    def _once(self, name: str, build: Callable[[], T]) -> T:
        """The adapter held in attribute ``name``, built on first use (once, across threads)."""
        with self._lock:
            value = getattr(self, name)
            if value is None:
                value = build()
                setattr(self, name, value)
            return value

    @property
    def engine(self) -> Engine:
        return self._once("_engine", lambda: build_ledger_engine(self.settings))

    @property
    def vector_store(self) -> VectorStore:
        return self._once("_store", self._open_store)

    def _open_store(self) -> VectorStore:
        store = build_vector_store(self.settings)
        log.info("vector store opened by this process")
        return store

    @property
    def embedder(self) -> Embedder:
        return self._once("_embedder", lambda: build_embedder(self.settings))

    @property
    def provider(self) -> ModelProvider:
        embedder = self.embedder
        return self._once("_provider", lambda: build_provider(self.settings, embedder))

    @property
    def count_tokens(self) -> TokenCounter:
        return self._once("_count_tokens", lambda: build_token_counter(self.settings))

    @property
    def evidence_cache(self) -> EvidenceCache:
        return self._once("_evidence_cache", lambda: build_evidence_cache(self.settings))

    @property
    def plan_cache(self) -> PlanCache:
        return self._once("_plan_cache", lambda: build_plan_cache(self.settings))

    @property
    def query_vectors(self) -> QueryVectors:
        from ragq.tasks.work import QueryVectors

        embedder = self.embedder
        return self._once("_query_vectors", lambda: QueryVectors(embedder))

    @property
    def step_turns(self) -> StepTurns:
        from ragq.tasks.turns import StepTurns

        return self._once("_step_turns", lambda: StepTurns(self.settings.active_steps))

    @property
    def runner(self) -> Runner:
        """The flow's step runner on this process's ledger and adapters."""
        return self._once("_runner", self._build_runner)

    def _build_runner(self) -> Runner:
        from ragq.ledger.sql_flow import SqlFlowLedger
        from ragq.tasks.runner import Runner

        config = build_flow_config(self.settings, self.count_tokens)
        ledger = SqlFlowLedger(self.engine, waiting_line=waiting_line(self.settings))
        return Runner(ledger, self, config)

    @property
    def webhook_sender(self) -> WebhookSender:
        return self._once("_webhook_sender", lambda: build_webhook_sender(self.settings))

    def warm(self, queues: Collection[str]) -> None:
        """Build now what tasks from ``queues`` will need, before the worker takes its first.

        Built lazily, the first model task of a process imported the openai client (about
        0.4 s of CPU, under the lock every other adapter is built under): when a backlog
        arrived on a fresh worker, its first few hundred jobs all waited behind that one
        import. The vector store stays lazy (its ownership lock goes to whoever first needs it);
        a local embedder loads its model (an embedder behind an API has nothing to load, and
        is sent nothing).
        """
        wanted = set(queues)
        if wanted & {Queue.MODELS, Queue.BOOKKEEPING, Queue.RETRIEVAL}:
            _ = self.runner  # the engine, the tokenizer and the flow's config
        if Queue.MODELS in wanted:
            _ = self.provider
        if wanted & {Queue.RETRIEVAL, Queue.INGEST}:
            load = getattr(self.embedder, "load", None)
            if callable(load):
                load()

    def close(self) -> None:
        """Release the store (and its ownership lock), the database pool and the sender's
        connections (when it holds any)."""
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None
            close_sender = getattr(self._webhook_sender, "close", None)
            if callable(close_sender):
                close_sender()
            self._webhook_sender = None


_registry: dict[Settings, WorkerResources] = {}
_registry_lock = threading.Lock()


def resources_for(settings: Settings) -> WorkerResources:
    """The process-wide resources for these settings: one set per settings value (settings are
    frozen and hashable), so equal settings built twice share one engine, store and sender."""
    with _registry_lock:
        found = _registry.get(settings)
        if found is None:
            found = _registry[settings] = WorkerResources(settings)
        return found


def close_all() -> None:
    """Close every resource set; called when a worker process shuts down."""
    with _registry_lock:
        for res in _registry.values():
            res.close()
        _registry.clear()
