"""Fixtures of the flow tests that run workers against the fake OpenAI server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes import FakeOpenAIServer


@pytest.fixture(scope="module")
def chat_server() -> Iterator[FakeOpenAIServer]:
    """Module-scoped so that it outlives the workers of the module's stack."""
    with FakeOpenAIServer() as server:
        yield server


def openai_overrides(server: FakeOpenAIServer, home: Path, **more: object) -> dict[str, object]:
    """Settings of a small stack whose every model role is answered by ``server``."""
    return {"home": home, "provider": "openai", "openai_base_url": server.v1_url,
            "openai_api_key": "sk-test", "general_worker_threads": 2,
            "vector_worker_threads": 2, **more}
