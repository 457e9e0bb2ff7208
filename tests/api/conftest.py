"""The API served for real (uvicorn in a thread) against the session's stack, and API keys."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from ragq.api import ApiServer
from ragq.ledger import create_api_key, session_scope
from ragq.settings import Settings
from ragq.workers.wiring import build_ledger_engine
from tests.conftest import Stack


@pytest.fixture(scope="module")
def api(stack: Stack) -> Iterator[str]:
    """Base URL of an API serving the stack's settings."""
    with ApiServer(stack.settings) as server:
        yield server.base_url


@pytest.fixture
def make_key(stack: Stack) -> Callable[..., str]:
    """Create an API key: ``make_key("tenant", ["public"])``."""

    def make(tenant: str, acl: list[str] | None = None, settings: Settings | None = None) -> str:
        with session_scope(build_ledger_engine(settings or stack.settings)) as session:
            return create_api_key(session, tenant=tenant, acl=acl or ["public"])[1]

    return make


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def wait_until(predicate: Callable[[], Any], timeout_s: float = 120.0, poll_s: float = 0.2
               ) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll_s)
    raise AssertionError("condition not met in time")


def wait_batch(api: str, key: str, batch_id: str, timeout_s: float = 180.0) -> dict[str, Any]:
    """Poll ``GET /v1/batches/{id}`` until the batch is finished."""

    def done() -> dict[str, Any] | None:
        view = httpx.get(f"{api}/v1/batches/{batch_id}", headers=auth(key)).json()
        return view if view["status"] in {"completed", "cancelled", "failed"} else None

    return wait_until(done, timeout_s)
