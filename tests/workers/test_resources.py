"""A process's resources: one set per settings value, the webhook sender built once and used
by every delivery attempt the process makes."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ragq.ledger import add_job, ensure_endpoint, first_attempts, session_scope
from ragq.ledger.jobs import finish_job
from ragq.schemas.statuses import JobStatus
from ragq.schemas.tasks import Queue, Task
from ragq.settings import Settings, build_settings
from ragq.webhooks import HttpxWebhookSender, SendOutcome, new_secret
from ragq.workers import resources
from ragq.workers.app import create_app
from ragq.workers.resources import resources_for
from tests.fakes.broker import drain

HOOK = "http://127.0.0.1:9/job"


def test_equal_settings_built_twice_share_one_set(tmp_path):
    nested = {"prices": {"models": {"m": {"input_per_mtok": 1}}},  # every kind of field hashes
              "openai_models": {"synthesizer": "m"},
              "budget_profiles": {"simple": {"max_steps": 3}}}
    first = build_settings(home=tmp_path, webhook_timeout_s=3, **nested)
    again = build_settings(home=tmp_path, webhook_timeout_s=3, **nested)
    other = build_settings(home=tmp_path, webhook_timeout_s=4)
    assert first is not again and resources_for(first) is resources_for(again)
    assert resources_for(first).engine is resources_for(again).engine
    assert resources_for(other) is not resources_for(first)


def test_the_webhook_sender_is_built_once_from_the_settings(tmp_path):
    held = resources_for(build_settings(home=tmp_path, webhook_timeout_s=7))
    sender = held.webhook_sender
    assert isinstance(sender, HttpxWebhookSender) and sender is held.webhook_sender
    assert sender._timeout == 7


@dataclass
class ScriptedSender:
    """Answers 500, then 200; counts what it was asked to send."""

    answers: list[int] = field(default_factory=lambda: [500, 200])
    sent: list[str] = field(default_factory=list)
    closed: bool = False

    def send(self, url: str, *, secret: str, msg_id: str, body: bytes,
             address: str | None = None) -> SendOutcome:
        self.sent.append(msg_id)
        return SendOutcome(self.answers[len(self.sent) - 1])

    def close(self) -> None:
        self.closed = True


def test_every_delivery_attempt_of_a_process_uses_its_one_sender(
        memory_broker: Settings, monkeypatch: pytest.MonkeyPatch):
    import ragq.tasks.webhooks  # noqa: F401  (registers the delivery task)

    settings = memory_broker.model_copy(update={"webhook_allow_private": True,
                                                "webhook_backoff_base_s": 0.01})
    built: list[ScriptedSender] = []
    monkeypatch.setattr(resources, "build_webhook_sender",
                        lambda s: built.append(ScriptedSender()) or built[-1])
    held = resources_for(settings)
    with session_scope(held.engine) as session:
        ensure_endpoint(session, tenant="t", url=HOOK, new_secret=new_secret)
        job = add_job(session, batch_id=None, custom_id=None, position=None, tenant="t",
                      collection="c", question="q?", acl=["public"],
                      metadata={"webhook_url": HOOK})
        finish_job(session, job_id=job.id, status=JobStatus.COMPLETED, result={})
    with session_scope(held.engine) as session:
        (webhook_id,) = first_attempts(session, job_ids=[job.id])
    deliver = create_app(settings, include_tasks=False).tasks[Task.DELIVER_WEBHOOK]
    assert deliver.apply(args=(webhook_id, 1)).get() == "retry"
    ((name, args),) = drain(settings, Queue.BOOKKEEPING)  # attempt 2, scheduled
    assert (name, args) == (Task.DELIVER_WEBHOOK, [webhook_id, 2])
    assert deliver.apply(args=(webhook_id, 2)).get() == "delivered"
    assert len(built) == 1 and built[0].sent == [webhook_id, webhook_id]
    held.close()
    assert built[0].closed


class _Consumer:
    """What Celery sends ``worker_ready`` from: the worker's consumer, holding its app."""

    def __init__(self, app: object) -> None:
        self.app = app


@contextmanager
def _ready_worker(tmp_path: Path, queues: tuple[Queue, ...]
                  ) -> Iterator[resources.WorkerResources]:
    """A model-serving worker app consuming ``queues``, after Celery said it is ready.
    Readiness froze this test process's heap as a worker's; it is thawed on leaving, so the
    suite's garbage stays collectable."""
    from celery.signals import worker_ready

    settings = build_settings(home=tmp_path, provider="openai", openai_api_key="sk-test",
                              openai_base_url="http://127.0.0.1:9/v1")
    app = create_app(settings)
    app.amqp.queues.select([q.value for q in queues])
    try:
        worker_ready.send(sender=_Consumer(app))
        yield app.conf.ragq_resources
    finally:
        gc.unfreeze()


def test_a_model_worker_is_ready_with_its_client_built_and_the_store_left_closed(tmp_path):
    with _ready_worker(tmp_path, (Queue.MODELS, Queue.BOOKKEEPING)) as held:
        assert held._provider is not None and held._runner is not None
        assert held._store is None  # the vector store's owner is whoever first serves retrieval


def test_a_ready_worker_has_frozen_what_start_up_built(tmp_path):
    """Full collections in a worker walk only what jobs allocated (ragq.workers.heap): an
    object alive before readiness (built at start-up) has left the collector's generations,
    while one made after is tracked as usual."""
    built_at_start = {"adapter": ["state"]}
    with _ready_worker(tmp_path, (Queue.MODELS,)) as held:
        made_later = {"job": ["state"]}
        frozen = gc.get_freeze_count()
        tracked = {id(o) for o in gc.get_objects()}
    assert frozen > 0
    assert id(built_at_start) not in tracked and id(made_later) in tracked
    provider = held._provider  # built on readiness, before the freeze
    assert provider is not None and id(provider) not in tracked


def test_a_vector_worker_is_ready_with_its_embedder_loaded_and_no_model_client(tmp_path):
    with _ready_worker(tmp_path, (Queue.RETRIEVAL, Queue.INGEST)) as held:
        assert held._embedder is not None and held._embedder._model is not None  # loaded
        assert held._provider is None and held._store is None
