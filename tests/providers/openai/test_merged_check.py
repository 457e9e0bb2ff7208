"""The merged check over the real ``openai`` client against the fake server: one request, one
strict schema holding the verdict, the finding and the rewrite; an answer whose rewrite is
missing or repeats a tried query is sent back once with the problem; a server that stays down
falls back to "not sufficient" with the offline rewriter's query, never a repeat."""

from __future__ import annotations

from ragq.schemas.statuses import ModelCallStatus
from tests.fakes import ChatAnswer, openai_error
from tests.providers.openai.conftest import EVIDENCE

QUERY = "Who makes the Zephyr camera?"


def _answer(sufficient: bool, rewrite: str, finding: str = "Orion Labs") -> ChatAnswer:
    return ChatAnswer({"sufficient": sufficient, "score": 0.8 if sufficient else 0.2,
                       "missing_terms": [], "reason": "scripted",
                       "finding": {"text": finding, "doc_ids": ["zephyr", "elsewhere"],
                                   "alternatives": [finding, " Vega Optics "]},
                       "rewrite": rewrite})


def test_one_request_with_one_strict_schema_answers_verdict_finding_and_rewrite(
        openai_provider, fake_openai):
    fake_openai.script("sufficiency", _answer(False, "Zephyr camera manufacturer"))
    verdict, usage = openai_provider.check_sufficiency(QUERY, EVIDENCE, found=EVIDENCE,
                                                       attempt=1, previous=[QUERY])
    (body,) = fake_openai.chat_bodies
    schema = body["response_format"]["json_schema"]
    assert body["response_format"]["type"] == "json_schema" and schema["strict"] is True
    assert set(schema["schema"]["required"]) >= {"sufficient", "finding", "rewrite"}
    assert "Already tried:\n- Who makes the Zephyr camera?" in body["messages"][1]["content"]
    assert not verdict.sufficient and verdict.rewrite and \
        verdict.rewrite.text == "Zephyr camera manufacturer"
    # the finding keeps only documents the evidence holds, and no echo of itself
    assert verdict.finding and verdict.finding.doc_ids == ["zephyr"]
    assert verdict.finding.alternatives == ["Vega Optics"]
    assert verdict.roles == "sufficiency+finder+rewriter"
    assert fake_openai.chat_by_role == {"sufficiency": 1}
    assert [a.status for a in usage.attempts] == [ModelCallStatus.OK]


def test_a_sufficient_verdict_drops_any_rewrite(openai_provider, fake_openai):
    fake_openai.script("sufficiency", _answer(True, "something else"))
    verdict, _ = openai_provider.check_sufficiency(QUERY, EVIDENCE)
    assert verdict.sufficient and verdict.rewrite is None
    assert verdict.roles == "sufficiency+finder"


def test_a_repeated_rewrite_is_sent_back_once_with_the_problem(openai_provider, fake_openai):
    fake_openai.script("sufficiency", _answer(False, "  who makes the ZEPHYR camera? "),
                       _answer(False, "Zephyr maker"))
    verdict, usage = openai_provider.check_sufficiency(QUERY, EVIDENCE, previous=[QUERY])
    assert verdict.rewrite and verdict.rewrite.text == "Zephyr maker"
    repair = fake_openai.chat_bodies[1]["messages"][-1]["content"]
    assert "differs from every query already tried" in repair
    assert [a.status for a in usage.attempts][-1] == ModelCallStatus.OK


def test_a_server_that_stays_down_falls_back_to_a_new_query(make_provider, fake_openai, sleeps):
    fake_openai.script("sufficiency", *[openai_error(500)] * 10)
    verdict, usage = make_provider(max_retries=1).check_sufficiency(
        QUERY, EVIDENCE, attempt=1, previous=[QUERY])
    assert not verdict.sufficient and verdict.score == 0.0
    assert verdict.finding is not None and verdict.finding.text == ""
    assert verdict.rewrite is not None and verdict.rewrite.text.strip()
    assert verdict.rewrite.text.casefold() != QUERY.casefold()
    assert usage.attempts[-1].status == ModelCallStatus.FALLBACK
