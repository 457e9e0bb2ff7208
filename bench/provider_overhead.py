"""What our provider layer adds to a model call: p50 of ``check_sufficiency`` through
:class:`providers.openai.OpenAIProvider` vs a bare ``openai`` ``chat.completions.create`` with
the same payload, both against the loopback fake OpenAI server (tests/fakes).

Usage:  python bench/provider_overhead.py [N=500]

The overhead is prompt building, the strict JSON schema, the retry loop, parsing and
validation of the answer, and metering; the network part is the same for both. Calls alternate
(bare, provider) so drift of the machine hits both sides alike.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragq.providers.openai import OpenAIProvider, RetryPolicy, RoleCaller, make_client, prompts
from ragq.providers.openai.wire import SufficiencyWire, strict_schema
from ragq.schemas.flow import Evidence, RoleModels
from ragq.schemas.pricing import PriceTable
from tests.fakes import FakeOpenAIServer

MODEL = "gpt-4o-mini"
QUERY = "Who founded the company that makes the Zephyr camera?"
EVIDENCE = [
    Evidence(chunk_id=f"doc{i}::0", doc_id=f"doc{i}", title=f"Doc {i}", score=0.5,
             text="The Zephyr is a compact mirrorless camera made by Orion Labs. " * 3)
    for i in range(5)
]


def _ms(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def main(n: int) -> None:
    with FakeOpenAIServer() as server:
        client = make_client(api_key="sk-test", base_url=server.v1_url, timeout_s=10)
        provider = OpenAIProvider(RoleCaller(
            client, default_model=MODEL, models=RoleModels(), prices=PriceTable(),
            policy=RetryPolicy()))
        payload = {
            "model": MODEL, "messages": prompts.sufficiency(QUERY, EVIDENCE), "temperature": 0,
            "response_format": {"type": "json_schema", "json_schema": {
                "name": "ragq_sufficiency", "schema": strict_schema(SufficiencyWire),
                "strict": True}},
        }
        bare_client = make_client(api_key="sk-test", base_url=server.v1_url, timeout_s=10)
        for _ in range(20):  # warm up connections, the tokenizer, pydantic
            provider.check_sufficiency(QUERY, EVIDENCE)
            bare_client.chat.completions.create(**payload)  # type: ignore[call-overload]
        bare, ours = [], []
        for _ in range(n):
            bare.append(_ms(lambda: bare_client.chat.completions.create(**payload)))
            ours.append(_ms(lambda: provider.check_sufficiency(QUERY, EVIDENCE)))
    p50_bare, p50_ours = statistics.median(bare), statistics.median(ours)
    print(f"calls: {n} each (check_sufficiency, 5 evidence chunks, loopback fake server)")
    print(f"bare openai client p50: {p50_bare:.3f} ms")
    print(f"ragq provider     p50: {p50_ours:.3f} ms")
    print(f"overhead          p50: {p50_ours - p50_bare:+.3f} ms "
          f"({(p50_ours / p50_bare - 1) * 100:+.1f} %)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500)
