"""An OpenAI provider pointed at the fake server, with the pauses between retries recorded
instead of slept (tests assert on the delays chosen, not on wall time)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ragq.providers.openai import OpenAIProvider, RetryPolicy, RoleCaller, make_client
from ragq.schemas.flow import Evidence, RoleModels
from ragq.schemas.pricing import PriceTable
from tests.fakes import FakeOpenAIServer

MakeProvider = Callable[..., OpenAIProvider]


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make_provider(fake_openai: FakeOpenAIServer, sleeps: list[float]) -> MakeProvider:
    """Build a provider against ``fake_openai``; keywords override the defaults below."""

    def build(*, api_key: str = "sk-test", timeout_s: float = 5.0, max_retries: int = 3,
              models: dict[str, str] | None = None, model: str = "gpt-4o-mini",
              prices: PriceTable | None = None) -> OpenAIProvider:
        client = make_client(api_key=api_key, base_url=fake_openai.v1_url, timeout_s=timeout_s)
        caller = RoleCaller(
            client, default_model=model, models=RoleModels(models or {}),
            prices=prices or PriceTable(),
            policy=RetryPolicy(max_retries=max_retries, base_delay_s=0.5, max_delay_s=8.0),
            sleep=sleeps.append, rand=lambda: 0.5)
        return OpenAIProvider(caller)

    return build


@pytest.fixture
def openai_provider(make_provider: MakeProvider) -> OpenAIProvider:
    return make_provider()


def ev(doc: str, text: str, chunk: int = 0) -> Evidence:
    return Evidence(chunk_id=f"{doc}::{chunk}", doc_id=doc, title=doc.title(), text=text,
                    score=0.5)


EVIDENCE = [ev("zephyr", "The Zephyr camera is made by Orion Labs."),
            ev("orion", "Orion Labs was founded in 1998 by Mara Quint.")]
