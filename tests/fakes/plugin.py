"""Pytest fixtures for the loopback fakes (importable by any conftest, or as a pytest plugin)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

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
