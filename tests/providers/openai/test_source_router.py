"""The source router over the fake OpenAI server with the real ``openai`` client: a structured
choice among the offered sources, a name not offered repaired once, and the offline choice as
the fallback."""

from __future__ import annotations

from ragq.schemas.flow import SourceChoice, SourceProfile
from ragq.schemas.statuses import ModelCallStatus
from tests.fakes import ChatAnswer

SOURCES = [
    SourceProfile(name="billing-policy", description="Plans, invoices and refunds.", hits=3),
    SourceProfile(name="api-reference", description="Endpoints, rate limits, error codes."),
]
QUERY = "What is the rate limit of the search endpoint?"


def test_the_model_chooses_among_the_offered_sources(openai_provider, fake_openai):
    choice, usage = openai_provider.route_sources(QUERY, SOURCES)
    assert isinstance(choice, SourceChoice)
    assert choice.sources == ["api-reference"]
    assert set(choice.scores) == {"billing-policy", "api-reference"}
    assert choice.reason == "fake: most shared words"
    assert [a.status for a in usage.attempts] == [ModelCallStatus.OK]
    (body,) = fake_openai.chat_bodies
    fmt = body["response_format"]["json_schema"]
    assert fmt["name"] == "ragq_source_router" and fmt["strict"] is True
    prompt = body["messages"][-1]["content"]
    assert "name=billing-policy past_hits=3: Plans, invoices and refunds." in prompt
    assert f"Query: {QUERY}" in prompt


def test_a_source_not_offered_is_repaired_once_with_the_valid_names(openai_provider,
                                                                     fake_openai):
    wrong = ChatAnswer({"sources": ["docs"], "scores": [], "reason": "guess"})
    fake_openai.script("source_router", wrong)
    choice, usage = openai_provider.route_sources(QUERY, SOURCES)
    assert choice.sources == ["api-reference"]
    assert [a.status for a in usage.attempts] == [ModelCallStatus.ERROR, ModelCallStatus.OK]
    repair = fake_openai.chat_bodies[1]["messages"][-1]["content"]
    assert "billing-policy, api-reference" in repair and "docs" in repair


def test_unusable_twice_falls_back_to_the_offline_choice(openai_provider, fake_openai):
    wrong = ChatAnswer({"sources": [], "scores": [], "reason": "none"})
    fake_openai.script("source_router", wrong, wrong)
    choice, usage = openai_provider.route_sources(QUERY, SOURCES)
    assert choice.sources == ["api-reference"]  # the lexical fit to the descriptions
    assert "fallback" in choice.reason
    assert usage.attempts[-1].status == ModelCallStatus.FALLBACK
    assert fake_openai.chat_by_role["source_router"] == 2
