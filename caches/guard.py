"""Server calls that cannot fail a job (a cache is an optimisation, never a
dependency). Every vendor error becomes the call's fallback value and one warning line.

After the server is found unreachable, calls are skipped for ``retry_after_s``: a job with
twenty retrievals must not pay twenty connect timeouts while the server is down.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from redis import exceptions as rx

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Errors that mean "the server is not there": start the quiet period. Others (a ResponseError
#: such as OOM or WRONGTYPE) concern one call only.
UNREACHABLE: tuple[type[BaseException], ...] = (rx.ConnectionError, rx.TimeoutError, OSError)
#: Everything the redis client raises, plus socket errors it lets through.
SERVER_ERRORS: tuple[type[BaseException], ...] = (rx.RedisError, OSError)


class ServerGuard:
    """Runs cache-server calls, turning any server error into a fallback value."""

    def __init__(self, name: str, *, retry_after_s: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.retry_after_s = retry_after_s
        self._clock = clock
        self._lock = threading.Lock()
        self._quiet_until = 0.0

    @property
    def suspended(self) -> bool:
        """True while calls are skipped after the server was found unreachable."""
        return self._clock() < self._quiet_until

    def call(self, fn: Callable[[], T], fallback: T, *, what: str, key: str) -> T:
        """``fn()``, or ``fallback`` when it raises a server error or the guard is suspended."""
        if self.suspended:
            log.debug("%s cache %s %s skipped: server recently unreachable", self.name, what, key)
            return fallback
        try:
            return fn()
        except SERVER_ERRORS as exc:
            if isinstance(exc, UNREACHABLE):
                with self._lock:
                    self._quiet_until = self._clock() + self.retry_after_s
                log.warning("%s cache %s %s failed, treated as a miss; skipping the cache for "
                            "%.1f s: %s: %s", self.name, what, key, self.retry_after_s,
                            type(exc).__name__, exc)
            else:
                log.warning("%s cache %s %s failed, treated as a miss: %s: %s", self.name, what,
                            key, type(exc).__name__, exc)
            return fallback
