from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from pydantic import ValidationError

from ragq.orchestration.budgets import (
    DEFAULT_PROFILES,
    budget_stop,
    deadline_of,
    exhausted_dimension,
    limits_of,
    profile_for,
    resolve_budget,
)
from ragq.orchestration.routing import RoutePath
from ragq.schemas.statuses import BudgetDimension
from ragq.schemas.ticket import Budget, BudgetProfiles


def test_a_ticket_override_changes_only_its_own_keys() -> None:
    profile = DEFAULT_PROFILES[RoutePath.FULL]
    batch = Budget(max_retrieval_calls=4, max_steps=9)
    ticket = {"max_steps": 3}
    merged = resolve_budget(profile, batch, ticket)
    assert merged.max_steps == 3  # the ticket beats the batch
    assert merged.max_retrieval_calls == 4  # the batch beats the profile
    assert merged.max_cost_usd == profile.max_cost_usd  # untouched keys keep the profile


def test_bad_overrides_are_rejected_with_the_key_named() -> None:
    with pytest.raises(ValidationError, match="max_steps"):
        resolve_budget(DEFAULT_PROFILES[RoutePath.SIMPLE], {"max_steps": -1})
    with pytest.raises(ValidationError, match="max_latency_ms"):
        resolve_budget(DEFAULT_PROFILES[RoutePath.SIMPLE], {"max_latency_ms": 10**12})
    with pytest.raises(ValidationError, match="max_stepz"):
        resolve_budget(DEFAULT_PROFILES[RoutePath.SIMPLE], {"max_stepz": 3})


def test_settings_profiles_replace_the_defaults() -> None:
    mine = Budget(max_steps=2)
    assert profile_for("full", BudgetProfiles(full=mine)) is mine
    assert profile_for("simple", BudgetProfiles(full=mine)) == DEFAULT_PROFILES[RoutePath.SIMPLE]


def test_limits_cover_every_dimension_and_money_is_exact() -> None:
    limits = limits_of(Budget(max_cost_usd=0.1, max_steps=5))
    assert set(limits) == set(BudgetDimension)
    assert limits[BudgetDimension.COST_USD] == Decimal("0.1")
    assert limits[BudgetDimension.STEPS] == 5
    assert limits[BudgetDimension.RETRIEVAL_CALLS] is None


def test_the_deadline_counts_from_the_start() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    assert deadline_of(Budget(max_latency_ms=1500), start) == start + timedelta(seconds=1.5)
    assert deadline_of(Budget(), start) is None


def test_budget_stop_reasons_round_trip() -> None:
    assert exhausted_dimension(budget_stop("retrieval_calls")) is BudgetDimension.RETRIEVAL_CALLS
    assert exhausted_dimension("sufficient") is None
    assert exhausted_dimension(None) is None
