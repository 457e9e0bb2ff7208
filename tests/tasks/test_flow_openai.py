"""The agentic flow through real workers with RAGQ_PROVIDER=openai against the fake OpenAI
server: every model step comes from the server, every request is a ledger row with its tokens
and cost, and a rejected key fails the job instead of leaving it waiting."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import select

from ragq.ingestion.submit import ingest_path
from ragq.ledger import session_scope
from ragq.ledger.models import ModelCallRow, PlanRow, SufficiencyCheckRow, VerificationRow
from ragq.schemas.pricing import PriceTable
from ragq.submission import results, submit_file, wait
from ragq.workers.wiring import build_ledger_engine
from tests.conftest import Stack, running_stack
from tests.fakes import FakeOpenAIServer, openai_error
from tests.tasks.conftest import openai_overrides
from tests.tasks.test_flow import BRIDGE_DOCS, write_jsonl

pytestmark = pytest.mark.stack

QUESTIONS = ["Who makes the Zephyr camera and who founded Orion Labs?",
             "Who makes the Nimbus drone and what are prime lenses?"]


@pytest.fixture(scope="module")
def openai_stack(chat_server: FakeOpenAIServer, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[Stack]:
    overrides = openai_overrides(chat_server, tmp_path_factory.mktemp("ragq-openai"),
                                 openai_max_retries=2, openai_backoff_base_s=0.05)
    with running_stack(overrides) as stack:
        yield stack


def calls_of(stack: Stack, job_ids: list[str]) -> list[ModelCallRow]:
    with session_scope(build_ledger_engine(stack.settings)) as session:
        rows = session.scalars(select(ModelCallRow).where(ModelCallRow.job_id.in_(job_ids)))
        return list(rows)


def test_a_batch_is_planned_checked_verified_and_answered_by_the_server(
        openai_stack: Stack, chat_server: FakeOpenAIServer, collection: str, tmp_path: Path):
    ingest_path(openai_stack.settings, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS),
                collection=collection)
    requests, prompt, output = (chat_server.chat_requests, chat_server.reported_prompt_tokens,
                                chat_server.reported_completion_tokens)
    chat_server.script("planner", openai_error(429, headers={"retry-after": "0"}))
    tickets = write_jsonl(tmp_path / "t.jsonl", [
        {"custom_id": f"o{i}", "question": q} for i, q in enumerate(QUESTIONS)])
    sent = submit_file(openai_stack.settings, tickets, collection=collection)
    assert wait(openai_stack.settings, sent.batch_id, timeout_s=240)["status"] == "completed"
    got = {r["custom_id"]: r for r in results(openai_stack.settings, sent.batch_id)}

    for i, question in enumerate(QUESTIONS):
        result = got[f"o{i}"]
        assert result["status"] == "completed", result
        assert result["answer"] == f"Fake answer to: {question}"
        assert result["extractive"] is False
        assert len(result["citations"]) == 2
        assert result["usage"]["cost_usd"] > 0
    with session_scope(build_ledger_engine(openai_stack.settings)) as session:
        plan = session.scalars(select(PlanRow).where(PlanRow.job_id == got["o0"]["job_id"])).one()
        checks = session.scalars(select(SufficiencyCheckRow).where(
            SufficiencyCheckRow.job_id.in_(sent.job_ids))).all()
        verdicts = session.scalars(select(VerificationRow).where(
            VerificationRow.job_id.in_(sent.job_ids))).all()
    assert [s["text"] for s in plan.plan["sub_queries"]] == [
        "Who makes the Zephyr camera?", "who founded Orion Labs?"]
    assert plan.strategy == "aggregate"
    assert checks and all(c.reason == "fake sufficiency" for c in checks)
    assert verdicts and all(v.reason == "fake verifier" for v in verdicts)

    rows = calls_of(openai_stack, sent.job_ids)
    assert len(rows) == chat_server.chat_requests - requests  # one row per request, no more
    assert sum(r.prompt_tokens for r in rows) == chat_server.reported_prompt_tokens - prompt
    assert sum(r.completion_tokens for r in rows) == (
        chat_server.reported_completion_tokens - output)
    prices = PriceTable()
    for row in rows:
        assert row.provider == "openai" and row.model == "gpt-4o-mini"
        expected = prices.cost_of(row.model, row.prompt_tokens, row.completion_tokens)
        assert float(row.cost_usd) == pytest.approx(expected, abs=1e-8)
    (limited,) = [r for r in rows if r.status == "error"]
    assert limited.role == "planner" and "429" in (limited.error or "")
    assert limited.call_key == "plan#0" and limited.attempt == 0
    # routing and reranking play in process; the check carries the finding in one call
    assert {r.role for r in rows} == {"planner", "sufficiency+finder", "verifier", "synthesizer"}
    total = sum((r.cost_usd for r in rows), Decimal(0))
    assert float(total) == pytest.approx(sum(got[k]["usage"]["cost_usd"] for k in got))


def test_a_rejected_key_fails_the_job_with_a_clear_error(
        openai_stack: Stack, chat_server: FakeOpenAIServer, collection: str, tmp_path: Path):
    ingest_path(openai_stack.settings, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS),
                collection=collection)
    before = chat_server.chat_requests
    chat_server.api_key = "sk-rotated"  # the workers' key is now wrong
    try:
        tickets = write_jsonl(tmp_path / "t.jsonl", [{"custom_id": "k", "question": QUESTIONS[0]}])
        sent = submit_file(openai_stack.settings, tickets, collection=collection)
        wait(openai_stack.settings, sent.batch_id, timeout_s=120)
    finally:
        chat_server.api_key = "sk-test"
    (result,) = results(openai_stack.settings, sent.batch_id)
    assert result["status"] == "failed"
    assert result["error"]["type"] == "ProviderAuthError"
    assert "RAGQ_OPENAI_API_KEY" in result["error"]["message"]
    # No retry storm: each call the job made (the planner's, or, with the plan cached by the
    # test before, a layer's checks side by side) was sent once and failed once.
    rows = calls_of(openai_stack, sent.job_ids)
    assert rows and len(rows) == chat_server.chat_requests - before
    assert len({r.call_key for r in rows}) == len(rows)
    assert all(r.status == "error" and "401" in (r.error or "") for r in rows)
    assert {r.role for r in rows} <= {"planner", "sufficiency"}


def test_a_ticket_is_read_routed_and_answered_ask_by_ask_by_the_server(
        openai_stack: Stack, chat_server: FakeOpenAIServer, collection: str, tmp_path: Path):
    ingest_path(openai_stack.settings, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS),
                collection=collection)
    ticket = ("Hello,\n\nWe resell cameras in Lyon.\n\nWho makes the Zephyr camera?\n"
              "What are prime lenses?\n\nThanks,\nIda")
    sent = submit_file(openai_stack.settings, write_jsonl(tmp_path / "t.jsonl", [
        {"custom_id": "ticket", "question": ticket}]), collection=collection)
    assert wait(openai_stack.settings, sent.batch_id, timeout_s=240)["status"] == "completed"
    (result,) = results(openai_stack.settings, sent.batch_id)
    assert [a["text"] for a in result["asks"]] == ["Who makes the Zephyr camera?",
                                                   "What are prime lenses?"]
    assert all(a["status"] == "answered" and a["citations"] for a in result["asks"])
    assert [a["answer"] for a in result["asks"]] == [
        "Fake answer to: Who makes the Zephyr camera?", "Fake answer to: What are prime lenses?"]
    roles = [c.role for c in calls_of(openai_stack, [result["job_id"]]) if c.status == "ok"]
    assert roles.count("ticket_reader") == 1 and "router" not in roles  # routed in process
    assert roles.count("synthesizer") == 1
