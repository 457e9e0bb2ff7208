"""When to try a webhook delivery again: the decision after an answer and the delay before the
next attempt (exponential backoff with jitter, ``Retry-After`` honoured, bounded)."""

from __future__ import annotations

import random
from collections.abc import Callable
from enum import StrEnum

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
    """Seconds to wait after failed attempt ``attempt`` (1-based).

    ``base_s * 2**(attempt-1)`` capped at ``max_s``, with "equal jitter" (between half and all of
    it) so receivers recovering from an outage are not hit by every sender at once. A receiver's
    ``Retry-After`` wins when it asks for longer, still capped at ``max_s``.
    """
    ceiling = min(max_s, base_s * 2 ** max(attempt - 1, 0))
    delay = ceiling / 2 + jitter() * ceiling / 2
    if retry_after_s is not None:
        delay = max(delay, retry_after_s)
    return min(delay, max_s)
