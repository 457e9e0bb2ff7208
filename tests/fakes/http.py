"""A real HTTP server on 127.0.0.1 for tests: a route table, a request log and injected faults.

Clients under test speak real HTTP to it (sockets, headers, JSON bodies, status codes), so the
adapters are tested with their real client libraries, not with mocks of them. Specific fakes
(:mod:`tests.fakes.openai_server`) add routes; faults answer before any route does.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Request:
    """One request as the server received it; header names are lower-case."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")


@dataclass
class Reply:
    """What to answer: a status, a body (JSON-encoded unless bytes) and extra headers."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Fault:
    """A reply forced on requests to ``path`` (any path if None), ``times`` times (None: always)."""

    reply: Reply
    path: str | None = None
    times: int | None = 1


Handler = Callable[[Request], Reply]


class LoopbackServer:
    """A threaded HTTP server on a free loopback port, started and stopped as a context manager."""

    def __init__(self, routes: Mapping[tuple[str, str], Handler] | None = None):
        self.routes: dict[tuple[str, str], Handler] = dict(routes or {})
        self.requests: list[Request] = []
        self.faults: list[Fault] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def route(self, method: str, path: str, handler: Handler) -> None:
        self.routes[(method.upper(), path)] = handler

    def count(self, method: str | None = None, path: str | None = None) -> int:
        """How many requests matched ``method`` and ``path`` (None matches any)."""
        with self._lock:
            return sum(
                1
                for r in self.requests
                if (method is None or r.method == method) and (path is None or r.path == path)
            )

    def fail_next(self, reply: Reply, *, path: str | None = None, times: int | None = 1) -> None:
        """Answer the next ``times`` requests (to ``path``) with ``reply``; None means always."""
        with self._lock:
            self.faults.append(Fault(reply, path, times))

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    def handle(self, request: Request) -> Reply:
        """Log the request, then answer with a pending fault, its route, or 404."""
        with self._lock:
            self.requests.append(request)
            fault = self._take_fault(request.path)
        if fault is not None:
            return fault
        handler = self.routes.get((request.method, request.path))
        if handler is None:
            return Reply(404, {"error": {"message": f"no route {request.method} {request.path}"}})
        return handler(request)

    def _take_fault(self, path: str) -> Reply | None:
        for fault in self.faults:
            if fault.path in (None, path):
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times <= 0:
                        self.faults.remove(fault)
                return fault.reply
        return None

    def start(self) -> Self:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False  # keep-alive connections must not hold up stop()
        httpd.app = self  # type: ignore[attr-defined]
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="loopback", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go in two writes: no 40 ms delayed-ACK

    def _dispatch(self) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        request = Request(
            method=self.command,
            path=url.path,
            query=parse_qs(url.query),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=self.rfile.read(length) if length else b"",
        )
        reply = self.server.app.handle(request)  # type: ignore[attr-defined]
        if reply.delay_s:
            time.sleep(reply.delay_s)
        raw = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        self.send_response(reply.status)
        headers = {"Content-Type": "application/json", **reply.headers}
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _dispatch

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return
