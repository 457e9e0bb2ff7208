"""The supervisor restores a dead worker's deliveries only once every worker has said what it
holds: a worker still reconnecting would otherwise have its running tasks handed out twice."""

from __future__ import annotations

import json

import pytest

from ragq.errors import StackError
from ragq.settings import build_settings
from ragq.workers.app import create_app
from ragq.workers.redelivery import held_task_ids, task_id_of


def test_nothing_is_restored_until_every_worker_answered(tmp_path) -> None:
    app = create_app(build_settings(home=tmp_path, broker_url="memory://",
                                    result_backend_url="cache+memory://"), include_tasks=False)
    with pytest.raises(StackError, match="0 of 2 workers answered"):
        held_task_ids(app, timeout_s=0.2, workers=2)


def test_the_task_id_is_read_from_kombus_unacked_entry() -> None:
    message = {"body": "…", "headers": {"id": "abc", "task": "ragq.models.route"},
               "properties": {"correlation_id": "abc", "delivery_tag": "t1"}}
    assert task_id_of(json.dumps([message, "models", "models"])) == "abc"
    assert task_id_of(json.dumps([{"properties": {"correlation_id": "xyz"}}, "", "q"])) == "xyz"
    assert task_id_of("not json") is None
