"""An in-process broker for front-door tests: kombu's ``memory://`` transport behind a real
Celery client app, so what the code sends by name can be read back off its queue without a
stack (nothing leaves the process)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragq.schemas.tasks import Queue
from ragq.settings import Settings, build_settings
from ragq.workers.client import client_app
from tests.ledger_template import migrated

STACK_ENVIRONMENT = ("database_url", "webhook_allow_private", "webhook_allow_hosts",
                     "webhook_backoff_base_s", "webhook_backoff_max_s")
"""Settings the stack fixture sets in the environment while its stack runs."""


def memory_settings(home: Path, **more: Any) -> Settings:
    """Settings of a migrated SQLite ledger under ``home`` and an in-process broker."""
    # While a session-wide stack fixture runs, the environment describes that stack
    # (tests/conftest.py running_stack): these settings take the defaults instead.
    settings = build_settings(**({name: Settings.model_fields[name].default
                                  for name in STACK_ENVIRONMENT}
                                 | {"home": home, "broker_url": "memory://",
                                    "result_backend_url": "cache+memory://"} | more))
    migrated(settings.ledger_url)
    return settings


def drain_messages(settings: Settings, queue: Queue) -> list[tuple[dict[str, Any], Any]]:
    """Take every message waiting on ``queue``: (headers, decoded body), in send order."""
    return [(headers, body) for headers, body, _ in drain_with_properties(settings, queue)]


def drain_with_properties(settings: Settings, queue: Queue
                          ) -> list[tuple[dict[str, Any], Any, dict[str, Any]]]:
    """Take every message waiting on ``queue``: (headers, decoded body, its properties, where
    the broker priority is), in the order the broker gives them."""
    out: list[tuple[dict[str, Any], Any, dict[str, Any]]] = []
    with client_app(settings).connection_for_read() as connection:
        waiting = connection.SimpleQueue(queue.value, no_ack=True)
        try:
            while True:
                try:
                    message = waiting.get(timeout=0.05)
                except waiting.Empty:
                    return out
                out.append((dict(message.headers), message.payload, dict(message.properties)))
        finally:
            waiting.close()


def drain(settings: Settings, queue: Queue) -> list[tuple[str, list[Any]]]:
    """Take every message waiting on ``queue``: (task name, positional args), in send order."""
    return [(headers["task"], list(body[0])) for headers, body in drain_messages(settings, queue)]


def hold_documents(settings: Settings, collection: str, *, tenant: str | None = None) -> None:
    """Record in the ledger that ``collection`` holds a document of ``tenant`` (default: the
    settings'), as ingest records it, for front-door tests that run no worker: a submission
    names only collections that hold documents (issue 31)."""
    from ragq.ledger import register_source, session_scope, upsert_document
    from ragq.workers.resources import resources_for

    with session_scope(resources_for(settings).engine) as session:
        register_source(session, tenant=tenant or settings.tenant, name=collection)
        upsert_document(session, collection=collection, doc_id=f"{collection}-doc", title="",
                        source_version="v1", content_hash="h", acl=["public"],
                        authority_tier=2, chunk_count=1)
