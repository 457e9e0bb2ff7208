"""Turns at the GIL for the flow's steps in one worker process.

An I/O-pool process runs hundreds of threads so that hundreds of model calls can wait at once.
Between two calls a step is Python: deciding, assembling a context, writing the ledger. When
every thread that had an answer back competed for the GIL at once, a step that held SQLite's
write turn was switched out every 5 ms behind dozens of others, and every writer queued behind
it (64 jobs at 200 ms: 10% more wall time without turns). With turns, at most ``size`` steps of
the process run their Python at once; a step gives its turn up while it waits on the model
server and takes one again when the answer is back.

An interactive job's step takes the next free turn ahead of every bulk step waiting for one
(docs/fair-share.md#priority): its message went ahead of the backlog's on the broker, and it
should not then wait behind hundreds of the backlog's threads for the GIL.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _Turns:
    """``size`` turns; a waiter for one is served before every waiter that is not ``first``.
    Otherwise a semaphore's: a step that finds a turn free takes it at once (a thread back
    from the model need not wait to be scheduled behind one that was woken: handing each turn
    over in order cost a tenth of the jobs/s with 256 jobs in flight)."""

    def __init__(self, size: int):
        self._free = size
        self._turn = threading.Condition(threading.Lock())
        self._first = 0  # ``first`` waiters

    def acquire(self, first: bool) -> None:
        with self._turn:
            if first:
                self._first += 1
                try:
                    while not self._free:
                        self._turn.wait()
                finally:
                    self._first -= 1
            else:
                while not self._free or self._first:
                    self._turn.wait()
            self._free -= 1

    def release(self) -> None:
        with self._turn:
            self._free += 1
            # A woken waiter that is not first would only wait again while a first one waits:
            # wake them all then (rare: interactive steps are few), else one.
            if self._first:
                self._turn.notify_all()
            else:
                self._turn.notify()


class StepTurns:
    """At most ``size`` steps of this process hold a turn; ``None``: no limit (one process
    running a flow on its own, as tests and benches do)."""

    def __init__(self, size: int | None):
        self._turns = _Turns(size) if size is not None else None
        self._held = threading.local()

    def _holds(self) -> bool:
        return bool(getattr(self._held, "turn", False))

    @contextmanager
    def step(self, *, first: bool = False) -> Iterator[None]:
        """Run a step on a turn (a step run in place inside another keeps the outer's);
        ``first``: an interactive job's step, served ahead of the others waiting."""
        if self._turns is None or self._holds():
            yield
            return
        self._turns.acquire(first)
        self._held.turn, self._held.first = True, first
        try:
            yield
        finally:
            self._held.turn = False
            self._turns.release()

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """Wait (on the model server) without a turn, and take one again after (as the step
        took its first: ahead of the others for an interactive job's)."""
        if self._turns is None or not self._holds():
            yield
            return
        self._held.turn = False
        self._turns.release()
        try:
            yield
        finally:
            self._turns.acquire(bool(getattr(self._held, "first", False)))
            self._held.turn = True
