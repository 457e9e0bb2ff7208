"""The client and the retry loop shared by everything that talks to an OpenAI-compatible server.

The ``openai`` client is built with ``max_retries=0``: retries happen in :func:`send`, so every
attempt is visible to the caller (who meters it and writes it to the ledger) and the policy is
ours: exponential backoff with jitter on 429, 408/409, 5xx, timeouts and lost connections,
honouring ``Retry-After``, bounded in count and in delay. Anything else is raised at once.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TypeVar

import openai

T = TypeVar("T")
RETRYABLE_STATUS = frozenset({408, 409, 429})  # and every 5xx


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait: ``max_retries`` retries after the first request, the
    n-th (0-based) after about ``base_delay_s * 2**n`` seconds (half of it fixed, half jitter),
    never more than ``max_delay_s``, which also caps a server's ``Retry-After``."""

    max_retries: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError(f"a retry policy needs non-negative values: {self!r}")

    def delay_s(self, retry: int, retry_after_s: float | None,
                rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.max_delay_s)
        ceiling = min(self.max_delay_s, self.base_delay_s * 2**retry)
        return ceiling / 2 + rand() * ceiling / 2


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


def retry_after_s(exc: BaseException) -> float | None:
    """The server's ``Retry-After`` (seconds or an HTTP date; ``retry-after-ms`` first) in
    seconds, or None when it sent none or an unreadable one."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return float(raw) * scale
        except ValueError:
            try:
                return parsedate_to_datetime(raw).timestamp() - time.time()
            except (TypeError, ValueError):
                return None
    return None


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
            delay = 0.0 if final else policy.delay_s(retry, retry_after_s(exc), rand)
            if on_failure is not None:
                on_failure(FailedAttempt(exc, latency, delay))
            if final:
                raise
            sleep(delay)
            retry += 1
