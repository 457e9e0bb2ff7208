"""How long to wait before trying a remote call again: the one policy shared by model calls,
embeddings and webhook deliveries, and the one reader of a server's ``Retry-After``.

Exponential backoff with "equal jitter": retry ``n`` (0-based) waits between half and all of
``base_s * 2**n``, capped at ``max_s``. The fixed half keeps a floor under every pause; the
random half spreads clients that failed together (an outage, a rate limit) so they do not all
come back at the same instant.

A server's ``Retry-After`` is a floor, never a shortcut: the pause is the longer of the computed
backoff and what the server asked for, then capped at ``max_s``. A server that says "retry in 0 s"
while we are already backing off does not make us hammer it, and one that asks for an hour does
not hold a worker for an hour (the caller's retry count then decides whether it gives up).
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC

#: Doubling stops here: 2**64 times any sane base is past every cap, and a larger power of two
#: would overflow a float for a caller that counts retries without bound.
_MAX_DOUBLINGS = 64
_DELTA = re.compile(r"\d+(?:\.\d+)?")


def backoff_delay_s(retry: int, *, base_s: float, max_s: float,
                    retry_after_s: float | None = None,
                    rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait before retry ``retry`` (0-based): ``base_s * 2**retry`` capped at
    ``max_s``, half of it fixed and half drawn from ``rand()`` (0..1); at least ``retry_after_s``
    when the server sent one; never more than ``max_s``."""
    ceiling = min(max_s, base_s * 2.0 ** min(max(retry, 0), _MAX_DOUBLINGS))
    delay = ceiling / 2 + rand() * ceiling / 2
    if retry_after_s is not None:
        delay = max(delay, retry_after_s)
    return min(delay, max_s)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry: ``max_retries`` retries after the first request, each
    pause as :func:`backoff_delay_s` says with ``base_delay_s`` and ``max_delay_s`` (which also
    caps a server's ``Retry-After``)."""

    max_retries: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError(f"a retry policy needs non-negative values: {self!r}")

    def delay_s(self, retry: int, retry_after_s: float | None = None,
                rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        return backoff_delay_s(retry, base_s=self.base_delay_s, max_s=self.max_delay_s,
                               retry_after_s=retry_after_s, rand=rand)


def _delta_s(value: str | None) -> float | None:
    """A non-negative decimal number, or None."""
    if value is None or not _DELTA.fullmatch(value.strip()):
        return None
    return float(value)


def _date_s(value: str | None, now: float | None) -> float | None:
    """Seconds from ``now`` until the HTTP date ``value`` (0 when past), or None."""
    if not value:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000" means UTC with no source zone; never local time
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def parse_retry_after(headers: Mapping[str, str] | None, *,
                      now: float | None = None) -> float | None:
    """A server's ``Retry-After`` in seconds from ``now`` (default: the clock), or None when it
    sent none or only unreadable ones.

    ``retry-after-ms`` (OpenAI's servers send it) is read first, then ``retry-after`` as
    delta-seconds or an HTTP date (a past date is 0). Header names are matched in any case;
    negative, non-numeric and malformed values count as absent.
    """
    if not headers:
        return None
    lowered = {name.lower(): value for name, value in headers.items()}
    millis = _delta_s(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = lowered.get("retry-after")
    seconds = _delta_s(value)
    return seconds if seconds is not None else _date_s(value, now)
