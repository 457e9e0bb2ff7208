"""What `ragq up` started, recorded under $RAGQ_HOME/run so `down` and `status` find it again.

Processes are identified by pid, start time *and* command line, so a pid reused by an unrelated
process is never signalled. A stack started for a process that may die without stopping it (a
test run) records that *owner*: the resident supervisor stops the whole stack once its owner is
gone, so a killed test run leaves no worker taking later runs' tasks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import psutil
from pydantic import BaseModel, Field

from ragq.settings import Settings

STATE_FILE = "stack.json"


class ProcessRecord(BaseModel):
    """One process started by `ragq up`, and what the resident supervisor did to keep it up."""

    name: str
    pid: int
    create_time: float
    argv: list[str]
    log: str
    env: dict[str, str] = Field(default_factory=dict)
    """Variables this process gets beyond the stack's common environment (no secrets)."""
    restarts: int = 0
    last_restart_at: float | None = None
    """When the latest replacement was ready (epoch seconds)."""
    last_outage_s: float | None = None
    """How long the latest outage lasted: from the last moment the process (or the oldest step
    it held) was known good to the moment its replacement was ready."""

    def is_running(self) -> bool:
        """True when this exact process (same pid, start time and command line) is alive."""
        try:
            proc = psutil.Process(self.pid)
            return (
                abs(proc.create_time() - self.create_time) < 1.0
                and proc.status() != psutil.STATUS_ZOMBIE
                and _same_command(proc, self.argv)
            )
        except psutil.Error:
            return False


def _same_command(proc: psutil.Process, argv: list[str]) -> bool:
    """The process runs ``argv``: the same command line, or the same executable when the
    process rewrote its title (valkey-server does; a Celery worker does with setproctitle).
    An empty ``argv`` matches."""
    if not argv:
        return True
    try:
        return proc.cmdline() == argv or proc.exe() == os.path.realpath(argv[0])
    except psutil.AccessDenied:  # another user's process: start time alone decides
        return True


def owner_record(pid: int) -> ProcessRecord:
    """The record of the process ``pid`` as the owner of a stack (its start time identifies
    it). Raises psutil.NoSuchProcess when it is not running."""
    proc = psutil.Process(pid)
    return ProcessRecord(name="owner", pid=pid, create_time=proc.create_time(),
                         argv=proc.cmdline(), log="")


class StackState(BaseModel):
    """The running stack: its broker URL (when embedded) and its processes, in start order."""

    broker_url: str | None = None
    processes: list[ProcessRecord] = Field(default_factory=list)
    owner: ProcessRecord | None = None
    """The process the stack lives for, when it was started for one (a test run): once it is
    gone the resident supervisor stops the stack. None: it runs until `ragq down`."""

    def running(self) -> list[ProcessRecord]:
        return [p for p in self.processes if p.is_running()]


def state_path(settings: Settings) -> Path:
    return settings.run_dir / STATE_FILE


def load_state(settings: Settings) -> StackState | None:
    """The recorded stack, or None when `up` never ran (or `down` cleared it)."""
    path = state_path(settings)
    if not path.exists():
        return None
    return StackState.model_validate_json(path.read_text())


def save_state(settings: Settings, state: StackState) -> None:
    """Write atomically, so a crash mid-write never leaves a half file that hides live pids."""
    path = state_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state.model_dump(), indent=2))
    os.replace(tmp, path)


def clear_state(settings: Settings) -> None:
    state_path(settings).unlink(missing_ok=True)


def effective_broker_url(settings: Settings) -> str | None:
    """The broker to talk to: the configured one, else the embedded server `up` recorded."""
    if settings.broker_url:
        return settings.broker_url
    state = load_state(settings)
    return state.broker_url if state else None
