"""When a started process is ready: the broker answers PING, a worker answers Celery's ping,
the API accepts connections. `ragq up` and the resident supervisor wait on the same checks."""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence

import redis

from ragq.errors import StackError
from ragq.settings import Settings
from ragq.workers.processes import log_tail
from ragq.workers.stack_state import ProcessRecord


def wait_for_redis(url: str, record: ProcessRecord, timeout_s: float) -> None:
    """Return once the server at ``url`` answers PING; raises StackError when ``record``'s
    process exits first or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5)
    while time.monotonic() < deadline:
        if not record.is_running():
            raise StackError(f"valkey-server exited at start:\n{log_tail(record.log)}")
        try:
            if client.ping():
                return
        except redis.RedisError:
            time.sleep(0.1)
    raise StackError(f"valkey-server did not answer within {timeout_s}s:\n{log_tail(record.log)}")


def wait_for_port(host: str, port: int, record: ProcessRecord, timeout_s: float) -> None:
    """Return once ``host:port`` accepts a connection; raises StackError when ``record``'s
    process exits first or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not record.is_running():
            raise StackError(f"{record.name} exited at start:\n{log_tail(record.log)}")
        try:
            socket.create_connection((host, port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise StackError(f"{record.name} did not listen on {host}:{port} within {timeout_s}s")


def wait_for_workers(settings: Settings, records: Sequence[ProcessRecord],
                     prefixes: Sequence[str], timeout_s: float) -> None:
    """Return once a worker named ``prefix@…`` answers a ping for every prefix; raises
    StackError when one of ``records`` exits first or ``timeout_s`` passes."""
    from ragq.workers.client import ping_workers

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for record in records:
            if not record.is_running():
                raise StackError(f"{record.name} exited at start:\n{log_tail(record.log)}")
        answered = ping_workers(settings, timeout_s=1.0)
        if all(any(n.startswith(p + "@") for n in answered) for p in prefixes):
            return
    raise StackError(f"workers {list(prefixes)} did not answer within {timeout_s}s")


def node_prefix(record: ProcessRecord) -> str | None:
    """The node-name prefix of a Celery worker record (``-n general-ab12@%h`` → ``general-ab12``),
    None for a process that is not a worker."""
    argv = record.argv
    if "worker" not in argv or "-n" not in argv:
        return None
    return argv[argv.index("-n") + 1].split("@")[0]
