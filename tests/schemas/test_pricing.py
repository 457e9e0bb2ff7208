"""The price table: exact and prefix matches, unknown models, and reading it from settings."""

from __future__ import annotations

import logging

import pytest
from pydantic import ValidationError

from ragq.schemas.flow import RoleModels
from ragq.schemas.pricing import ModelPrice, PriceTable
from ragq.settings import build_settings


def test_cost_is_tokens_times_the_price_per_million():
    table = PriceTable(models={"m": ModelPrice(input_per_mtok=2.0, output_per_mtok=8.0)})
    assert table.cost_of("m", 1_000_000, 0) == 2.0
    assert table.cost_of("m", 500, 250) == pytest.approx((500 * 2 + 250 * 8) / 1e6)


def test_a_dated_model_pays_the_longest_matching_prefix():
    table = PriceTable()
    assert table.price_of("gpt-4o-mini-2024-07-18") == table.models["gpt-4o-mini"]
    assert table.price_of("gpt-4o-2024-08-06") == table.models["gpt-4o"]
    assert table.cost_of("gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)


def test_an_unknown_model_costs_nothing_and_is_logged_once(caplog):
    table = PriceTable()
    with caplog.at_level(logging.WARNING, logger="ragq.schemas.pricing"):
        assert table.cost_of("llama3-local", 1000, 1000) == 0.0
        assert table.cost_of("llama3-local", 1000, 1000) == 0.0
    assert [r.getMessage() for r in caplog.records].count(
        "model=llama3-local has no price in RAGQ_PRICES; its calls are costed at 0") == 1


def test_prices_and_role_models_come_from_json_settings(monkeypatch):
    monkeypatch.setenv("RAGQ_PRICES", '{"models": {"x": {"input_per_mtok": 1}}, '
                                      '"retrieval_call_usd": 0.001}')
    monkeypatch.setenv("RAGQ_OPENAI_MODELS", '{"synthesizer": "gpt-4o"}')
    settings = build_settings()
    assert settings.prices.cost_of("x", 1_000_000, 5) == 1.0
    assert settings.prices.retrieval_call_usd == 0.001
    assert settings.openai_models.for_role("synthesizer", "d") == "gpt-4o"
    assert settings.openai_models.for_role("router", "d") == "d"
    hash(settings)  # settings key caches: they must stay hashable


def test_an_unknown_role_is_refused_with_the_valid_ones(monkeypatch):
    monkeypatch.setenv("RAGQ_OPENAI_MODELS", '{"synth": "gpt-4o"}')
    with pytest.raises(ValidationError, match="'synthesizer'"):
        build_settings()


def test_negative_prices_are_refused():
    with pytest.raises(ValidationError):
        PriceTable(models={"m": ModelPrice(input_per_mtok=-1)})
    assert RoleModels().for_role("planner", "gpt-4o-mini") == "gpt-4o-mini"
