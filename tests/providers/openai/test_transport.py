"""The shared retry loop: which errors are retried, how long it waits, and that it gives up."""

from __future__ import annotations

import email.utils
import time

import httpx
import openai
import pytest

from ragq import deadlines
from ragq.orchestration.backoff import RetryPolicy
from ragq.providers.openai.transport import FailedAttempt, is_retryable, make_client, send


def status_error(status: int, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://x/v1/chat/completions")
    response = httpx.Response(status, headers=headers or {}, request=request)
    kinds = {400: openai.BadRequestError, 401: openai.AuthenticationError,
             404: openai.NotFoundError, 429: openai.RateLimitError}
    kind = kinds.get(status, openai.InternalServerError if status >= 500 else
                     openai.APIStatusError)
    return kind(f"HTTP {status}", response=response, body=None)


@pytest.mark.parametrize(("status", "retried"), [
    (400, False), (401, False), (403, False), (404, False), (422, False),
    (408, True), (409, True), (429, True), (500, True), (502, True), (503, True)])
def test_status_codes_that_are_retried(status, retried):
    assert is_retryable(status_error(status)) is retried


def test_timeouts_and_lost_connections_are_retried_other_errors_not():
    request = httpx.Request("POST", "http://x")
    assert is_retryable(openai.APITimeoutError(request=request))
    assert is_retryable(openai.APIConnectionError(request=request))
    assert not is_retryable(ValueError("x"))


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "2"}, 2.0), ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
    ({"retry-after": "in a while"}, 0.1), ({}, 0.1)])
def test_the_pause_honours_the_failed_responses_retry_after(headers, expected):
    """The exception's response headers reach the shared parser (``retry-after-ms`` first);
    without a readable one the computed backoff (0.1 s here) is used."""
    errors = [status_error(429, headers)]
    seen: list[FailedAttempt] = []

    def request() -> str:
        if errors:
            raise errors.pop()
        return "ok"

    send(request, RetryPolicy(max_retries=1, base_delay_s=0.1, max_delay_s=60.0),
         on_failure=seen.append, sleep=lambda s: None, rand=lambda: 1.0)
    assert seen[0].backoff_s == expected


def test_a_retry_after_date_is_waited_out():
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    errors = [status_error(503, {"retry-after": date})]
    slept: list[float] = []

    def request() -> str:
        if errors:
            raise errors.pop()
        return "ok"

    send(request, RetryPolicy(max_retries=1, max_delay_s=60.0), sleep=slept.append)
    assert 28 < slept[0] <= 30


def test_send_reports_every_failure_and_reraises_the_last():
    errors = [status_error(500), status_error(429, {"retry-after": "1"}), status_error(503)]
    seen: list[FailedAttempt] = []
    slept: list[float] = []

    def request() -> str:
        raise errors.pop(0)

    with pytest.raises(openai.InternalServerError):
        send(request, RetryPolicy(max_retries=2, base_delay_s=0.2), on_failure=seen.append,
             sleep=slept.append, rand=lambda: 1.0)
    assert [f.backoff_s for f in seen] == [0.2, 1.0, 0.0]
    assert slept == [0.2, 1.0]


def test_send_returns_the_value_and_its_latency():
    value, latency = send(lambda: 42, RetryPolicy())
    assert value == 42 and latency >= 0


def test_the_client_never_retries_on_its_own():
    client = make_client(api_key="k", base_url="http://127.0.0.1:9/v1", timeout_s=1.0)
    assert client.max_retries == 0 and client.timeout == 1.0


def test_send_makes_no_retry_that_would_end_past_the_tasks_bound():
    errors = [status_error(503), status_error(503)]
    slept: list[float] = []

    def request() -> str:
        raise errors.pop(0)

    deadlines.start(5.0)  # what a worker does when the task starts
    try:
        with pytest.raises(openai.InternalServerError):
            send(request, RetryPolicy(max_retries=3, base_delay_s=10.0), sleep=slept.append,
                 rand=lambda: 1.0)
    finally:
        deadlines.clear()
    assert slept == [] and len(errors) == 1  # one attempt, no 10 s pause past the bound
