"""Pytest fixtures for the loopback fakes (importable by any conftest, or as a pytest plugin)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragq.schemas.tasks import Queue
from ragq.settings import Settings
from tests.fakes.broker import drain, memory_settings
from tests.fakes.http import LoopbackServer
from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A running fake OpenAI server (8-dimensional vectors, API key ``sk-test``)."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    """A running loopback server with no routes: add them with ``loopback.route(...)``."""
    with LoopbackServer() as server:
        yield server


@pytest.fixture
def memory_broker(tmp_path: Path) -> Iterator[Settings]:
    """Settings of a migrated SQLite ledger and an in-process broker whose queues start empty
    (:func:`tests.fakes.broker.drain` reads what was sent)."""
    settings = memory_settings(tmp_path / "home")
    for queue in Queue:  # the memory transport is per process: forget earlier tests' messages
        drain(settings, queue)
    yield settings
