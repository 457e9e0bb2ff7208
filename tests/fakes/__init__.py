"""Fakes that speak real protocols on loopback: tests drive the real client libraries at them.

Fixtures live in :mod:`tests.fakes.plugin`; a test package enables them with one line in its
``conftest.py`` (``from tests.fakes.plugin import fake_openai  # noqa: F401``), or the root
conftest with ``pytest_plugins = ["tests.fakes.plugin"]``.
"""

from tests.fakes.http import Fault, LoopbackServer, Reply, Request
from tests.fakes.openai_chat import ChatAnswer
from tests.fakes.openai_server import FakeOpenAIServer, fake_embedding, openai_error

__all__ = [
    # generic loopback HTTP
    "Fault",
    "LoopbackServer",
    "Reply",
    "Request",
    # OpenAI-compatible API
    "ChatAnswer",
    "FakeOpenAIServer",
    "fake_embedding",
    "openai_error",
]
