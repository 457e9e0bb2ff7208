"""`ragq up` / `status` / `down` as a user runs them: separate processes, one data directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import psutil
import pytest


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


@pytest.mark.stack
def test_up_status_down_leaves_nothing_running(tmp_path):
    home = tmp_path / "home"
    up = json.loads(ragq(home, "up", "--json").stdout)
    pids = [p["pid"] for p in up["processes"]]
    try:
        assert [p["name"] for p in up["processes"]] == ["valkey", "vector", "general"]
        status = json.loads(ragq(home, "status", "--json").stdout)
        assert all(p["running"] for p in status["processes"])
        assert len(status["workers"]) == 2
        assert status["broker_url"] == up["broker_url"]
        again = json.loads(ragq(home, "up", "--json").stdout)  # idempotent
        assert [p["pid"] for p in again["processes"]] == pids
    finally:
        down = json.loads(ragq(home, "down", "--json").stdout)
    assert sorted(down["stopped"]) == ["general", "valkey", "vector"]
    assert not [pid for pid in pids if psutil.pid_exists(pid)
                and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert processes_of(home) == []
    status = json.loads(ragq(home, "status", "--json").stdout)
    assert status["processes"] == [] and status["workers"] == []


def test_commands_explain_that_the_stack_is_down(tmp_path):
    proc = ragq(tmp_path / "empty", "search", "anything", check=False)
    assert proc.returncode == 1
    assert "ragq up" in proc.stderr
