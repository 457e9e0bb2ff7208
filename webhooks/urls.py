"""Webhook target validation: http(s) only, and only global addresses (``ipaddress``'s
``is_global``: no loopback, private, shared 100.64/10, link-local, reserved, documentation or
multicast address), so a webhook cannot become a way into our own network.

The escape hatch for receivers on a trusted network names them one by one (a
:class:`UrlPolicy`): loopback, and/or listed host names and addresses; never a whole range.
:func:`pin_url` returns the checked address too, so the sender connects to the very address
that was checked (a name that resolves differently at send time cannot redirect it).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ragq.errors import WebhookUrlError
from ragq.settings import Settings

Resolver = Callable[[str], list[str]]
SCHEMES = ("http", "https")
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class UrlPolicy:
    """Which non-global targets are allowed anyway: loopback addresses (a receiver on this
    machine) and hosts named exactly (names or single addresses, lower case)."""

    allow_loopback: bool = False
    allow_hosts: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, *, allow_loopback: bool, allow_hosts: Collection[str] = ()) -> UrlPolicy:
        return cls(allow_loopback, frozenset(h.lower().strip("[]") for h in allow_hosts))

    @classmethod
    def from_settings(cls, settings: Settings) -> UrlPolicy:
        """``RAGQ_WEBHOOK_ALLOW_PRIVATE`` (loopback) and ``RAGQ_WEBHOOK_ALLOW_HOSTS``."""
        return cls.of(allow_loopback=settings.webhook_allow_private,
                      allow_hosts=settings.webhook_allow_hosts)


@dataclass(frozen=True)
class PinnedUrl:
    """A URL that passed the checks, and the address it resolved to that the sender must
    connect to."""

    url: str
    host: str
    address: str


def resolve_host(host: str) -> list[str]:
    """Every address ``host`` resolves to (an IP literal resolves to itself)."""
    infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]) for info in infos})


NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _parse(address: str) -> IPAddress:
    """The address a connection to ``address`` ends at: an IPv6 form that carries an IPv4
    address (mapped, NAT64, 6to4, Teredo) is judged as that IPv4 address."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if not isinstance(ip, ipaddress.IPv6Address):
        return ip
    if ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip in NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour:
        return ip.sixtofour
    if ip.teredo:
        return ip.teredo[1]
    return ip


def refused_kind(address: str, policy: UrlPolicy = UrlPolicy()) -> str | None:
    """Why a webhook may not connect to ``address`` (an IP literal), or None when it may.
    Only global addresses pass, plus loopback when the policy allows it; IPv4-mapped IPv6
    addresses are judged as the IPv4 address they map. A decision, nothing is sent."""
    ip = _parse(address)
    if ip.is_loopback:
        return None if policy.allow_loopback else "loopback"
    if ip.is_global and not ip.is_multicast:
        return None
    for kind in ("unspecified", "link_local", "multicast", "private", "reserved"):
        if getattr(ip, f"is_{kind}"):
            return kind.replace("_", "-")
    if ip in ipaddress.ip_network("100.64.0.0/10"):
        return "shared (carrier-grade NAT)"
    return "non-global"


def _check_form(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise WebhookUrlError(f"webhook URL {url!r} must start with http:// or https://",
                              url=url, reason="scheme")
    try:
        host, _ = parts.hostname, parts.port  # .port raises ValueError for a bad port
    except ValueError as exc:
        raise WebhookUrlError(f"webhook URL {url!r} has an invalid port", url=url,
                              reason="port") from exc
    if not host:
        raise WebhookUrlError(f"webhook URL {url!r} has no host", url=url, reason="host")
    return host


def pin_url(url: str, *, policy: UrlPolicy, resolve: Resolver = resolve_host) -> PinnedUrl:
    """``url`` and the address to connect to. Raises :class:`WebhookUrlError` saying why not:
    a scheme other than http(s), no host, a host that does not resolve, or any resolved address
    that is not global (unless the host is named in the policy, or loopback is allowed)."""
    host = _check_form(url)
    try:
        addresses = resolve(host)
    except (OSError, UnicodeError, ValueError) as exc:
        raise WebhookUrlError(f"webhook host {host!r} does not resolve: {exc}",
                              url=url, reason="unresolvable") from exc
    if not addresses:
        raise WebhookUrlError(f"webhook host {host!r} resolves to no address", url=url,
                              reason="unresolvable")
    if host.lower() not in policy.allow_hosts:
        for address in addresses:
            kind = refused_kind(address, policy)
            if kind:
                raise WebhookUrlError(
                    f"webhook URL {url!r} resolves to {kind} address {address}; refused "
                    "(a receiver on this machine: RAGQ_WEBHOOK_ALLOW_PRIVATE=true; a named "
                    "host on a trusted network: RAGQ_WEBHOOK_ALLOW_HOSTS)", url=url, reason=kind)
    return PinnedUrl(url, host, addresses[0])


def check_url(url: str, *, policy: UrlPolicy, resolve: Resolver = resolve_host) -> str:
    """Return ``url`` when it may receive webhooks; raises as :func:`pin_url`."""
    return pin_url(url, policy=policy, resolve=resolve).url
