"""The cooperative task bound (``ragq.deadlines``): what a thread-pool worker enforces in place
of Celery's time limits, which that pool ignores."""

from __future__ import annotations

import threading

import pytest

from ragq import deadlines
from ragq.errors import TaskDeadlineError
from ragq.settings import build_settings


def test_outside_a_task_there_is_no_bound() -> None:
    assert deadlines.remaining_s() is None
    deadlines.check("anything", needs_s=1e9)  # no error


def test_work_that_would_end_past_the_bound_is_stopped_naming_it() -> None:
    deadlines.start(2.0)
    try:
        deadlines.check("a small batch", needs_s=0.1)
        with pytest.raises(TaskDeadlineError, match="ingest batch 3") as caught:
            deadlines.check("ingest batch 3", needs_s=5.0)
    finally:
        deadlines.clear()
    assert 0 < caught.value.remaining_s <= 2.0


def test_each_pool_thread_sees_its_own_tasks_bound() -> None:
    seen: list[float | None] = []
    deadlines.start(100.0)
    try:
        thread = threading.Thread(target=lambda: seen.append(deadlines.remaining_s()))
        thread.start()
        thread.join()
    finally:
        deadlines.clear()
    assert seen == [None]


@pytest.mark.parametrize("name", ["openai_timeout_s", "webhook_timeout_s"])
def test_a_request_longer_than_the_task_bound_is_refused_at_settings(name: str) -> None:
    with pytest.raises(ValueError, match=f"{name} .* task_time_limit_s"):
        build_settings(**{name: 60, "task_time_limit_s": 40, "visibility_timeout_s": 100})
