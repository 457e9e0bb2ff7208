"""What a flow step sends through the broker and what it keeps to run in place."""

from __future__ import annotations

from ragq.schemas.tasks import Queue, Task
from ragq.tasks.dispatch import CeleryDispatcher, consumed_queues
from ragq.workers.app import create_app
from tests.fakes.broker import drain, memory_settings


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
