"""Webhook targets: http(s) only, and only global addresses unless named as allowed. Every test
here judges addresses and names through a resolver given in the test: nothing is sent, and no
name is looked up outside the machine."""

from __future__ import annotations

import pytest

from ragq.errors import WebhookUrlError
from ragq.settings import build_settings
from ragq.webhooks import UrlPolicy, check_url, pin_url, refused_kind

STRICT = UrlPolicy()
LOOPBACK = UrlPolicy.of(allow_loopback=True)


def resolver(*addresses: str):
    """A resolver answering ``addresses`` for any name, and recording what it was asked."""
    asked: list[str] = []

    def resolve(host: str) -> list[str]:
        asked.append(host)
        return list(addresses)

    resolve.asked = asked  # type: ignore[attr-defined]
    return resolve


@pytest.mark.parametrize(("address", "kind"), [
    ("127.0.0.1", "loopback"), ("127.9.9.9", "loopback"), ("::1", "loopback"),
    ("10.0.0.1", "private"), ("172.16.5.4", "private"), ("192.168.1.5", "private"),
    ("100.64.0.1", "shared (carrier-grade NAT)"), ("100.127.255.254", "shared (carrier-grade NAT)"),
    ("169.254.169.254", "link-local"), ("fe80::1", "link-local"), ("fe80::1%eth0", "link-local"),
    ("0.0.0.0", "unspecified"), ("::", "unspecified"),
    ("224.0.0.251", "multicast"), ("ff02::1", "multicast"),
    ("192.0.2.10", "private"), ("198.51.100.7", "private"), ("198.18.0.1", "private"),
    ("240.0.0.1", "private"), ("255.255.255.255", "private"),
    ("fc00::1", "private"), ("fd12:3456::1", "private"), ("2001:db8::1", "private"),
    # IPv6 forms that carry an IPv4 address are judged as that address
    ("::ffff:10.0.0.1", "private"), ("::ffff:127.0.0.1", "loopback"),
    ("::ffff:100.64.3.3", "shared (carrier-grade NAT)"), ("::ffff:169.254.169.254", "link-local"),
    ("64:ff9b::a00:1", "private"), ("2002:0a00:0001::1", "private"),
])
def test_every_address_that_is_not_global_is_refused(address, kind):
    assert refused_kind(address) == kind


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "1.1.1.1", "2606:4700::1111",
                                     "::ffff:8.8.8.8", "64:ff9b::808:808", "100.128.0.1",
                                     "100.63.255.255"])
def test_global_addresses_pass(address):
    assert refused_kind(address) is None


@pytest.mark.parametrize(("address", "verdict"), [
    ("127.0.0.1", None), ("::1", None), ("::ffff:127.0.0.1", None),
    ("10.0.0.1", "private"), ("192.168.0.1", "private"), ("100.64.0.1",
                                                         "shared (carrier-grade NAT)"),
    ("169.254.169.254", "link-local"),
])
def test_allowing_loopback_opens_loopback_only(address, verdict):
    assert refused_kind(address, LOOPBACK) == verdict


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:8080/hook", "http://10.0.0.1/hook", "https://192.168.1.5/hook",
    "http://169.254.169.254/latest/meta-data", "http://[::1]/hook", "http://[::ffff:10.0.0.1]/h",
    "http://0.0.0.0/hook", "http://100.64.0.7/hook", "http://[fd00::5]/hook",
])
def test_ip_literal_urls_that_are_not_global_are_refused_naming_the_fix(url):
    with pytest.raises(WebhookUrlError, match="RAGQ_WEBHOOK_ALLOW_HOSTS") as info:
        check_url(url, policy=STRICT, resolve=lambda host: [host])
    assert info.value.url == url and info.value.reason


def test_a_name_that_resolves_to_any_non_global_address_is_refused():
    with pytest.raises(WebhookUrlError, match=r"100\.64\.9\.9") as info:
        check_url("https://innocent.example.com/", policy=STRICT,
                  resolve=resolver("93.184.216.34", "100.64.9.9"))
    assert info.value.reason == "shared (carrier-grade NAT)"


@pytest.mark.parametrize("url", ["ftp://example.com/x", "file:///etc/passwd", "example.com/x",
                                 "http:///nohost", "http://example.com:99999/x",
                                 "javascript:alert(1)", "gopher://example.com/"])
def test_only_http_urls_with_a_host_and_a_valid_port_pass(url):
    resolve = resolver("93.184.216.34")
    with pytest.raises(WebhookUrlError):
        check_url(url, policy=LOOPBACK, resolve=resolve)
    assert resolve.asked == []  # refused on its form, before any lookup


def test_an_unresolvable_name_is_refused():
    def fail(host: str) -> list[str]:
        raise OSError("Name or service not known")

    with pytest.raises(WebhookUrlError) as info:
        check_url("https://nowhere.example/", policy=STRICT, resolve=fail)
    assert info.value.reason == "unresolvable"


def test_the_pinned_address_is_the_checked_one():
    pinned = pin_url("https://hooks.example.com:8443/x", policy=STRICT,
                     resolve=resolver("93.184.216.34"))
    assert (pinned.host, pinned.address) == ("hooks.example.com", "93.184.216.34")


def test_a_named_host_is_allowed_whatever_it_resolves_to_and_only_that_host():
    policy = UrlPolicy.of(allow_loopback=False, allow_hosts=["Hooks.Internal"])
    pinned = pin_url("http://hooks.internal/x", policy=policy, resolve=resolver("10.1.2.3"))
    assert pinned.address == "10.1.2.3"
    with pytest.raises(WebhookUrlError, match="private"):
        check_url("http://other.internal/x", policy=policy, resolve=resolver("10.1.2.4"))
    with pytest.raises(WebhookUrlError, match="private"):  # the neighbour address: not named
        check_url("http://10.1.2.4/x", policy=policy, resolve=resolver("10.1.2.4"))


def test_the_policy_comes_from_settings_and_ranges_are_refused(tmp_path):
    settings = build_settings(home=tmp_path, webhook_allow_private=True,
                              webhook_allow_hosts=["hooks.internal", "[fd00::7]"])
    assert UrlPolicy.from_settings(settings) == UrlPolicy(
        True, frozenset({"hooks.internal", "fd00::7"}))
    for bad in (["10.0.0.0/8"], ["*.internal"], [" "]):
        with pytest.raises(ValueError, match="not ranges"):
            build_settings(home=tmp_path, webhook_allow_hosts=bad)
