"""The client and the retry loop shared by everything that talks to an OpenAI-compatible server.

The ``openai`` client is built with ``max_retries=0``: retries happen in :func:`send`, so every
attempt is visible to the caller (who meters it and writes it to the ledger) and the policy is
ours: the shared backoff (:mod:`orchestration.backoff`, ``Retry-After`` honoured, bounded in
count and in delay) on 429, 408/409, 5xx, timeouts and lost connections. Anything else is
raised at once.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import openai

from ragq import deadlines
from ragq.orchestration.backoff import RetryPolicy, parse_retry_after

T = TypeVar("T")
RETRYABLE_STATUS = frozenset({408, 409, 429})  # and every 5xx


@dataclass(frozen=True)
class FailedAttempt:
    """One request that raised: the error, how long it took, and the pause chosen after it
    (0 when no retry follows)."""

    error: openai.OpenAIError
    latency_ms: float
    backoff_s: float


def make_client(*, api_key: str, base_url: str | None, timeout_s: float) -> openai.OpenAI:
    """An ``openai`` client that never retries on its own (see :func:`send`)."""
    return openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0)


def is_retryable(exc: BaseException) -> bool:
    """True for errors a later identical request may not meet: rate limits, server errors,
    timeouts and connection failures."""
    if isinstance(exc, openai.APIConnectionError):  # timeouts included
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return False


def _server_retry_after_s(exc: BaseException) -> float | None:
    """The pause the server asked for in the failed response's headers, if any."""
    response = getattr(exc, "response", None)
    return parse_retry_after(getattr(response, "headers", None))


def send(request: Callable[[], T], policy: RetryPolicy, *,
         on_failure: Callable[[FailedAttempt], None] | None = None,
         sleep: Callable[[float], None] = time.sleep,
         rand: Callable[[], float] = random.random) -> tuple[T, float]:
    """Run ``request`` until it returns, retrying what :func:`is_retryable` allows; returns its
    value and the latency of the successful attempt in ms.

    ``on_failure`` sees every failed attempt before the pause; the last error is re-raised as the
    ``openai`` exception it was, after ``policy.max_retries`` retries or at once if not retryable.
    """
    retry = 0
    while True:
        started = time.perf_counter()
        try:
            return request(), (time.perf_counter() - started) * 1000
        except openai.OpenAIError as exc:
            latency = (time.perf_counter() - started) * 1000
            final = not is_retryable(exc) or retry >= policy.max_retries
            delay = 0.0 if final else policy.delay_s(retry, _server_retry_after_s(exc), rand)
            # No pause and attempt that would end past the task's bound (a thread pool does
            # not enforce time limits): give up now, as after the last retry.
            left = deadlines.remaining_s()
            final = final or (left is not None and left <= delay + latency / 1000)
            if on_failure is not None:
                on_failure(FailedAttempt(exc, latency, delay))
            if final:
                raise
            sleep(delay)
            retry += 1
