"""Every role of the OpenAI provider against the fake server with the real ``openai`` client:
the request it sends (strict JSON schema, model per role) and the contract it returns."""

from __future__ import annotations

import pytest

from ragq.providers.openai.metering import count_tokens, prompt_tokens
from ragq.schemas.flow import (
    DraftAnswer,
    Finding,
    Plan,
    QuestionClass,
    Rewrite,
    RouteDecision,
    Strategy,
    SufficiencyVerdict,
    Verification,
)
from ragq.schemas.pricing import ModelPrice, PriceTable
from ragq.schemas.statuses import ModelCallStatus
from tests.fakes import ChatAnswer
from tests.providers.openai.conftest import EVIDENCE

QUESTION = "Who makes the Zephyr camera and who founded Orion Labs?"


def test_every_role_returns_its_contract_from_the_servers_answer(openai_provider, fake_openai):
    p = openai_provider
    route, _ = p.route(QUESTION)
    plan, _ = p.plan(QUESTION, max_sub_queries=4)
    verdict, _ = p.check_sufficiency("Who makes the Zephyr camera?", EVIDENCE)
    rewrite, _ = p.rewrite("Zephyr maker", EVIDENCE, attempt=1, previous=["Zephyr"])
    finding, _ = p.find("Who makes the Zephyr camera?", EVIDENCE)
    verification, _ = p.verify(QUESTION, EVIDENCE, findings=["Orion Labs"])
    draft, _ = p.synthesize(QUESTION, EVIDENCE, strategy="aggregate", findings=[])
    assert isinstance(route, RouteDecision) and route.question_class is QuestionClass.MULTI_HOP
    assert isinstance(plan, Plan) and plan.strategy is Strategy.AGGREGATE
    assert [s.text for s in plan.sub_queries] == ["Who makes the Zephyr camera?",
                                                  "who founded Orion Labs?"]
    assert isinstance(verdict, SufficiencyVerdict) and verdict.sufficient and verdict.score == 0.9
    assert isinstance(rewrite, Rewrite) and rewrite.text == "Zephyr maker explained"
    assert isinstance(finding, Finding) and finding.doc_ids == ["zephyr"]
    assert isinstance(verification, Verification) and verification.confidence == 0.9
    assert isinstance(draft, DraftAnswer) and draft.answer.startswith("Fake answer to:")
    assert [c.chunk_id for c in draft.citations] == ["zephyr::0", "orion::0"]
    assert [c.doc_id for c in draft.citations] == ["zephyr", "orion"]
    assert draft.extractive is False and draft.insufficient is False
    assert fake_openai.chat_by_role == {r: 1 for r in [
        "router", "planner", "sufficiency", "rewriter", "finder", "verifier", "synthesizer"]}
    assert p.name == "openai"


def test_requests_ask_for_strict_json_schema_output(openai_provider, fake_openai):
    openai_provider.plan(QUESTION, max_sub_queries=3)
    (body,) = fake_openai.chat_bodies
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["name"] == "ragq_planner"
    schema = fmt["json_schema"]["schema"]
    for node in [schema, *schema["$defs"].values()]:
        if node.get("type") == "object":
            assert node["additionalProperties"] is False
            assert set(node["required"]) == set(node["properties"])
    assert "at most 3" in body["messages"][0]["content"]
    assert body["temperature"] == 0


def test_each_role_uses_its_configured_model(make_provider, fake_openai):
    p = make_provider(model="gpt-4o-mini", models={"synthesizer": "gpt-4o"})
    _, route_usage = p.route("What is Zephyr?")
    _, draft_usage = p.synthesize("What is Zephyr?", EVIDENCE, strategy="single", findings=[])
    assert [b["model"] for b in fake_openai.chat_bodies] == ["gpt-4o-mini", "gpt-4o"]
    assert (route_usage.model, draft_usage.model) == ("gpt-4o-mini", "gpt-4o")


def test_usage_is_the_servers_count_priced_from_the_table(make_provider, fake_openai):
    prices = PriceTable(models={"m1": ModelPrice(input_per_mtok=1.0, output_per_mtok=4.0)})
    _, usage = make_provider(model="m1", prices=prices).verify(QUESTION, EVIDENCE, findings=[])
    assert usage.prompt_tokens == fake_openai.reported_prompt_tokens > 0
    assert usage.completion_tokens == fake_openai.reported_completion_tokens > 0
    expected = (usage.prompt_tokens * 1.0 + usage.completion_tokens * 4.0) / 1e6
    assert usage.cost_usd == pytest.approx(expected)
    (attempt,) = usage.attempts
    assert attempt.status is ModelCallStatus.OK and attempt.cost_usd == pytest.approx(expected)
    assert usage.fallback_reason is None and usage.latency_ms > 0


def test_a_server_without_usage_is_metered_with_the_tokenizer(openai_provider, fake_openai):
    fake_openai.omit_usage = True
    _, usage = openai_provider.route("What is the Zephyr?")
    (body,) = fake_openai.chat_bodies
    content = ChatAnswer({"question_class": "simple_fact", "reason": "fake: one fact",
                          "confidence": 0.8}).text()
    assert usage.prompt_tokens == prompt_tokens("gpt-4o-mini", body["messages"])
    assert usage.completion_tokens == count_tokens("gpt-4o-mini", content or "") > 0
    assert usage.prompt_tokens != len(" ".join(m["content"] for m in body["messages"]).split())


def test_a_finding_keeps_only_doc_ids_of_its_evidence(openai_provider, fake_openai):
    fake_openai.script("finder", ChatAnswer({"text": "Orion Labs", "doc_ids": ["zephyr", "nope"],
                                             "alternatives": [], "reason": ""}))
    finding, _ = openai_provider.find("Who makes the Zephyr?", EVIDENCE)
    assert finding.doc_ids == ["zephyr"] and finding.text == "Orion Labs"


def test_a_findings_runners_up_are_kept_clean_and_few(openai_provider, fake_openai):
    fake_openai.script("finder", ChatAnswer({
        "text": "Orion Labs", "doc_ids": ["zephyr"], "reason": "",
        "alternatives": [" Vega Optics ", "", "orion labs", "Vega Optics", "Lyra", "Zeiss"]}))
    finding, _ = openai_provider.find("Who makes the Zephyr?", EVIDENCE)
    assert finding.alternatives == ["Vega Optics", "Lyra"]  # no blank, repeat or the finding


def test_no_finding_keeps_no_runners_up(openai_provider, fake_openai):
    fake_openai.script("finder", ChatAnswer({"text": " ", "doc_ids": [], "reason": "",
                                             "alternatives": ["Vega Optics"]}))
    finding, _ = openai_provider.find("Who makes the Zephyr?", EVIDENCE)
    assert finding.text == "" and finding.alternatives == []


def test_out_of_range_numbers_are_clamped(openai_provider, fake_openai):
    fake_openai.script("verifier", ChatAnswer({
        "sufficient": True, "confidence": 7, "missing_info": [], "follow_up_queries": [],
        "reason": ""}))
    verification, _ = openai_provider.verify(QUESTION, EVIDENCE, findings=[])
    assert verification.confidence == 1.0
