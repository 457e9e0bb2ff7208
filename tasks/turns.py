"""Turns at the GIL for the flow's steps in one worker process.

An I/O-pool process runs hundreds of threads so that hundreds of model calls can wait at once.
Between two calls a step is Python: deciding, assembling a context, writing the ledger. When
every thread that had an answer back competed for the GIL at once, a step that held SQLite's
write turn was switched out every 5 ms behind dozens of others, and every writer queued behind
it (64 jobs at 200 ms: 10% more wall time without turns). With turns, at most ``size`` steps of
the process run their Python at once; a step gives its turn up while it waits on the model
server and takes one again when the answer is back.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class StepTurns:
    """At most ``size`` steps of this process hold a turn; ``None``: no limit (one process
    running a flow on its own, as tests and benches do)."""

    def __init__(self, size: int | None):
        self._turns = threading.BoundedSemaphore(size) if size is not None else None
        self._held = threading.local()

    def _holds(self) -> bool:
        return bool(getattr(self._held, "turn", False))

    @contextmanager
    def step(self) -> Iterator[None]:
        """Run a step on a turn (a step run in place inside another keeps the outer's)."""
        if self._turns is None or self._holds():
            yield
            return
        self._turns.acquire()
        self._held.turn = True
        try:
            yield
        finally:
            self._held.turn = False
            self._turns.release()

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """Wait (on the model server) without a turn, and take one again after."""
        if self._turns is None or not self._holds():
            yield
            return
        self._held.turn = False
        self._turns.release()
        try:
            yield
        finally:
            self._turns.acquire()
            self._held.turn = True
