"""Faults of the model server and what the provider does about each: retries with
backoff honouring Retry-After, one repair of unusable output, fallbacks with their reason, and
no retry at all for a wrong key or an unknown model."""

from __future__ import annotations

import openai
import pytest

from ragq.errors import ProviderAuthError, ProviderError, ProviderModelNotFoundError
from ragq.schemas.flow import Usage
from ragq.schemas.statuses import ModelCallStatus
from tests.fakes import ChatAnswer, Reply, openai_error
from tests.providers.openai.conftest import EVIDENCE

QUESTION = "Who makes the Zephyr camera and who founded Orion Labs?"
OK, ERROR, FALLBACK = ModelCallStatus.OK, ModelCallStatus.ERROR, ModelCallStatus.FALLBACK


def statuses(usage: Usage) -> list[ModelCallStatus]:
    return [a.status for a in usage.attempts]


def test_429_waits_what_retry_after_says_then_succeeds(openai_provider, fake_openai, sleeps):
    fake_openai.script("router", openai_error(429, headers={"retry-after": "3"}))
    decision, usage = openai_provider.route(QUESTION)
    assert decision.reason == "fake: ' and ' splits it"
    assert statuses(usage) == [ERROR, OK]
    assert usage.attempts[0].backoff_s == 3.0 and sleeps == [3.0]
    assert "RateLimitError (HTTP 429)" in (usage.attempts[0].error or "")
    assert fake_openai.chat_by_role["router"] == 2


def test_retry_after_is_capped_by_the_policy(openai_provider, fake_openai, sleeps):
    fake_openai.script("router", openai_error(429, headers={"retry-after": "600"}))
    openai_provider.route(QUESTION)
    assert sleeps == [8.0]  # max_delay_s of the fixture's policy


def test_500s_back_off_exponentially_then_succeed(openai_provider, fake_openai, sleeps):
    fake_openai.script("planner", openai_error(500), openai_error(503))
    plan, usage = openai_provider.plan(QUESTION, max_sub_queries=4)
    assert len(plan.sub_queries) == 2
    assert statuses(usage) == [ERROR, ERROR, OK]
    # base 0.5 s doubling, half fixed + half jitter (the fixture's jitter draw is 0.5)
    assert sleeps == [pytest.approx(0.375), pytest.approx(0.75)]
    assert usage.prompt_tokens == fake_openai.reported_prompt_tokens  # failures cost nothing


def test_retries_are_bounded_then_the_role_falls_back(make_provider, fake_openai, sleeps):
    fake_openai.script("sufficiency", *[openai_error(500)] * 10)
    verdict, usage = make_provider(max_retries=2).check_sufficiency("q", EVIDENCE)
    assert fake_openai.chat_by_role["sufficiency"] == 3
    assert len(sleeps) == 2
    assert verdict.sufficient is False and verdict.score == 0.0
    assert statuses(usage) == [ERROR, ERROR, ERROR, FALLBACK]
    assert usage.fallback_reason and "InternalServerError" in usage.fallback_reason


def test_a_timeout_is_retried(make_provider, fake_openai):
    fake_openai.script("finder", ChatAnswer({"text": "late", "doc_ids": [], "reason": "",
                                             "alternatives": []}, delay_s=1.5))
    finding, usage = make_provider(timeout_s=0.3).find("Who makes it?", EVIDENCE)
    assert finding.text == "fact from zephyr"
    assert statuses(usage) == [ERROR, OK]
    assert "APITimeoutError" in (usage.attempts[0].error or "")


def test_malformed_json_is_repaired_once_with_the_error_shown(openai_provider, fake_openai):
    fake_openai.script("verifier", ChatAnswer('{"sufficient": tru'))
    verification, usage = openai_provider.verify(QUESTION, EVIDENCE, findings=[])
    assert verification.sufficient and verification.confidence == 0.9
    assert statuses(usage) == [ERROR, OK]
    repair = fake_openai.chat_bodies[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": '{"sufficient": tru'}
    assert "could not be used" in repair[-1]["content"] and "JSON" in repair[-1]["content"]
    assert usage.attempts[0].prompt_tokens > 0  # the bad answer was charged, so it is metered


def test_malformed_twice_falls_back_with_the_reason(openai_provider, fake_openai):
    fake_openai.script("planner", ChatAnswer("not json"), ChatAnswer({"sub_queries": "x"}))
    plan, usage = openai_provider.plan(QUESTION, max_sub_queries=4)
    assert [s.text for s in plan.sub_queries] == [QUESTION]  # single-shot
    assert statuses(usage) == [ERROR, ERROR, FALLBACK]
    assert usage.fallback_reason and "after one repair" in usage.fallback_reason
    assert "sub_queries" in usage.fallback_reason  # the schema error, not a generic message
    assert fake_openai.chat_by_role["planner"] == 2


def test_a_truncated_answer_is_retried_then_falls_back(openai_provider, fake_openai):
    cut = ChatAnswer('{"answer": "The Zeph', finish_reason="length")
    fake_openai.script("synthesizer", cut, cut)
    draft, usage = openai_provider.synthesize(
        "Who makes the Zephyr camera?", EVIDENCE, strategy="single", findings=[])
    assert statuses(usage) == [ERROR, ERROR, FALLBACK]
    assert "finish_reason=length" in (usage.attempts[0].error or "")
    assert draft.extractive is True  # the offline extractive synthesizer answered
    assert draft.citations and draft.citations[0].doc_id == "zephyr"
    assert "Orion Labs" in draft.answer


def test_a_refusal_is_retried_once(openai_provider, fake_openai):
    fake_openai.script("rewriter", ChatAnswer(None, refusal="I can't help with that."))
    rewrite, usage = openai_provider.rewrite("Zephyr maker", EVIDENCE, attempt=1, previous=[])
    assert rewrite.text == "Zephyr maker explained"
    assert statuses(usage) == [ERROR, OK]
    assert "refused" in (usage.attempts[0].error or "")


def test_the_rewriter_falls_back_to_key_terms_not_a_repeat(openai_provider, fake_openai):
    fake_openai.script("rewriter", ChatAnswer(None, refusal="no"), ChatAnswer(None, refusal="no"))
    rewrite, usage = openai_provider.rewrite("Who makes the Zephyr camera?", EVIDENCE,
                                             attempt=1, previous=[])
    assert usage.fallback_reason and rewrite.text
    assert rewrite.text != "Who makes the Zephyr camera?" and "Zephyr" in rewrite.text


def test_a_citation_outside_the_context_is_sent_back(openai_provider, fake_openai):
    fake_openai.script("synthesizer", ChatAnswer({
        "answer": "Orion Labs.", "citations": [{"chunk_id": "made-up::9", "quote": ""}],
        "contradictions": [], "insufficient": False}))
    draft, usage = openai_provider.synthesize("Who?", EVIDENCE, strategy="single", findings=[])
    assert statuses(usage) == [ERROR, OK]
    assert "made-up::9" in (usage.attempts[0].error or "")
    assert "zephyr::0" in fake_openai.chat_bodies[1]["messages"][-1]["content"]
    assert draft.extractive is False


def test_without_json_schema_support_json_object_is_used_and_remembered(openai_provider,
                                                                        fake_openai):
    fake_openai.supports_json_schema = False
    first, usage = openai_provider.route(QUESTION)
    second, again = openai_provider.plan(QUESTION, max_sub_queries=4)
    formats = [b["response_format"]["type"] for b in fake_openai.chat_bodies]
    assert formats == ["json_schema", "json_object", "json_object"]
    assert statuses(usage) == [ERROR, OK] and statuses(again) == [OK]
    assert first.question_class.value == "multi_hop" and len(second.sub_queries) == 2
    system = fake_openai.chat_bodies[1]["messages"][0]["content"]
    assert "JSON" in system and '"question_class"' in system  # the schema travels in the prompt


def test_a_wrong_key_fails_at_once_with_a_clear_error(make_provider, fake_openai, sleeps):
    with pytest.raises(ProviderAuthError, match="RAGQ_OPENAI_API_KEY") as raised:
        make_provider(api_key="sk-wrong").plan(QUESTION, max_sub_queries=4)
    assert fake_openai.chat_requests == 1 and sleeps == []
    error = raised.value
    assert error.status_code == 401 and error.role == "planner"
    assert isinstance(error.__cause__, openai.AuthenticationError)
    assert isinstance(error.usage, Usage) and statuses(error.usage) == [ERROR]


def test_an_unknown_model_fails_at_once_naming_the_settings(make_provider, fake_openai):
    fake_openai.script(None, openai_error(404, "The model `nope` does not exist"))
    with pytest.raises(ProviderModelNotFoundError, match="RAGQ_OPENAI_MODEL") as raised:
        make_provider(model="nope").verify(QUESTION, EVIDENCE, findings=[])
    assert fake_openai.chat_requests == 1 and raised.value.model == "nope"
    assert isinstance(raised.value, ProviderError)


def test_an_unreachable_server_falls_back_after_the_retries(make_provider, fake_openai, sleeps):
    provider = make_provider(max_retries=1)
    fake_openai.stop()
    decision, usage = provider.route(QUESTION)
    assert decision.question_class.value == "multi_hop" and decision.confidence == 0.0
    assert statuses(usage) == [ERROR, ERROR, FALLBACK] and len(sleeps) == 1
    assert "APIConnectionError" in (usage.fallback_reason or "")


@pytest.mark.parametrize("status", [400, 422])
def test_a_refused_request_falls_back_without_retry(openai_provider, fake_openai, status):
    fake_openai.script("finder", openai_error(status, "context length exceeded"))
    finding, usage = openai_provider.find("q", EVIDENCE)
    assert finding.text == "" and statuses(usage) == [ERROR, FALLBACK]
    assert fake_openai.chat_requests == 1


def test_an_empty_body_is_unusable_output(openai_provider, fake_openai):
    fake_openai.script("router", Reply(200, None), Reply(200, {"choices": []}))
    decision, usage = openai_provider.route(QUESTION)
    assert statuses(usage) == [ERROR, ERROR, FALLBACK]
    assert "no choices" in (usage.fallback_reason or "")
    assert decision.confidence == 0.0


@pytest.mark.parametrize(("status", "error", "vendor"), [
    (401, ProviderAuthError, openai.AuthenticationError),
    (403, ProviderAuthError, openai.PermissionDeniedError),
    (404, ProviderModelNotFoundError, openai.NotFoundError)])
def test_each_fatal_status_is_mapped_and_not_retried(openai_provider, fake_openai, sleeps,
                                                      status, error, vendor):
    fake_openai.script(None, openai_error(status))
    with pytest.raises(error) as raised:
        openai_provider.route(QUESTION)
    assert type(raised.value) is error and isinstance(raised.value.__cause__, vendor)
    assert raised.value.status_code == status
    assert fake_openai.chat_requests == 1 and sleeps == []
