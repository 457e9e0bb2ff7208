"""The one backoff policy and Retry-After reader shared by model calls, embeddings and webhooks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragq.orchestration.backoff import RetryPolicy, backoff_delay_s, parse_retry_after

NOW = 1445412480.0  # Wed, 21 Oct 2015 07:28:00 GMT


def test_delays_double_with_jitter_and_are_capped():
    policy = RetryPolicy(max_retries=9, base_delay_s=1.0, max_delay_s=5.0)
    assert [policy.delay_s(n, None, lambda: 0.0) for n in range(4)] == [0.5, 1.0, 2.0, 2.5]
    assert [policy.delay_s(n, None, lambda: 1.0) for n in range(4)] == [1.0, 2.0, 4.0, 5.0]


def test_retry_after_is_a_floor_capped_by_the_policy():
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0)
    assert policy.delay_s(0, 3.0, lambda: 0.0) == 3.0  # longer than the backoff: waited
    assert policy.delay_s(0, 60.0) == 5.0  # never past the cap
    # shorter than the backoff: the backoff stands (a server's "now" does not make us hammer it)
    assert policy.delay_s(3, 0.0, lambda: 0.0) == 2.5
    assert policy.delay_s(2, 1.0, lambda: 1.0) == 4.0


def test_a_negative_policy_is_refused():
    with pytest.raises(ValueError, match="non-negative"):
        RetryPolicy(max_retries=-1)


def test_an_unbounded_retry_count_stays_at_the_cap():
    assert backoff_delay_s(10_000, base_s=0.5, max_s=30.0, rand=lambda: 1.0) == 30.0


@given(st.integers(0, 2_000), st.floats(0.001, 100), st.floats(0.001, 10_000),
       st.floats(0, 1), st.none() | st.floats(0, 1e6))
def test_delays_stay_within_the_bounded_schedule(retry, base, cap, jitter, retry_after):
    delay = backoff_delay_s(retry, base_s=base, max_s=cap, retry_after_s=retry_after,
                            rand=lambda: jitter)
    assert 0 < delay <= cap
    assert delay >= min(cap, base * 2.0 ** min(retry, 64)) / 2 - 1e-9
    if retry_after is not None:
        assert delay >= min(retry_after, cap)


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "7"}, 7.0),
    ({"Retry-After": " 7 "}, 7.0),  # names in any case, values trimmed
    ({"retry-after": "1.5"}, 1.5),
    ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),  # the finer header first
    ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),  # an unreadable one is ignored
    ({"retry-after": "Wed, 21 Oct 2015 07:29:00 GMT"}, 60.0),
    ({"retry-after": "Wed, 21 Oct 2015 07:29:00 -0000"}, 60.0),  # no zone means UTC
    ({"retry-after": "Wed, 21 Oct 2015 07:00:00 GMT"}, 0.0),  # a past date: now
    ({"retry-after": "soon"}, None),
    ({"retry-after": "-3"}, None),
    ({"retry-after": "inf"}, None),
    ({"retry-after": ""}, None),
    ({"content-type": "text/plain"}, None),
    ({}, None),
    (None, None),
])
def test_retry_after_in_seconds_milliseconds_or_a_date(headers, expected):
    assert parse_retry_after(headers, now=NOW) == expected
