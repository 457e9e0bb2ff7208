"""The bound of the task running in this thread.

Celery's thread pool ignores ``task_time_limit``: nothing stops a thread. So the bound is kept
cooperatively. A worker starts a deadline when a task starts and clears it when the task ends
(``task_prerun``/``task_postrun`` in :mod:`ragq.workers.app`); work that can run long asks how
much time is left — the OpenAI transport makes no attempt or pause that would end past it, ingest
stops between embedding batches — so every task ends by its bound, inside the broker's
visibility timeout, and is never delivered twice while its first delivery runs. A context
variable, so each pool thread sees its own task's deadline; outside a task there is none.
"""

from __future__ import annotations

import time
from contextvars import ContextVar

from ragq.errors import TaskDeadlineError

_deadline: ContextVar[float | None] = ContextVar("ragq_task_deadline", default=None)


def start(bound_s: float | None) -> None:
    """Start this thread's task bound: ``bound_s`` seconds from now (None: unbounded)."""
    _deadline.set(None if bound_s is None else time.monotonic() + bound_s)


def clear() -> None:
    """End this thread's task bound (the task returned)."""
    _deadline.set(None)


def remaining_s() -> float | None:
    """Seconds left before this thread's task bound (never negative); None outside a task."""
    deadline = _deadline.get()
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def check(what: str, *, needs_s: float = 0.0) -> None:
    """Raise TaskDeadlineError when ``what`` (taking about ``needs_s``) would end past the
    bound; a no-op outside a task."""
    left = remaining_s()
    if left is not None and left <= needs_s:
        raise TaskDeadlineError(what, remaining_s=left)
