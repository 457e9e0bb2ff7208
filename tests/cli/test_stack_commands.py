"""`ragq up` / `status` / `down` as a user runs them: separate processes, one data directory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from ragq.settings import build_settings
from ragq.workers.supervisor import worker_specs


def ragq(home, *args, check=True):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGQ_")}
    env["RAGQ_HOME"] = str(home)
    proc = subprocess.run([sys.executable, "-m", "ragq.cli", *args], env=env, capture_output=True,
                          text=True, timeout=180)
    if check and proc.returncode != 0:
        raise AssertionError(f"ragq {' '.join(args)} failed: {proc.stderr}")
    return proc


def processes_of(home):
    """Processes whose command line or environment points at this home."""
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        try:
            in_argv = any(str(home) in part for part in proc.info["cmdline"] or [])
            if in_argv or proc.environ().get("RAGQ_HOME") == str(home):
                found.append(proc.pid)
        except psutil.Error:
            continue
    return found


def _restarted(home, name, timeout_s=120.0):
    """`ragq status --json` once the supervisor has replaced ``name``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = json.loads(ragq(home, "status", "--json").stdout)
        (record,) = [p for p in status["processes"] if p["name"] == name]
        if record["restarts"] and record["running"] and record["last_restart_at"]:
            return status
        time.sleep(0.5)
    raise AssertionError(f"{name} was not restarted within {timeout_s}s")


@pytest.mark.stack
def test_up_status_down_leaves_nothing_running(tmp_path):
    home = tmp_path / "home"
    up = json.loads(ragq(home, "up", "--json").stdout)
    pids = [p["pid"] for p in up["processes"]]
    workers = [spec.name for spec in worker_specs(build_settings(home=home))]
    try:
        assert [p["name"] for p in up["processes"]] == ["valkey", *workers, "supervisor"]
        assert workers[:2] == ["vector", "general"]
        status = json.loads(ragq(home, "status", "--json").stdout)
        assert all(p["running"] and p["restarts"] == 0 for p in status["processes"])
        assert len(status["workers"]) == len(workers)
        assert status["broker_url"] == up["broker_url"]
        again = json.loads(ragq(home, "up", "--json").stdout)  # idempotent
        assert [p["pid"] for p in again["processes"]] == pids
        # The supervisor replaces a dead worker on its own; status counts it.
        os.killpg(pids[2], signal.SIGKILL)
        healed = _restarted(home, "general")
        assert [p["restarts"] for p in healed["processes"]] == [
            int(i == 2) for i in range(len(pids))]
        assert [p["pid"] for p in healed["processes"]][:2] == pids[:2]  # the others untouched
        pids.append(healed["processes"][2]["pid"])
        assert healed["broker_url"] == up["broker_url"]
    finally:
        down = json.loads(ragq(home, "down", "--json").stdout)
    assert down["stopped"][0] == "supervisor"  # first, so it restarts nothing that stops
    assert sorted(down["stopped"]) == sorted(["supervisor", "valkey", *workers])
    assert not [pid for pid in pids if psutil.pid_exists(pid)
                and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert processes_of(home) == []
    status = json.loads(ragq(home, "status", "--json").stdout)
    assert status["processes"] == [] and status["workers"] == []


def test_commands_explain_that_the_stack_is_down(tmp_path):
    proc = ragq(tmp_path / "empty", "search", "anything", check=False)
    assert proc.returncode == 1
    assert "ragq up" in proc.stderr
