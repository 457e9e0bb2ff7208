"""How the workers are laid out and what each task costs the broker, from settings alone."""

from __future__ import annotations

import os

from ragq.settings import build_settings
from ragq.workers.celeryconfig import celery_config
from ragq.workers.queues import GENERAL_QUEUES, VECTOR_QUEUES
from ragq.workers.supervisor import worker_argv, worker_specs


def test_model_calls_get_a_wide_pool_and_cpu_work_one_sized_to_the_cores(tmp_path):
    for extra in ({}, {"qdrant_url": "http://127.0.0.1:6333", "broker_url": "redis://x"}):
        settings = build_settings(home=tmp_path, **extra)
        vector, general, *more = worker_specs(settings)
        assert (vector.queues, vector.threads) == (VECTOR_QUEUES, max(2, os.cpu_count() or 2))
        assert (general.queues, general.threads) == (GENERAL_QUEUES, 256)
        assert [s.name for s in more] == [f"general{n}" for n in range(2, len(more) + 2)]
        assert len(more) + 1 == max(1, min(4, os.cpu_count() or 1))
        assert all((s.queues, s.threads) == (GENERAL_QUEUES, 256) for s in more)
        argv = worker_argv(general, "general-x@%h")
        assert argv[argv.index("-c") + 1] == "256" and "-E" not in argv


def test_task_events_and_started_states_cost_nothing_unless_asked_for(tmp_path):
    quiet = celery_config(build_settings(home=tmp_path), "redis://127.0.0.1:1/0")
    assert not quiet["worker_send_task_events"] and not quiet["task_send_sent_event"]
    assert quiet["task_track_started"] is False
    watched = celery_config(build_settings(home=tmp_path, task_events=True), "redis://x")
    assert watched["worker_send_task_events"] and watched["task_send_sent_event"]
