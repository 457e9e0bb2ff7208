"""Serving the API with uvicorn: in the foreground (`ragq serve`) or in a thread (tests, bench)."""

from __future__ import annotations

import threading
import time
from typing import Self

import uvicorn

from ragq.api.app import create_api
from ragq.errors import StackError
from ragq.settings import Settings


def serve(settings: Settings, *, host: str, port: int) -> None:
    """Serve until interrupted."""
    uvicorn.run(create_api(settings), host=host, port=port, log_level="warning")


class ApiServer:
    """The API on ``host:port`` (0 picks a free port) in a background thread."""

    def __init__(self, settings: Settings, *, host: str = "127.0.0.1", port: int = 0):
        config = uvicorn.Config(create_api(settings), host=host, port=port, log_level="warning",
                                lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="ragq-api", daemon=True)

    @property
    def base_url(self) -> str:
        sock = self._server.servers[0].sockets[0]
        host, port = sock.getsockname()[:2]
        return f"http://{host}:{port}"

    def start(self, timeout_s: float = 10.0) -> Self:
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise StackError("the API server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
