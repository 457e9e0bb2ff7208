"""Webhook targets: http(s) only; loopback, private, link-local, reserved refused unless allowed."""

from __future__ import annotations

import pytest

from ragq.errors import WebhookUrlError
from ragq.webhooks import check_url


def public(host: str) -> list[str]:
    return ["93.184.216.34"]


@pytest.mark.parametrize(("url", "reason"), [
    ("http://127.0.0.1:8080/hook", "loopback"),
    ("http://10.0.0.1/hook", "private"),
    ("https://192.168.1.5/hook", "private"),
    ("http://169.254.169.254/latest/meta-data", "link-local"),
    ("http://[::1]/hook", "loopback"),
    ("http://[::ffff:10.0.0.1]/hook", "private"),
    ("http://localhost/hook", "loopback"),
    ("http://0.0.0.0/hook", "unspecified"),
])
def test_internal_targets_are_refused(url, reason):
    with pytest.raises(WebhookUrlError, match="RAGQ_WEBHOOK_ALLOW_PRIVATE") as info:
        check_url(url, allow_private=False)
    assert info.value.reason == reason


@pytest.mark.parametrize("url", ["ftp://example.com/x", "file:///etc/passwd", "example.com/x",
                                 "http:///nohost"])
def test_only_http_urls_with_a_host_pass(url):
    with pytest.raises(WebhookUrlError):
        check_url(url, allow_private=True)


def test_a_public_host_passes_and_private_ones_pass_when_allowed():
    assert check_url("https://hooks.example.com/x", allow_private=False, resolve=public)
    assert check_url("http://127.0.0.1:9/x", allow_private=True)


def test_a_name_that_resolves_to_a_private_address_is_refused():
    with pytest.raises(WebhookUrlError, match=r"10\.1\.2\.3"):
        check_url("https://innocent.example.com/", allow_private=False,
                  resolve=lambda host: ["93.184.216.34", "10.1.2.3"])
