"""A model planner proposes metadata filters (issue 37) over the real ``openai`` client against
the fake server: when the searched source declares fields, the strict schema lets a sub-query
carry filters whose ``field`` is one of those names, the prompt lists them with their values,
and an answer naming another field is sent back; with no fields the plan schema is the plain
one."""

from __future__ import annotations

from ragq.schemas.metadata import FieldType, MetadataField
from ragq.schemas.statuses import ModelCallStatus
from tests.fakes import ChatAnswer

QUESTION = "What is the refund policy for EU customers on the Enterprise plan?"
FIELDS = (MetadataField(name="region", type=FieldType.ENUM, values=("EU", "US"),
                        description="where the customer is"),
          MetadataField(name="plan", type=FieldType.KEYWORD, values=("Enterprise", "Pro")))


def _plan(*filters: dict[str, object]) -> ChatAnswer:
    return ChatAnswer({"sub_queries": [{"text": "refund policy", "depends_on": [],
                                        "reason": "one need", "filters": list(filters)}],
                       "strategy": "single", "reason": "scripted"})


def test_the_schema_names_the_declared_fields_and_the_plan_carries_their_filters(
        openai_provider, fake_openai):
    fake_openai.script("planner", _plan({"field": "region", "op": "eq", "values": ["EU"]},
                                        {"field": "plan", "op": "in",
                                         "values": ["Enterprise", "Pro"]}))
    plan, _ = openai_provider.plan(QUESTION, max_sub_queries=3, fields=FIELDS)
    (body,) = fake_openai.chat_bodies
    schema = body["response_format"]["json_schema"]["schema"]
    named = next(d for n, d in schema["$defs"].items() if "Filter" in n and "field" in
                 d.get("properties", {}))
    assert named["properties"]["field"]["enum"] == ["region", "plan"]
    prompt = body["messages"][1]["content"]
    assert "- region (enum): where the customer is; values: EU, US" in prompt
    assert "never guess one" in body["messages"][0]["content"]
    assert plan.sub_queries[0].filters == [{"field": "region", "op": "eq", "value": "EU"},
                                           {"field": "plan", "op": "in",
                                            "value": ["Enterprise", "Pro"]}]


def test_an_answer_naming_an_undeclared_field_is_sent_back(openai_provider, fake_openai):
    fake_openai.script("planner", _plan({"field": "colour", "op": "eq", "values": ["red"]}),
                       _plan({"field": "region", "op": "eq", "values": ["US"]}))
    plan, usage = openai_provider.plan(QUESTION, max_sub_queries=3, fields=FIELDS)
    assert len(fake_openai.chat_bodies) == 2
    assert plan.sub_queries[0].filters == [{"field": "region", "op": "eq", "value": "US"}]
    assert [a.status for a in usage.attempts][-1] == ModelCallStatus.OK


def test_without_fields_the_plan_schema_has_no_filters(openai_provider, fake_openai):
    fake_openai.script("planner", ChatAnswer({"sub_queries": [
        {"text": "refund policy", "depends_on": [], "reason": ""}],
        "strategy": "single", "reason": ""}))
    plan, _ = openai_provider.plan(QUESTION, max_sub_queries=3)
    (body,) = fake_openai.chat_bodies
    assert "filters" not in str(body["response_format"]["json_schema"]["schema"])
    assert "Metadata fields" not in body["messages"][1]["content"]
    assert plan.sub_queries[0].filters == []
