"""Webhook retry decisions: what follows an answer, and how long to wait."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ragq.orchestration.webhook_retry import NextStep, next_step, retry_delay_s


def test_answers_map_to_next_steps():
    assert next_step(200, attempt=1, max_attempts=3) is NextStep.DELIVERED
    assert next_step(410, attempt=1, max_attempts=3) is NextStep.DISABLE
    assert next_step(500, attempt=2, max_attempts=3) is NextStep.RETRY
    assert next_step(None, attempt=2, max_attempts=3) is NextStep.RETRY
    assert next_step(500, attempt=3, max_attempts=3) is NextStep.GIVE_UP
    assert next_step(None, attempt=1, max_attempts=3, retryable=False) is NextStep.GIVE_UP


def test_delays_double_with_jitter_and_honour_retry_after():
    assert retry_delay_s(1, base_s=2, max_s=100, jitter=lambda: 1.0) == 2
    assert retry_delay_s(3, base_s=2, max_s=100, jitter=lambda: 1.0) == 8
    assert retry_delay_s(3, base_s=2, max_s=100, jitter=lambda: 0.0) == 4
    assert retry_delay_s(1, base_s=2, max_s=100, retry_after_s=30, jitter=lambda: 0.5) == 30
    assert retry_delay_s(1, base_s=2, max_s=10, retry_after_s=3600) == 10


@given(st.integers(1, 60), st.floats(0.01, 100), st.floats(0.01, 10_000),
       st.floats(0, 1), st.none() | st.floats(0, 1e6))
def test_delays_stay_within_the_bounded_schedule(attempt, base, cap, jitter, retry_after):
    delay = retry_delay_s(attempt, base_s=base, max_s=cap, retry_after_s=retry_after,
                          jitter=lambda: jitter)
    assert 0 < delay <= cap
    assert delay >= min(cap, base * 2 ** (attempt - 1)) / 2 - 1e-9
