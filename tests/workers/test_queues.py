import pytest

from ragq.workers.queues import Queue, queue_of, route_task, task_name


def test_task_names_route_to_their_queue():
    for queue in Queue:
        name = task_name(queue, "x")
        assert queue_of(name) is queue
        assert route_task(name, (), {}, {}) == {"queue": queue.value}


def test_celery_internal_tasks_fall_to_the_default_queue():
    assert route_task("celery.chord_unlock", (), {}, {}) is None


@pytest.mark.parametrize("name", ["celery.chord_unlock", "ragq.nosuch.x", "ragq.models"])
def test_names_outside_the_scheme_are_rejected_with_the_valid_queues(name):
    with pytest.raises(ValueError, match="ragq"):
        queue_of(name)
