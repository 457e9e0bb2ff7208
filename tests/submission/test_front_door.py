"""The submission core without a stack (SQLite ledger, in-process broker): it borrows the
process's one engine however often it is called, and enqueues what it ends through the outbox."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import ragq.ledger
from ragq import submission
from ragq.api import create_api
from ragq.ledger import TRAIL_TABLES, session_scope
from ragq.ledger.jobs import finish_job
from ragq.schemas.statuses import JobStatus
from ragq.schemas.tasks import Queue, Task
from ragq.settings import Settings
from ragq.submission import BatchOptions
from ragq.workers.resources import resources_for
from tests.fakes.broker import drain

HOOK = "http://127.0.0.1:9/hook"  # allowed as private here, never called


def parsed(settings: Settings, records: list[dict[str, Any] | str]) -> Any:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    return submission.read_tickets(lines, limits=submission.limits_of(settings), source="t")


def tickets(n: int) -> list[dict[str, Any] | str]:
    return [{"custom_id": f"t{i}", "question": f"Question {i}?"} for i in range(n)]


def test_a_poll_loop_and_every_reader_borrow_one_engine(memory_broker: Settings,
                                                        monkeypatch: pytest.MonkeyPatch):
    real, built = ragq.ledger.make_engine, []
    monkeypatch.setattr(ragq.ledger, "make_engine",
                        lambda *a, **k: built.append(a) or real(*a, **k))
    settings = memory_broker
    sent = submission.submit_tickets(settings, parsed(settings, tickets(2)), collection=None,
                                     source=None)
    routed = drain(settings, Queue.MODELS)
    assert routed == [(Task.ROUTE, [job_id]) for job_id in sent.job_ids]
    polls: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:  # a worker ends a job every other poll
        polls.append((done, total))
        if len(polls) % 2 == 0:
            with session_scope(resources_for(settings).engine) as session:
                finish_job(session, job_id=sent.job_ids[done], status=JobStatus.COMPLETED,
                           result={"custom_id": f"t{done}", "status": "completed"})

    view = submission.wait(settings, sent.batch_id, on_progress=progress, poll_s=0)
    assert view["status"] == "completed" and polls[0] == (0, 2) and polls[-1] == (2, 2)
    assert len(polls) == 5
    assert [r["status"] for r in submission.results(settings, sent.batch_id)] == ["completed"] * 2
    assert submission.errors(settings, sent.batch_id) == []
    trail = submission.trail(settings, sent.job_ids[0])
    assert list(trail) == ["job", *TRAIL_TABLES] and trail["job"]["status"] == "completed"
    assert submission.evidence(settings, sent.job_ids[0]) == []
    assert len(built) == 1  # the first call built the process's engine; nothing else did
    assert create_api(settings).state.engine is resources_for(settings).engine
    assert len(built) == 1


def test_a_cancel_enqueues_the_events_it_ended(memory_broker: Settings):
    settings = memory_broker.model_copy(update={"webhook_allow_private": True})
    records = tickets(3)
    records[0] = {**records[0], "webhook_url": HOOK}  # a job with a webhook of its own
    sent = submission.submit_tickets(settings, parsed(settings, records), collection=None,
                                     source=None, options=BatchOptions(webhook_url=HOOK))
    assert sent.webhook_secret and sent.webhook_secret.startswith("whsec_")
    assert submission.cancel(settings, sent.batch_id) == 3
    events = drain(settings, Queue.BOOKKEEPING)
    assert len(events) == 2 and {name for name, _ in events} == {Task.DELIVER_WEBHOOK}
    assert {args[1] for _, args in events} == {1}
    assert submission.describe(settings, sent.batch_id)["status"] == "cancelled"
    assert submission.cancel(settings, sent.batch_id) == 0
    # Nothing new ended; the two events, still unattempted (no worker here), go out again
    # under the same ids, and the delivery task's claim makes the repeat harmless.
    assert sorted(drain(settings, Queue.BOOKKEEPING)) == sorted(events)


def test_a_batch_of_only_bad_lines_ends_at_once_and_its_event_is_sent(memory_broker: Settings):
    settings = memory_broker.model_copy(update={"webhook_allow_private": True})
    sent = submission.submit_tickets(settings, parsed(settings, ["{not json", '{"x": 1}']),
                                     collection=None, source=None,
                                     options=BatchOptions(webhook_url=HOOK))
    assert (sent.job_ids, sent.errors) == ([], 2)
    assert len(drain(settings, Queue.BOOKKEEPING)) == 1
    view = submission.describe(settings, sent.batch_id)
    assert view["status"] == "completed" and view["counts"]["invalid"] == 2


def test_a_batch_shows_the_same_cost_in_the_list_as_in_its_details(memory_broker: Settings):
    from ragq.ledger.steps import record_model_call
    from ragq.submission import Caller

    settings = memory_broker
    spent = submission.submit_tickets(settings, parsed(settings, tickets(2)), collection=None,
                                      source=None)
    idle = submission.submit_tickets(settings, parsed(settings, tickets(1)), collection=None,
                                     source=None)
    with session_scope(resources_for(settings).engine) as session:
        for n, job_id in enumerate(spent.job_ids):
            record_model_call(session, job_id=job_id, role="router", provider="openai",
                              model="m", call_key=f"k{n}", prompt_tokens=10,
                              completion_tokens=5, latency_ms=1, cost_usd=0.0125)
    listed = {view["id"]: view["cost_usd"] for view in submission.list_batch_views(
        settings, caller=Caller(settings.tenant), limit=10, after=None)}
    assert listed == {spent.batch_id: 0.025, idle.batch_id: 0.0}
    for batch_id, cost in listed.items():
        assert submission.describe(settings, batch_id)["cost_usd"] == cost


def test_ask_keeps_a_custom_id_given_or_made(memory_broker: Settings):
    settings = memory_broker
    given = submission.ask(settings, {"question": "How do I rotate a key?", "acl": ["public"],
                                      "custom_id": "ticket-42"}, collection=None)
    made = submission.ask(settings, {"question": "How do I rotate a key?", "acl": ["public"]},
                          collection=None)
    drain(settings, Queue.MODELS)
    assert submission.describe(settings, given)["custom_id"] == "ticket-42"
    assert re.fullmatch(r"ask-\d{8}T\d{6}Z", submission.describe(settings, made)["custom_id"])
