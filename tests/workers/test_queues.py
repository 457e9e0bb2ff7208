import pytest

from ragq.schemas.tasks import Queue, Task, task_queue
from ragq.workers.queues import route_task


def test_every_task_routes_to_the_queue_its_name_names():
    for name in Task.names():
        queue = Queue(name.split(".")[1])
        assert task_queue(name) is queue
        assert route_task(name, (), {}, {}) == {"queue": queue.value}
    assert {task_queue(name) for name in Task.names()} == set(Queue)


def test_celery_internal_tasks_fall_to_the_default_queue():
    assert route_task("celery.chord_unlock", (), {}, {}) is None


@pytest.mark.parametrize("name", ["celery.chord_unlock", "ragq.nosuch.x", "ragq.models"])
def test_names_outside_the_scheme_are_rejected_with_the_valid_queues(name):
    with pytest.raises(ValueError, match="ragq"):
        task_queue(name)
