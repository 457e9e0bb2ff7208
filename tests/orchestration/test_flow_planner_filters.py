"""A planner's filters in the flow (issue 37): the planner is told the searched source's
declared fields (never an inferred one), and each sub-query's proposed filters are validated at
each of its searches like the rules' (kept, or dropped with the reason, recorded as the
planner's) and carried by the search. Through the real decisions and step runner, in process."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragq.ledger.memory import MemoryLedger
from ragq.schemas.flow import Plan, PlannedSubQuery, Usage
from ragq.schemas.metadata import FieldType, MetadataField, MetadataSchema
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, config, seeded_world

SCHEMA = MetadataSchema(fields=(
    MetadataField(name="product", type=FieldType.ENUM, values=("camera", "drone")),
    MetadataField(name="shelf", type=FieldType.KEYWORD, values=("a1",), inferred=True)))
PART = "How long is the warranty"


def _run(filters: list[dict[str, Any]]) -> tuple[MemoryLedger, list[Sequence[MetadataField]]]:
    world = seeded_world(5)
    told: list[Sequence[MetadataField]] = []

    def plan(question: str, *, fields: Sequence[MetadataField] = (), **kw: object
             ) -> tuple[Plan, Usage]:
        told.append(fields)
        return Plan(sub_queries=[PlannedSubQuery(text=PART, filters=filters)]), Usage(model="m")

    world.provider.plan = plan  # type: ignore[method-assign]
    ledger = MemoryLedger()
    ledger.schemas[COLLECTION] = SCHEMA
    job_id = ledger.add_job("How long is the warranty of the flying thing?",
                            collection=COLLECTION, meta={"route": "full"})
    InlineDispatcher(Runner(ledger, world, config())).run(job_id)
    return ledger, told


def test_the_planner_is_told_the_declared_fields_and_its_filters_are_searched_with():
    ledger, told = _run([{"field": "product", "op": "eq", "value": "drone"}])
    assert [[f.name for f in fields] for fields in told] == [["product"]]  # not the guess
    planned = [r for r in ledger.filter_log if r["query"] == PART]
    assert planned, "the part was searched"
    for record in planned:
        (decision,) = [d for d in record["decisions"] if d["by"] == "planner"]
        assert decision["kept"] and decision["proposed"]["value"] == "drone"
        assert "product" in record["label"] and "drone" in record["label"]


def test_a_planners_filter_outside_the_schema_is_dropped_with_the_reason():
    ledger, _ = _run([{"field": "product", "op": "eq", "value": "tractor"},
                      {"field": "shelf", "op": "eq", "value": "a1"}])
    record = next(r for r in ledger.filter_log if r["query"] == PART)
    reasons = [d["reason"] for d in record["decisions"] if d["by"] == "planner"]
    assert not any(d["kept"] for d in record["decisions"] if d["by"] == "planner")
    assert "['tractor'] not among 'product'" in reasons[0]
    assert "not confirmed" in reasons[1]
    assert not record["label"]  # nothing was sent
