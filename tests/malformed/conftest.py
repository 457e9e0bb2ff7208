"""One app over a migrated SQLite ledger and an in-process broker for the whole corpus (no
stack: submissions are recorded and their tasks sent to a queue nobody reads)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ragq.api import create_api
from ragq.ledger import create_api_key, session_scope
from ragq.settings import Settings
from ragq.workers.resources import resources_for
from tests.fakes.broker import memory_settings


@pytest.fixture(scope="module")
def corpus_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Small whole-upload limits so the limit cases stay small: 5 lines, 1 MiB."""
    return memory_settings(tmp_path_factory.mktemp("malformed") / "home", max_batch_lines=5,
                           max_batch_bytes=1024 * 1024)


@pytest.fixture(scope="module")
def client(corpus_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_api(corpus_settings), raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def public_key(corpus_settings: Settings) -> str:
    with session_scope(resources_for(corpus_settings).engine) as session:
        return create_api_key(session, tenant="corpus", acl=["public"])[1]


def home_of(settings: Settings) -> Path:
    return settings.home
