"""What a flow step sends through the broker and what it keeps to run in place."""

from __future__ import annotations

from typing import Any

from ragq.schemas.tasks import BULK_PRIORITY, MAX_PRIORITY, Queue, Task
from ragq.schemas.ticket import Priority
from ragq.settings import Settings
from ragq.tasks.dispatch import CeleryDispatcher, consumed_queues
from ragq.workers.app import create_app
from tests.fakes.broker import drain, drain_messages, drain_with_properties, memory_settings


def _worker_app(tmp_path, *queues: Queue):
    settings = memory_settings(tmp_path)
    app = create_app(settings)
    app.amqp.queues.select([q.value for q in queues])  # what `celery worker -Q` does
    for queue in Queue:  # the memory broker is the process's: earlier tests may have left some
        drain(settings, queue)
    return settings, app


def test_a_step_for_a_queue_this_worker_consumes_is_kept_once_and_the_rest_is_sent(tmp_path):
    settings, app = _worker_app(tmp_path, Queue.MODELS)
    assert consumed_queues(app) == {"models"}
    dispatcher = CeleryDispatcher(app, keep_for="job_1")
    dispatcher.enqueue("job_2", Task.ROUTE, ())  # another job's (a waiting one started): sent
    dispatcher.enqueue("job_1", Task.SYNTHESIZE, ("sufficient",))
    dispatcher.enqueue("job_1", Task.VERIFY, (0,))  # a second one: only one runs in place
    dispatcher.enqueue("job_1", Task.FINALIZE, ())  # bookkeeping: not this worker's queue
    assert dispatcher.take_local() == (Task.SYNTHESIZE, ("sufficient",))
    assert dispatcher.take_local() is None
    assert drain(settings, Queue.MODELS) == [(Task.ROUTE, ["job_2"]), (Task.VERIFY, ["job_1", 0])]
    assert drain(settings, Queue.BOOKKEEPING) == [(Task.FINALIZE, ["job_1"])]


def test_a_kept_step_the_task_will_not_run_is_sent_after_all(tmp_path):
    settings, app = _worker_app(tmp_path, Queue.MODELS)
    dispatcher = CeleryDispatcher(app, keep_for="job_1")
    dispatcher.enqueue("job_1", Task.SYNTHESIZE, ("sufficient",))
    assert drain(settings, Queue.MODELS) == []
    dispatcher.send_kept()
    dispatcher.send_kept()  # nothing kept any more: nothing sent twice
    assert drain(settings, Queue.MODELS) == [(Task.SYNTHESIZE, ["job_1", "sufficient"])]


def test_without_a_job_to_keep_for_every_step_goes_through_the_broker(tmp_path):
    settings, app = _worker_app(tmp_path, Queue.MODELS)
    dispatcher = CeleryDispatcher(app)
    dispatcher.enqueue("job_1", Task.SYNTHESIZE, ("sufficient",))
    assert dispatcher.take_local() is None
    assert drain(settings, Queue.MODELS) == [(Task.SYNTHESIZE, ["job_1", "sufficient"])]


def test_a_layer_of_one_is_its_pipeline_alone_which_carries_the_layer_and_stores_no_result(
        tmp_path):
    settings, app = _worker_app(tmp_path, Queue.MODELS)
    CeleryDispatcher(app).enqueue_layer("job_1", 0, 2, [3])
    ((headers, (args, kwargs, _)),) = drain_messages(settings, Queue.RETRIEVAL)
    assert (headers["task"], args, kwargs) == (Task.RETRIEVE, ["job_1", 0, 3], {"layer": 2})
    assert headers["ignore_result"] is True
    assert headers.get("chord") is None


def test_a_layer_of_two_is_a_chord_whose_pipelines_store_their_replies(tmp_path):
    settings, app = _worker_app(tmp_path, Queue.MODELS)
    CeleryDispatcher(app).enqueue_layer("job_1", 0, 0, [0, 1])
    sent = drain_messages(settings, Queue.RETRIEVAL)
    assert [(h["task"], a, k) for h, (a, k, _) in sent] == [
        (Task.RETRIEVE, ["job_1", 0, 0], {}), (Task.RETRIEVE, ["job_1", 0, 1], {})]
    assert all(not h["ignore_result"] for h, _ in sent)
    assert all(embed["chord"]["task"] == Task.AFTER_LAYER for _, (_, _, embed) in sent)


def test_the_end_of_a_layer_of_one_goes_to_after_layer_as_a_chord_body_would(tmp_path):
    settings, app = _worker_app(tmp_path, Queue.RETRIEVAL)  # a vector worker: not its queue
    dispatcher = CeleryDispatcher(app, keep_for="job_1")
    dispatcher.enqueue("job_1", Task.AFTER_LAYER, (0, 2))
    assert dispatcher.take_local() is None
    ((headers, (args, kwargs, _)),) = drain_messages(settings, Queue.BOOKKEEPING)
    assert (headers["task"], args, kwargs) == (
        Task.AFTER_LAYER, [[]], {"job_id": "job_1", "round_": 0, "layer": 2})


def _with_priorities(settings: Settings, queue: Queue) -> list[tuple[str, Any, Any]]:
    """Take every message waiting on ``queue``: (task name, args, the broker priority)."""
    return [(headers["task"], body[0], properties.get("priority"))
            for headers, body, properties in drain_with_properties(settings, queue)]


def test_every_step_message_carries_its_jobs_priority(tmp_path):
    """Interactive steps go with the highest broker priority, bulk ones with the lowest: a
    job-level step, a kept step sent after all, both shapes of a layer and a chord's body."""
    settings, app = _worker_app(tmp_path, Queue.MODELS)
    dispatcher = CeleryDispatcher(app, keep_for="job_1")
    dispatcher.enqueue("job_2", Task.ROUTE, (), Priority.INTERACTIVE)
    dispatcher.enqueue("job_3", Task.ROUTE, ())
    dispatcher.enqueue("job_1", Task.VERIFY, (0,), Priority.INTERACTIVE)  # kept
    dispatcher.send_kept()
    dispatcher.enqueue_layer("job_2", 0, 0, [0, 1], Priority.INTERACTIVE)
    dispatcher.enqueue_layer("job_2", 0, 1, [2], Priority.INTERACTIVE)
    dispatcher.enqueue_layer("job_3", 0, 0, [0, 1], Priority.BULK)
    assert _with_priorities(settings, Queue.MODELS) == [
        (Task.ROUTE, ["job_2"], MAX_PRIORITY), (Task.ROUTE, ["job_3"], BULK_PRIORITY),
        (Task.VERIFY, ["job_1", 0], MAX_PRIORITY)]
    retrieval = _with_priorities(settings, Queue.RETRIEVAL)
    assert [(args[0], priority) for _, args, priority in retrieval] == [
        ("job_2", MAX_PRIORITY), ("job_2", MAX_PRIORITY), ("job_2", MAX_PRIORITY),
        ("job_3", BULK_PRIORITY), ("job_3", BULK_PRIORITY)]


def test_a_chords_body_goes_with_its_jobs_priority(tmp_path):
    settings, app = _worker_app(tmp_path, Queue.MODELS)
    CeleryDispatcher(app).enqueue_layer("job_1", 0, 0, [0, 1], Priority.INTERACTIVE)
    sent = drain_messages(settings, Queue.RETRIEVAL)
    assert {embed["chord"]["options"].get("priority") for _, (_, _, embed) in sent} == {
        MAX_PRIORITY}
