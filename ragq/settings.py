"""One settings object for the whole system, read from ``RAGQ_*`` environment variables.

Settings are built by :func:`build_settings` and passed in; nothing reads the environment as a
side effect of import, so tests can build as many differently-configured settings as they need.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class EmbedderKind(StrEnum):
    """Which :class:`embedding.Embedder` implementation the workers build."""

    MINILM = "minilm"
    OPENAI = "openai"


class ProviderKind(StrEnum):
    """Which :class:`providers.ModelProvider` plays the model roles."""

    OFFLINE = "offline"
    OPENAI = "openai"


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
    qdrant_url: str | None = Field(
        None, description="Qdrant server (or ':memory:'); unset means the embedded engine."
    )
    qdrant_api_key: SecretStr | None = None
    collection: str = Field("default", description="Collection used when a command names none.")

    embedder: EmbedderKind = EmbedderKind.MINILM
    embedding_batch_size: int = Field(32, ge=1, le=1024)
    openai_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    openai_embedding_model: str = "text-embedding-3-small"
    openai_embedding_dim: int = Field(1536, ge=1)
    openai_timeout_s: float = Field(30.0, gt=0)

    provider: ProviderKind = ProviderKind.OFFLINE
    context_max_tokens: int = Field(1500, ge=50, le=1_000_000)
    context_max_chunks: int = Field(8, ge=1, le=200)
    min_confidence: float = Field(0.7, ge=0.0, le=1.0)
    tenant: str = Field("local", min_length=1, description="Tenant of CLI submissions.")
    max_batch_lines: int = Field(50_000, ge=1)
    max_batch_bytes: int = Field(100 * 1024 * 1024, ge=1)

    chunk_words: int = Field(180, ge=16, le=2000)
    chunk_overlap_words: int = Field(40, ge=0)
    ingest_batch_docs: int = Field(64, ge=1, le=10_000)
    search_top_k: int = Field(5, ge=1, le=200)

    embedded_host: str = "127.0.0.1"
    embedded_port: int = Field(0, ge=0, le=65535, description="0 picks a free port.")
    vector_worker_threads: int = Field(4, ge=1, le=64)
    general_worker_threads: int = Field(4, ge=1, le=64)
    flower_port: int = Field(5555, ge=1, le=65535)
    start_timeout_s: float = Field(60.0, gt=0)
    task_time_limit_s: float = Field(300.0, gt=0)

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
    def ledger_url(self) -> str:
        """The SQLAlchemy URL of the ledger."""
        return self.database_url or f"sqlite:///{(self.home / 'ledger.db').resolve()}"

    @property
    def vectors_dir(self) -> Path:
        return self.home / "vectors"

    @property
    def run_dir(self) -> Path:
        return self.home / "run"

    @property
    def log_dir(self) -> Path:
        return self.home / "logs"


def build_settings(**overrides: object) -> Settings:
    """Read settings from the environment; keyword overrides win (tests, CLI options)."""
    return Settings(**overrides)  # type: ignore[arg-type]
