"""`ragq up --flower --api`: Flower runs against the same broker and lists the workers and the
tasks of a job by its id; the API runs as one more owned process that `ragq down` stops."""

from __future__ import annotations

import base64
import json
import os
import stat
import time
import urllib.request

import httpx
import pytest

from ragq import submission
from ragq.schemas.tasks import Task
from ragq.settings import build_settings
from ragq.workers import supervisor
from ragq.workers.client import call
from ragq.workers.flower import FLOWER_USER, flower_auth_file, flower_password
from ragq.workers.processes import free_port
from ragq.workers.stack_state import load_state
from ragq.workers.supervisor import worker_specs
from tests.conftest import inherited_settings

AUTH: dict[str, str] = {}


def get_json(url: str) -> object:
    request = urllib.request.Request(url, headers=AUTH)
    with urllib.request.urlopen(request, timeout=5) as response:
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


@pytest.fixture(scope="module")
def full_stack(tmp_path_factory):
    saved = dict(os.environ)
    for key in inherited_settings():
        del os.environ[key]
    flower_port, api_port = free_port("127.0.0.1"), free_port("127.0.0.1")
    settings = build_settings(home=tmp_path_factory.mktemp("flower") / "home",
                              flower_port=flower_port, api_port=api_port)
    os.environ.update({"RAGQ_HOME": str(settings.home), "RAGQ_FLOWER_PORT": str(flower_port),
                       "RAGQ_API_PORT": str(api_port)})
    supervisor.up(settings, flower=True, api=True, owner_pid=os.getpid())
    token = base64.b64encode(f"{FLOWER_USER}:{flower_password(settings)}".encode()).decode()
    AUTH["Authorization"] = f"Basic {token}"
    try:
        yield settings
    finally:
        supervisor.down(settings)
        os.environ.clear()
        os.environ.update(saved)


def test_flower_needs_the_generated_password_kept_owner_only(full_stack):
    settings = full_stack
    base = f"http://127.0.0.1:{settings.flower_port}"
    wait_for(lambda: get_json(f"{base}/api/workers?refresh=1"))
    for path in ("/api/workers", "/api/tasks", "/"):
        assert httpx.get(base + path, timeout=5).status_code == 401
        wrong = httpx.get(base + path, timeout=5, auth=(FLOWER_USER, "wrong"))
        assert wrong.status_code == 401
    assert stat.S_IMODE(flower_auth_file(settings).stat().st_mode) == 0o600


def test_flower_lists_the_workers_and_their_tasks(full_stack):
    settings = full_stack
    base = f"http://127.0.0.1:{settings.flower_port}"
    workers = wait_for(lambda: get_json(f"{base}/api/workers?refresh=1"))
    assert sorted(name.split("-")[0] for name in workers) == sorted(
        spec.name for spec in worker_specs(settings))
    assert call(settings, Task.ECHO, 41) ["value"] == 41
    tasks = wait_for(lambda: [t for t in get_json(f"{base}/api/tasks").values()
                              if t["name"] == "ragq.bookkeeping.echo"
                              and t["state"] == "SUCCESS"])
    assert tasks[0]["args"] == "(41,)"


def test_the_workers_of_a_stack_with_flower_send_events_from_the_start_and_keep_it(full_stack):
    """Events cost every task four messages, so they are off unless Flower is in the stack;
    with it, a restarted worker must come back with them too (its record keeps the setting)."""
    state = load_state(full_stack)
    workers = {p.name: p for p in state.processes if p.name in
               {spec.name for spec in worker_specs(full_stack)}}
    assert workers and all(p.env.get("RAGQ_TASK_EVENTS") == "true" for p in workers.values())


def test_flower_shows_the_tasks_of_a_job_by_its_id(full_stack):
    settings = full_stack
    base = f"http://127.0.0.1:{settings.flower_port}"
    # nothing ingested and no collection named: the job searches the default collection
    job_id = submission.ask(settings, {"question": "Who wrote the manual?", "acl": ["public"]},
                            collection=None)
    submission.wait(settings, job_id, timeout_s=60)

    def job_tasks() -> list[dict]:
        return [t for t in get_json(f"{base}/api/tasks").values() if job_id in (t["args"] or "")]

    tasks = wait_for(lambda: [t for t in job_tasks() if t["name"] == "ragq.models.route"])
    assert tasks[0]["args"] == f"('{job_id}',)"
    assert all(len(t["args"]) < 300 for t in job_tasks())  # ids and small values, no blobs


def test_the_api_runs_as_an_owned_process_of_the_stack(full_stack):
    settings = full_stack
    state = load_state(settings)
    (api,) = [p for p in state.processes if p.name == "api"]
    assert api.is_running()
    health = httpx.get(f"http://127.0.0.1:{settings.api_port}/healthz", timeout=10)
    assert health.status_code == 200, health.text
    assert httpx.get(f"http://127.0.0.1:{settings.api_port}/v1/batches").status_code == 401
