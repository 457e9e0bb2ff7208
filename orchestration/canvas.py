"""Turns a layer of sub-queries into a Celery canvas: a chord whose header retrieves each
sub-query in parallel and whose body moves the job on. Tasks are addressed by name, so this
module needs no task imports and no broker to be tested."""

from __future__ import annotations

from collections.abc import Sequence

from celery import Celery, chord
from celery.canvas import Signature

from ragq.schemas.tasks import Task

RETRIEVE = Task.RETRIEVE
CHECK = Task.CHECK
AFTER_LAYER = Task.AFTER_LAYER
ROUTE = Task.ROUTE
PLAN = Task.PLAN
VERIFY = Task.VERIFY
SYNTHESIZE = Task.SYNTHESIZE
FINALIZE = Task.FINALIZE


def retrieve_signature(app: Celery, job_id: str, sub_query_id: str, attempt: int = 0,
                       text: str | None = None) -> Signature:
    """One retrieval attempt of a sub-query (immutable: it ignores a parent's result)."""
    return app.signature(RETRIEVE, args=(job_id, sub_query_id, attempt, text), immutable=True)


def check_signature(app: Celery, job_id: str, sub_query_id: str, attempt: int) -> Signature:
    return app.signature(CHECK, args=(job_id, sub_query_id, attempt), immutable=True)


def layer_chord(app: Celery, job_id: str, round_: int, layer: int,
                sub_query_ids: Sequence[str]) -> Signature:
    """The chord of one layer: every sub-query retrieved in parallel, then ``after_layer``.

    Raises ValueError on an empty layer, which a validated plan never has.
    """
    if not sub_query_ids:
        raise ValueError(f"job {job_id}: layer {layer} of round {round_} has no sub-queries")
    header = [retrieve_signature(app, job_id, sq) for sq in sub_query_ids]
    body = app.signature(AFTER_LAYER, kwargs={"job_id": job_id, "round_": round_,
                                              "layer": layer})
    return chord(header, body)


def step_signature(app: Celery, name: str, job_id: str, *args: object) -> Signature:
    """A job-level step (route, plan, verify, synthesize, finalize) by name."""
    return app.signature(name, args=(job_id, *args), immutable=True)
