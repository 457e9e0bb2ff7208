"""The provider as the workers build it from settings, and its public map."""

from __future__ import annotations

import pytest

import ragq.providers.openai
from ragq.errors import ConfigurationError
from ragq.providers.base import ModelProvider
from ragq.providers.openai import OpenAIProvider
from ragq.schemas.flow import Evidence
from ragq.settings import build_settings
from ragq.workers.wiring import build_provider


def test_settings_build_the_openai_provider_with_their_models_and_retries(fake_openai):
    settings = build_settings(
        provider="openai", openai_api_key="sk-test", openai_base_url=fake_openai.v1_url,
        openai_model="gpt-4.1-mini", openai_models={"synthesizer": "gpt-4o"},
        openai_max_retries=5, openai_backoff_base_s=0.1, openai_backoff_max_s=2.0,
        openai_timeout_s=7.0)
    provider = build_provider(settings, embedder=None)  # type: ignore[arg-type]
    assert isinstance(provider, OpenAIProvider) and provider.name == "openai"
    role: ModelProvider = provider  # type-checks against the Protocol
    caller = provider.caller
    assert (caller.policy.max_retries, caller.policy.base_delay_s,
            caller.policy.max_delay_s) == (5, 0.1, 2.0)
    assert caller.client.max_retries == 0 and caller.client.timeout == 7.0
    context = [Evidence(chunk_id="a::0", doc_id="a", text="A.", score=0.5)]
    role.synthesize("q?", context, strategy="single", findings=[])
    role.route("q?")
    assert [b["model"] for b in fake_openai.chat_bodies] == ["gpt-4o", "gpt-4.1-mini"]


def test_the_openai_provider_needs_a_key():
    with pytest.raises(ConfigurationError, match="RAGQ_PROVIDER=openai needs RAGQ_OPENAI_API_KEY"):
        build_provider(build_settings(provider="openai", openai_api_key=None),
                       embedder=None)  # type: ignore[arg-type]


def test_public_map_resolves():
    assert all(getattr(ragq.providers.openai, name) for name in ragq.providers.openai.__all__)
