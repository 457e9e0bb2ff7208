"""Start and stop detached processes that outlive the command that started them."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import psutil

from ragq.workers.stack_state import ProcessRecord


def free_port(host: str) -> int:
    """A TCP port nobody listens on right now (the caller binds it soon after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def spawn(name: str, argv: Sequence[str], env: Mapping[str, str], log: Path,
          *, extra_env: Mapping[str, str] | None = None) -> ProcessRecord:
    """Start ``argv`` in its own session (so Ctrl-C on the CLI does not reach it), output to
    ``log``; returns the record `down` needs to find exactly this process again, and the
    supervisor needs to start it again (``extra_env`` is kept in it: no secrets there)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    extra = dict(extra_env or {})
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            env={**env, **extra}, start_new_session=True, close_fds=True,
        )
    return ProcessRecord(
        name=name, pid=proc.pid, create_time=psutil.Process(proc.pid).create_time(),
        argv=list(argv), log=str(log), env=extra,
    )


def respawn(record: ProcessRecord, env: Mapping[str, str]) -> ProcessRecord:
    """Start ``record``'s process again, same command, log and extra environment; the new
    record carries the restart count on."""
    fresh = spawn(record.name, record.argv, env, Path(record.log), extra_env=record.env)
    return fresh.model_copy(update={"restarts": record.restarts + 1})


def _alive(record: ProcessRecord) -> bool:
    return record.is_running()


def stop(record: ProcessRecord, timeout_s: float) -> bool:
    """SIGTERM the process group, then SIGKILL after ``timeout_s``; True when it was running.

    The whole group is signalled because a Celery worker's pool children must go with it.
    """
    if not _alive(record):
        return False
    try:
        os.killpg(record.pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _alive(record):
            break
        time.sleep(0.1)
    _kill_group(record.pid)
    return True


def _kill_group(pgid: int) -> None:
    """SIGKILL whatever is left of the group, children included."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def log_tail(path: str, lines: int = 20) -> str:
    """The last lines of a log, to put in an error message."""
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
