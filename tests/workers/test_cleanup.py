"""A stack cleans up after itself: a test run killed before its `down` (SIGKILL, no finally
block runs) leaves no worker behind, because the stack records its owner and the resident
supervisor stops every process once the owner is gone. A recorded pid is trusted only with
its start time and command line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from ragq.settings import build_settings
from ragq.workers.processes import stop
from ragq.workers.stack_state import ProcessRecord, load_state
from tests.conftest import inherited_settings

TEST_RUN = textwrap.dedent("""
    import os, sys, time
    from ragq.settings import build_settings
    from ragq.workers import supervisor
    supervisor.up(build_settings(), owner_pid=os.getpid())
    print("up", flush=True)
    time.sleep(3600)
""")


def test_a_record_names_a_process_only_with_its_start_time_and_command_line():
    me = psutil.Process()
    record = ProcessRecord(name="me", pid=me.pid, create_time=me.create_time(),
                           argv=me.cmdline(), log="")
    assert record.is_running()
    assert not record.model_copy(update={"argv": ["some", "other", "command"]}).is_running()
    assert not record.model_copy(update={"create_time": me.create_time() - 60}).is_running()


@pytest.mark.stack
def test_a_killed_test_run_leaves_no_worker_behind(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if k not in inherited_settings()}
    env |= {"RAGQ_HOME": str(tmp_path / "home"), "RAGQ_GENERAL_WORKER_PROCESSES": "1",
            "RAGQ_GENERAL_WORKER_THREADS": "2", "RAGQ_VECTOR_WORKER_THREADS": "1"}
    settings = build_settings(home=tmp_path / "home")
    run = subprocess.Popen([sys.executable, "-c", TEST_RUN], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    records: list[ProcessRecord] = []
    try:
        assert run.stdout is not None and run.stdout.readline().strip() == "up"
        state = load_state(settings)
        assert state is not None and state.owner is not None and state.owner.pid == run.pid
        records = state.processes
        assert {"valkey", "vector", "general", "supervisor"} <= {r.name for r in records}
        assert all(r.is_running() for r in records)

        run.send_signal(signal.SIGKILL)
        run.wait()

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and any(r.is_running() for r in records):
            time.sleep(0.5)
        assert [r.name for r in records if r.is_running()] == []
        assert load_state(settings) is None
    finally:
        run.kill()
        run.wait()
        for record in records:  # whatever a failure left: never leak workers into other tests
            stop(record, timeout_s=5.0)
