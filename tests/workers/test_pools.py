"""How the workers are laid out and what each task costs the broker, from settings alone."""

from __future__ import annotations

import os

from ragq.settings import build_settings
from ragq.workers.celeryconfig import celery_config
from ragq.workers.queues import GENERAL_QUEUES, VECTOR_QUEUES
from ragq.workers.supervisor import worker_argv, worker_specs


def test_cpu_work_gets_a_pool_sized_to_the_cores_in_both_topologies(tmp_path):
    for extra in ({}, {"qdrant_url": "http://127.0.0.1:6333", "broker_url": "redis://x"}):
        vector, *general = worker_specs(build_settings(home=tmp_path, **extra))
        assert (vector.queues, vector.threads) == (VECTOR_QUEUES, max(2, os.cpu_count() or 2))
        # model calls: a wide I/O pool, one process per core (at most 8), 256 threads each
        processes = min(8, os.cpu_count() or 1)
        assert [(s.name, s.queues, s.threads) for s in general] == [
            ("general" if n == 1 else f"general{n}", GENERAL_QUEUES, 256)
            for n in range(1, processes + 1)]


def test_the_io_pool_has_one_process_per_core_up_to_eight(tmp_path, monkeypatch):
    for cores, processes in ((1, 1), (2, 2), (64, 8)):
        monkeypatch.setattr(os, "cpu_count", lambda cores=cores: cores)
        assert build_settings(home=tmp_path).general_worker_processes == processes


def test_the_io_pool_widens_to_processes_of_many_threads(tmp_path):
    settings = build_settings(home=tmp_path, general_worker_processes=3,
                              general_worker_threads=256)
    _, *general = worker_specs(settings)
    assert [(s.name, s.queues, s.threads) for s in general] == [
        (name, GENERAL_QUEUES, 256) for name in ("general", "general2", "general3")]
    argv = worker_argv(general[1], "general2-x@%h")
    assert argv[argv.index("-c") + 1] == "256" and argv[argv.index("-n") + 1] == "general2-x@%h"


def test_no_task_writes_a_started_state_nobody_reads(tmp_path):
    assert celery_config(build_settings(home=tmp_path), "redis://x")["task_track_started"] is False


def test_the_window_of_open_jobs_follows_the_io_pool_up_to_a_cap(tmp_path):
    def window(**given: object) -> int | None:
        return build_settings(home=tmp_path, **given).open_jobs_window

    model = {"provider": "openai", "openai_api_key": "sk-test"}
    assert window(**model) == 256  # the default pool: capped
    assert window(general_worker_processes=1, general_worker_threads=4, **model) == 16  # 4/thread
    assert window(general_worker_processes=2, general_worker_threads=8, **model) == 64
    assert window(general_worker_processes=2, general_worker_threads=256, **model) == 256
    # offline, the model's answers are CPU work: 16 open jobs per I/O process
    assert window(general_worker_processes=2, general_worker_threads=256) == 32
    assert window(general_worker_processes=1, general_worker_threads=4) == 16
    assert window(max_open_jobs=1000, general_worker_threads=2) == 1000  # given: as given
    assert window(max_open_jobs=0) is None  # no limit


def test_task_events_are_sent_only_when_asked_for(tmp_path):
    quiet = celery_config(build_settings(home=tmp_path), "redis://x")
    watched = celery_config(build_settings(home=tmp_path, task_events=True), "redis://x")
    assert (quiet["worker_send_task_events"], quiet["task_send_sent_event"]) == (False, False)
    assert (watched["worker_send_task_events"], watched["task_send_sent_event"]) == (True, True)
