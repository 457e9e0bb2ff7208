"""`ragq up --flower`: Flower runs against the same broker and lists the workers and tasks."""

from __future__ import annotations

import json
import os
import time
import urllib.request

from ragq.settings import build_settings
from workers import supervisor
from workers.client import call
from workers.processes import free_port
from workers.queues import Queue, task_name


def get_json(url: str) -> object:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


def wait_for(predicate, timeout_s: float = 30.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError("condition not met in time")


def test_flower_lists_the_workers_and_their_tasks(tmp_path, monkeypatch):
    for key in [k for k in os.environ if k.startswith("RAGQ_") and not k.startswith("RAGQ_TEST")]:
        monkeypatch.delenv(key)
    port = free_port("127.0.0.1")
    settings = build_settings(home=tmp_path / "home", flower_port=port)
    monkeypatch.setenv("RAGQ_HOME", str(settings.home))
    monkeypatch.setenv("RAGQ_FLOWER_PORT", str(port))
    supervisor.up(settings, flower=True)
    try:
        base = f"http://127.0.0.1:{port}"
        workers = wait_for(lambda: get_json(f"{base}/api/workers?refresh=1"))
        assert sorted(name.split("-")[0] for name in workers) == ["general", "vector"]
        assert call(settings, task_name(Queue.BOOKKEEPING, "echo"), 41) ["value"] == 41
        tasks = wait_for(lambda: [t for t in get_json(f"{base}/api/tasks").values()
                                  if t["name"] == "ragq.bookkeeping.echo"
                                  and t["state"] == "SUCCESS"])
        assert tasks[0]["args"] == "(41,)"
    finally:
        supervisor.down(settings)
