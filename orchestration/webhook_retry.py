"""When to try a webhook delivery again: the decision after an answer and the delay before the
next attempt (the shared policy of :mod:`orchestration.backoff`, counted in attempts)."""

from __future__ import annotations

import random
from collections.abc import Callable
from enum import StrEnum

from ragq.orchestration.backoff import backoff_delay_s

GONE = 410


class NextStep(StrEnum):
    """What to do after an attempt."""

    DELIVERED = "delivered"
    DISABLE = "disable"
    RETRY = "retry"
    GIVE_UP = "give_up"


def next_step(status_code: int | None, *, attempt: int, max_attempts: int,
              retryable: bool = True) -> NextStep:
    """After attempt ``attempt`` (1-based) got ``status_code`` (None: no HTTP answer): 2xx is
    delivered, 410 disables the endpoint, anything else retries until ``max_attempts``."""
    if status_code is not None and 200 <= status_code < 300:
        return NextStep.DELIVERED
    if status_code == GONE:
        return NextStep.DISABLE
    if not retryable or attempt >= max_attempts:
        return NextStep.GIVE_UP
    return NextStep.RETRY


def retry_delay_s(attempt: int, *, base_s: float, max_s: float,
                  retry_after_s: float | None = None,
                  jitter: Callable[[], float] = random.random) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1-based): the shared backoff
    (:func:`~orchestration.backoff.backoff_delay_s`; the first retry waits about ``base_s``),
    a receiver's ``Retry-After`` honoured as a floor, never more than ``max_s``."""
    return backoff_delay_s(attempt - 1, base_s=base_s, max_s=max_s,
                           retry_after_s=retry_after_s, rand=jitter)
