"""The httpx sender against a real loopback receiver: signed headers, answers, errors mapped."""

from __future__ import annotations

import pytest

from ragq.errors import WebhookSendError
from ragq.webhooks import HttpxWebhookSender, new_secret, pinned_request, verify_signature
from ragq.workers.processes import free_port
from tests.fakes.http import Reply


def test_a_delivery_is_signed_and_its_answer_reported(loopback):
    loopback.route("POST", "/hook", lambda r: Reply(204, b""))
    secret = new_secret()
    sender = HttpxWebhookSender(timeout_s=5)
    outcome = sender.send(f"{loopback.base_url}/hook", secret=secret, msg_id="msg_a",
                          body=b'{"type":"job.completed"}')
    assert outcome.ok and outcome.status_code == 204
    (request,) = loopback.requests
    assert request.headers["webhook-id"] == "msg_a"
    verify_signature(secret, msg_id="msg_a", timestamp=request.headers["webhook-timestamp"],
                     body=request.body, signature=request.headers["webhook-signature"])


def test_retry_after_is_read_and_failures_are_not_ok(loopback):
    loopback.fail_next(Reply(503, {}, headers={"Retry-After": "7"}))
    outcome = HttpxWebhookSender(timeout_s=5).send(f"{loopback.base_url}/x", secret=new_secret(),
                                                   msg_id="m", body=b"{}")
    assert outcome.status_code == 503 and outcome.retry_after_s == 7 and not outcome.ok


def test_an_answer_without_retry_after_has_none(loopback):
    loopback.fail_next(Reply(429, {}))
    outcome = HttpxWebhookSender(timeout_s=5).send(f"{loopback.base_url}/x", secret=new_secret(),
                                                   msg_id="m", body=b"{}")
    assert outcome.status_code == 429 and outcome.retry_after_s is None


def test_no_answer_becomes_a_webhook_send_error():
    url = f"http://127.0.0.1:{free_port('127.0.0.1')}/hook"
    with pytest.raises(WebhookSendError) as info:
        HttpxWebhookSender(timeout_s=2).send(url, secret=new_secret(), msg_id="m", body=b"{}")
    assert info.value.retryable and info.value.url == url


def test_a_pinned_delivery_connects_to_the_checked_address_and_names_the_host(loopback):
    """The URL's name does not resolve at all: the request still arrives, so it went to the
    pinned address without asking DNS; the receiver sees the URL's host."""
    loopback.route("POST", "/hook", lambda r: Reply(204, b""))
    port = loopback.base_url.rsplit(":", 1)[1]
    url = f"http://receiver.invalid:{port}/hook"
    outcome = HttpxWebhookSender(timeout_s=5).send(url, secret=new_secret(), msg_id="m",
                                                   body=b"{}", address="127.0.0.1")
    assert outcome.status_code == 204
    (request,) = loopback.requests
    assert request.headers["host"] == f"receiver.invalid:{port}"


def test_a_pinned_https_request_sends_the_name_as_tls_server_name():
    target, headers, extensions = pinned_request("https://hooks.example.com/a?b=1",
                                                 "2606:4700::1111")
    assert target == "https://[2606:4700::1111]/a?b=1"
    assert headers == {"host": "hooks.example.com"}
    assert extensions == {"sni_hostname": "hooks.example.com"}
