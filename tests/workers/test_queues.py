import pytest

from ragq.schemas.tasks import Queue, Task
from ragq.workers.queues import queue_of, route_task


def test_every_task_routes_to_the_queue_its_name_names():
    for task in Task:
        assert queue_of(task) is task.queue
        assert route_task(task, (), {}, {}) == {"queue": task.queue.value}
    assert {task.queue for task in Task} == set(Queue)


def test_celery_internal_tasks_fall_to_the_default_queue():
    assert route_task("celery.chord_unlock", (), {}, {}) is None


@pytest.mark.parametrize("name", ["celery.chord_unlock", "ragq.nosuch.x", "ragq.models"])
def test_names_outside_the_scheme_are_rejected_with_the_valid_queues(name):
    with pytest.raises(ValueError, match="ragq"):
        queue_of(name)
