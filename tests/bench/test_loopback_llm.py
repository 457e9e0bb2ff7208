"""bench/loopback_llm.py: the fixed-latency server holds every request at once (never one after
another) and answers each ragq role with an answer ragq's real openai provider accepts.

No timing is asserted: concurrency is read from the server's own in-flight counter."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from bench.loopback_llm import LoopbackLLM, answer
from ragq.providers.openai import OpenAIProvider, RetryPolicy, RoleCaller, make_client
from ragq.schemas.flow import Evidence, RoleModels, SourceProfile
from ragq.schemas.pricing import PriceTable

QUESTION = "How do I rotate an API key?"
EVIDENCE = [Evidence(chunk_id=f"doc{i}::0", doc_id=f"doc{i}", title=f"Doc {i}", score=0.5,
                     text="Create a new key, deploy it, then revoke the old key.")
            for i in range(3)]


@pytest.fixture(scope="module")
def llm() -> Iterator[LoopbackLLM]:
    with LoopbackLLM(0) as server:
        yield server


def _chat(llm: LoopbackLLM) -> int:
    body = {"model": "m", "messages": [{"role": "user", "content": "Query: hi\nAnswer: "}]}
    return httpx.post(f"{llm.v1_url}/chat/completions", json=body, timeout=120).status_code


def test_k_concurrent_requests_are_all_in_flight_at_once(llm: LoopbackLLM) -> None:
    k = 24
    llm.set_delay(2000)  # long enough for all k to arrive while the first ones wait
    llm.reset()
    try:
        with ThreadPoolExecutor(k) as pool:
            statuses = list(pool.map(lambda _: _chat(llm), range(k)))
    finally:
        llm.set_delay(0)
    stats = llm.stats()
    assert statuses == [200] * k
    assert stats["peak_in_flight"] == k
    assert stats["requests"] == k and stats["in_flight"] == 0


@pytest.fixture()
def provider(llm: LoopbackLLM) -> OpenAIProvider:
    client = make_client(api_key="sk-bench", base_url=llm.v1_url, timeout_s=30)
    return OpenAIProvider(RoleCaller(client, default_model="gpt-4o-mini", models=RoleModels(),
                                     prices=PriceTable(), policy=RetryPolicy()))


def test_every_ragq_role_gets_an_answer_the_provider_accepts_first_time(
        provider: OpenAIProvider, llm: LoopbackLLM) -> None:
    llm.reset()
    calls = {
        "ticket_reader": lambda: provider.read_ticket(f"Hello,\n{QUESTION}\nThanks"),
        "router": lambda: provider.route(QUESTION),
        "source_router": lambda: provider.route_sources(QUESTION, [SourceProfile(
            name="docs", description="API keys and their rotation")]),
        "planner": lambda: provider.plan(QUESTION, max_sub_queries=3),
        "sufficiency": lambda: provider.check_sufficiency(QUESTION, EVIDENCE),
        "rewriter": lambda: provider.rewrite(QUESTION, EVIDENCE, attempt=1, previous=[]),
        "finder": lambda: provider.find(QUESTION, EVIDENCE),
        "verifier": lambda: provider.verify(QUESTION, EVIDENCE, findings=[]),
        "reranker": lambda: provider.rerank(QUESTION, EVIDENCE),
        "synthesizer": lambda: provider.synthesize(QUESTION, EVIDENCE, strategy="single",
                                                   findings=[]),
    }
    results = {role: call() for role, call in calls.items()}
    for role, (_, usage) in results.items():
        assert usage.fallback_reason is None, (role, usage.fallback_reason)
        assert len(usage.attempts) == 1, role  # no repair round
    assert llm.stats()["by_kind"] == {f"ragq:{role}": 1 for role in calls}
    # the bench's fixed shape: procedural (the bounded path, which plans), one sub-query
    assert results["router"][0].question_class == "procedural"
    assert [s.text for s in results["planner"][0].sub_queries] == [QUESTION]
    assert results["sufficiency"][0].sufficient


def test_llamaindex_gets_one_sub_question_and_a_text_answer() -> None:
    pytest.importorskip("llama_index.core", reason="the bench extra: pip install -e '.[bench]'")
    from llama_index.core.prompts import PromptTemplate
    from llama_index.core.question_gen.output_parser import SubQuestionOutputParser
    from llama_index.core.question_gen.prompts import (
        DEFAULT_SUB_QUESTION_PROMPT_TMPL,
        build_tools_text,
    )
    from llama_index.core.tools.types import ToolMetadata

    tools = build_tools_text([ToolMetadata(name="docs", description="the docs")])
    prompt = PromptTemplate(DEFAULT_SUB_QUESTION_PROMPT_TMPL).format(tools_str=tools,
                                                                     query_str=QUESTION)
    kind, reply = answer({"messages": [{"role": "user", "content": prompt}]})
    parsed = SubQuestionOutputParser().parse(reply.text() or "").parsed_output
    assert kind == "llamaindex:sub_questions"
    assert [(q.sub_question, q.tool_name) for q in parsed] == [(QUESTION, "docs")]
    kind, reply = answer({"messages": [{"role": "user", "content": [
        {"type": "text", "text": f"Context information is below.\nQuery: {QUESTION}\nAnswer: "}]}]})
    assert (kind, reply.text()) == ("text", f"Fake answer to: {QUESTION}")
