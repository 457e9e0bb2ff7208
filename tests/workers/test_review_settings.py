"""The review policy is built from ``RAGQ_REVIEW_*`` settings; a bad route fails where it is
given, naming the valid ones."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragq.orchestration.flow import ReviewPolicy
from ragq.settings import build_settings
from ragq.workers.wiring import build_flow_config, review_policy


def test_the_defaults_review_the_escalate_route_and_unsettled_contradictions(tmp_path) -> None:
    settings = build_settings(home=tmp_path)
    assert review_policy(settings) == ReviewPolicy(routes=frozenset({"escalate"}),
                                                   contradictions=True, min_confidence=0.0)


def test_every_setting_reaches_the_flow(tmp_path) -> None:
    settings = build_settings(home=tmp_path, review_routes=" full, escalate ,",
                              review_contradictions=False, review_confidence_threshold=0.4)
    config = build_flow_config(settings, len)
    assert config.review == ReviewPolicy(routes=frozenset({"full", "escalate"}),
                                         contradictions=False, min_confidence=0.4)
    assert review_policy(build_settings(home=tmp_path, review_routes="")).routes == frozenset()


def test_an_unknown_route_or_threshold_is_refused_naming_what_is_valid(tmp_path) -> None:
    with pytest.raises(ValidationError, match=r"unknown route.*investigate.*simple, bounded"):
        build_settings(home=tmp_path, review_routes="escalate,investigate")
    with pytest.raises(ValidationError, match="review_confidence_threshold"):
        build_settings(home=tmp_path, review_confidence_threshold=1.5)


def test_the_settings_come_from_the_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RAGQ_REVIEW_CONFIDENCE_THRESHOLD", "0.5")
    monkeypatch.setenv("RAGQ_REVIEW_ROUTES", "bounded")
    policy = review_policy(build_settings(home=tmp_path))
    assert (policy.routes, policy.min_confidence) == (frozenset({"bounded"}), 0.5)
